//! Speculative decoding (lesson 10, section 5: "a small draft model proposes several tokens;
//! the large model verifies them in one parallel forward pass and accepts the longest
//! correct prefix. Output distribution is provably unchanged").
//!
//! stories260K has no smaller sibling, so the drafts come from the model itself:
//! - `quant:q8` / `quant:q4`: the same weights quantized, on the CPU with its own cache;
//! - `exit:K`: the first K layers, then the final norm and the classifier. Its K layers are
//!   the target's, so it writes into the target's own KV cache (no second cache, no prefill
//!   of its own; the verify pass then rewrites those positions in every layer);
//! - `ngram:N`: prompt lookup (Hugging Face's `prompt_lookup_num_tokens`): the last N tokens
//!   matched against the earlier context, the tokens that followed proposed; no distribution.
//!
//! One cycle: the draft proposes γ tokens; the target runs the last emitted token and the γ
//! drafts as **one** forward pass of γ + 1 rows (the batch-of-rows pass), giving p at every
//! drafted position and one beyond; the cache is truncated to what was accepted (nothing is
//! recomputed). p and q are the **processed** distributions: the whole sampling chain on each
//! position's logits, its penalties seeing the history with the earlier drafts.
//!
//! Two exact rules ([`Rule`]):
//! - `rejection` (Leviathan et al. 2023, Chen et al. 2023; Hugging Face's
//!   `_speculative_sampling`, vLLM's rejection sampler): accept draft x with probability
//!   min(1, p(x)/q(x)); at the first rejection draw from norm(max(0, p − q)); all accepted: a
//!   bonus token from p. A draft without q (`ngram`) has q = one-hot on its token, as vLLM's
//!   n-gram proposer is verified.
//! - `match` (llama.cpp's server): the target draws its own token at each position, with the
//!   coin plain decoding would use there, and the draft is kept while it equals it: the text
//!   is the plain seeded decoding's, token for token.
//!
//! Greedy settings (temperature 0) accept while the draft equals the target's argmax, under
//! either rule. Randomness comes from the seeded per-step streams (`sampling::step_coins`):
//! draw 0 of step s is plain decoding's coin for the s-th emitted token (the target's own
//! token, the bonus), draw 1 the draft's, draw 2 the acceptance test, draw 3 the residual.
//! A speculative run is reproducible from its seed and the same on every backend.

use crate::backend::{Backend, BackendError};
use crate::decode::constraint::{Allowed, Constraint, ConstraintError};
use crate::decode::sampling::{process, step_coins, History, SamplingError, Settings};
use crate::forward::batch::SeqId;
use crate::forward::kv_cache::KvCache;
use crate::forward::{RunState, Transformer};
use crate::quant::Precision;
use std::sync::Arc;
use strum::{Display, EnumString, IntoStaticStr};
use thiserror::Error;

mod constrained;
mod verify;
pub use verify::*;

/// Most drafted tokens a cycle.
pub const MAX_GAMMA: usize = 16;

/// Where drafted tokens come from. Its serde form is its name ("quant:q8").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draft {
    /// The target's weights at this precision (q8 or q4).
    Quant(Precision),
    /// The target's first K layers.
    Exit(usize),
    /// Prompt lookup on the last N tokens.
    Ngram(usize),
}

impl Draft {
    /// "quant:q8", "quant:q4", "exit:K", "ngram:N" (K below the model's layers, N ≥ 1).
    pub fn parse(s: &str, n_layers: usize) -> Result<Draft, SpecError> {
        match s.split_once(':') {
            Some(("exit", arg)) => match arg.parse::<usize>() {
                Ok(k) => Draft::Exit(k).fits(n_layers),
                Err(_) => Err(SpecError::ExitLayer {
                    given: arg.to_string(),
                    layers: n_layers,
                }),
            },
            _ => Draft::from_name(s),
        }
    }

