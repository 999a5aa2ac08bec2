//! The engine: a model and the backend that runs it, and the one door through which every
//! operation reaches that backend. It implements [`Backend`] itself, hands out its own
//! sequence ids and remembers each sequence's tokens, so when the GPU device is lost during
//! any operation (a prompt, a step, a beam step, a fork, the cache comparison) it switches to
//! the CPU, rebuilds every sequence there from its tokens, and retries the operation once.
//! Generation, beam search and the page never see the switch, except in [`Engine::report`].
//! Engine types only: which GPU backend to open is decided in `decoding-gpu` (`select.rs`).

use crate::backend::{
    Backend, BackendError, BackendKind, CpuBackend, LocalFuture, LogitsFuture, SeqSlots,
};
use crate::config::Config;
use crate::forward::batch::{Batch, Logits, Row, SeqId};
use crate::forward::kv_cache::CacheBytes;
use crate::forward::probe::{ProbeRecord, ProbeSpec, Probed};
use crate::forward::Transformer;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::sync::Arc;

/// Which backend runs, and why, in words for the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackendReport {
    pub kind: BackendKind,
    pub reason: String,
    /// Compute dispatches per decoded token (GPU only).
    pub dispatches_per_token: Option<usize>,
    /// Milliseconds a decoded token took when "auto" measured the backends
    /// (`choose::choose_faster`); none when the backend was not chosen by measuring.
    #[serde(default)]
    pub measured_ms: Option<f64>,
}

/// One of the engine's sequences: its id in the backend and every token in its cache.
#[derive(Debug, Clone)]
struct Tracked {
    inner: SeqId,
    tokens: Vec<u32>,
}

/// A backend that can change under its sequences: on a lost device the engine moves them
/// to the CPU and carries on.
pub struct Engine {
    pub model: Arc<Transformer>,
    backend: Box<dyn Backend>,
    pub report: BackendReport,
    seqs: SeqSlots<Tracked>,
}

/// Runs a future that is ready at once (the CPU backend's are); None if it is not.
fn now<T>(f: impl Future<Output = T>) -> Option<T> {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => Some(v),
        std::task::Poll::Pending => None,
    }
}

impl Engine {
    pub fn new(
        model: Arc<Transformer>,
        backend: Box<dyn Backend>,
        report: BackendReport,
    ) -> Engine {
        Engine {
            model,
            backend,
            report,
            seqs: SeqSlots::default(),
        }
    }

    /// Moves every sequence to the CPU backend, saying why: each is rebuilt from its tokens
    /// (one prefill each). The engine's sequence ids stay the same.
    fn switch_to_cpu(&mut self, why: &str) -> Result<(), BackendError> {
        self.backend = Box::new(CpuBackend::new(self.model.clone()));
        self.report = BackendReport {
            kind: BackendKind::Cpu,
            reason: why.to_string(),
            dispatches_per_token: None,
            measured_ms: None,
        };
        for t in self.seqs.iter_mut() {
            t.inner = self.backend.new_sequence()?;
            if !t.tokens.is_empty() {
                let batch = Batch::tokens(t.inner, 0, &t.tokens, Logits::None);
                now(self.backend.forward_batch(batch)).unwrap_or_else(|| {
                    Err(BackendError::Gpu("the CPU backend did not answer".into()))
                })?;
            }
        }
        Ok(())
    }

    /// After an operation failed with `e`: on a lost device, switch to the CPU (then the
    /// caller retries); any other error is returned as it is.
    fn recover(&mut self, e: BackendError) -> Result<(), BackendError> {
        match e {
            BackendError::DeviceLost(msg) if self.report.kind == BackendKind::Gpu => self
                .switch_to_cpu(&format!(
                    "the GPU device was lost ({msg}); switched to the CPU"
                )),
            other => Err(other),
        }
    }

