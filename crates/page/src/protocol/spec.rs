//! The speculative panel: the run, its last cycle, its statistics.

use super::transcript::PromptToken;
use serde::{Deserialize, Serialize};

/// A new speculative run from the transcript's prompt with the current settings, on its
/// own sequence of the running backend (`draft` travels as its name, "quant:q8"; whether the
/// model has an early exit's layers is checked when the run starts), or `count` more
/// draft-and-verify cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum SpecRequest {
    SpecStart {
        draft: decoding_engine::decode::speculative::Draft,
        gamma: u32,
        rule: decoding_engine::decode::speculative::Rule,
    },
    SpecCycle {
        count: u32,
    },
}

/// The speculative run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum SpecEvent {
    Spec { view: SpecView },
}

/// How a speculative token came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecTokenKind {
    /// a draft the target accepted
    Accepted,
    /// drawn from the residual norm(max(0, p − q)) at a rejection
    Resampled,
    /// the target's own token at a mismatch (`match`, greedy)
    Target,
    /// every draft accepted: one more from p
    Bonus,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecToken {
    pub id: u32,
    pub piece: String,
    pub kind: SpecTokenKind,
    pub cycle: usize,
    /// the draft rejected at this position (resampled and target tokens)
    pub rejected: Option<String>,
}

/// A token's p and q at a drafted position (q none for a draft without a distribution).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecBar {
    pub id: u32,
    pub piece: String,
    pub p: f64,
    pub q: Option<f64>,
}

/// One checked position of the last cycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecPosition {
    pub token: u32,
    pub piece: String,
    pub p: f64,
    pub q: f64,
    /// min(1, p/q) (rejection) or 1/0 (match, greedy)
    pub accept_probability: f64,
    /// Σ min(p, q)
    pub overlap: f64,
    pub accepted: bool,
    /// The constraint forbids this draft (p = 0 under its mask): refused whatever q says.
    #[serde(default)]
    pub forbidden: bool,
    /// the tokens most likely under p or q, by max(p, q)
    pub bars: Vec<SpecBar>,
}

/// The last draft-and-verify cycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecCycleView {
    pub index: usize,
    pub drafted: Vec<PromptToken>,
    pub accepted: usize,
    pub next: PromptToken,
    pub next_kind: SpecTokenKind,
    pub positions: Vec<SpecPosition>,
}

/// The speculative panel's view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecView {
    pub draft: decoding_engine::decode::speculative::Draft,
    pub gamma: usize,
    pub rule: decoding_engine::decode::speculative::Rule,
    pub greedy: bool,
    /// the prompt, then every emitted token with how it came
    pub prompt: Vec<PromptToken>,
    pub tokens: Vec<SpecToken>,
    pub last: Option<SpecCycleView>,
    pub cycles: usize,
    pub target_calls: usize,
    pub drafted: usize,
    pub accepted: usize,
    /// mean Σ min(p, q) over the checked positions: the measured α
    pub alpha: f64,
    pub tokens_per_call: f64,
    /// (1 − α^(γ+1)) / (1 − α) at the measured α
    pub formula: f64,
    /// wall-clock ms per emitted token, speculative and plain decoding on this backend
    pub spec_ms_per_token: f64,
    pub plain_ms_per_token: f64,
}
