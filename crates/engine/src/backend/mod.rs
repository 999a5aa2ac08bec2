//! The interface every backend (CPU here, WebGPU in `decoding-gpu`) offers to the generation
//! loop, beam search, the CLI and the page: sequences with their own KV cache, forward passes
//! over a [`Batch`] of rows that append to them, fork (beam search), truncate (rewind) and
//! cache sizes.
//!
//! Methods that run the model return futures: reading logits back from a GPU is asynchronous
//! in the browser. The CPU backend's futures are ready at once; native callers block on them
//! with `pollster`. One async code path serves native and wasm.

pub mod choose;
pub mod engine;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod timing;

use crate::config::Config;
use crate::forward::batch::ForwardError;
use crate::forward::batch::SeqId;
use crate::forward::batch::{Batch, Logits};
use crate::forward::kv_cache::{CacheBytes, Caches, KvCache};
use crate::forward::probe::{ProbeSpec, Probed};
use crate::forward::{RunState, Transformer};
use std::future::Future;
use std::pin::Pin;
use thiserror::Error;
use timing::KernelTimes;

/// A boxed future that need not be `Send` (wasm futures are not).
pub type LocalFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// What a forward pass gives: its logits, when they are back.
pub type LogitsFuture<'a> = LocalFuture<'a, Result<Vec<f32>, BackendError>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    Cpu,
    Gpu,
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Gpu => "gpu",
        })
    }
}

#[derive(Debug, Error, Clone, PartialEq)]
pub enum BackendError {
    #[error(transparent)]
    Forward(#[from] ForwardError),
    #[error("the GPU device was lost: {0}")]
    DeviceLost(String),
    #[error("GPU error: {0}")]
    Gpu(String),
    #[error("{0}")]
    Unsupported(String),
    /// A beam's constraint failed (`decode::constraint`).
    #[error("the constraint: {0}")]
    Constraint(String),
}

/// What the generation loop needs from a backend.
pub trait Backend {
    fn kind(&self) -> BackendKind;
    fn config(&self) -> &Config;
    /// A new, empty sequence.
    fn new_sequence(&mut self) -> Result<SeqId, BackendError>;
    /// A new sequence whose cache is a copy of `seq`'s (beam search forks a hypothesis).
    fn fork(&mut self, seq: SeqId) -> Result<SeqId, BackendError>;
    /// Frees a sequence; unknown ids are ignored.
    fn release(&mut self, seq: SeqId);
    /// Positions filled in the sequence's cache.
    fn seq_len(&self, seq: SeqId) -> Result<usize, BackendError>;
    /// Rewinds the sequence to `len` positions (nothing is recomputed).
    fn truncate(&mut self, seq: SeqId, len: usize) -> Result<(), BackendError>;
    fn cache_bytes(&self, seq: SeqId) -> Result<CacheBytes, BackendError>;
    /// The forward pass over a batch of rows (checked with `Batch::check`): appends every
    /// row's K/V to its sequence and returns the logits of the rows that ask for them,
    /// (rows with logits, vocab_size) in row order.
    fn forward_batch(&mut self, batch: Batch) -> LogitsFuture<'_>;

    /// Runs `tokens` at the sequence's next positions (one row each) and appends their K/V.
    /// Returns the logits after the last token (vocab_size,), or after every token
    /// (n, vocab_size) with `all_logits`. One token is a decode step; several a prefill.
    fn forward(&mut self, seq: SeqId, tokens: &[u32], all_logits: bool) -> LogitsFuture<'_> {
        let logits = if all_logits {
            Logits::All
        } else {
            Logits::Last
        };
        match self.seq_len(seq) {
            Ok(pos0) => self.forward_batch(Batch::tokens(seq, pos0, tokens, logits)),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }

    /// A forward pass with the probe ([`crate::forward::probe`]): the logits as `forward_batch`
    /// gives them (the same cache writes), and what the pass recorded inside.
    fn forward_probe<'a>(
        &'a mut self,
        batch: Batch,
        spec: ProbeSpec,
    ) -> LocalFuture<'a, Result<Probed, BackendError>> {
        let _ = (batch, spec);
        Box::pin(std::future::ready(Err(BackendError::Unsupported(format!(
            "the {} backend has no probe",
            self.kind()
        )))))
    }

    /// `tokens` at the sequence's next positions through the first `layers` layers only,
    /// then the final norm and classifier: the logits after the last token (an early-exit
    /// draft, `Transformer::forward_layers`). Those layers' K/V are appended; truncate before
    /// a full pass over the same positions. Backends without it say so.
    fn forward_exit(&mut self, seq: SeqId, tokens: &[u32], layers: usize) -> LogitsFuture<'_> {
        let _ = (seq, tokens, layers);
        Box::pin(std::future::ready(Err(BackendError::Unsupported(format!(
            "early-exit drafts run on the CPU backend, not the {} one",
            self.kind()
        )))))
    }
    /// Turns per-kernel GPU timing on (`timing`: each dispatch's GPU time recorded from
    /// timestamps) or off. Backends without GPU timestamps say why.
    fn set_kernel_timing(&mut self, on: bool) -> Result<(), BackendError> {
        if !on {
            return Ok(());
        }
        Err(BackendError::Unsupported(format!(
            "the {} backend has no GPU timestamps",
            self.kind()
        )))
    }

    /// The kernel times recorded since the last call (then cleared); None when not timing.
    fn take_kernel_times(&mut self) -> Option<KernelTimes> {
        None
    }
}

