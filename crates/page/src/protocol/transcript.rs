//! The prompt and the transcript with its timings, and the logits of its next position.

use decoding_engine::decode::generation::{Step, StopReason};
use decoding_engine::decode::sampling::{ChainState, Settings};
use decoding_engine::forward::kv_cache::CacheBytes;
use serde::{Deserialize, Serialize};

/// The transcript's requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TranscriptRequest {
    /// A new prompt: prefill it (the transcript starts over). With `chat`, the prompt is
    /// one user message rendered through the model's chat template first.
    SetPrompt {
        prompt: String,
        #[serde(default)]
        chat: bool,
    },
    /// New validated settings for the next steps (the page runs the chain on the logits it
    /// holds itself; the worker answers only what the settings change: the transcript's stop
    /// reason, the beam search).
    SetSettings {
        settings: Settings,
    },
    /// Generate up to `count` tokens (stops early on a stop condition or a cancel).
    Step {
        count: u32,
    },
    Rewind,
    Reset,
    /// Everything a link holds: prompt, settings, and how many tokens to replay.
    Restore {
        prompt: String,
        settings: Settings,
        steps: u32,
    },
    /// Stop a running multi-token step at the next token.
    Cancel,
}

/// The transcript, and the logits the next token is drawn from.
#[allow(clippy::large_enum_variant)] // a message, built once and moved once
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TranscriptEvent {
    Transcript { view: TranscriptView },
    Next { view: NextView },
}

/// The logits of the transcript's next position and the history the chain reads beside
/// them: the page runs the sampling chain on them itself, at every knob move
/// (`NextView::trace`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextView {
    /// The generation step the logits are for (the number of tokens generated): the
    /// step's coin comes from it.
    pub step: usize,
    #[serde(with = "crate::packed")]
    pub logits: Vec<f32>,
    #[serde(with = "crate::packed")]
    pub prompt: Vec<u32>,
    #[serde(with = "crate::packed")]
    pub generated: Vec<u32>,
    /// The chain's stage state after the last step (`Trace::state`).
    #[serde(default)]
    pub state: ChainState,
    /// The constraint's mask at this position, where the settings set one (computed by the
    /// worker's matcher; the chain here applies it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<decoding_engine::decode::constraint::Allowed>,
    /// The constraint the mask is for (`kind:source`): a mask is applied only to its own
    /// constraint, never to one typed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_for: Option<String>,
    /// Why the settings' constraint could not be followed (its syntax error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint_error: Option<String>,
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
    pub loop_warning: Option<LoopWarning>,
}

/// A degenerate loop at the end of the text: a phrase of `period` tokens repeated `repeats`
/// times in a row within the last `window` tokens (the page says it in its language).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopWarning {
    pub period: usize,
    pub repeats: usize,
    pub window: usize,
    /// The phrase as text.
    pub phrase: String,
}