    /// The draft a name spells, before any model is known (a link, a request): quant:q8,
    /// quant:q4, exit:K, ngram:N with N from 1 to 64. Whether the model has the layers an
    /// early exit needs is [`Draft::fits`]'s check.
    pub fn from_name(s: &str) -> Result<Draft, SpecError> {
        let bad = || SpecError::BadDraft(s.to_string());
        let (kind, arg) = s.split_once(':').ok_or_else(bad)?;
        match kind {
            "quant" => match Precision::parse(arg) {
                Ok(p) if p != Precision::F32 => Ok(Draft::Quant(p)),
                _ => Err(bad()),
            },
            "exit" => arg.parse::<usize>().map(Draft::Exit).map_err(|_| bad()),
            "ngram" => match arg.parse::<usize>() {
                Ok(n) if (1..=64).contains(&n) => Ok(Draft::Ngram(n)),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }

    /// This draft for a model of `n_layers` layers: an early exit keeps 1 to n_layers − 1.
    pub fn fits(self, n_layers: usize) -> Result<Draft, SpecError> {
        match self {
            Draft::Exit(k) if !(1..n_layers).contains(&k) => Err(SpecError::ExitLayer {
                given: k.to_string(),
                layers: n_layers,
            }),
            d => Ok(d),
        }
    }

    pub fn name(&self) -> String {
        self.to_string()
    }
}

impl serde::Serialize for Draft {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Draft {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Draft, D::Error> {
        let name = String::deserialize(d)?;
        Draft::from_name(&name).map_err(serde::de::Error::custom)
    }
}

impl std::fmt::Display for Draft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Draft::Quant(p) => write!(f, "quant:{p}"),
            Draft::Exit(k) => write!(f, "exit:{k}"),
            Draft::Ngram(n) => write!(f, "ngram:{n}"),
        }
    }
}

/// How drafted tokens are verified.
#[derive(EnumString, IntoStaticStr, Display)]
#[strum(serialize_all = "snake_case")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    Rejection,
    Match,
}

impl Rule {
    /// Exactly a name.
    pub fn parse(s: &str) -> Result<Rule, SpecError> {
        s.parse().map_err(|_| SpecError::BadRule(s.to_string()))
    }

    /// Its one name (serde's, a link's, the CLI's).
    pub fn name(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Error, Clone, PartialEq)]
pub enum SpecError {
    #[error("draft {0:?}: give quant:q8, quant:q4, exit:K or ngram:N")]
    BadDraft(String),
    #[error("exit:{given}: K must be a whole number of layers from 1 to {} (the model has {layers})", layers - 1)]
    ExitLayer { given: String, layers: usize },
    #[error("rule {0:?}: give rejection or match")]
    BadRule(String),
    #[error("gamma {0}: draft 1 to {MAX_GAMMA} tokens a cycle")]
    BadGamma(usize),
    #[error("the prompt is empty (it needs at least BOS)")]
    EmptyPrompt,
    #[error(
        "{0} carries state from one token to the next, and speculative decoding checks several \
         drafted positions against one distribution each: turn {0} off to speculate"
    )]
    Stateful(crate::decode::sampling::Stage),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Sampling(#[from] SamplingError),
    #[error(transparent)]
    Constraint(#[from] ConstraintError),
}

/// What the verification of one drafted position saw.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Checked {
    pub token: u32,
    /// p(x) and q(x) of the drafted token (q = 1 for a draft without a distribution)
    pub p: f64,
    pub q: f64,
    /// min(1, p/q) under `rejection`; 1 or 0 (equal to the target's token) under `match`
    pub accept_probability: f64,
    /// Σ min(p, q): the chance any draft from q is accepted here (q one-hot: p(x))
    pub overlap: f64,
    pub accepted: bool,
    /// The constraint forbids this draft here (refused whatever p and q say).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forbidden: bool,
}

/// How a cycle's last token came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NextKind {
    /// drawn from norm(max(0, p − q)) at the first rejected position
    Resampled,
    /// the target's own token at the first mismatch (`match`, greedy)
    Target,
    /// every draft accepted: one more token from p
    Bonus,
}

/// One draft-and-verify cycle.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Cycle {
    /// the drafted positions, in order, up to and including the first rejected one
    pub checked: Vec<Checked>,
    /// tokens proposed (γ, or fewer at the context's end or without an n-gram match)
    pub drafted: Vec<u32>,
    pub accepted: usize,
    pub next: u32,
    pub next_kind: NextKind,
}

impl Cycle {
    /// The tokens the cycle emits: the accepted drafts, then the next token.
    pub fn emitted(&self) -> Vec<u32> {
        let mut t = self.drafted[..self.accepted].to_vec();
        t.push(self.next);
        t
    }
}

/// The target at one verified position: its processed distribution and its own token (the
/// chain's choice with plain decoding's coin).
#[derive(Debug, Clone)]
pub struct Target {
    pub p: Vec<f64>,
    pub token: u32,
}

/// Where the residual is drawn from after a rejection. `FromP` is the classic mistake
/// (drawing from p again), kept so the statistical test can show it catches it.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Residual {
    Correct,
    FromP,
}

/// A quantized draft: its weights with its own cache, and the tokens the cache holds.
struct QuantDraft {
    model: Arc<Transformer>,
    cache: KvCache,
    held: Vec<u32>,
    state: RunState,
}

/// The draft's own state.
enum DraftState {
    Quant(Box<QuantDraft>),
    Exit(usize),
    Ngram(usize),
}

