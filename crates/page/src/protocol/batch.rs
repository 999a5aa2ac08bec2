//! The batching panel: B lanes, the throughput sweep, the serving simulation.

use super::transcript::PromptToken;
use serde::{Deserialize, Serialize};

/// The batching panel's requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum BatchRequest {
    /// B lanes from the transcript's prompt stepping together (one pass of B rows a step,
    /// lane k with seed + k), grown to `tokens` tokens each; a run with the same B, prompt
    /// and knobs is extended, anything else starts a new one.
    BatchLanes { batch: u32, tokens: u32 },
    /// Prefill and decode throughput at each batch size on the running backend, and the
    /// machine's peaks (a read loop and a multiply-add loop in the worker).
    BatchSweep {
        batches: Vec<u32>,
        prompt_tokens: u32,
        gen_tokens: u32,
        /// Which weights: the loaded model's (the default), or random ones of a shape
        /// that leaves the cache.
        #[serde(default)]
        model: SweepModel,
    },
    /// Where a decoded token's time goes on the GPU backend: each kernel's GPU time
    /// (timestamps) and the launch overhead.
    GpuSplit,
    /// A seeded trace of requests through `slots` slots, continuous and static.
    ServeSim {
        slots: u32,
        requests: u32,
        seed: u64,
    },
}

/// The weights a measurement times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepModel {
    /// The loaded model, on the running backend.
    #[default]
    Loaded,
    /// Random weights of llama2.c's 15M shape ([`SHAPE_15M`]: 61 MB at f32) on the CPU: a
    /// model whose weights do not stay in the cache next to the cores, so a decode step
    /// waits on memory as a real model's does (a 1 MB model never leaves the cache).
    Random15M,
}

/// llama2.c's stories15M shape, as a checkpoint header: dim, hidden, layers, heads, K/V
/// heads, vocabulary, context.
pub const SHAPE_15M: [i32; 7] = [288, 768, 6, 6, 6, 32000, 256];

impl SweepModel {
    /// In words, for the views that show it.
    pub fn words(self) -> &'static str {
        match self {
            SweepModel::Loaded => "the loaded model",
            SweepModel::Random15M => {
                "random weights of the 15M shape (dim 288, 6 layers, vocabulary 32,000), made by the worker for this measurement"
            }
        }
    }
}

/// The batching panel's views.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum BatchEvent {
    Lanes { view: LanesView },
    Sweep { view: SweepView },
    Serve { view: ServeView },
    GpuSplit { view: GpuSplitView },
}

/// One lane of the batching panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneView {
    pub seed: u64,
    pub tokens: Vec<PromptToken>,
    /// the tokens as text after the prompt (end tokens left out)
    pub text: String,
    /// an end token or the context stopped it
    pub stopped: bool,
}

/// B lanes stepping together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LanesView {
    pub batch: usize,
    pub prompt: Vec<PromptToken>,
    pub prompt_text: String,
    pub lanes: Vec<LaneView>,
    /// decode passes run (one row per running lane each), their mean wall time, and the
    /// prefill pass's (B × the prompt's rows)
    pub passes: usize,
    pub decode_ms_per_pass: f64,
    pub prefill_ms: f64,
    /// tokens of all lanes per second of decode passes
    pub tokens_per_s: f64,
}

/// Throughput against batch size on the running backend, and where it lands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepView {
    /// The weights timed.
    #[serde(default)]
    pub model: SweepModel,
    pub backend: String,
    pub weight_bytes: u64,
    pub peaks: decoding_engine::serving::roofline::Peaks,
    /// Each batch size's median run (prefill and decode medians taken apart).
    pub rows: Vec<decoding_engine::serving::batching::Throughput>,
    /// Each row's runs: how many, and the lowest and highest tokens/s of each phase.
    pub spread: Vec<SweepSpread>,
}

/// Where a decoded token's time goes on the GPU: each kernel's GPU time (timestamps around
/// each dispatch) and the rest of the step's wall time (launches, barriers, the read-back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuSplitView {
    /// decode steps timed (one row each)
    pub tokens: u64,
    /// seconds a token; None when the adapter writes no timestamps
    pub split: Option<decoding_engine::backend::timing::TimeSplit>,
    /// each kernel over the timed steps
    pub kernels: Vec<decoding_engine::backend::timing::KernelTime>,
    /// why there is no split, in words
    pub note: Option<String>,
}

/// How a sweep row's repeated runs spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSpread {
    pub batch: usize,
    pub reps: usize,
    /// The middle half of the runs' tokens/s (25th and 75th percentiles): one run slowed by
    /// the machine or the browser's compiler does not widen it.
    pub prefill: (f64, f64),
    pub decode: (f64, f64),
    /// Every run's (prefill, decode) tokens/s, in the order run.
    pub runs: Vec<(f64, f64)>,
}

/// One request of the serving simulation, as both policies ran it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServeView {
    pub slots: usize,
    pub seed: u64,
    /// (prompt tokens, tokens asked for) of each request
    pub requests: Vec<(usize, usize)>,
    pub continuous: decoding_engine::serving::batching::SimResult,
    pub static_: decoding_engine::serving::batching::SimResult,
}