/// Per-sequence state of a backend, indexed by `SeqId`; freed slots are reused.
#[derive(Debug)]
pub struct SeqSlots<T> {
    slots: Vec<Option<T>>,
}

impl<T> Default for SeqSlots<T> {
    fn default() -> Self {
        SeqSlots { slots: Vec::new() }
    }
}

impl<T> SeqSlots<T> {
    pub fn insert(&mut self, value: T) -> SeqId {
        match self.slots.iter().position(Option::is_none) {
            Some(i) => {
                self.slots[i] = Some(value);
                SeqId(i as u32)
            }
            None => {
                self.slots.push(Some(value));
                SeqId(self.slots.len() as u32 - 1)
            }
        }
    }

    pub fn get(&self, seq: SeqId) -> Result<&T, BackendError> {
        self.slots
            .get(seq.0 as usize)
            .and_then(Option::as_ref)
            .ok_or(ForwardError::UnknownSequence(seq).into())
    }

    pub fn get_mut(&mut self, seq: SeqId) -> Result<&mut T, BackendError> {
        self.slots
            .get_mut(seq.0 as usize)
            .and_then(Option::as_mut)
            .ok_or(ForwardError::UnknownSequence(seq).into())
    }

    /// Every sequence's state, in id order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.slots.iter_mut().flatten()
    }

    /// Takes a sequence out; unknown ids give None.
    pub fn remove(&mut self, seq: SeqId) -> Option<T> {
        self.slots.get_mut(seq.0 as usize).and_then(Option::take)
    }
}

impl Caches for SeqSlots<KvCache> {
    fn cache(&self, seq: SeqId) -> Option<&KvCache> {
        self.get(seq).ok()
    }
    fn cache_mut(&mut self, seq: SeqId) -> Option<&mut KvCache> {
        self.get_mut(seq).ok()
    }
}

/// The CPU backend: the reference forward pass over per-sequence caches.
#[derive(Debug)]
pub struct CpuBackend {
    model: std::sync::Arc<Transformer>,
    state: RunState,
    seqs: SeqSlots<KvCache>,
}

impl CpuBackend {
    pub fn new(model: std::sync::Arc<Transformer>) -> CpuBackend {
        CpuBackend {
            state: RunState::new(&model.config),
            model,
            seqs: SeqSlots::default(),
        }
    }

    pub fn model(&self) -> &Transformer {
        &self.model
    }

    /// The synchronous forward pass behind `forward_batch` (native callers may use it
    /// directly).
    pub fn forward_sync(&mut self, batch: &Batch) -> Result<Vec<f32>, BackendError> {
        decode_step(batch);
        let CpuBackend { model, state, seqs } = self;
        if batch.rows().len() == 1 {
            // A decode step: on the team or alone, whichever is faster on this machine now.
            return crate::par::install(|| {
                crate::par::decode_step(|| Ok(model.forward(state, seqs, batch)?))
            });
        }
        crate::par::install(|| Ok(model.forward(state, seqs, batch)?))
    }
}

/// A batch of one row is a decode step: the tuned kernels' trial of float32 loops moves
/// on by one (kernels/tune.rs), so the forward pass itself stays free of the trial.
fn decode_step(batch: &Batch) {
    if batch.rows().len() == 1 {
        crate::kernels::tune::decode_step();
    }
}

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }

    fn forward_exit(&mut self, seq: SeqId, tokens: &[u32], layers: usize) -> LogitsFuture<'_> {
        let out = self.seq_len(seq).and_then(|pos0| {
            let batch = Batch::tokens(seq, pos0, tokens, Logits::Last);
            decode_step(&batch);
            let CpuBackend { model, state, seqs } = self;
            crate::par::install(|| Ok(model.forward_layers(state, seqs, &batch, layers)?))
        });
        Box::pin(std::future::ready(out))
    }

    fn config(&self) -> &Config {
        &self.model.config
    }

    fn forward_probe<'a>(
        &'a mut self,
        batch: Batch,
        spec: ProbeSpec,
    ) -> LocalFuture<'a, Result<Probed, BackendError>> {
        decode_step(&batch);
        let CpuBackend { model, state, seqs } = self;
        let out = crate::par::install(|| Ok(model.forward_probed(state, seqs, &batch, spec)?));
        Box::pin(std::future::ready(out))
    }

    fn new_sequence(&mut self) -> Result<SeqId, BackendError> {
        let cache = KvCache::new(&self.model.config);
        Ok(self.seqs.insert(cache))
    }

    fn fork(&mut self, seq: SeqId) -> Result<SeqId, BackendError> {
        let copy = self.seqs.get(seq)?.clone();
        Ok(self.seqs.insert(copy))
    }

    fn release(&mut self, seq: SeqId) {
        self.seqs.remove(seq);
    }

    fn seq_len(&self, seq: SeqId) -> Result<usize, BackendError> {
        Ok(self.seqs.get(seq)?.len())
    }

    fn truncate(&mut self, seq: SeqId, len: usize) -> Result<(), BackendError> {
        self.seqs.get_mut(seq)?.truncate(len);
        Ok(())
    }

    fn cache_bytes(&self, seq: SeqId) -> Result<CacheBytes, BackendError> {
        Ok(self.seqs.get(seq)?.bytes())
    }

    fn forward_batch(&mut self, batch: Batch) -> LogitsFuture<'_> {
        Box::pin(std::future::ready(self.forward_sync(&batch)))
    }
}
