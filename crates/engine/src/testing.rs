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

/// Pairs of vectors for checking a dot-product kernel against `cpu::dot_portable`: lengths
/// around each boundary of its order (the 32-wide bulk, the 8-wide chunks, the tail), the
/// second vector longer (only the common length counts), values in ±4 from a fixed LCG.
pub fn dot_cases() -> Vec<(Vec<f32>, Vec<f32>)> {
    let mut seed = 1u32;
    let mut next = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 * 8.0 - 4.0
    };
    [
        0, 1, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 100, 172, 288, 768, 2049,
    ]
    .into_iter()
    .map(|n| {
        let a: Vec<f32> = (0..n).map(|_| next()).collect();
        let b: Vec<f32> = (0..n + 3).map(|_| next()).collect();
        (a, b)
    })
    .collect()
}

/// Asserts that `kernel` gives `cpu::dot_portable`'s bits on every `dot_cases()` pair, both
/// ways round.
pub fn assert_dot_kernel_bits(kernel: impl Fn(&[f32], &[f32]) -> f32) {
    use crate::cpu::dot_portable;
    for (a, b) in dot_cases() {
        let n = a.len();
        assert_eq!(
            kernel(&a, &b).to_bits(),
            dot_portable(&a, &b).to_bits(),
            "n = {n}"
        );
        assert_eq!(
            kernel(&b, &a).to_bits(),
            dot_portable(&b, &a).to_bits(),
            "n = {n}"
        );
    }
}

/// Asserts that the quantized row product (`QRef::dot`: AVX-512 natively, simd128 in wasm)
/// gives the plain loops' bits (`QRef::dot_lanes`, the same code on every target) for Q8
/// and Q4 rows aligned with their groups and straddling them (stories260K's w2 shape).
pub fn assert_quant_kernel_bits() {
    use crate::quant::{Precision, QTensor};
    let cases = [
        (Precision::Q8, 64, 8, 64),
        (Precision::Q8, 64, 8, 256),
        (Precision::Q8, 32, 8, 96),
        (Precision::Q8, 64, 8, 172),
        (Precision::Q8, 64, 8, 20),
        (Precision::Q8, 8, 4, 24),
        (Precision::Q4, 32, 8, 64),
        (Precision::Q4, 32, 8, 288),
        (Precision::Q4, 32, 8, 172),
    ];
    let mut seed = 7u32;
    let mut next = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 * 8.0 - 4.0
    };
    for (p, g, rows, n) in cases {
        let w: Vec<f32> = (0..rows * n).map(|_| next()).collect();
        let x: Vec<f32> = (0..n).map(|_| next()).collect();
        let q = QTensor::quantize(&w, 1, p, g);
        for r in 0..rows {
            let b = q.block(0);
            assert_eq!(
                b.dot(r * n, &x).to_bits(),
                b.dot_lanes(r * n, &x).to_bits(),
                "{p} groups of {g}, {n} wide, row {r}"
            );
        }
    }
}