/// The chain at the position after `prompt`, `emitted` and `extra` (drafts), with draw `draw`
/// of that step's coins: the processed distribution and the token it chooses.
fn chain(
    settings: &Settings,
    (prompt, emitted, extra): (&[u32], &[u32], &[u32]),
    logits: &[f32],
    draw: usize,
    allowed: Option<&Allowed>,
) -> Result<Target, SpecError> {
    let generated: Vec<u32> = emitted.iter().chain(extra).copied().collect();
    let coin = step_coins(settings.seed, generated.len() as u64)[draw];
    let history = History {
        prompt,
        generated: &generated,
        allowed,
        ..History::default()
    };
    let t = process(settings, logits, history, coin, false)?;
    Ok(Target {
        p: t.probs,
        token: t.token,
    })
}

/// A speculative generation: the target on any backend, the draft beside it.
pub struct Speculator {
    pub draft: Draft,
    pub gamma: usize,
    pub rule: Rule,
    seq: SeqId,
    prompt: Vec<u32>,
    emitted: Vec<u32>,
    state: DraftState,
    pub stats: SpecStats,
    /// The last cycle's distributions at its checked positions: p, and q (None without one).
    pub last_p: Vec<Vec<f64>>,
    pub last_q: Vec<Option<Vec<f64>>>,
    /// The constraint following the emitted tokens (`constrained.rs`).
    constraint: Option<Constraint>,
}

impl Speculator {
    /// Prefills the prompt but its last token on `target` (the first cycle runs it with the
    /// drafts) and builds the draft. `model` is the target's weights (the quantized draft is
    /// made from them).
    pub async fn start(
        target: &mut dyn Backend,
        model: &Transformer,
        prompt: Vec<u32>,
        draft: Draft,
        gamma: usize,
        rule: Rule,
    ) -> Result<Speculator, SpecError> {
        if !(1..=MAX_GAMMA).contains(&gamma) {
            return Err(SpecError::BadGamma(gamma));
        }
        if prompt.is_empty() {
            return Err(SpecError::EmptyPrompt);
        }
        let seq = target.new_sequence()?;
        let mut stats = SpecStats::default();
        if prompt.len() > 1 {
            target
                .forward(seq, &prompt[..prompt.len() - 1], false)
                .await?;
            stats.target_calls += 1;
        }
        let state = match draft {
            Draft::Quant(p) => {
                let m = Arc::new(model.at(p));
                DraftState::Quant(Box::new(QuantDraft {
                    cache: KvCache::new(&m.config),
                    state: RunState::new(&m.config),
                    model: m,
                    held: Vec::new(),
                }))
            }
            Draft::Exit(k) => DraftState::Exit(k),
            Draft::Ngram(n) => DraftState::Ngram(n),
        };
        Ok(Speculator {
            draft,
            gamma,
            rule,
            seq,
            prompt,
            emitted: Vec::new(),
            state,
            stats,
            last_p: Vec::new(),
            last_q: Vec::new(),
            constraint: None,
        })
    }

    pub fn emitted(&self) -> &[u32] {
        &self.emitted
    }

    pub fn prompt(&self) -> &[u32] {
        &self.prompt
    }

    pub fn release(self, target: &mut dyn Backend) {
        target.release(self.seq);
    }

    fn context(&self) -> Vec<u32> {
        self.prompt.iter().chain(&self.emitted).copied().collect()
    }

    /// Drafts up to `gamma` tokens after the context (whose last token is not yet in the
    /// target's cache): the tokens and, for model drafts, their processed distributions.
    async fn propose(
        &mut self,
        target: &mut dyn Backend,
        settings: &Settings,
        gamma: usize,
    ) -> Result<(Vec<u32>, Vec<Option<Vec<f64>>>), SpecError> {
        let context = self.context();
        let n = context.len();
        let (mut drafted, mut qs) = (Vec::new(), Vec::new());
        // The draft proposes unconstrained: the target's verification refuses what the
        // constraint forbids (p = 0 there), and the view shows the refusal.
        let draft_settings = constrained::unconstrained(settings);
        match &mut self.state {
            DraftState::Ngram(k) => {
                drafted = ngram_lookup(&context, *k, gamma);
                qs = vec![None; drafted.len()];
            }
            DraftState::Quant(d) => {
                let QuantDraft {
                    model,
                    cache,
                    held,
                    state,
                } = &mut **d;
                // Bring its cache up to the context in one batch (the tokens it has not
                // seen, the last one included: after a cycle that is the last accepted draft
                // and the new token), whose last row gives the first draft's logits.
                let common = held
                    .iter()
                    .zip(&context[..n - 1])
                    .take_while(|(a, b)| a == b)
                    .count();
                cache.truncate(common);
                held.truncate(common);
                let mut logits = model
                    .prefill(cache, &context[common..n], false)
                    .map_err(BackendError::from)?;
                held.extend_from_slice(&context[common..n]);
                for i in 0..gamma {
                    if i > 0 {
                        let last = drafted[i - 1];
                        model
                            .decode(state, cache, last, &mut logits)
                            .map_err(BackendError::from)?;
                        held.push(last);
                    }
                    let at = (&self.prompt[..], &self.emitted[..], &drafted[..]);
                    let t = chain(&draft_settings, at, &logits, 1, None)?;
                    drafted.push(t.token);
                    qs.push(Some(t.p));
                }
            }
            DraftState::Exit(k) => {
                let k = *k;
                let mut last = context[n - 1];
                for _ in 0..gamma {
                    let logits = target.forward_exit(self.seq, &[last], k).await?;
                    let at = (&self.prompt[..], &self.emitted[..], &drafted[..]);
                    let t = chain(&draft_settings, at, &logits, 1, None)?;
                    drafted.push(t.token);
                    qs.push(Some(t.p));
                    last = t.token;
                }
                // The verify pass runs these positions again in every layer.
                target.truncate(self.seq, n - 1)?;
            }
        }
        Ok((drafted, qs))
    }

