//! Inside the step: the new token's attention and the logit lens.

use serde::{Deserialize, Serialize};

/// The view inside the step opened (the transcript's newest pass then runs with the probe,
/// and the worker sends a `Probe` view after every change of the transcript) or closed
/// (passes run without it again).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ProbeRequest {
    Probe { open: bool },
}

/// Inside the newest step: its attention over the cache and the logit lens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ProbeEvent {
    Probe { view: ProbeView },
}

/// One token of the lens: a layer's most likely next token and its probability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LensToken {
    pub id: u32,
    pub piece: String,
    pub p: f64,
}

/// The lens at the newest position, one layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LensLayerView {
    /// most likely first
    pub top: Vec<LensToken>,
    /// KL(p_final ‖ p_layer), nats
    pub kl: f64,
}

/// Inside the newest step (`decoding_engine::forward::probe`): the token just processed at
/// position `pos`, its query's attention over the pos + 1 cached positions per layer and
/// head, and the raw logit lens over the last positions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeView {
    pub pos: usize,
    /// the token at each cached position 0..=pos
    pub pieces: Vec<String>,
    pub n_layers: usize,
    pub n_heads: usize,
    pub n_kv_heads: usize,
    pub head_size: usize,
    /// (n_layers, n_heads, pos + 1) softmax weights
    pub attention: Vec<f32>,
    /// positions of the lens's columns (the last few), ascending
    pub lens_positions: Vec<usize>,
    /// (n_layers, lens positions) each layer's most likely next token at each position
    pub lens: Vec<LensToken>,
    /// each layer's distribution at `pos`
    pub last: Vec<LensLayerView>,
    /// where the record came from: the step's own pass, or one probed pass over the
    /// sequence (the view opened after the step, or a rewind)
    pub from_step: bool,
    /// milliseconds the probed pass (when it was this request's) and the lens took
    pub probe_ms: f64,
}
