//! The sampling chain: the stages of [`Settings::order`] applied to the logits in turn, under
//! the profile's rules, then the draw. [`process`] returns a [`Trace`]: the distribution
//! entering and leaving every stage (what each removed is marked), the final distribution,
//! its entropy and exp(entropy), the coin and the token with its rank and probability. The
//! page draws the trace; nothing is recomputed in the UI.

use super::coin::{sample_from, stage_draw};
use super::knobs::Knob;
use super::profile::{Profile, Scope};
use super::settings::{Settings, Strategy};
use super::stage::{ChainState, Cut, Cx, Stage};
use super::stages;
use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum SamplingError {
    #[error("logit {id} is NaN")]
    NanLogit { id: usize },
    #[error("logit {id} is +infinity")]
    InfiniteLogit { id: usize },
    #[error("no logits to sample from")]
    Empty,
    #[error("{stage} removed every remaining token")]
    AllRemoved { stage: Stage },
    #[error("every logit is −infinity: there is nothing to sample")]
    NothingToSample,
    #[error("{stage} produced a value that is not a number or +infinity")]
    NonFinite { stage: Stage },
    #[error(
        "{stage} reads the tokens' text (its sequence breakers), which this path has not got: \
         give it none (breaker none) or turn it off here"
    )]
    NoText { stage: Stage },
    #[error("{stage} needs its mask, which this path has not got: turn it off here")]
    NoMask { stage: Stage },
}

/// What a stage may ask of the vocabulary (a stage may read token text).
pub trait TokenText {
    fn vocab_size(&self) -> usize;
    /// A token's text alone, as llama.cpp detokenizes one token (SentencePiece's dummy-prefix
    /// space removed).
    fn text(&self, id: u32) -> Vec<u8>;
    /// Text as tokens, no BOS.
    fn tokenize(&self, text: &str) -> Vec<u32>;
    /// A number that differs between vocabularies (a cache key).
    fn fingerprint(&self) -> u64;
}

/// What the chain sees besides the logits: the tokens so far (the prompt's and the
/// generated ones), the stages' state from the step before, and the vocabulary's text.
/// [STATE].
#[derive(Clone, Copy, Default)]
pub struct History<'a> {
    pub prompt: &'a [u32],
    pub generated: &'a [u32],
    /// The stages' state after the previous step (None: the first step).
    pub state: Option<&'a ChainState>,
    pub vocab: Option<&'a dyn TokenText>,
    /// The constraint's mask at this step (`decode::constraint`), where one is set.
    pub allowed: Option<&'a crate::decode::constraint::Allowed>,
}

impl std::fmt::Debug for History<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History")
            .field("prompt", &self.prompt)
            .field("generated", &self.generated)
            .field("state", &self.state)
            .finish()
    }
}

impl History<'_> {
    /// The tokens a penalty of `scope` sees, the last `window` of them (0 = all).
    pub fn seen(&self, scope: Scope, window: usize) -> Vec<u32> {
        let all: Vec<u32> = match scope {
            Scope::PromptAndOutput => self.prompt.iter().chain(self.generated).copied().collect(),
            Scope::OutputOnly => self.generated.to_vec(),
        };
        if window == 0 || window >= all.len() {
            all
        } else {
            all[all.len() - window..].to_vec()
        }
    }

    /// Prompt then generated tokens.
    pub fn all(&self) -> Vec<u32> {
        self.prompt.iter().chain(self.generated).copied().collect()
    }
}

/// One stage's effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageTrace {
    pub stage: Stage,
    /// False when the knob is at its neutral value (the stage is the identity) or the stage
    /// was replaced (`replaced_by`).
    pub active: bool,
    /// The knob's value.
    pub setting: String,
    /// The peer whose default the value is, when the user left the knob unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_of: Option<Profile>,
    /// Logits leaving the stage (−∞, serialised as null, for removed tokens); empty when the
    /// stage is inactive (it handed on what it received: the last active stage's, or the
    /// input's).
    pub logits: Vec<f64>,
    /// softmax of `logits`: the distribution leaving the stage; empty when inactive.
    pub probs: Vec<f64>,
    /// Tokens this stage removed.
    pub removed: Vec<u32>,
    /// Tokens still in play after the stage.
    pub kept: usize,
    /// Where the stage cut and what it held (its threshold, state, coin).
    #[serde(default)]
    pub cut: Cut,
    /// The stage that replaced the chain (`StageDef::replaces_chain`), when this one did not run for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_by: Option<Stage>,
}

