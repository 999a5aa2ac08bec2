//! Test doubles that the engine's, the worker's and the GPU crate's tests share.

use crate::backend::{Backend, BackendError, BackendKind, CpuBackend, LogitsFuture};
use crate::config::Config;
use crate::forward::batch::{Batch, SeqId};
use crate::forward::kv_cache::CacheBytes;

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

/// The `Backend` methods both doubles hand straight to their `inner` CPU backend.
macro_rules! pass_to_inner {
    () => {
        fn config(&self) -> &Config {
            self.inner.config()
        }
        fn new_sequence(&mut self) -> Result<SeqId, BackendError> {
            self.inner.new_sequence()
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
    };
}

impl Backend for LosesDevice {
    pass_to_inner!();
    fn kind(&self) -> BackendKind {
        BackendKind::Gpu
    }
    fn fork(&mut self, seq: SeqId) -> Result<SeqId, BackendError> {
        if self.healthy == 0 {
            return Err(BackendError::DeviceLost("gone".into()));
        }
        self.inner.fork(seq)
    }
    fn forward_batch(&mut self, batch: Batch) -> LogitsFuture<'_> {
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

/// A CPU backend that reports itself as `kind` and advances a shared fake clock by `ms` at
/// every forward pass: a slow or fast device for tests of what measures speed ("auto").
pub struct Paced {
    inner: CpuBackend,
    kind: BackendKind,
    clock: std::rc::Rc<std::cell::Cell<f64>>,
    ms: f64,
}

impl Paced {
    pub fn new(
        inner: CpuBackend,
        kind: BackendKind,
        clock: std::rc::Rc<std::cell::Cell<f64>>,
        ms: f64,
    ) -> Paced {
        Paced {
            inner,
            kind,
            clock,
            ms,
        }
    }
}

impl Backend for Paced {
    pass_to_inner!();
    fn kind(&self) -> BackendKind {
        self.kind
    }
    fn fork(&mut self, seq: SeqId) -> Result<SeqId, BackendError> {
        self.inner.fork(seq)
    }
    fn forward_batch(&mut self, batch: Batch) -> LogitsFuture<'_> {
        self.clock.set(self.clock.get() + self.ms);
        self.inner.forward_batch(batch)
    }
}

/// Pairs of vectors for checking a dot-product kernel against `kernels::dot_portable`: lengths
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

/// Asserts that `kernel` gives `kernels::dot_portable`'s bits on every `dot_cases()` pair, both
/// ways round.
pub fn assert_dot_kernel_bits(kernel: impl Fn(&[f32], &[f32]) -> f32) {
    use crate::kernels::dot_portable;
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

/// Asserts that decode's matrix-vector product (`kernels::matmul` of one row: float32 weight rows
/// several at a time on AVX-512 and in wasm SIMD) gives every output one `dot_portable` of
/// its row: each `dot_cases()` length, 1 to 9 rows a matrix (around the group of four),
/// matrices stacked in one call and next to a quantized matrix (whose rows break a group).
pub fn assert_matvec_bits() {
    use crate::kernels::{dot_portable, matmul};
    use crate::quant::{MatRef, Precision, Tensor};
    for (a, b) in dot_cases() {
        let n = a.len();
        if n == 0 {
            continue;
        }
        let x = &b[..n];
        // Rows: a shifted copy of `a` each, 1 to 9 of them per matrix.
        let rows = |d: usize, s: f32| -> Vec<f32> {
            (0..d)
                .flat_map(|r| a.iter().map(move |v| v * (1.0 - (r as f32 + s) * 0.07)))
                .collect()
        };
        for d in 1..=9 {
            let (w0, w1) = (rows(d, 0.0), rows(d + 2, 0.5));
            let q = Tensor::F32(rows(3, 0.25).into()).at(Precision::Q8, 1, 8);
            let mats = [(&w0).into(), q.block(0, 1), (&w1).into()];
            let mut out = vec![0.0f32; 2 * d + 5];
            matmul(&mut out, x, n, &mats);
            let want: Vec<u32> = w0
                .chunks(n)
                .map(|w| dot_portable(w, x))
                .chain((0..3).map(|r| match q.block(0, 1) {
                    MatRef::Quant(q) => q.dot(r * n, x),
                    _ => unreachable!(),
                }))
                .chain(w1.chunks(n).map(|w| dot_portable(w, x)))
                .map(f32::to_bits)
                .collect();
            let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "n = {n}, d = {d}");
        }
    }
}

/// Asserts that attention (`kernels::attend_heads`: scores several positions at a time on
/// AVX-512 and in wasm SIMD, the weighted values of G heads side by side in the build's
/// vectors) leaves each head's weights softmax(q·k_t / sqrt(hs)) with each q·k_t one
/// `dot_portable`, and its output Σ_t w_t·v_t added in position order: 1, 2, 4 and 8 heads
/// (pairs sharing a K/V head, as in grouped-query attention), head sizes below, at and above
/// the 8- and 32-wide steps, 1 to 41 positions (around the groups of four and eight), the
/// heads' keys at offsets in rows of several heads.
pub fn assert_attention_bits() {
    use crate::kernels::{attend_heads, dot_portable, softmax};
    fn check<const G: usize>(next: &mut impl FnMut() -> f32) {
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for hs in [1, 3, 8, 12, 16, 24, 32, 40, 48, 64] {
            let stride = 5 * hs + 5;
            // heads 2j and 2j + 1 read K/V head j (mod 4), from 2 floats into the row
            let offsets: [usize; G] = std::array::from_fn(|g| 2 + (g / 2 % 4) * hs);
            let keys: Vec<f32> = (0..41 * stride).map(|_| next()).collect();
            let values: Vec<f32> = (0..41 * stride).map(|_| next()).collect();
            let q: Vec<f32> = (0..G * hs).map(|_| next()).collect();
            let scale = 1.0 / (hs as f32).sqrt();
            for pos in 0..41 {
                let (mut out, mut att) = (vec![0.0f32; G * hs], vec![0.0f32; G * (pos + 1)]);
                attend_heads::<G>(&mut out, &q, &keys, &values, stride, offsets, pos, &mut att);
                for (g, &offset) in offsets.iter().enumerate() {
                    let q = &q[g * hs..][..hs];
                    let mut want: Vec<f32> = (0..=pos)
                        .map(|t| dot_portable(q, &keys[t * stride + offset..][..hs]) * scale)
                        .collect();
                    softmax(&mut want);
                    let want_out: Vec<f32> = (0..hs)
                        .map(|i| {
                            (0..=pos).fold(0.0f32, |acc, t| {
                                acc + want[t] * values[t * stride + offset + i]
                            })
                        })
                        .collect();
                    let at = format!("G = {G}, head {g}, hs = {hs}, pos = {pos}");
                    assert_eq!(
                        bits(&att[g * (pos + 1)..][..=pos]),
                        bits(&want),
                        "{at}: weights"
                    );
                    assert_eq!(bits(&out[g * hs..][..hs]), bits(&want_out), "{at}: output");
                }
            }
        }
    }
    let mut seed = 7u32;
    let mut next = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 * 8.0 - 4.0
    };
    check::<1>(&mut next);
    check::<2>(&mut next);
    check::<4>(&mut next);
    check::<8>(&mut next);
    assert_prefill_attention_bits(&mut next);
}