    /// A synchronous backend operation, retried once on the CPU after a lost device.
    fn retry<T>(
        &mut self,
        mut op: impl FnMut(&mut dyn Backend, &SeqSlots<Tracked>) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        match op(&mut *self.backend, &self.seqs) {
            Err(e) => {
                self.recover(e)?;
                op(&mut *self.backend, &self.seqs)
            }
            ok => ok,
        }
    }

    fn inner(seqs: &SeqSlots<Tracked>, seq: SeqId) -> Result<SeqId, BackendError> {
        Ok(seqs.get(seq)?.inner)
    }

    /// The batch with the backend's sequence ids.
    fn inner_batch(&self, batch: &Batch) -> Result<Batch, BackendError> {
        let mut b = Batch::new();
        for r in batch.rows() {
            b.push(Row {
                seq: Self::inner(&self.seqs, r.seq)?,
                ..*r
            });
        }
        Ok(b)
    }

    /// One pass on the backend, probed or not.
    async fn call(
        backend: &mut dyn Backend,
        batch: Batch,
        probe: Option<ProbeSpec>,
    ) -> Result<(Vec<f32>, Option<ProbeRecord>), BackendError> {
        Ok(match probe {
            Some(spec) => {
                let p = backend.forward_probe(batch, spec).await?;
                (p.logits, Some(p.record))
            }
            None => (backend.forward_batch(batch).await?, None),
        })
    }

    /// The backend checks the batch (`Batch::check`); the tokens are recorded only when the
    /// pass succeeded.
    async fn forward_impl(
        &mut self,
        batch: Batch,
        probe: Option<ProbeSpec>,
    ) -> Result<(Vec<f32>, Option<ProbeRecord>), BackendError> {
        let inner = self.inner_batch(&batch)?;
        let out = match Self::call(&mut *self.backend, inner, probe).await {
            Err(e) => {
                self.recover(e)?;
                let inner = self.inner_batch(&batch)?;
                Self::call(&mut *self.backend, inner, probe).await?
            }
            Ok(out) => out,
        };
        for r in batch.rows() {
            self.seqs.get_mut(r.seq)?.tokens.push(r.token);
        }
        Ok(out)
    }
}

impl Backend for Engine {
    fn kind(&self) -> BackendKind {
        self.backend.kind()
    }

    fn config(&self) -> &Config {
        self.backend.config()
    }

    fn new_sequence(&mut self) -> Result<SeqId, BackendError> {
        let inner = self.retry(|be, _| be.new_sequence())?;
        Ok(self.seqs.insert(Tracked {
            inner,
            tokens: Vec::new(),
        }))
    }

    fn fork(&mut self, seq: SeqId) -> Result<SeqId, BackendError> {
        let tokens = self.seqs.get(seq)?.tokens.clone();
        let inner = self.retry(|be, seqs| be.fork(Self::inner(seqs, seq)?))?;
        Ok(self.seqs.insert(Tracked { inner, tokens }))
    }

    fn release(&mut self, seq: SeqId) {
        if let Some(t) = self.seqs.remove(seq) {
            self.backend.release(t.inner);
        }
    }

    fn seq_len(&self, seq: SeqId) -> Result<usize, BackendError> {
        Ok(self.seqs.get(seq)?.tokens.len())
    }

    fn truncate(&mut self, seq: SeqId, len: usize) -> Result<(), BackendError> {
        self.retry(|be, seqs| be.truncate(Self::inner(seqs, seq)?, len))?;
        self.seqs.get_mut(seq)?.tokens.truncate(len);
        Ok(())
    }

    fn cache_bytes(&self, seq: SeqId) -> Result<CacheBytes, BackendError> {
        self.backend.cache_bytes(Self::inner(&self.seqs, seq)?)
    }

