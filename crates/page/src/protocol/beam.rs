//! The beam tree beside greedy.

use decoding_engine::decode::beam::BeamNode;
use serde::{Deserialize, Serialize};

/// The beam panel's requests: a search from the prompt with the settings' beam
/// parameters, one level more, or a new search grown to `depth` levels (a link's steps).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum BeamRequest {
    BeamStart,
    BeamStep,
    BeamTo { depth: u32 },
}

/// The beam tree as it grew.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum BeamEvent {
    Beam { view: BeamView },
}

/// A finished (or cut) beam hypothesis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HypothesisView {
    pub tokens: Vec<u32>,
    pub text: String,
    pub sum_logprob: f64,
    pub score: f64,
    pub node: usize,
    pub ended: bool,
}

/// The beam tree so far, and greedy's path over the same depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeamView {
    /// The tree starts over (a new search): the page drops the nodes it holds.
    pub reset: bool,
    /// How many nodes the page holds before applying `changed`, and after.
    pub base: usize,
    pub node_count: usize,
    /// The nodes that are new since the last view or whose status changed (a beam pruned or
    /// finished): the tree travels as its changes, never whole.
    pub changed: Vec<BeamNode>,
    pub finished: Vec<HypothesisView>,
    pub depth: usize,
    pub done: bool,
    pub width: usize,
    /// Greedy over `depth` tokens: its tokens, text and total log-probability.
    pub greedy_tokens: Vec<u32>,
    pub greedy_text: String,
    pub greedy_logprob: f64,
    /// Greedy's total log-probability after each of its tokens (its path off the tree).
    pub greedy_cum: Vec<f64>,
    /// The best live or finished prefix at this depth (its total log-probability).
    pub best_logprob: f64,
    pub best_text: String,
    /// The node ending that prefix (its path is highlighted; the transcript mirrors it).
    pub best_node: Option<usize>,
}
