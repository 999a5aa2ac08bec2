//! The generation loop as state (lesson 10, section 1): prompt → prefill → step one token /
//! rewind one token / reset, with the stop conditions (end token, max tokens, a stop sequence
//! matched on the text across token boundaries, context full). [STATE].
//!
//! The logits of the last [`LOGITS_KEPT`] tokens are kept, so rewinding that far only
//! truncates the cache (nothing is recomputed; further back, one token's forward pass runs
//! again) and a moved slider re-runs the chain on the current logits
//! ([`Generation::preview`]) without a forward pass. Keeping every step's logits cost
//! 128 KB a token at a 32,000-token vocabulary: a large share of the CLI's peak memory over
//! a run (BENCHMARKS.md, "Figures behind the code"), and unbounded in a long page session.
//! Each step draws its own coin ([`step_coin`]), so rewind-and-step with unchanged settings
//! gives the same token.

pub use super::loops::{detect_loop, Loop, LOOP_WINDOW};
use crate::backend::{Backend, BackendError};
use crate::decode::constraint::Constraint;
use crate::decode::sampling::{
    process, step_coin, ChainState, Cut, History, SamplingError, Settings, Stage, Trace,
};
use crate::forward::batch::SeqId;
use crate::forward::batch::{Batch, Logits};
use crate::forward::probe::{ProbeRecord, ProbeSpec};
use crate::tokenizer::Tokenizer;
use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum GenerationError {
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Sampling(#[from] SamplingError),
    #[error("the prompt is empty: it needs at least the BOS token")]
    EmptyPrompt,
    #[error("nothing to rewind: no token has been generated")]
    NothingToRewind,
    #[error(transparent)]
    Constraint(#[from] crate::decode::constraint::ConstraintError),
}

/// Why generation stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum StopReason {
    /// The model produced an end token (EOS, or BOS, which llama2.c models use as a
    /// sequence delimiter).
    EndOfSequence {
        token: u32,
    },
    MaxTokens {
        max: usize,
    },
    StopSequence {
        stop: String,
    },
    ContextFull {
        seq_len: usize,
    },
    /// The constraint is complete: the text is an instance and nothing may follow (or the
    /// model chose to end where it could).
    ConstraintComplete,
    /// The constraint allows no token here (not even the end): nothing to sample from.
    ConstraintUnsatisfiable,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::EndOfSequence { token } => write!(f, "end of sequence (token {token})"),
            StopReason::MaxTokens { max } => write!(f, "max tokens ({max})"),
            StopReason::StopSequence { stop } => write!(f, "stop sequence {stop:?}"),
            StopReason::ContextFull { seq_len } => write!(f, "context full ({seq_len} tokens)"),
            StopReason::ConstraintComplete => write!(f, "constraint complete"),
            StopReason::ConstraintUnsatisfiable => {
                write!(f, "the constraint allows no token here")
            }
        }
    }
}

/// One generated token and how it was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub token: u32,
    /// The piece as shown in the vocabulary.
    pub piece: String,
    /// Probability in the final (processed) distribution it was drawn from.
    pub prob: f64,
    /// The model's own probability of the token (softmax of the raw logits, T = 1): what
    /// greedy and T = 0 share, while `prob` is 1 at T = 0.
    pub model_prob: f64,
    /// 1 = the most likely token.
    pub rank: usize,
    /// How many tokens the chain left to draw from (top-k holds it at k; top-p's set
    /// grows and shrinks with the model's confidence).
    pub kept: usize,
    pub coin: Option<f64>,
    /// The most likely tokens of that distribution, (id, prob), for hovering.
    pub top: Vec<(u32, f64)>,
    /// The stages' state after this token (`Trace::state`): the next step starts from it.
    #[serde(default)]
    pub state: ChainState,
    /// What the active stages recorded (`Trace::cuts`), drawn over the steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cuts: Vec<(Stage, Cut)>,
}

/// What `step` did.
#[derive(Debug, Clone, PartialEq)]
pub enum StepOutcome {
    Token {
        /// The final distribution, coin and choice (not the per-stage arrays).
        trace: Box<Trace>,
        stop: Option<StopReason>,
    },
    Stopped(StopReason),
}

/// Steps whose logits are kept for rewinding without a forward pass.
pub const LOGITS_KEPT: usize = 64;