/// Prefill's attention, Q query rows of a head at once (`attend_queries`), gives each row's
/// bits alone (`attend_head`, held to the plain loops above): rows at consecutive positions
/// across the blocks of 64 keys the rows share and around the score groups, rows far apart,
/// head sizes with and without an 8-wide tail, a head's K/V at an offset in its row.
fn assert_prefill_attention_bits(next: &mut impl FnMut() -> f32) {
    use crate::kernels::{attend_head, attend_queries};
    fn check<const Q: usize>(hs: usize, pos: [usize; Q], next: &mut impl FnMut() -> f32) {
        let (stride, offset) = (3 * hs + 2, hs + 1);
        let ctx = pos.iter().max().map_or(0, |p| p + 1);
        let keys: Vec<f32> = (0..ctx * stride).map(|_| next()).collect();
        let values: Vec<f32> = (0..ctx * stride).map(|_| next()).collect();
        let q: Vec<f32> = (0..Q * hs).map(|_| next()).collect();
        let (mut out, mut att) = (vec![0.0f32; Q * hs], vec![0.0f32; Q * ctx]);
        let qs = std::array::from_fn(|i| &q[i * hs..][..hs]);
        attend_queries::<Q>(&mut out, qs, &keys, &values, stride, offset, pos, &mut att);
        for (i, &p) in pos.iter().enumerate() {
            let (mut want, mut w_att) = (vec![0.0f32; hs], vec![0.0f32; p + 1]);
            attend_head(
                &mut want, qs[i], &keys, &values, stride, offset, p, &mut w_att,
            );
            let at = format!("Q = {Q}, hs = {hs}, row {i} at {p}");
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&att[i * ctx..][..=p]), bits(&w_att), "{at}: weights");
            assert_eq!(bits(&out[i * hs..][..hs]), bits(&want), "{at}: output");
        }
    }
    for hs in [3, 8, 12, 64] {
        for p0 in [0, 3, 57, 63, 64, 130] {
            check::<8>(hs, std::array::from_fn(|i| p0 + i), next);
            check::<4>(hs, std::array::from_fn(|i| p0 + i), next);
            check::<1>(hs, [p0], next);
        }
        check::<4>(hs, [5, 70, 71, 200], next);
    }
}

