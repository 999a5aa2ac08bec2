//! Test doubles that the engine's, the worker's and the GPU crate's tests share.

use crate::backend::{Backend, BackendError, BackendKind, CpuBackend, LocalFuture};
use crate::batch::{Batch, SeqId};
use crate::checkpoint::Config;
use crate::kv_cache::CacheBytes;

/// A CPU backend that calls itself a GPU, counts its forward passes, and loses its
/// "device" after a number of them: from then on every forward pass and fork fails with
/// `DeviceLost`, as a real lost WebGPU device does.
pub struct LosesDevice {
    inner: CpuBackend,
    healthy: usize,
    /// Forward passes run so far.
    pub forwards: usize,
}

impl LosesDevice {
    /// Lost after `healthy` forward passes (`usize::MAX`: never).
    pub fn after(inner: CpuBackend, healthy: usize) -> LosesDevice {
        LosesDevice {
            inner,
            healthy,
            forwards: 0,
        }
    }
}

impl Backend for LosesDevice {
    fn kind(&self) -> BackendKind {
        BackendKind::Gpu
    }
    fn config(&self) -> &Config {
        self.inner.config()
    }
    fn new_sequence(&mut self) -> Result<SeqId, BackendError> {
        self.inner.new_sequence()
    }
    fn fork(&mut self, seq: SeqId) -> Result<SeqId, BackendError> {
        if self.healthy == 0 {
            return Err(BackendError::DeviceLost("gone".into()));
        }
        self.inner.fork(seq)
    }
    fn release(&mut self, seq: SeqId) {
        self.inner.release(seq)
    }
    fn seq_len(&self, seq: SeqId) -> Result<usize, BackendError> {
        self.inner.seq_len(seq)
    }
    fn truncate(&mut self, seq: SeqId, len: usize) -> Result<(), BackendError> {
        self.inner.truncate(seq, len)
    }
    fn cache_bytes(&self, seq: SeqId) -> Result<CacheBytes, BackendError> {
        self.inner.cache_bytes(seq)
    }
    fn forward_batch<'a>(
        &'a mut self,
        batch: Batch,
    ) -> LocalFuture<'a, Result<Vec<f32>, BackendError>> {
        if self.healthy == 0 {
            return Box::pin(std::future::ready(Err(BackendError::DeviceLost(
                "gone".into(),
            ))));
        }
        self.healthy -= 1;
        self.forwards += 1;
        self.inner.forward_batch(batch)
    }
}
