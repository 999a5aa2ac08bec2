//! The messages between the page (UI thread) and the engine's web worker. Requests go to the
//! worker, events come back; both are plain serde types with named fields, so the protocol is
//! checked by the compiler on both sides. They travel as JSON text ([`encode`] / [`decode`]):
//! one string through `postMessage` plus `serde_json` was measured faster than building a JS
//! object per number, and a trace's vocabulary-sized arrays go inside it as base64 of their
//! bytes ([`crate::packed`]), not a JSON number per token.

use decoding_engine::beam::BeamNode;
use decoding_engine::generation::{Step, StopReason};
use decoding_engine::kv_cache::CacheBytes;
use decoding_engine::sampling::{Profile, Settings, Stage};
use decoding_engine::{Config, Precision};
use decoding_gpu::{BackendChoice, BackendReport};
use serde::{Deserialize, Serialize};

/// UI → worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// Fetch the model and tokenizer from the page's own static files, load them, open the
    /// backend, and show the page's view: its prompt, settings and `steps` tokens (a link).
    Load {
        model_url: String,
        tokenizer_url: String,
        backend: BackendChoice,
        prompt: String,
        settings: Settings,
        steps: u32,
        /// The weights' precision (none: the file's own), applied before the steps replay.
        #[serde(default)]
        precision: Option<Precision>,
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
    /// A new prompt: prefill it (the transcript starts over).
    SetPrompt {
        prompt: String,
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
    /// its own sequence of the running backend (`draft`: quant:q8, quant:q4, exit:K,
    /// ngram:N; `rule`: rejection or match).
    SpecStart {
        draft: String,
        gamma: u32,
        rule: String,
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
    pub backend: String,
    pub weight_bytes: u64,
    pub peaks: decoding_engine::roofline::Peaks,
    /// Each batch size's median run (prefill and decode medians taken apart).
    pub rows: Vec<decoding_engine::batching::Throughput>,
    /// Each row's runs: how many, and the lowest and highest tokens/s of each phase.
    pub spread: Vec<SweepSpread>,
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
    pub continuous: decoding_engine::batching::SimResult,
    pub static_: decoding_engine::batching::SimResult,
}

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

/// One precision of the same weights at the current position (measured on the CPU in the
/// worker).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrecisionView {
    pub precision: Precision,
    pub weight_bytes: u64,
    /// One decode step on the CPU, ms: the median of five interleaved rounds (each a mean
    /// over enough steps for the clock), and the middle three rounds' lowest and highest.
    pub decode_ms: f64,
    pub decode_range: (f64, f64),
    /// KL(p_f32 ‖ p) of the next-token distribution, nats (0 for f32 itself).
    pub kl: f64,
    /// The most likely next token, and whether it is f32's.
    pub top: u32,
    pub same_top: bool,
}

/// A token's probability under each precision (f32, q8, q4), softmax of the logits (the
/// model's own distribution, before the sampling chain).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuantToken {
    pub id: u32,
    pub piece: String,
    pub p: [f64; 3],
}

/// One weight row before and after quantization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeightRowView {
    /// e.g. "w2, layer 0, row 1"
    pub label: String,
    /// index in the row of the first weight shown
    pub from: usize,
    /// f32, q8, q4 values of the weights shown
    pub values: [Vec<f32>; 3],
    /// the largest |w_q − w_f32| over the whole row, for q8 and q4
    pub max_error: [f32; 2],
    /// each row's groups: how many groups the row touches, and whether its first one
    /// starts before the row (a straddling group)
    pub groups: [usize; 2],
    pub straddles: bool,
}

/// The quantization panel's view: the three precisions at the current position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuantView {
    /// tokens of context the distributions follow
    pub position: usize,
    /// f32, q8, q4
    pub precisions: Vec<PrecisionView>,
    /// the top tokens of any precision, by f32 probability
    pub tokens: Vec<QuantToken>,
    pub row: WeightRowView,
    /// true when the file itself was quantized (its "f32" is the dequantized weights)
    pub f32_is_dequantized: bool,
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

/// Inside the newest step (`decoding_engine::probe`): the token just processed at
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
    pub draft: String,
    pub gamma: usize,
    pub rule: String,
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

/// One stage's effect, summarised for its small before/after chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageView {
    pub stage: Stage,
    pub active: bool,
    pub setting: String,
    /// The peer whose default the setting is (the user left the knob unset).
    pub default_of: Option<Profile>,
    /// Tokens in play after the stage, and how many it removed.
    pub kept: usize,
    pub removed: usize,
    /// The probability mass those removed tokens had entering the stage (top-p's tail).
    pub mass_removed: f64,
    /// Probabilities of `TraceView::chart_ids` entering and leaving the stage.
    pub before: Vec<f32>,
    pub after: Vec<f32>,
}