/// A seeded linear congruential source of 24-bit numbers (the kernel-bit checks' inputs).
fn lcg(mut seed: u32) -> impl FnMut() -> u32 {
    move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        seed >> 8
    }
}

/// A quantized matrix of `len` weights whose value bytes are random (every byte value, −128
/// included) and whose scales are random in [0, 0.25).
fn random_quant(
    len: usize,
    p: crate::quant::Precision,
    g: usize,
    next: &mut impl FnMut() -> u32,
) -> crate::quant::QTensor {
    let mut q = crate::quant::QTensor::quantize(&vec![0.0; len], 1, p, g);
    q.values.iter_mut().for_each(|v| *v = next() as u8);
    q.scales
        .iter_mut()
        .for_each(|s| *s = (next() % 1000) as f32 / 4096.0);
    q
}

/// Asserts that the int8 × int8 row product (`QRef::dot_int8`: AVX-512 VNNI or AVX2
/// natively, simd128 in wasm) gives the plain loops' bits (`dot_int8_portable`, the same
/// code on every target), alone and through `kernels::matmul` in decode and in a batch, for
/// Q8 groups of 32, 64 and 128 and Q4, 1 to 19 groups a row (around the 8 a kernel call
/// sums), weights of every byte value (−128 included: a GGUF file may hold it).
pub fn assert_int8_kernel_bits() {
    use crate::kernels::matmul;
    use crate::quant::{MatRef, Precision, QActs};
    let mut next = lcg(11);
    for (p, g) in [
        (Precision::Q8, 32),
        (Precision::Q8, 64),
        (Precision::Q8, 128),
        (Precision::Q4, 32),
    ] {
        for groups in 1..=19 {
            // 19 rows of one group: 8 a kernel call, and 3 left over; 7 longer rows: 4 a
            // call in the page's decode, and 3 left over
            let (rows, n, t) = (if groups == 1 { 19 } else { 7 }, groups * g, 3);
            let q = random_quant(rows * n, p, g, &mut next);
            // Inputs of mixed sizes, a group of zeros among them.
            let x: Vec<f32> = (0..t * n)
                .map(|i| match (i / g) % 5 {
                    3 => 0.0,
                    k => ((next() % 2001) as f32 - 1000.0) * 10f32.powi(k as i32 - 3),
                })
                .collect();
            let acts = QActs::quantize(&x, n, g);
            let b = q.block(0);
            assert!(b.int8_ready(n));
            let want: Vec<Vec<u32>> = (0..t)
                .map(|r| {
                    (0..rows)
                        .map(|i| b.dot_int8_portable(i * n, acts.row(r)).to_bits())
                        .collect()
                })
                .collect();
            for (r, want_r) in want.iter().enumerate() {
                let got: Vec<u32> = (0..rows)
                    .map(|i| b.dot_int8(i * n, acts.row(r)).to_bits())
                    .collect();
                assert_eq!(
                    &got, want_r,
                    "{p} groups of {g}, {groups} a row, input row {r}"
                );
                let mut one = vec![0.0f32; rows];
                matmul(&mut one, &x[r * n..(r + 1) * n], n, &[MatRef::Quant(b)]);
                let one: Vec<u32> = one.iter().map(|v| v.to_bits()).collect();
                assert_eq!(&one, want_r, "{p} decode, groups of {g}, {groups} a row");
            }
            let mut all = vec![0.0f32; t * rows];
            matmul(&mut all, &x, n, &[MatRef::Quant(b)]);
            let all: Vec<u32> = all.iter().map(|v| v.to_bits()).collect();
            assert_eq!(
                all,
                want.concat(),
                "{p} batch of {t}, groups of {g}, {groups} a row"
            );
        }
    }
    assert_int8_shifted_bits();
    assert_int8_prefill_bits();
}

