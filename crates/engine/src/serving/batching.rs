//! Serving many requests together (lesson 10, section 5: "Batching/continuous batching:
//! serve many requests together to amortize the memory-bandwidth cost of loading weights,
//! raising throughput"), on the real engine.
//!
//! A scheduler with B slots runs one forward pass a step over every active request's rows:
//! a request in prefill brings its whole prompt (its prefill joins the step), one in decode
//! its newest token. Two policies:
//! - **continuous** (Orca's iteration-level scheduling, as vLLM does it): at every step,
//!   finished requests leave and waiting ones that have arrived take the free slots;
//! - **static**: a batch is admitted only when the previous one has wholly finished.
//!
//! Each request samples with its own seed (its own coin stream, `sampling::step_coin`) and
//! its own history, so it gets exactly the tokens it would get alone (tested). Requests
//! come from a seeded arrival trace with different prompt and output lengths.

use crate::backend::{Backend, BackendError};
use crate::decode::sampling::{process, step_coin, ChainState, History, SamplingError, Settings};
use crate::forward::batch::SeqId;
use crate::forward::batch::{Batch, Logits};
use crate::serving::cost::PassCost;
use rand_core::{RngCore, SeedableRng};

/// One request of a trace.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Request {
    pub id: usize,
    /// the step at which it arrives
    pub arrival: usize,
    pub prompt: Vec<u32>,
    /// tokens to generate (fewer if it emits an end token)
    pub max_new: usize,
    /// its sampling seed
    pub seed: u64,
}

/// A seeded trace of `n` requests: arrivals a geometric number of steps apart (mean
/// `mean_gap`), prompts of 2–`max_prompt` tokens (BOS first, the rest drawn from the
/// vocabulary), outputs of 1–`max_new` tokens; both lengths uniform, so they mix.
pub fn trace(
    seed: u64,
    n: usize,
    vocab: usize,
    max_prompt: usize,
    max_new: usize,
    mean_gap: f64,
) -> Vec<Request> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut uniform = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut at = 0usize;
    (0..n)
        .map(|id| {
            if id > 0 {
                // geometric gap with mean `mean_gap` (0 allowed: requests arrive together)
                let p = 1.0 / (1.0 + mean_gap.max(0.0));
                let u: f64 = uniform().max(1e-12);
                at += (u.ln() / (1.0 - p).max(1e-12).ln()).floor() as usize;
            }
            let len = 2 + (uniform() * (max_prompt.max(2) - 1) as f64) as usize;
            let len = len.min(max_prompt.max(2));
            let mut prompt = vec![1u32];
            prompt.extend((1..len).map(|_| 3 + (uniform() * (vocab - 3) as f64) as u32));
            Request {
                id,
                arrival: at,
                prompt,
                max_new: 1 + (uniform() * max_new.max(1) as f64) as usize % max_new.max(1),
                seed: seed.wrapping_mul(1000).wrapping_add(id as u64),
            }
        })
        .collect()
}

/// How a batch admits requests: as slots free up (continuous) or only once the whole
/// batch has finished (static).
#[derive(strum::EnumString, strum::IntoStaticStr, strum::Display)]
#[strum(serialize_all = "snake_case")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Policy {
    Continuous,
    Static,
}

impl Policy {
    /// Exactly a name.
    pub fn parse(s: &str) -> Option<Policy> {
        s.parse().ok()
    }

    /// Its one name (serde's, the CLI's).
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// What happened to one request.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Served {
    pub id: usize,
    pub tokens: Vec<u32>,
    pub arrival: usize,
    /// the step whose pass ran its prefill
    pub admitted: usize,
    /// the step that produced its first token (the prefill's), and its last
    pub first_token: usize,
    pub finished: usize,
    /// wall clock from its arrival step's start to its first token and to its end, ms
    pub first_token_ms: f64,
    pub total_ms: f64,
}

/// A whole simulation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SimResult {
    pub policy: Policy,
    pub slots: usize,
    /// forward passes run (steps with no active request are not passes)
    pub passes: usize,
    /// steps elapsed, idle ones included
    pub steps: usize,
    pub tokens: usize,
    /// mean active slots over the passes, out of `slots`
    pub occupancy: f64,
    pub wall_ms: f64,
    pub served: Vec<Served>,
}

