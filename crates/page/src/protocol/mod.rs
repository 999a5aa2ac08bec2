//! The messages between the page (UI thread) and the engine's web worker. Requests go to the
//! worker, events come back; both are plain serde types with named fields, so the protocol is
//! checked by the compiler on both sides. They travel as JSON text ([`encode`] / [`decode`]):
//! one string through `postMessage` plus `serde_json` was measured faster than building a JS
//! object per number, and a trace's vocabulary-sized arrays go inside it as base64 of their
//! bytes ([`crate::packed`]), not a JSON number per token.

mod batch;
mod beam;
mod columns;
mod probe;
mod quant;
mod spec;
mod trace;
pub mod trace_view;
mod transcript;

pub use batch::*;
pub use beam::*;
pub use columns::*;
pub use probe::*;
pub use quant::*;
pub use spec::*;
pub use trace::*;
pub use transcript::*;

use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::backend::engine::BackendReport;
use decoding_engine::decode::sampling::Settings;
use decoding_engine::decode::speculative::{Draft, Rule};
use decoding_engine::formats::source::ModelFile;
use decoding_engine::Precision;
use serde::{Deserialize, Serialize};

/// UI → worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// Fetch a model's files (the page's own static files: its default model) and load
    /// them with `backend`. The page then opens its link's view (`Restore`) once the model
    /// has loaded.
    LoadUrl {
        urls: Vec<String>,
        backend: BackendChoice,
    },
    /// Files the user picked or dropped: told apart by content, checked, loaded with the
    /// backend in use, and the current prompt run on the new model. Their bytes travel
    /// beside the message, never in JSON (the glue builds this request).
    #[serde(skip)]
    LoadFiles {
        files: Files,
    },
    /// Switch backend; the transcript is rebuilt from its tokens on the new one.
    SetBackend {
        backend: BackendChoice,
    },
    /// Requantize the loaded weights (f32 / q8 / q4) in the worker; the transcript keeps its
    /// tokens and is rebuilt under the new weights.
    SetPrecision {
        precision: Precision,
    },
    /// The quantization panel opened (the worker then sends a `Quant` view after every
    /// change of the transcript) or closed (none, and the two other precisions are freed).
    Quantization {
        open: bool,
    },
    /// The view inside the step opened (the transcript's newest pass then runs with the
    /// probe, and the worker sends a `Probe` view after every change of the transcript) or
    /// closed (passes run without it again).
    Probe {
        open: bool,
    },
    /// A new prompt: prefill it (the transcript starts over). With `chat`, the prompt is
    /// one user message rendered through the model's chat template first.
    SetPrompt {
        prompt: String,
        #[serde(default)]
        chat: bool,
    },
    /// New validated settings: re-run the chain on the cached logits (no forward pass).
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
    /// Start a beam search from the prompt with the settings' beam parameters.
    BeamStart,
    /// Grow the beam tree by one token.
    BeamStep,
    /// A new beam search grown to `depth` levels, sent whole (a link's beam steps).
    BeamTo {
        depth: u32,
    },
    /// The toy-logits mode: the chain on hand-typed logits.
    Toy {
        logits: Vec<f64>,
        history: Vec<u32>,
    },
    /// Measure decoding with the KV cache against re-running the prefix, at these lengths.
    CacheCompare {
        positions: Vec<usize>,
    },
    /// A new speculative run from the transcript's prompt with the current settings, on
    /// its own sequence of the running backend (`draft` travels as its name, "quant:q8";
    /// whether the model has an early exit's layers is checked when the run starts).
    SpecStart {
        draft: Draft,
        gamma: u32,
        rule: Rule,
    },
    /// Run `count` more draft-and-verify cycles.
    SpecCycle {
        count: u32,
    },
    /// B lanes from the transcript's prompt stepping together (one pass of B rows a step,
    /// lane k with seed + k), grown to `tokens` tokens each; a run with the same B, prompt
    /// and knobs is extended, anything else starts a new one.
    BatchLanes {
        batch: u32,
        tokens: u32,
    },
    /// Prefill and decode throughput at each batch size on the running backend, and the
    /// machine's peaks (a read loop and a multiply-add loop in the worker).
    BatchSweep {
        batches: Vec<u32>,
        prompt_tokens: u32,
        gen_tokens: u32,
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
    /// "Same θ, different config" (lesson 10, section 6): 2 to 4 columns, each its own
    /// settings and its own sequence and KV cache of the one loaded model, from the
    /// transcript's prompt.
    ColumnsStart {
        columns: Vec<Settings>,
    },
    /// Every running column one more token, `count` times (the columns' newest tokens go
    /// through the model as one pass of one row each).
    ColumnsStep {
        count: u32,
    },
    /// Stop a running multi-token step at the next token.
    Cancel,
}

