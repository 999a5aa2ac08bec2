//! The quantization panel: the four precisions at the current position.

use decoding_engine::Precision;
use serde::{Deserialize, Serialize};

/// The quantization panel opened (the worker then sends a `Quant` view after every change
/// of the transcript) or closed (none, and the other precisions are freed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum QuantRequest {
    Quantization { open: bool },
}

/// f32, f16, q8 and q4 side by side at the current position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum QuantEvent {
    Quant { view: QuantView },
}

/// The precisions the panel runs side by side (`Precision::ALL`: f32, f16, q8, q4).
pub const PRECISIONS: usize = Precision::ALL.len();

/// One precision of the same weights at the current position (measured on the CPU in the
/// worker).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrecisionView {
    pub precision: Precision,
    pub weight_bytes: u64,
    /// One decode step on the CPU, ms: the median of five rounds after warm-up steps (each a
    /// mean over enough steps for the clock), and the middle three rounds' lowest and
    /// highest.
    pub decode_ms: f64,
    pub decode_range: (f64, f64),
    /// KL(p_f32 ‖ p) of the next-token distribution, nats (0 for f32 itself).
    pub kl: f64,
    /// q8 and q4: the same KL with float32 activations (the weights rounded, x not).
    pub kl_f32_activations: Option<f64>,
    /// The most likely next token, and whether it is f32's.
    pub top: u32,
    pub same_top: bool,
}

/// A token's probability under each precision (f32, f16, q8, q4), softmax of the logits (the
/// model's own distribution, before the sampling chain).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuantToken {
    pub id: u32,
    pub piece: String,
    pub p: [f64; PRECISIONS],
}

/// One weight row before and after quantization (the default: none shown yet).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WeightRowView {
    /// e.g. "w2, layer 0, row 1"
    pub label: String,
    /// index in the row of the first weight shown
    pub from: usize,
    /// f32, f16, q8, q4 values of the weights shown
    pub values: [Vec<f32>; PRECISIONS],
    /// the largest |w − w_f32| over the whole row, for f16, q8 and q4
    pub max_error: [f32; PRECISIONS - 1],
    /// q8's and q4's groups: how many groups the row touches, and whether its first one
    /// starts before the row (a straddling group)
    pub groups: [usize; 2],
    pub straddles: bool,
}

/// The quantization panel's view: the four precisions at the current position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuantView {
    /// tokens of context the distributions follow
    pub position: usize,
    /// f32, f16, q8, q4
    pub precisions: Vec<PrecisionView>,
    /// the top tokens of any precision, by f32 probability
    pub tokens: Vec<QuantToken>,
    pub row: WeightRowView,
    /// true when the file itself was quantized (its "f32" is the dequantized weights)
    pub f32_is_dequantized: bool,
    /// A decode step of each precision on the 15M shape's random weights (a model that
    /// does not stay in the cache), measured once while the panel is open.
    #[serde(default)]
    pub shape: Option<ShapeDecode>,
    /// The loaded file's own blocks (a GGUF file's types, held as the file holds them: what
    /// the transcript runs) beside the four precisions made from it; None where the model
    /// runs at one of the four.
    #[serde(default)]
    pub file: Option<FileBlocks>,
}

/// A GGUF file's tensors as the file holds them, measured as the four precisions are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileBlocks {
    /// Its tensor types with their counts ("Q4_K ×12, Q6_K ×3, F32 ×5").
    pub types: String,
    /// Its row (`precision` is `Ggml`; its KL is from the f32 made from the same file, so
    /// what the int8 activations add).
    pub run: PrecisionView,
}

/// Decode steps of the 15M shape's random weights at f32, f16, q8 and q4 (`SHAPE_15M`), at
/// the same position of the same tokens, on the CPU in the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShapeDecode {
    /// tokens in the cache before the timed step
    pub position: usize,
    pub weight_bytes: [u64; PRECISIONS],
    /// ms a step: the median of five rounds, and the middle three rounds' lowest and highest
    pub decode_ms: [(f64, f64, f64); PRECISIONS],
}