#[derive(Debug, thiserror::Error)]
pub enum BatchingError {
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Sampling(#[from] SamplingError),
    #[error("{0}")]
    Sizes(String),
    #[error("request {id} does not fit the context ({tokens} tokens, context {seq_len})")]
    TooLong {
        id: usize,
        tokens: usize,
        seq_len: usize,
    },
}

struct Active {
    req: usize,
    seq: SeqId,
    generated: Vec<u32>,
    /// The chain's stage state after the last token (`Trace::state`).
    state: ChainState,
    prefilled: bool,
    admitted: usize,
    first_token: usize,
    first_ms: f64,
}

/// Runs `requests` through `slots` slots under `policy` on `backend`; `settings` (with each
/// request's own seed) choose the tokens; `end_tokens` end a request early; `now` is a clock
/// in ms.
pub async fn simulate(
    backend: &mut dyn Backend,
    settings: &Settings,
    requests: &[Request],
    slots: usize,
    policy: Policy,
    end_tokens: &[u32],
    now: &dyn Fn() -> f64,
) -> Result<SimResult, BatchingError> {
    let seq_len = backend.config().seq_len;
    let vocab = backend.config().vocab_size;
    for r in requests {
        if r.prompt.len() + r.max_new > seq_len {
            return Err(BatchingError::TooLong {
                id: r.id,
                tokens: r.prompt.len() + r.max_new,
                seq_len,
            });
        }
    }
    let slots = slots.max(1);
    let t0 = now();
    let elapsed = || now() - t0;
    let mut s = Schedule {
        requests,
        step_start: Vec::new(),
        waiting: (0..requests.len()).collect(),
        active: Vec::new(),
        served: vec![None; requests.len()],
        step: 0,
        tokens: 0,
    };
    let (mut passes, mut occupied) = (0usize, 0usize);
    while s.served.iter().any(Option::is_none) {
        s.step_start.push(elapsed());
        // Admit.
        let may_admit = match policy {
            Policy::Continuous => true,
            Policy::Static => s.active.is_empty(),
        };
        if may_admit {
            s.admit(backend, slots)?;
        }
        if s.active.is_empty() {
            s.step += 1;
            continue;
        }
        let logits = backend.forward_batch(s.batch()).await?;
        passes += 1;
        occupied += s.active.len();
        let finished = s.sample(&logits, vocab, settings, end_tokens, &elapsed)?;
        s.retire(&finished, backend, &elapsed);
        s.step += 1;
    }
    Ok(SimResult {
        policy,
        slots,
        passes,
        steps: s.step,
        tokens: s.tokens,
        occupancy: occupied as f64 / (passes.max(1) * slots) as f64,
        wall_ms: now() - t0,
        served: s.served.into_iter().flatten().collect(),
    })
}

/// What `simulate` keeps between steps.
struct Schedule<'r> {
    requests: &'r [Request],
    /// Wall clock at the start of each step (arrival times are step starts).
    step_start: Vec<f64>,
    waiting: std::collections::VecDeque<usize>,
    active: Vec<Active>,
    served: Vec<Option<Served>>,
    step: usize,
    tokens: usize,
}

impl Schedule<'_> {
    /// Waiting requests that have arrived take the free slots, in order.
    fn admit(&mut self, backend: &mut dyn Backend, slots: usize) -> Result<(), BackendError> {
        while self.active.len() < slots {
            match self.waiting.front() {
                Some(&i) if self.requests[i].arrival <= self.step => {
                    self.waiting.pop_front();
                    self.active.push(Active {
                        req: i,
                        seq: backend.new_sequence()?,
                        generated: Vec::new(),
                        state: ChainState::default(),
                        prefilled: false,
                        admitted: self.step,
                        first_token: 0,
                        first_ms: 0.0,
                    });
                }
                _ => break,
            }
        }
        Ok(())
    }

    /// One pass: every prefilling request's prompt, every decoding one's newest token.
    fn batch(&self) -> Batch {
        let mut batch = Batch::new();
        for a in &self.active {
            let r = &self.requests[a.req];
            if a.prefilled {
                let pos = r.prompt.len() + a.generated.len() - 1;
                batch.extend(
                    a.seq,
                    pos,
                    &a.generated[a.generated.len() - 1..],
                    Logits::Last,
                );
            } else {
                batch.extend(a.seq, 0, &r.prompt, Logits::Last);
            }
        }
        batch
    }

    /// Each active request samples its next token from its row of `logits`; returns the
    /// indices (in `active`) of those that have finished.
    fn sample(
        &mut self,
        logits: &[f32],
        vocab: usize,
        settings: &Settings,
        end_tokens: &[u32],
        elapsed: &dyn Fn() -> f64,
    ) -> Result<Vec<usize>, SamplingError> {
        let step = self.step;
        let mut finished = Vec::new();
        for (k, (a, l)) in self.active.iter_mut().zip(logits.chunks(vocab)).enumerate() {
            let r = &self.requests[a.req];
            let mut s = settings.clone();
            s.seed = r.seed;
            let h = History {
                prompt: &r.prompt,
                generated: &a.generated,
                state: Some(&a.state),
                vocab: None,
                allowed: None,
            };
            let t = process(&s, l, h, step_coin(r.seed, a.generated.len() as u64), false)?;
            a.generated.push(t.token);
            a.state = t.state;
            self.tokens += 1;
            if !a.prefilled {
                a.prefilled = true;
                a.first_token = step;
                a.first_ms = elapsed() - self.step_start[r.arrival.min(step)];
            }
            if a.generated.len() >= r.max_new || end_tokens.contains(&t.token) {
                finished.push(k);
            }
        }
        Ok(finished)
    }

    /// The `finished` requests leave their slots (their sequences released).
    fn retire(&mut self, finished: &[usize], backend: &mut dyn Backend, elapsed: &dyn Fn() -> f64) {
        let step = self.step;
        for &k in finished.iter().rev() {
            let a = self.active.remove(k);
            backend.release(a.seq);
            let r = &self.requests[a.req];
            self.served[a.req] = Some(Served {
                id: r.id,
                tokens: a.generated,
                arrival: r.arrival,
                admitted: a.admitted,
                first_token: a.first_token,
                finished: step,
                first_token_ms: a.first_ms,
                total_ms: elapsed() - self.step_start[r.arrival.min(step)],
            });
        }
    }
}