/// How many of a step's most likely tokens are kept for hovering.
const TOP_KEPT: usize = 20;

pub struct Generation {
    seq: SeqId,
    prompt: Vec<u32>,
    generated: Vec<Step>,
    /// logits[i]: next-token logits after prompt + generated[..i]; emptied (freed) for all
    /// but the prefill's and the last `LOGITS_KEPT + 1`.
    logits: Vec<Vec<f32>>,
    /// logits[1..freed_to] are freed.
    freed_to: usize,
    pub(super) end_tokens: Vec<u32>,
    seq_len: usize,
    /// With a probe set, the newest token's forward pass records it ([`crate::forward::probe`]).
    probe: Option<ProbeSpec>,
    /// The last probed pass's record (dropped when the sequence changes without one).
    probed: Option<ProbeRecord>,
    /// Steps whose logits are kept ([`LOGITS_KEPT`] unless [`Generation::keep_logits`]).
    logits_kept: usize,
    /// The constraint following the generated tokens (`generation_constraint.rs`).
    pub(super) constraint: Option<Constraint>,
}

impl Generation {
    /// Prefills the prompt (BOS included) on a new sequence of `backend`.
    pub async fn start(
        backend: &mut dyn Backend,
        prompt: Vec<u32>,
        end_tokens: Vec<u32>,
    ) -> Result<Generation, GenerationError> {
        if prompt.is_empty() {
            return Err(GenerationError::EmptyPrompt);
        }
        let seq = backend.new_sequence()?;
        let logits = match backend.forward(seq, &prompt, false).await {
            Ok(l) => l,
            Err(e) => {
                backend.release(seq);
                return Err(e.into());
            }
        };
        Ok(Generation {
            seq,
            prompt,
            generated: Vec::new(),
            logits: vec![logits],
            freed_to: 1,
            end_tokens,
            seq_len: backend.config().seq_len,
            probe: None,
            probed: None,
            logits_kept: LOGITS_KEPT,
            constraint: None,
        })
    }

    /// Keeps the logits of the last `steps` steps (and the prefill's, and the newest) from
    /// now on: a one-shot run that never rewinds (the CLI's `generate`) keeps none, 8 MB
    /// less at a 32,000-token vocabulary than the page's 64.
    pub fn keep_logits(&mut self, steps: usize) {
        self.logits_kept = steps;
        self.forget_old_logits();
    }

    /// Rebuilds the state on another backend from the tokens alone (backend switch, lost
    /// GPU): the prompt and the generated tokens are run again; the transcript is kept.
    pub async fn rebuild(&self, backend: &mut dyn Backend) -> Result<Generation, GenerationError> {
        let mut g =
            Generation::start(backend, self.prompt.clone(), self.end_tokens.clone()).await?;
        g.logits_kept = self.logits_kept;
        let forwarded = self.logits.len() - 1;
        if forwarded > 0 {
            let toks: Vec<u32> = self.generated[..forwarded]
                .iter()
                .map(|s| s.token)
                .collect();
            // Logits only for the steps that keep them: 4,096 tokens at a 32,000-token
            // vocabulary would be 512 MB of rows to throw away.
            let head = forwarded.saturating_sub(g.logits_kept + 1);
            if head > 0 {
                backend.forward(g.seq, &toks[..head], false).await?;
                g.logits.resize(head + 1, Vec::new());
                g.freed_to = head + 1;
            }
            let all = backend.forward(g.seq, &toks[head..], true).await?;
            let v = backend.config().vocab_size;
            for row in all.chunks(v) {
                g.logits.push(row.to_vec());
            }
            g.forget_old_logits();
        }
        g.generated = self.generated.clone();
        Ok(g)
    }

    /// Sets (or clears) the probe the newest token's pass runs with.
    pub fn set_probe(&mut self, probe: Option<ProbeSpec>) {
        self.probe = probe;
    }

    /// What the probe recorded in the pass of the newest token in the cache, if that pass
    /// ran probed.
    pub fn probed(&self) -> Option<&ProbeRecord> {
        let newest = self.prompt.len() + self.logits.len() - 2;
        self.probed.as_ref().filter(|r| r.pos == newest)
    }

    pub fn sequence(&self) -> SeqId {
        self.seq
    }