    /// One cycle: draft, verify in one target pass of (drafts + 1) rows, keep what was
    /// accepted. `max_new` bounds the tokens it may emit (≥ 1).
    pub async fn cycle(
        &mut self,
        target: &mut dyn Backend,
        settings: &Settings,
        max_new: usize,
    ) -> Result<Cycle, SpecError> {
        let context = self.context();
        let n = context.len();
        if let Some(stage) = settings.stateful_stage() {
            return Err(SpecError::Stateful(stage));
        }
        let seq_len = target.config().seq_len;
        // Positions n-1 .. n-1+γ must fit the context and the γ + 1 tokens it may emit too
        // (as plain decoding stops at the context's end); emit at most max_new tokens.
        let gamma = self
            .gamma
            .min(seq_len.saturating_sub(n + 1))
            .min(max_new.saturating_sub(1));
        let (drafted, qs) = self.propose(target, settings, gamma).await?;
        let mut rows = vec![context[n - 1]];
        rows.extend_from_slice(&drafted);
        let logits = target.forward(self.seq, &rows, true).await?;
        let v = target.config().vocab_size;
        // The constraint's mask at each position up to the first draft it forbids (the
        // verification stops there: p = 0 for that draft).
        let masks = constrained::masks(settings, self.constraint.as_ref(), &drafted)?;
        let mut targets = Vec::with_capacity(rows.len());
        for (i, l) in logits.chunks(v).enumerate() {
            let at = (&self.prompt[..], &self.emitted[..], &drafted[..i]);
            match &masks {
                Some(m) if i >= m.len() => break,
                Some(m) => targets.push(chain(settings, at, l, 0, Some(&m[i]))?),
                None => targets.push(chain(settings, at, l, 0, None)?),
            }
        }
        let s = self.emitted.len() as u64;
        let seed = settings.seed;
        let greedy = settings.is_greedy();
        let mut cycle = verify(self.rule, greedy, &drafted, &qs, &targets, |i| {
            step_coins(seed, s + i as u64)
        });
        constrained::follow(self.constraint.as_mut(), masks.as_deref(), &mut cycle)?;
        target.truncate(self.seq, n + cycle.accepted)?;
        let checked = cycle.checked.len();
        self.last_p = targets.into_iter().take(checked).map(|t| t.p).collect();
        self.last_q = qs.into_iter().take(checked).collect();
        self.emitted.extend(cycle.emitted());
        self.stats.cycles += 1;
        self.stats.target_calls += 1;
        self.stats.drafted += drafted.len();
        self.stats.accepted += cycle.accepted;
        self.stats.emitted += cycle.accepted + 1;
        Ok(cycle)
    }

    /// Cycles until `max_tokens` are emitted or an end token is (the text is cut after it).
    pub async fn run(
        &mut self,
        target: &mut dyn Backend,
        settings: &Settings,
        max_tokens: usize,
        end_tokens: &[u32],
    ) -> Result<Vec<Cycle>, SpecError> {
        let mut cycles = Vec::new();
        while self.emitted.len() < max_tokens
            && self.prompt.len() + self.emitted.len() < target.config().seq_len
        {
            let c = self
                .cycle(target, settings, max_tokens - self.emitted.len())
                .await?;
            cycles.push(c);
            if let Some(i) = self.emitted.iter().position(|t| end_tokens.contains(t)) {
                self.emitted.truncate(i + 1);
                break;
            }
        }
        Ok(cycles)
    }
}

#[cfg(test)]
mod name_tests;