/// Prefill and decode throughput at batch size `b` (llama.cpp's `batched-bench`): `b`
/// sequences of `prompt` tokens prefilled as one batch of b × prompt rows, then `gen`
/// passes of `b` rows (one token of each sequence), timed with `now` (ms); each pass's
/// FLOPs and bytes from the shapes (`PassCost`). The tokens are a fixed pattern (the
/// throughput does not depend on them).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Throughput {
    pub batch: usize,
    pub prompt_tokens: usize,
    pub gen_tokens: usize,
    pub prefill_ms: f64,
    pub decode_ms: f64,
    pub prefill_tokens_per_s: f64,
    pub decode_tokens_per_s: f64,
    /// the prefill pass's cost, and the decode passes' together
    pub prefill: PassCost,
    pub decode: PassCost,
}

impl Throughput {
    /// Achieved FLOP/s and bytes/s.
    pub fn prefill_rates(&self) -> (f64, f64) {
        rates(self.prefill, self.prefill_ms)
    }
    pub fn decode_rates(&self) -> (f64, f64) {
        rates(self.decode, self.decode_ms)
    }
}

fn rates(c: PassCost, ms: f64) -> (f64, f64) {
    let s = (ms / 1000.0).max(1e-12);
    (c.flops as f64 / s, c.bytes as f64 / s)
}

pub async fn throughput(
    backend: &mut dyn Backend,
    b: usize,
    prompt: usize,
    gen: usize,
    weight_bytes: u64,
    now: &dyn Fn() -> f64,
) -> Result<Throughput, BatchingError> {
    let c = *backend.config();
    if b == 0 || prompt == 0 || gen == 0 || prompt + gen > c.seq_len {
        return Err(BatchingError::Sizes(format!(
            "a batch of {b} with {prompt} prompt and {gen} generated tokens: each at least 1, \
             the two together at most the context of {}",
            c.seq_len
        )));
    }
    let mut seqs = Vec::with_capacity(b);
    for _ in 0..b {
        seqs.push(backend.new_sequence()?);
    }
    let tok = |s: usize, i: usize| ((i * 7919 + s * 104_729 + 3) % c.vocab_size) as u32;
    let result = async {
        let mut batch = Batch::new();
        for (s, &seq) in seqs.iter().enumerate() {
            let p: Vec<u32> = (0..prompt).map(|i| tok(s, i)).collect();
            batch.extend(seq, 0, &p, Logits::Last);
        }
        let t0 = now();
        backend.forward_batch(batch).await?;
        let prefill_ms = now() - t0;
        let prefill = PassCost::of(&c, &vec![(0, prompt as u64); b], b as u64, weight_bytes);
        let mut decode = PassCost { flops: 0, bytes: 0 };
        let t0 = now();
        for i in 0..gen {
            let mut batch = Batch::new();
            for (s, &seq) in seqs.iter().enumerate() {
                batch.extend(seq, prompt + i, &[tok(s, prompt + i)], Logits::Last);
            }
            backend.forward_batch(batch).await?;
            let pc = PassCost::of(
                &c,
                &vec![((prompt + i) as u64, 1); b],
                b as u64,
                weight_bytes,
            );
            decode.flops += pc.flops;
            decode.bytes += pc.bytes;
        }
        let decode_ms = now() - t0;
        Ok::<_, BatchingError>(Throughput {
            batch: b,
            prompt_tokens: prompt,
            gen_tokens: gen,
            prefill_ms,
            decode_ms,
            prefill_tokens_per_s: (b * prompt) as f64 / (prefill_ms / 1000.0).max(1e-12),
            decode_tokens_per_s: (b * gen) as f64 / (decode_ms / 1000.0).max(1e-12),
            prefill,
            decode,
        })
    }
    .await;
    for seq in seqs {
        backend.release(seq);
    }
    result
}