    pub fn prompt(&self) -> &[u32] {
        &self.prompt
    }

    pub fn steps(&self) -> &[Step] {
        &self.generated
    }

    pub fn generated_ids(&self) -> Vec<u32> {
        self.generated.iter().map(|s| s.token).collect()
    }

    /// The prompt's ids, then the generated ones: the context the next token follows.
    pub fn context(&self) -> Vec<u32> {
        let mut ids = self.prompt.clone();
        ids.extend(self.generated.iter().map(|s| s.token));
        ids
    }

    /// The next-token logits at the current position, if computed.
    pub fn current_logits(&self) -> Option<&[f32]> {
        self.logits.get(self.generated.len()).map(Vec::as_slice)
    }

    /// The logits generated token `i` was drawn from, while they are kept (the last
    /// `LOGITS_KEPT`).
    pub fn logits_at(&self, i: usize) -> Option<&[f32]> {
        self.logits
            .get(i)
            .filter(|l| !l.is_empty())
            .map(Vec::as_slice)
    }

    /// Generated text (the prompt excluded), invalid UTF-8 replaced. Without `flush`, bytes
    /// of a character not yet complete are left out (a later token may complete them).
    pub fn generated_text(&self, tokenizer: &Tokenizer, flush: bool) -> String {
        let ids: Vec<u32> = self.generated.iter().map(|s| s.token).collect();
        tokenizer.text_after(self.prompt.last().copied(), &ids, &self.end_tokens, flush)
    }

    /// Whether (and why) generation cannot go on under `settings`.
    pub fn stop_reason(&self, settings: &Settings, tokenizer: &Tokenizer) -> Option<StopReason> {
        if let Some(r) = self.constraint_stop(settings) {
            return Some(r);
        }
        if let Some(last) = self.generated.last() {
            if self.end_tokens.contains(&last.token) {
                return Some(StopReason::EndOfSequence { token: last.token });
            }
        }
        if !settings.stop.is_empty() && !self.generated.is_empty() {
            let text = self.generated_text(tokenizer, true);
            if let Some(stop) = settings.stop.iter().find(|s| text.contains(s.as_str())) {
                return Some(StopReason::StopSequence { stop: stop.clone() });
            }
        }
        if self.generated.len() >= settings.max_tokens {
            return Some(StopReason::MaxTokens {
                max: settings.max_tokens,
            });
        }
        if self.prompt.len() + self.generated.len() >= self.seq_len {
            return Some(StopReason::ContextFull {
                seq_len: self.seq_len,
            });
        }
        None
    }

    /// Runs the last generated token if its logits are not known yet.
    async fn ensure_logits(&mut self, backend: &mut dyn Backend) -> Result<(), GenerationError> {
        self.run_pending(backend).await.map(|_| ())
    }

    /// Runs the forward pass of every chosen token not yet run (the newest, after a step):
    /// what the next distribution needs. Returns how many ran, so a caller can time the
    /// forward pass apart from the chain.
    pub async fn run_pending(
        &mut self,
        backend: &mut dyn Backend,
    ) -> Result<usize, GenerationError> {
        let mut ran = 0;
        while self.logits.len() <= self.generated.len() {
            let i = self.logits.len() - 1;
            let token = [self.generated[i].token];
            let l = match self.probe {
                Some(spec) if i + 1 == self.generated.len() => {
                    let pos = self.prompt.len() + i;
                    let batch = Batch::tokens(self.seq, pos, &token, Logits::Last);
                    let p = backend.forward_probe(batch, spec).await?;
                    self.probed = Some(p.record);
                    p.logits
                }
                _ => backend.forward(self.seq, &token, false).await?,
            };
            self.logits.push(l);
            self.forget_old_logits();
            ran += 1;
        }
        Ok(ran)
    }