/// Everything the chain did for one token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The model's logits and softmax, entering the chain.
    pub input_logits: Vec<f64>,
    pub input_probs: Vec<f64>,
    /// Every stage in chain order (empty when tracing was not asked for).
    pub stages: Vec<StageTrace>,
    /// The final distribution, in id order (0 for removed tokens).
    pub probs: Vec<f64>,
    /// Tokens with non-zero final probability.
    pub kept: usize,
    /// Entropy of the final distribution, in nats.
    pub entropy: f64,
    /// exp(entropy): the "effective number of tokens".
    pub effective_tokens: f64,
    /// The uniform number drawn (None for greedy).
    pub coin: Option<f64>,
    pub token: u32,
    /// 1 = the most likely token of the final distribution.
    pub rank: usize,
    /// The chosen token's final probability.
    pub prob: f64,
    /// The stages' state after this step (a stage's running values): the next
    /// step's `History::state`.
    #[serde(default)]
    pub state: ChainState,
    /// What each active stage recorded with named values (a state, a coin, a
    /// length), traced or not: the page draws them over the steps.
    #[serde(default)]
    pub cuts: Vec<(Stage, Cut)>,
}

/// Runs the chain on `logits` with the penalties seeing `history`, then picks the token:
/// the coin for sampling, the argmax for greedy (and for beam search, which ranks raw
/// log-probabilities elsewhere). `trace` keeps every stage's distributions.
pub fn process(
    settings: &Settings,
    logits: &[f32],
    history: History<'_>,
    coin: f64,
    trace: bool,
) -> Result<Trace, SamplingError> {
    run(
        settings,
        logits.iter().map(|&v| v as f64),
        history,
        coin,
        trace,
    )
}

thread_local! {
    /// The chain's working copy of the logits, kept from one call to the next: a fresh
    /// 256 KB vector for a 32,000-token vocabulary each step came from `mmap` and was
    /// page-faulted in afresh every time (a visible share of a greedy step in perf:
    /// BENCHMARKS.md, "Figures behind the code").
    static SCRATCH: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
}

/// [`process`] on f64 logits (the toy-logits mode types them by hand).
pub fn process_f64(
    settings: &Settings,
    logits: &[f64],
    history: History<'_>,
    coin: f64,
    trace: bool,
) -> Result<Trace, SamplingError> {
    run(settings, logits.iter().copied(), history, coin, trace)
}

/// The chain on its working copy `z` of the logits, the scratch filled from `logits` (one
/// copy a step, not two) and handed back afterwards.
fn run(
    settings: &Settings,
    logits: impl Iterator<Item = f64>,
    history: History<'_>,
    coin: f64,
    trace: bool,
) -> Result<Trace, SamplingError> {
    let mut z = SCRATCH.take();
    z.clear();
    z.extend(logits);
    let t = run_on(settings, &mut z, history, coin, trace);
    SCRATCH.set(z);
    t
}

fn run_on(
    settings: &Settings,
    z: &mut [f64],
    history: History<'_>,
    coin: f64,
    trace: bool,
) -> Result<Trace, SamplingError> {
    check_logits(z)?;
    let logits = if trace { z.to_vec() } else { Vec::new() };
    let mut stage_traces = Vec::new();
    let input_probs = if trace {
        stages::softmax(&logits)
    } else {
        Vec::new()
    };
    let mut before = logits.clone();
    let mut kept = logits.iter().filter(|v| v.is_finite()).count();
    let empty = ChainState::default();
    let state_in = history.state.unwrap_or(&empty);
    let draw = |k: u64| stage_draw(coin, k);
    let replacer = settings.replacing_stage();
    let mut cuts: Vec<(Stage, Cut)> = Vec::new();
    for &stage in &settings.order {
        let replaced_by = replacer.filter(|&(r, keep)| r != stage && !keep.contains(&stage));
        let active = !settings.is_neutral(stage) && replaced_by.is_none();
        let mut cut = Cut::default();
        if active && history.vocab.is_none() && stage.def().rule.reads_text(settings) {
            return Err(SamplingError::NoText { stage });
        }
        if active && history.allowed.is_none() && stage.def().rule.reads_mask(settings) {
            return Err(SamplingError::NoMask { stage });
        }
        if active {
            let cx = Cx {
                settings,
                history: &history,
                state: state_in.of(stage),
                draw: &draw,
            };
            cut = stage.def().rule.apply(&cx, z);
            check_output(stage, z)?;
            cuts.push((stage, cut.clone()));
        }
        if trace {
            // An inactive stage hands on what it received: nothing to copy (a chain of 18
            // stages copied 36 vocabulary-sized vectors a slider move).
            let mut t = if active {
                let t = stage_trace(stage, active, settings, &before, z, stages::softmax(z));
                before.clear();
                before.extend_from_slice(z);
                kept = t.kept;
                t
            } else {
                let mut t = stage_trace(stage, active, settings, &[], &[], Vec::new());
                t.kept = kept;
                t
            };
            t.cut = cut;
            t.replaced_by = replaced_by.map(|(r, _)| r);
            stage_traces.push(t);
        }
    }
    let mut t = choose(settings, z, coin);
    t.state = next_state(settings, &history, state_in, &cuts, &t);
    t.cuts = cuts
        .into_iter()
        .filter(|(_, c)| !c.values.is_empty())
        .map(|(s, c)| {
            let memo = Vec::new();
            (s, Cut { memo, ..c })
        })
        .collect();
    if trace {
        t.input_probs = input_probs;
        t.input_logits = logits;
        t.stages = stage_traces;
    }
    Ok(t)
}