/// Worker → UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The worker is running and listening (messages sent before this would be lost).
    Ready,
    /// Bytes of `file` received so far (`total` when the server says).
    Progress {
        file: String,
        loaded: u64,
        total: Option<u64>,
    },
    Loaded {
        info: ModelInfo,
    },
    /// Which backend runs, and why.
    Backend {
        report: BackendReport,
    },
    Transcript {
        view: TranscriptView,
    },
    Trace {
        view: TraceView,
        toy: bool,
    },
    Beam {
        view: BeamView,
    },
    /// Cached against cache-less decoding, by sequence length.
    CacheCompare {
        rows: Vec<CompareRow>,
    },
    /// The precision the model's weights run at, and what they take.
    Precision {
        precision: Precision,
        weight_bytes: u64,
    },
    /// f32, f16, q8 and q4 side by side at the current position.
    Quant {
        view: QuantView,
    },
    /// Inside the newest step: its attention over the cache and the logit lens.
    Probe {
        view: ProbeView,
    },
    /// The speculative run.
    Spec {
        view: SpecView,
    },
    Lanes {
        view: LanesView,
    },
    Sweep {
        view: SweepView,
    },
    Serve {
        view: ServeView,
    },
    GpuSplit {
        view: GpuSplitView,
    },
    Columns {
        view: ColumnsView,
    },
    /// Something failed; the message is for the user. Nothing was lost.
    Error {
        message: String,
    },
}

/// Model files handed to the worker with a request (their bytes read by the worker's
/// glue, or held in memory in tests), taken once by the session that loads them.
#[derive(Clone, Default)]
pub struct Files(std::rc::Rc<std::cell::RefCell<Vec<ModelFile>>>);

impl Files {
    pub fn new(files: Vec<ModelFile>) -> Files {
        Files(std::rc::Rc::new(std::cell::RefCell::new(files)))
    }

    /// The files, taken (a second take finds none).
    pub fn take(&self) -> Vec<ModelFile> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.borrow().iter()).finish()
    }
}

/// Two handles are equal when they hold the same files.
impl PartialEq for Files {
    fn eq(&self, other: &Files) -> bool {
        std::rc::Rc::ptr_eq(&self.0, &other.0)
    }
}

/// The kinds of request that only restate the latest knobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnobKind {
    /// The sampling settings.
    Settings,
    /// The toy logits.
    Toy,
}

/// Which requests only restate the latest knobs (a later one of the same kind makes an
/// earlier one pointless, as long as no step runs between them).
pub fn knob_kind(req: &Request) -> Option<KnobKind> {
    match req {
        Request::SetSettings { .. } => Some(KnobKind::Settings),
        Request::Toy { .. } => Some(KnobKind::Toy),
        _ => None,
    }
}

/// Drops, from the trailing run of knob requests in `queue`, those of the kind of the one
/// about to be queued (`kind_of` maps a queued item to its knob kind).
pub fn coalesce<T>(
    queue: &mut std::collections::VecDeque<T>,
    new_kind: Option<KnobKind>,
    kind_of: impl Fn(&T) -> Option<KnobKind>,
) {
    let Some(k) = new_kind else { return };
    let tail = queue
        .iter()
        .rev()
        .take_while(|j| kind_of(j).is_some())
        .count();
    let mut i = queue.len() - tail;
    while i < queue.len() {
        if kind_of(&queue[i]) == Some(k) {
            queue.remove(i);
        } else {
            i += 1;
        }
    }
}

/// A message as the text `postMessage` carries. A message holding a non-finite number is
/// refused (JSON would carry it as `null`, which the other side cannot read as a number).
pub fn encode<T: Serialize>(msg: &T) -> Result<String, String> {
    crate::finite::check(msg).map_err(|e| format!("cannot encode a message: {e}"))?;
    serde_json::to_string(msg).map_err(|e| format!("cannot encode a message: {e}"))
}

/// A request from its text, or the message of the one error the worker answers a text it
/// cannot read with (a malformed draft name, a negative count: refused before any handler
/// runs).
pub fn read_request(text: &str) -> Result<Request, String> {
    decode(text).map_err(|err| format!("the worker cannot read a request: {err}"))
}

/// A message back from its text.
pub fn decode<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("cannot read a message: {e}"))
}

#[cfg(test)]
mod tests;