/// The sampling chain's trace, shaped for drawing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceView {
    /// Token ids, most likely first by the final distribution (removed ones after, by the
    /// probability they had before removal).
    #[serde(with = "crate::packed")]
    pub order: Vec<u32>,
    /// Final probability of each token, by id.
    #[serde(with = "crate::packed")]
    pub probs: Vec<f32>,
    /// For a removed token: its probability entering the stage that removed it (else 0).
    #[serde(with = "crate::packed")]
    pub ghost: Vec<f32>,
    /// For a removed token: the index in `stages` of the stage that removed it (else -1).
    #[serde(with = "crate::packed")]
    pub removed_by: Vec<i8>,
    pub stages: Vec<StageView>,
    /// The ids the stage charts show (the most likely entering the chain).
    #[serde(with = "crate::packed")]
    pub chart_ids: Vec<u32>,
    pub kept: usize,
    pub entropy: f64,
    pub effective_tokens: f64,
    pub coin: Option<f64>,
    /// The token the next step would take with this coin.
    pub token: u32,
    pub rank: usize,
    pub prob: f64,
    /// Which generation step this distribution is for (None in toy mode).
    pub step: Option<usize>,
    /// Where an active top-p stage cut, drawn on the chart and listed by the rows.
    pub cut: Option<CutView>,
}

/// The top-p stage's view of its input: tokens most likely first with the running sum of
/// their probability (the first `CUT_ROWS`), and the threshold p.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CutView {
    /// The stage's index in `TraceView::stages`.
    pub stage: usize,
    pub p: f64,
    #[serde(with = "crate::packed")]
    pub ids: Vec<u32>,
    #[serde(with = "crate::packed")]
    pub cumulative: Vec<f32>,
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
    /// f32, q8 and q4 side by side at the current position.
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
    Columns {
        view: ColumnsView,
    },
    /// Something failed; the message is for the user. Nothing was lost.
    Error {
        message: String,
    },
}

/// Which requests only restate the latest knobs (a later one of the same kind makes an
/// earlier one pointless, as long as no step runs between them).
pub fn knob_kind(req: &Request) -> Option<u8> {
    match req {
        Request::SetSettings { .. } => Some(0),
        Request::Toy { .. } => Some(1),
        _ => None,
    }
}

/// Drops, from the trailing run of knob requests in `queue`, those of the kind of the one
/// about to be queued (`kind_of` maps a queued item to its knob kind).
pub fn coalesce<T>(
    queue: &mut std::collections::VecDeque<T>,
    new_kind: Option<u8>,
    kind_of: impl Fn(&T) -> Option<u8>,
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

/// A message back from its text.
pub fn decode<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("cannot read a message: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knob_requests_coalesce_only_after_the_last_step() {
        let set = |t: &str| Request::SetSettings {
            settings: Settings {
                temperature: t.parse().unwrap(),
                ..Settings::default()
            },
        };
        let toy = Request::Toy {
            logits: vec![1.0],
            history: vec![],
        };
        let mut q: std::collections::VecDeque<Request> = [
            set("0.1"),
            Request::Step { count: 1 },
            set("0.2"),
            toy.clone(),
            set("0.3"),
        ]
        .into();
        let new = set("0.4");
        coalesce(&mut q, knob_kind(&new), knob_kind);
        q.push_back(new);
        // The step keeps the settings it was asked under; after it, only the latest remain.
        assert_eq!(q, [set("0.1"), Request::Step { count: 1 }, toy, set("0.4")]);
    }

    #[test]
    fn settings_arrive_only_validated() {
        let msg = |json: &str| format!("{{\"type\":\"set_settings\",\"settings\":{json}}}");
        let e = decode::<Request>(&msg("{\"temperature\":[\"-1\"]}")).unwrap_err();
        assert!(e.contains("temperature: must be ≥ 0"), "{e}");
        let e = decode::<Request>(&msg("{\"strategy\":[\"beam\"],\"beams\":[\"0\"]}")).unwrap_err();
        assert!(e.contains("beams: must be in 1..=16"), "{e}");
        let e = decode::<Request>(&msg("{\"top_k\":[\"4294967299x\"]}")).unwrap_err();
        assert!(e.contains("top_k"), "{e}");
        let Request::SetSettings { settings } =
            decode::<Request>(&msg("{\"temperature\":[\"0.5\"],\"stop\":[\".\",\"!\"]}")).unwrap()
        else {
            panic!("not settings")
        };
        assert_eq!(settings.temperature, 0.5);
        assert_eq!(settings.stop, [".", "!"]);
    }

    #[test]
    fn messages_round_trip_as_json() {
        let reqs = [
            Request::Step { count: 3 },
            Request::SetSettings {
                settings: Settings::default(),
            },
            Request::Toy {
                logits: vec![2.0, 1.0, 0.1],
                history: vec![],
            },
            Request::Cancel,
        ];
        for r in reqs {
            assert_eq!(decode::<Request>(&encode(&r).unwrap()).unwrap(), r);
        }
        let e = Event::Progress {
            file: "m.bin".into(),
            loaded: 5,
            total: Some(10),
        };
        assert_eq!(decode::<Event>(&encode(&e).unwrap()).unwrap(), e);
        assert!(decode::<Request>("{\"type\":\"bogus\"}").is_err());
    }
}