/// Each stateful stage's state after the chosen token; a stage that did not run keeps its
/// state.
fn next_state(
    settings: &Settings,
    history: &History<'_>,
    state_in: &ChainState,
    cuts: &[(Stage, Cut)],
    t: &Trace,
) -> ChainState {
    let mut next = state_in.clone();
    let draw = |_: u64| 0.0;
    for (stage, cut) in cuts {
        let cx = Cx {
            settings,
            history,
            state: state_in.of(*stage),
            draw: &draw,
        };
        if let Some(v) = stage.def().rule.update(&cx, cut, t.token, &t.probs) {
            next.set(*stage, v);
        }
    }
    next
}

/// Only −∞ (removed) may leave a stage; the knobs' bounds keep finite logits finite, and
/// this check keeps any case they miss from reaching the page. (One pass for both
/// questions.)
fn check_output(stage: Stage, z: &[f64]) -> Result<(), SamplingError> {
    let (mut bad, mut finite) = (false, false);
    for v in z.iter() {
        bad |= v.is_nan() || *v == f64::INFINITY;
        finite |= v.is_finite();
    }
    if bad {
        return Err(SamplingError::NonFinite { stage });
    }
    if !finite {
        return Err(SamplingError::AllRemoved { stage });
    }
    Ok(())
}

/// Logits a chain can run on: some, none NaN or +∞, not all −∞.
fn check_logits(logits: &[f64]) -> Result<(), SamplingError> {
    if logits.is_empty() {
        return Err(SamplingError::Empty);
    }
    // One pass without an early exit (it vectorises); the faulty id is sought only when
    // there is one.
    let bad = logits
        .iter()
        .fold(false, |b, v| b | v.is_nan() | (*v == f64::INFINITY));
    for (id, &v) in logits.iter().enumerate().filter(|_| bad) {
        if v.is_nan() {
            return Err(SamplingError::NanLogit { id });
        }
        if v == f64::INFINITY {
            return Err(SamplingError::InfiniteLogit { id });
        }
    }
    if logits.iter().all(|v| v.is_infinite()) {
        return Err(SamplingError::NothingToSample);
    }
    Ok(())
}

/// What a stage did: its output, and the tokens it removed (finite before, −∞ after).
fn stage_trace(
    stage: Stage,
    active: bool,
    settings: &Settings,
    before: &[f64],
    z: &[f64],
    probs: Vec<f64>,
) -> StageTrace {
    let removed = before
        .iter()
        .zip(z)
        .enumerate()
        .filter(|(_, (b, a))| b.is_finite() && a.is_infinite())
        .map(|(i, _)| i as u32)
        .collect();
    StageTrace {
        stage,
        active,
        setting: settings.describe(stage),
        default_of: settings.default_of(Knob::of_stage(stage)),
        logits: z.to_vec(),
        removed,
        kept: z.iter().filter(|v| v.is_finite()).count(),
        probs,
        cut: Cut::default(),
        replaced_by: None,
    }
}

/// The final distribution, its entropy, and the token: the coin for sampling, the first
/// maximum for greedy and beam search. The trace's input and stages are left empty.
fn choose(settings: &Settings, z: &[f64], coin: f64) -> Trace {
    let probs = stages::softmax(z);
    // Entropy and the tokens kept in one pass (the sum in id order, as before).
    let (mut entropy, mut kept) = (-0.0f64, 0);
    for &p in probs.iter().filter(|&&p| p > 0.0) {
        entropy += -p * p.ln();
        kept += 1;
    }
    // A single surviving token gives −0.0; entropy is never negative.
    let entropy = if entropy > 0.0 { entropy } else { 0.0 };
    let greedy = matches!(settings.strategy, Strategy::Greedy | Strategy::Beam { .. });
    let token = if greedy {
        first_max(&probs)
    } else {
        sample_from(&probs, coin) as usize
    };
    let prob = probs[token];
    let rank = rank_of(&probs, token);
    Trace {
        input_probs: Vec::new(),
        input_logits: Vec::new(),
        stages: Vec::new(),
        kept,
        entropy,
        effective_tokens: entropy.exp(),
        coin: (!greedy).then_some(coin),
        token: token as u32,
        rank,
        prob,
        probs,
        state: ChainState::default(),
        cuts: Vec::new(),
    }
}

/// 1 + the tokens more likely than `token` (ties: the lower id first), as the rows are
/// sorted.
pub fn rank_of(probs: &[f64], token: usize) -> usize {
    let prob = probs[token];
    1 + probs
        .iter()
        .enumerate()
        .filter(|&(i, &p)| p > prob || (p == prob && i < token))
        .count()
}

fn first_max(p: &[f64]) -> usize {
    stages::first_argmax(p).unwrap_or(0)
}