    /// [`run_pending`](Self::run_pending) for several generations on one backend, their
    /// newest tokens as one forward pass of one row each (the page's "same θ, different
    /// config" columns step together like this; lesson 10, section 5's batching). A
    /// generation with more than one token pending runs its older ones alone first; each
    /// row's logits are the same bits as alone (`Batch`'s rule, tested in `forward.rs`).
    /// Returns the rows of the shared pass.
    pub async fn run_pending_together(
        gens: &mut [&mut Generation],
        backend: &mut dyn Backend,
    ) -> Result<usize, GenerationError> {
        let mut batch = Batch::new();
        let mut which = Vec::new();
        for (k, g) in gens.iter_mut().enumerate() {
            while g.logits.len() < g.generated.len() {
                let i = g.logits.len() - 1;
                let token = [g.generated[i].token];
                let l = backend.forward(g.seq, &token, false).await?;
                g.logits.push(l);
                g.forget_old_logits();
            }
            if g.logits.len() == g.generated.len() {
                let i = g.logits.len() - 1;
                let pos = g.prompt.len() + i;
                batch.extend(g.seq, pos, &[g.generated[i].token], Logits::Last);
                which.push(k);
            }
        }
        if which.is_empty() {
            return Ok(0);
        }
        let logits = backend.forward_batch(batch).await?;
        let vocab = backend.config().vocab_size;
        for (&k, l) in which.iter().zip(logits.chunks(vocab)) {
            gens[k].logits.push(l.to_vec());
            gens[k].forget_old_logits();
        }
        Ok(which.len())
    }

    /// Frees the logits older than the last `logits_kept + 1` (the prefill's stay: a rewind
    /// to the prompt needs no forward pass).
    fn forget_old_logits(&mut self) {
        let keep_from = self
            .logits
            .len()
            .saturating_sub(self.logits_kept + 1)
            .max(1);
        while self.freed_to < keep_from {
            self.logits[self.freed_to] = Vec::new();
            self.freed_to += 1;
        }
    }

    /// How many steps' logits are held (the prefill's included).
    pub fn logits_held(&self) -> usize {
        self.logits.iter().filter(|l| !l.is_empty()).count()
    }

    fn history(&self) -> (Vec<u32>, Vec<u32>) {
        (self.prompt.clone(), self.generated_ids())
    }

    /// The chain's trace on the current logits with the next step's coin, without choosing
    /// anything: what a slider move shows.
    pub async fn preview(
        &mut self,
        backend: &mut dyn Backend,
        settings: &Settings,
        tokenizer: &Tokenizer,
    ) -> Result<Trace, GenerationError> {
        self.run_chain(backend, settings, tokenizer, true).await
    }

    /// The chain on the current logits; `trace` keeps every stage's distributions.
    async fn run_chain(
        &mut self,
        backend: &mut dyn Backend,
        settings: &Settings,
        tokenizer: &Tokenizer,
        trace: bool,
    ) -> Result<Trace, GenerationError> {
        self.ensure_logits(backend).await?;
        let allowed = self.constraint_allowed(settings)?;
        let (prompt, generated) = self.history();
        let logits = &self.logits[self.generated.len()];
        let coin = step_coin(settings.seed, self.generated.len() as u64);
        let history = History {
            prompt: &prompt,
            generated: &generated,
            state: self.generated.last().map(|s| &s.state),
            vocab: Some(tokenizer),
            allowed: allowed.as_ref(),
        };
        Ok(process(settings, logits, history, coin, trace)?)
    }

    /// Chooses and appends the next token (unless a stop condition holds).
    pub async fn step(
        &mut self,
        backend: &mut dyn Backend,
        settings: &Settings,
        tokenizer: &Tokenizer,
    ) -> Result<StepOutcome, GenerationError> {
        self.constraint_allowed(settings)?;
        if let Some(r) = self.stop_reason(settings, tokenizer) {
            return Ok(StepOutcome::Stopped(r));
        }
        // Choosing needs the final distribution only; a page asks for the stages separately
        // (`preview`) when it draws them.
        let trace = self.run_chain(backend, settings, tokenizer, false).await?;
        self.push_step(&trace, trace.token, tokenizer)?;
        self.constraint_allowed(settings)?;
        let stop = self.stop_reason(settings, tokenizer);
        Ok(StepOutcome::Token {
            trace: Box::new(trace),
            stop,
        })
    }

