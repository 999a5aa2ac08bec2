//! The model, the prompt and the transcript with its timings.

use decoding_engine::decode::generation::{Step, StopReason};
use decoding_engine::forward::kv_cache::CacheBytes;
use decoding_engine::Config;
use serde::{Deserialize, Serialize};

/// What the page needs to know about the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub name: String,
    pub config: Config,
    pub params: u64,
    /// Every token's piece, by id.
    pub pieces: Vec<String>,
    /// The format it was read from, and the architecture as its files name it.
    pub format: decoding_engine::model::Format,
    pub architecture: String,
    /// A GGUF file's tensor types ("Q4_K ×12, Q6_K ×3, F32 ×5"); None for other formats.
    pub tensor_types: Option<String>,
    /// What it has beyond llama2.c's Llama (`Model::extras`: "Q/K/V biases", …).
    #[serde(default)]
    pub extras: Vec<String>,
    /// The context its file was trained at, where longer than the one it runs at.
    #[serde(default)]
    pub trained_context: Option<u64>,
    /// Its file carries a chat template (the prompt's "Chat" toggle renders it).
    #[serde(default)]
    pub chat_template: bool,
    /// Its vocabulary starts a prompt with BOS (Qwen2's does not).
    #[serde(default = "yes")]
    pub add_bos: bool,
}

fn yes() -> bool {
    true
}

/// One token of the prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptToken {
    pub id: u32,
    pub piece: String,
}

/// Forward-pass timings, milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// The prompt's batched prefill.
    pub prefill_ms: Option<f64>,
    pub prefill_tokens: usize,
    /// The last decode steps (oldest first), in two parts: the forward pass of each new
    /// token (what the next distribution waits for) and the sampling chain that chose it.
    /// Browsers round worker clocks to 0.1 ms or so, so single steps of a small model read
    /// coarsely; `last_run` is the reliable rate.
    pub forward_ms: Vec<f64>,
    pub chain_ms: Vec<f64>,
    /// The last multi-token step request: tokens generated and its wall time (ms).
    pub last_run: Option<(usize, f64)>,
}

/// The generation's state: what the transcript, the controls and the KV panel show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptView {
    pub prompt: Vec<PromptToken>,
    /// The prompt and the generated tokens as text.
    pub prompt_text: String,
    pub generated_text: String,
    pub steps: Vec<Step>,
    /// Why generation cannot go on under the current settings (None: it can).
    pub stop: Option<StopReason>,
    /// Positions in the KV cache and its bytes.
    pub cache_len: usize,
    pub cache: CacheBytes,
    pub timings: Timings,
    /// The worker's wasm memory (its peak: it never shrinks); None natively.
    pub memory_bytes: Option<u64>,
    /// The worker's heap in use now (`heap::live_bytes`); None natively.
    pub heap_bytes: Option<u64>,
    /// Set when the end of the generated text repeats itself (a degenerate loop).
    pub loop_warning: Option<String>,
}

/// One sequence length of the cache comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    /// Tokens in the sequence when the next one is computed.
    pub n: usize,
    /// One decode step with the cache (the new token only), ms.
    pub cached_ms: f64,
    /// The same token without a cache (the whole prefix run again), ms.
    pub naive_ms: f64,
    /// Multiply-adds of each: O(n·d) attention with the cache, O(n²·d) without.
    pub cached_macs: u64,
    pub naive_macs: u64,
}
