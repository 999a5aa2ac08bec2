//! "Same θ, different config": the compared columns.

use super::transcript::PromptToken;
use decoding_engine::decode::generation::{Step, StopReason};
use decoding_engine::decode::sampling::Settings;
use serde::{Deserialize, Serialize};

/// One column of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnView {
    pub settings: Settings,
    /// the generated tokens, each with the probability it was drawn with
    pub steps: Vec<Step>,
    /// the tokens as text after the prompt
    pub text: String,
    pub stop: Option<StopReason>,
    /// the next distribution: its most likely tokens (id, final probability)
    pub top: Vec<(u32, f64)>,
    /// tokens the chain kept at the next step, its entropy (nats), the token the next step
    /// takes and its probability
    pub kept: usize,
    pub entropy: f64,
    pub next: Option<(u32, f64)>,
    /// Σ log p(token) under the model (T = 1) of the generated tokens
    pub logprob: f64,
}

/// The comparison: one prompt, the columns, and the knobs whose values differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnsView {
    pub prompt: Vec<PromptToken>,
    pub prompt_text: String,
    pub columns: Vec<ColumnView>,
    /// knob names (URL keys) set differently in some column
    pub differ: Vec<String>,
}