    /// Appends `token` as the next step whatever the knobs would have chosen (teacher
    /// forcing): the page mirrors the best beam into the transcript this way. Its
    /// probability and rank are those of the chain's distribution, as for a chosen token.
    pub async fn force(
        &mut self,
        backend: &mut dyn Backend,
        settings: &Settings,
        tokenizer: &Tokenizer,
        token: u32,
    ) -> Result<(), GenerationError> {
        let vocab = backend.config().vocab_size;
        if token as usize >= vocab {
            let e = crate::forward::batch::ForwardError::TokenOutOfRange { id: token, vocab };
            return Err(BackendError::from(e).into());
        }
        let trace = self.run_chain(backend, settings, tokenizer, false).await?;
        self.push_step(&trace, token, tokenizer)
    }

    /// Records `token` as chosen from `trace`'s distribution (the constraint follows it, and
    /// refuses a token it does not allow).
    fn push_step(
        &mut self,
        trace: &Trace,
        token: u32,
        tokenizer: &Tokenizer,
    ) -> Result<(), GenerationError> {
        if let Some(c) = &mut self.constraint {
            c.advance(token)?;
        }
        let mut top: Vec<(u32, f64)> = trace
            .probs
            .iter()
            .enumerate()
            .filter(|(_, &p)| p > 0.0)
            .map(|(i, &p)| (i as u32, p))
            .collect();
        // The most likely first, ties by id: the top few picked in linear time, then sorted
        // (sorting all 32,000 of a large vocabulary was a visible cost of a step in the page:
        // BENCHMARKS.md, "Figures behind the code").
        let order = |a: &(u32, f64), b: &(u32, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if top.len() > TOP_KEPT {
            top.select_nth_unstable_by(TOP_KEPT - 1, order);
            top.truncate(TOP_KEPT);
        }
        // the vocabulary's worth of capacity (512 KB at 32,000 tokens) would stay with every
        // step: a 110M model's `generate` grew 0.57 MB a token
        top.shrink_to_fit();
        top.sort_by(order);
        let model_prob = self.current_logits().map_or(0.0, |z| {
            crate::kernels::logprob::log_softmax_at(z, token as usize).exp()
        });
        // A forced token leaves the state as it was (llama.cpp's `accept`, likewise).
        let state = if token == trace.token {
            trace.state.clone()
        } else {
            self.generated
                .last()
                .map(|s| s.state.clone())
                .unwrap_or_default()
        };
        self.generated.push(Step {
            token,
            piece: tokenizer.piece(token).unwrap_or("?").to_string(),
            prob: trace.probs[token as usize],
            model_prob,
            // The chain ranked its own choice; a forced token is ranked here.
            rank: if token == trace.token {
                trace.rank
            } else {
                crate::decode::sampling::chain::rank_of(&trace.probs, token as usize)
            },
            kept: trace.kept,
            coin: trace.coin,
            top,
            state,
            cuts: trace.cuts.clone(),
        });
        Ok(())
    }

    /// Removes the last generated token; the cache is truncated. Within the last
    /// `LOGITS_KEPT` steps nothing is recomputed; further back the previous token's forward
    /// pass runs again when its distribution is next needed.
    pub fn rewind(&mut self, backend: &mut dyn Backend) -> Result<Step, GenerationError> {
        // The constraint first: should it fail, nothing has changed.
        self.constraint_before_rewind()?;
        let step = self
            .generated
            .pop()
            .ok_or(GenerationError::NothingToRewind)?;
        let mut forwarded = (self.logits.len() - 1).min(self.generated.len());
        self.logits.truncate(forwarded + 1);
        if forwarded > 0 && self.logits[forwarded].is_empty() {
            // Freed: the last token is "chosen, not yet run" again; its forward pass runs
            // when its distribution is next needed (`run_pending`).
            self.logits.truncate(forwarded);
            forwarded -= 1;
        }
        self.freed_to = self.freed_to.min(self.logits.len());
        self.probed = None;
        backend.truncate(self.seq, self.prompt.len() + forwarded)?;
        Ok(step)
    }

    /// Back to just after the prompt.
    pub fn reset(&mut self, backend: &mut dyn Backend) -> Result<(), GenerationError> {
        self.generated.clear();
        self.logits.truncate(1);
        self.freed_to = 1;
        self.probed = None;
        backend.truncate(self.seq, self.prompt.len())?;
        self.replay_constraint()?;
        Ok(())
    }

    /// Frees the sequence's cache.
    pub fn release(self, backend: &mut dyn Backend) {
        backend.release(self.seq);
    }
}

#[cfg(test)]
#[path = "generation_tests.rs"]
mod tests;