    fn forward_batch(&mut self, batch: Batch) -> LogitsFuture<'_> {
        Box::pin(async move { Ok(self.forward_impl(batch, None).await?.0) })
    }

    fn forward_probe<'a>(
        &'a mut self,
        batch: Batch,
        spec: ProbeSpec,
    ) -> LocalFuture<'a, Result<Probed, BackendError>> {
        Box::pin(async move {
            // The record names the engine's sequence, not the backend's.
            let seq = batch.rows().last().map(|r| r.seq);
            match self.forward_impl(batch, Some(spec)).await? {
                (logits, Some(mut record)) => {
                    record.seq = seq.unwrap_or(record.seq);
                    Ok(Probed { logits, record })
                }
                (_, None) => Err(BackendError::Unsupported(
                    "the probe recorded nothing".into(),
                )),
            }
        })
    }

    fn set_kernel_timing(&mut self, on: bool) -> Result<(), BackendError> {
        self.backend.set_kernel_timing(on)
    }

    fn take_kernel_times(&mut self) -> Option<crate::backend::timing::KernelTimes> {
        self.backend.take_kernel_times()
    }

    fn forward_exit(&mut self, seq: SeqId, tokens: &[u32], layers: usize) -> LogitsFuture<'_> {
        let tokens = tokens.to_vec();
        Box::pin(async move {
            let inner = Self::inner(&self.seqs, seq)?;
            let out = self.backend.forward_exit(inner, &tokens, layers).await?;
            self.seqs.get_mut(seq)?.tokens.extend_from_slice(&tokens);
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::testing::LosesDevice;
    use crate::weights::Checkpoint;

    fn model() -> Arc<Transformer> {
        let c = Config::from_header([16, 24, 2, 4, 2, 20, 12]).unwrap();
        Arc::new(Transformer::new(Checkpoint::random(c, 5).unwrap()))
    }

    fn report() -> BackendReport {
        BackendReport {
            kind: BackendKind::Gpu,
            reason: "test".into(),
            dispatches_per_token: None,
            measured_ms: None,
        }
    }

    #[test]
    fn a_lost_device_moves_every_sequence_to_the_cpu_and_retries() {
        let m = model();
        let failing = LosesDevice::after(CpuBackend::new(m.clone()), 2);
        let mut e = Engine::new(m.clone(), Box::new(failing), report());
        let (a, b) = (e.new_sequence().unwrap(), e.new_sequence().unwrap());
        now(e.forward(a, &[1, 5, 7], false)).unwrap().unwrap();
        now(e.forward(b, &[2, 3], false)).unwrap().unwrap();
        e.truncate(a, 2).unwrap();
        // The device is gone now: this step runs on the CPU after both caches are rebuilt.
        let got = now(e.forward(a, &[9], false)).unwrap().unwrap();
        assert_eq!(e.report.kind, BackendKind::Cpu);
        assert!(e.report.reason.contains("GPU device was lost (gone)"));
        let mut cpu = CpuBackend::new(m);
        let s = cpu.new_sequence().unwrap();
        let want = now(cpu.forward(s, &[1, 5, 9], false)).unwrap().unwrap();
        assert_eq!(got, want);
        assert_eq!((e.seq_len(a).unwrap(), e.seq_len(b).unwrap()), (3, 2));
        // The other sequence carries on where it was.
        let got = now(e.forward(b, &[4], false)).unwrap().unwrap();
        let s = cpu.new_sequence().unwrap();
        assert_eq!(
            got,
            now(cpu.forward(s, &[2, 3, 4], false)).unwrap().unwrap()
        );
        let f = e.fork(b).unwrap();
        assert_eq!(e.seq_len(f).unwrap(), 3);
    }

    #[test]
    fn other_errors_pass_through_and_change_nothing() {
        let m = model();
        let mut e = Engine::new(m.clone(), Box::new(CpuBackend::new(m)), report());
        let a = e.new_sequence().unwrap();
        let err = now(e.forward(a, &[99], false)).unwrap().unwrap_err();
        assert!(err.to_string().contains("outside the vocabulary"), "{err}");
        assert_eq!(e.seq_len(a).unwrap(), 0);
        assert_eq!(e.report.reason, "test");
        assert!(e.fork(SeqId(7)).is_err());
    }
}
