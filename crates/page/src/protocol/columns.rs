//! "Same θ, different config": the compared columns.

use super::transcript::PromptToken;
use decoding_engine::decode::generation::{Step, StopReason};
use decoding_engine::decode::sampling::Settings;
use serde::{Deserialize, Serialize};

/// "Same θ, different config" (lesson 10, section 6): 2 to 4 columns, each its own settings
/// and its own sequence and KV cache of the one loaded model, from the transcript's prompt;
/// then every running column one more token, `count` times (the columns' newest tokens go
/// through the model as one pass of one row each).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ColumnsRequest {
    ColumnsStart { columns: Vec<Settings> },
    ColumnsStep { count: u32 },
}

/// The compared columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ColumnsEvent {
    Columns { view: ColumnsView },
}

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