/// B sequences from one prompt stepping together: one pass of B rows a step (every lane's
/// newest token), each lane sampling with its own seed, so each lane's text is exactly the
/// text a plain run with that seed gives (tested). A lane that emits an end token, or
/// fills the context, stops; the others go on.
pub struct Lanes {
    seqs: Vec<SeqId>,
    prompt: Vec<u32>,
    seeds: Vec<u64>,
    generated: Vec<Vec<u32>>,
    states: Vec<ChainState>,
    /// each lane's logits for its next token (empty once it has stopped)
    logits: Vec<Vec<f32>>,
    /// wall time of each pass, ms (the prefill first)
    pub pass_ms: Vec<f64>,
    /// rows of each pass
    pub pass_rows: Vec<usize>,
}

impl Lanes {
    /// Prefills every lane's copy of `prompt` in one pass.
    pub async fn start(
        backend: &mut dyn Backend,
        prompt: &[u32],
        seeds: &[u64],
        now: &dyn Fn() -> f64,
    ) -> Result<Lanes, BatchingError> {
        let seq_len = backend.config().seq_len;
        if seeds.is_empty() || prompt.is_empty() || prompt.len() >= seq_len {
            return Err(BatchingError::Sizes(format!(
                "{} lanes of a {}-token prompt: at least one lane, and a prompt of 1 to {} tokens",
                seeds.len(),
                prompt.len(),
                seq_len - 1
            )));
        }
        let mut seqs = Vec::with_capacity(seeds.len());
        for _ in seeds {
            seqs.push(backend.new_sequence()?);
        }
        let mut batch = Batch::new();
        for &seq in &seqs {
            batch.extend(seq, 0, prompt, Logits::Last);
        }
        let t0 = now();
        let logits = match backend.forward_batch(batch).await {
            Ok(l) => l,
            Err(e) => {
                for seq in seqs {
                    backend.release(seq);
                }
                return Err(e.into());
            }
        };
        let ms = now() - t0;
        let vocab = backend.config().vocab_size;
        Ok(Lanes {
            prompt: prompt.to_vec(),
            seeds: seeds.to_vec(),
            generated: vec![Vec::new(); seqs.len()],
            states: vec![ChainState::default(); seqs.len()],
            logits: logits.chunks(vocab).map(<[f32]>::to_vec).collect(),
            pass_rows: vec![seqs.len() * prompt.len()],
            seqs,
            pass_ms: vec![ms],
        })
    }

    /// Each running lane samples its next token (its own seed, its own history) and one
    /// pass of their rows computes the next logits. Returns the number of lanes that
    /// produced a token (0 once all have stopped).
    pub async fn step(
        &mut self,
        backend: &mut dyn Backend,
        settings: &Settings,
        end_tokens: &[u32],
        now: &dyn Fn() -> f64,
    ) -> Result<usize, BatchingError> {
        let seq_len = backend.config().seq_len;
        let vocab = backend.config().vocab_size;
        let mut batch = Batch::new();
        let mut rows = Vec::new();
        let mut produced = 0;
        for k in 0..self.seqs.len() {
            if self.logits[k].is_empty() {
                continue;
            }
            let mut s = settings.clone();
            s.seed = self.seeds[k];
            let h = History {
                prompt: &self.prompt,
                generated: &self.generated[k],
                state: Some(&self.states[k]),
                vocab: None,
                allowed: None,
            };
            let coin = step_coin(s.seed, self.generated[k].len() as u64);
            let t = process(&s, &self.logits[k], h, coin, false)?;
            self.generated[k].push(t.token);
            self.states[k] = t.state;
            produced += 1;
            let pos = self.prompt.len() + self.generated[k].len() - 1;
            if end_tokens.contains(&t.token) || pos + 1 >= seq_len {
                self.logits[k].clear();
            } else {
                batch.extend(self.seqs[k], pos, &[t.token], Logits::Last);
                rows.push(k);
            }
        }
        if !rows.is_empty() {
            let t0 = now();
            let logits = backend.forward_batch(batch).await?;
            self.pass_ms.push(now() - t0);
            self.pass_rows.push(rows.len());
            for (&k, l) in rows.iter().zip(logits.chunks(vocab)) {
                self.logits[k].clear();
                self.logits[k].extend_from_slice(l);
            }
        }
        Ok(produced)
    }

    pub fn generated(&self) -> &[Vec<u32>] {
        &self.generated
    }

    pub fn seeds(&self) -> &[u64] {
        &self.seeds
    }

    pub fn prompt(&self) -> &[u32] {
        &self.prompt
    }

    pub fn release(self, backend: &mut dyn Backend) {
        for seq in self.seqs {
            backend.release(seq);
        }
    }
}