/// Prefill's batches (16 input rows and more: natively, the register-tiled product with
/// AVX-512 VNNI) give the plain loops' bits for every (weight row, input row): 16, 21 and
/// 35 input rows (whole tiles of 8 and tails), two matrices of 37 and 20 rows in one call
/// (whole panels of 16 and part ones), 1 to 19 groups a row (fewer than the 8 lanes, and
/// lanes taken twice and more), q8 groups of 32 and 64 and q4, every byte value.
fn assert_int8_prefill_bits() {
    use crate::kernels::matmul;
    use crate::quant::{MatRef, Precision, QActs};
    let mut next = lcg(37);
    for (p, g) in [
        (Precision::Q8, 32),
        (Precision::Q8, 64),
        (Precision::Q4, 32),
    ] {
        for groups in [1, 3, 8, 11, 19] {
            let n = groups * g;
            let qs = [37, 20].map(|rows| random_quant(rows * n, p, g, &mut next));
            for t in [16, 21, 35] {
                let x: Vec<f32> = (0..t * n)
                    .map(|i| match (i / g) % 7 {
                        5 => 0.0,
                        k => ((next() % 2001) as f32 - 1000.0) * 10f32.powi(k as i32 - 3),
                    })
                    .collect();
                let acts = QActs::quantize(&x, n, g);
                let mut want = Vec::new();
                for q in &qs {
                    let b = q.block(0);
                    for r in 0..t {
                        for i in 0..b.len / n {
                            want.push(b.dot_int8_portable(i * n, acts.row(r)).to_bits());
                        }
                    }
                }
                let mut all = vec![0.0f32; want.len()];
                matmul(
                    &mut all,
                    &x,
                    n,
                    &qs.each_ref().map(|q| MatRef::Quant(q.block(0))),
                );
                let wrong = all.iter().zip(&want).position(|(a, &w)| a.to_bits() != w);
                assert_eq!(
                    wrong, None,
                    "{p} batch of {t}, groups of {g}, {groups} a row"
                );
            }
        }
    }
}

/// Rows that start inside a group (`ShiftedActs`): the kernels' products equal the plain
/// loops' on the same layouts, alone and in a batch of 3, for q8 (groups of 64 and 32) and
/// q4, weights of every byte value.
fn assert_int8_shifted_bits() {
    use crate::kernels::matmul;
    use crate::quant::{MatRef, Precision, ShiftedActs};
    let mut next = lcg(29);
    for (p, g, n) in [
        (Precision::Q8, 64, 172),
        (Precision::Q8, 32, 100),
        (Precision::Q4, 32, 172),
    ] {
        let (rows, t) = (32, 3);
        let q = random_quant(rows * n, p, g, &mut next);
        let x: Vec<f32> = (0..t * n)
            .map(|_| ((next() % 2001) as f32 - 1000.0) / 300.0)
            .collect();
        let b = q.block(0);
        assert!(b.int8_shifted_ready(n), "{p} rows of {n}, groups of {g}");
        let acts = ShiftedActs::quantize(&x, n, g, rows);
        let want: Vec<u32> = (0..t)
            .flat_map(|r| (0..rows).map(move |i| (i, r)))
            .map(|(i, r)| {
                let (start, x_r) = acts.row(i, r);
                b.dot_int8_portable(start, x_r).to_bits()
            })
            .collect();
        let mut all = vec![0.0f32; t * rows];
        matmul(&mut all, &x, n, &[MatRef::Quant(b)]);
        let all: Vec<u32> = all.iter().map(|v| v.to_bits()).collect();
        assert_eq!(all, want, "{p} batch, rows of {n} in groups of {g}");
        for r in 0..t {
            let mut one = vec![0.0f32; rows];
            matmul(&mut one, &x[r * n..(r + 1) * n], n, &[MatRef::Quant(b)]);
            let one: Vec<u32> = one.iter().map(|v| v.to_bits()).collect();
            assert_eq!(
                one,
                want[r * rows..(r + 1) * rows],
                "{p} decode, rows of {n}"
            );
        }
    }
}

/// A file of `len` bytes of which only the first `head.len()` can be read (reads stop
/// there, as at the end of a file): a check that passes on it read nothing past its header,
/// and loading the bulk from it fails.
pub struct HeadOnly {
    pub head: Vec<u8>,
    pub len: u64,
}

impl crate::formats::source::ByteSource for HeadOnly {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        crate::formats::source::read_slice(&self.head, offset, buf)
    }
}
