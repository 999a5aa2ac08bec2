//! Quantized weights (lesson 10, section 5: "store/compute weights in 8-, 4-, or fewer bits.
//! Cuts memory and bandwidth — the decode bottleneck — with small, manageable accuracy loss.
//! This changes the representation of θ, not its learned values").
//!
//! Two formats besides float32, both symmetric with one float32 scale per group of weights:
//!
//! - **Q8** (llama2.c `export.py --version 2`, `quantize_q80`; GGML's Q8_0): scale
//!   d = max|w| / 127, q = round(w / d) as int8 (round half to even, as `torch.round`), w ≈ q·d.
//!   The group size is the file's (llama2.c: 64, halved until it divides `dim`); quantizing in
//!   memory uses the same rule, so `quantize --out` writes what `export.py` would.
//! - **Q4** (GGML's Q4_0, `quantize_row_q4_0_ref` in ggml-quants.c): groups of 32; m = the
//!   value of largest magnitude (with its sign), d = m / −8, q = min(15, trunc(w/d + 8.5)),
//!   w ≈ (q − 8)·d; 16 bytes per group, element j in the low nibble of byte j and element
//!   j + 16 in its high nibble. GGML stores d as float16 (4.5 bits a weight); we keep it
//!   float32 (5 bits a weight) so the scale adds no rounding of its own and the GPU and the
//!   CPU read the same scale.
//!
//! **Groups run over each layer's flattened matrix**, as `export.py` writes them, not over
//! rows: a group may straddle two rows. stories260K's hidden dim is 172, a multiple of neither
//! 32 nor 64, so every row of its `w2` (64 × 172) starts inside a group; llama2.c's `runq.c`
//! then silently uses only the first 128 of the 172 inputs (llama2.c PRs #532/#533), and
//! llama.cpp refuses the model. Our row product walks the groups the row overlaps, each
//! partial group with its own scale, so every input counts and the product is that of the
//! dequantized weights. A matrix whose size is not a multiple of the group (possible only
//! in memory, never in a v2 file, whose loader refuses it) gets a zero-padded last group.
//!
//! **Activations stay float32.** `runq.c` also quantizes the activations (x in groups, then
//! an int8·int8 dot with integer accumulation): that doubles the arithmetic's throughput on
//! int8 SIMD but adds a second rounding (x's own, up to half a step of max|x|/127 a value).
//! Decode is bandwidth-bound (the weights are read once per token, the activations stay in
//! cache), so the int8 weights already buy the speed; keeping x in float32 means a quantized
//! model's logits equal, up to the order of float additions, those of the float32 model
//! whose weights are the dequantized ones (tested to 1e-4 on the distribution). The cost is
//! one int→float conversion and a float multiply per weight instead of an integer one.
//!
//! Float order is fixed by the code (as in `cpu::dot`; `QRef::dot` says it in full): each
//! product goes into lane (index in its group) mod 16, a group's 16 lanes are scaled and
//! added into 16 row totals, reduced pairwise; a row's partial groups at either end are
//! reduced on their own. AVX-512 natively and simd128 in the page give the same bits, alone
//! or in a batch.

use serde::{Deserialize, Serialize};

/// How the matrices of a model are stored. Norms always stay float32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    #[default]
    F32,
    Q8,
    Q4,
}

impl Precision {
    pub const ALL: [Precision; 3] = [Precision::F32, Precision::Q8, Precision::Q4];

    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Q8 => "q8",
            Precision::Q4 => "q4",
        }
    }

    pub fn parse(s: &str) -> Result<Precision, String> {
        Precision::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("precision must be f32, q8 or q4, not {s:?}"))
    }

    /// The page's and the CLI's label: "f32 (4 bytes a weight)".
    pub fn label(self) -> &'static str {
        match self {
            Precision::F32 => "f32: 32 bits a weight",
            Precision::Q8 => "q8: int8 + a float32 scale per group",
            Precision::Q4 => "q4: 4 bits + a float32 scale per 32",
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Q4's group size (GGML's QK4_0).
pub const Q4_GROUP: usize = 32;
/// Q8's group size when quantizing in memory: llama2.c `export.py`'s default, halved until
/// it divides `dim` (see [`q8_group_for`]).
pub const Q8_GROUP: usize = 64;
/// Partial sums of the quantized dot products.
const QL: usize = 16;

/// `export.py`'s rule: 64, halved while `dim` is not a multiple of it.
pub fn q8_group_for(dim: usize) -> usize {
    let mut g = Q8_GROUP;
    while g > 1 && !dim.is_multiple_of(g) {
        g /= 2;
    }
    g
}

/// A quantized tensor: `blocks` matrices (one per layer) of `block_len` weights each, each
/// quantized on its own (its groups start at its first weight).
#[derive(Debug, Clone, PartialEq)]
pub struct QTensor {
    /// Q8 or Q4 (never F32)
    pub precision: Precision,
    pub group: usize,
    pub blocks: usize,
    pub block_len: usize,
    /// Per block: Q8 one byte a weight (an `i8`), padded to a multiple of 4 bytes so that
    /// the GPU reads each block from a whole `u32`; Q4 16 bytes a group.
    pub values: Vec<u8>,
    /// Per block: one scale a group.
    pub scales: Vec<f32>,
}

impl QTensor {
    /// Groups in one block (the last one zero-padded when the group does not divide it).
    pub fn groups_per_block(&self) -> usize {
        self.block_len.div_ceil(self.group)
    }

    /// Bytes of `values` one block takes.
    pub fn block_value_bytes(&self) -> usize {
        value_bytes(self.precision, self.block_len)
    }

    /// Quantizes `w`, `blocks` matrices one after another, each on its own.
    pub fn quantize(w: &[f32], blocks: usize, precision: Precision, group: usize) -> QTensor {
        let block_len = w.len() / blocks.max(1);
        let group = match precision {
            Precision::Q4 => Q4_GROUP,
            _ => group.max(1),
        };
        let vb = value_bytes(precision, block_len);
        let ng = block_len.div_ceil(group);
        let mut values = vec![0u8; blocks * vb];
        let mut scales = vec![0.0f32; blocks * ng];
        for b in 0..blocks {
            let src = &w[b * block_len..(b + 1) * block_len];
            let vals = &mut values[b * vb..(b + 1) * vb];
            for (g, chunk) in src.chunks(group).enumerate() {
                scales[b * ng + g] = match precision {
                    Precision::Q4 => quantize_q4_group(chunk, &mut vals[g * 16..(g + 1) * 16]),
                    _ => quantize_q8_group(chunk, &mut vals[g * group..g * group + chunk.len()]),
                };
            }
        }
        QTensor {
            precision,
            group,
            blocks,
            block_len,
            values,
            scales,
        }
    }

    /// Block `b` (a layer's matrix) as a view.
    pub fn block(&self, b: usize) -> QRef<'_> {
        let (vb, ng) = (self.block_value_bytes(), self.groups_per_block());
        QRef {
            precision: self.precision,
            group: self.group,
            len: self.block_len,
            values: &self.values[b * vb..(b + 1) * vb],
            scales: &self.scales[b * ng..(b + 1) * ng],
        }
    }

    /// The float32 weights this tensor stands for (q·d, one rounding each).
    pub fn dequantize(&self) -> Vec<f32> {
        let mut out = vec![0.0f32; self.blocks * self.block_len];
        for (b, o) in out.chunks_mut(self.block_len.max(1)).enumerate() {
            self.block(b).dequantize_into(0, o);
        }
        out
    }

    pub fn bytes(&self) -> u64 {
        (self.values.len() + 4 * self.scales.len()) as u64
    }
}

fn value_bytes(p: Precision, block_len: usize) -> usize {
    match p {
        Precision::Q4 => block_len.div_ceil(Q4_GROUP) * 16,
        _ => block_len.next_multiple_of(4),
    }
}

/// `quantize_q80` of llama2.c `export.py` for one group: d = max|w| / 127, q = round(w / d)
/// (half to even, `torch.round`). A group of zeros gets d = 0 and q = 0.
fn quantize_q8_group(w: &[f32], q: &mut [u8]) -> f32 {
    let max = w.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let d = max / 127.0;
    for (q, &v) in q.iter_mut().zip(w) {
        let r = if d > 0.0 {
            (v / d).round_ties_even()
        } else {
            0.0
        };
        *q = (r.clamp(-127.0, 127.0) as i8) as u8;
    }
    d
}

/// `quantize_row_q4_0_ref` of GGML for one group (≤ 32 values; the rest are zeros).
fn quantize_q4_group(w: &[f32], qs: &mut [u8]) -> f32 {
    let (mut amax, mut max) = (0.0f32, 0.0f32);
    for &v in w {
        if v.abs() > amax {
            amax = v.abs();
            max = v;
        }
    }
    let d = max / -8.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let nib = |j: usize| -> u8 {
        let v = w.get(j).copied().unwrap_or(0.0);
        ((v * id + 8.5) as i8).clamp(0, 15) as u8
    };
    for (j, q) in qs.iter_mut().enumerate() {
        *q = nib(j) | (nib(j + 16) << 4);
    }
    d
}

/// One layer's quantized matrix.
#[derive(Debug, Clone, Copy)]
pub struct QRef<'a> {
    pub precision: Precision,
    pub group: usize,
    /// weights in the block
    pub len: usize,
    pub values: &'a [u8],
    pub scales: &'a [f32],
}

impl QRef<'_> {
    /// The integer of weight `k` (−127…127 for Q8, −8…7 for Q4).
    #[inline(always)]
    pub fn int_at(&self, k: usize) -> i32 {
        match self.precision {
            Precision::Q4 => {
                let (g, e) = (k / Q4_GROUP, k % Q4_GROUP);
                let b = self.values[g * 16 + e % 16];
                (if e < 16 { b & 15 } else { b >> 4 }) as i32 - 8
            }
            _ => self.values[k] as i8 as i32,
        }
    }

    /// Weight `k` dequantized.
    pub fn weight(&self, k: usize) -> f32 {
        self.int_at(k) as f32 * self.scales[k / self.group]
    }

    /// Weights `start..start + out.len()` dequantized.
    pub fn dequantize_into(&self, start: usize, out: &mut [f32]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.weight(start + i);
        }
    }

    /// Σ w[start + i]·x[i] over i < x.len(): the row starting at weight `start`.
    ///
    /// The order of the float operations, the same on every target: within a group each
    /// product goes into lane (index in the group) mod 16, and the lanes are scaled by the
    /// group's scale. A row is cut at its group boundaries into a partial group at its start
    /// (a row that starts inside a group: stories260K's w2), its whole groups, and a partial
    /// group at its end. The whole groups run in the SIMD kernels (their scaled lanes summed
    /// into 16 totals, reduced pairwise); each partial group is reduced on its own; the row is
    /// (head + whole groups) + tail. Groups not a multiple of 16 wide take one lane loop.
    #[inline(always)]
    pub fn dot(&self, start: usize, x: &[f32]) -> f32 {
        let g = self.group;
        if !g.is_multiple_of(QL) {
            return self.dot_lanes(start, x);
        }
        let (a, b, head, tail) = self.ends(start, x);
        let whole = if b > a {
            let (g0, g1) = (a / g, b / g);
            let (scales, xs) = (&self.scales[g0..g1], &x[a - start..b - start]);
            match self.precision {
                Precision::Q4 => simd::q4_row(&self.values[g0 * 16..g1 * 16], scales, xs),
                _ => simd::q8_row(&self.values[a..b], scales, g, xs),
            }
        } else {
            0.0
        };
        (head + whole) + tail
    }

    /// A row cut at its group boundaries: its whole groups are weights a..b; the partial
    /// groups before a and after b give `head` and `tail`.
    fn ends(&self, start: usize, x: &[f32]) -> (usize, usize, f32, f32) {
        let (g, end) = (self.group, start + x.len());
        let a = start.next_multiple_of(g).min(end);
        let b = (end / g * g).max(a);
        let head = if a > start {
            self.partial(start, &x[..a - start])
        } else {
            0.0
        };
        let tail = if end > b {
            self.partial(b, &x[b - start..])
        } else {
            0.0
        };
        (a, b, head, tail)
    }

    /// The weights k..k + x.len() of one group times x: lanes (index in the group) mod 16,
    /// scaled, reduced pairwise.
    fn partial(&self, k: usize, x: &[f32]) -> f32 {
        let gi = k / self.group;
        let s0 = k - gi * self.group;
        let mut acc = [0.0f32; QL];
        match self.precision {
            Precision::Q4 => {
                let qs = &self.values[gi * 16..gi * 16 + 16];
                for (i, &xv) in x.iter().enumerate() {
                    let e = s0 + i;
                    let b = qs[e % 16];
                    let v = if e < 16 { b & 15 } else { b >> 4 };
                    acc[e % QL] += (v as i32 - 8) as f32 * xv;
                }
            }
            _ => {
                for ((i, &q), &xv) in self.values[k..k + x.len()].iter().enumerate().zip(x) {
                    acc[(s0 + i) % QL] += (q as i8) as f32 * xv;
                }
            }
        }
        let s = self.scales[gi];
        reduce16(acc.map(|a| s * a))
    }

    /// [`QRef::dot`]'s arithmetic in plain loops, group by group: the reference its kernels
    /// are tested against, and the path for groups not a multiple of 16 wide.
    pub fn dot_lanes(&self, start: usize, x: &[f32]) -> f32 {
        let g = self.group;
        let end = start + x.len();
        if g.is_multiple_of(QL) {
            // head, whole groups (16 totals), tail, as `dot` cuts them
            let (a, b, head, tail) = self.ends(start, x);
            let mut total = [0.0f32; QL];
            for gi in a / g..b / g {
                let mut acc = [0.0f32; QL];
                self.full_group(gi, &x[gi * g - start..(gi + 1) * g - start], &mut acc);
                for j in 0..QL {
                    total[j] += self.scales[gi] * acc[j];
                }
            }
            let whole = if b > a { reduce16(total) } else { 0.0 };
            return (head + whole) + tail;
        }
        let mut total = [0.0f32; QL];
        let mut k = start;
        while k < end {
            let gi = k / g;
            let (g0, g1) = (gi * g, ((gi + 1) * g).min(end));
            let mut acc = [0.0f32; QL];
            for (i, &xv) in x[k - start..g1 - start].iter().enumerate() {
                let e = k + i;
                acc[(e - g0) % QL] += self.int_at(e) as f32 * xv;
            }
            let s = self.scales[gi];
            for j in 0..QL {
                total[j] += s * acc[j];
            }
            k = g1;
        }
        reduce16(total)
    }

    /// The lanes of one whole group (g a multiple of 16): the same sums as the general loop.
    #[inline(always)]
    fn full_group(&self, gi: usize, xs: &[f32], acc: &mut [f32; QL]) {
        match self.precision {
            Precision::Q4 => {
                let qs: &[u8; 16] = self.values[gi * 16..gi * 16 + 16].try_into().unwrap();
                let (lo, hi) = xs.split_at(16);
                for j in 0..QL {
                    acc[j] += ((qs[j] & 15) as i32 - 8) as f32 * lo[j];
                }
                for j in 0..QL {
                    acc[j] += ((qs[j] >> 4) as i32 - 8) as f32 * hi[j];
                }
            }
            _ => {
                let q = &self.values[gi * self.group..(gi + 1) * self.group];
                for (qc, xc) in q.chunks_exact(QL).zip(xs.chunks_exact(QL)) {
                    for j in 0..QL {
                        acc[j] += (qc[j] as i8) as f32 * xc[j];
                    }
                }
            }
        }
    }
}

#[inline(always)]
fn reduce16(mut a: [f32; QL]) -> f32 {
    let mut w = QL / 2;
    while w > 0 {
        for j in 0..w {
            a[j] += a[j + w];
        }
        w /= 2;
    }
    a[0]
}

/// The row kernels over whole groups: AVX-512 natively (the build targets its CPU), simd128
/// in the page, portable loops elsewhere; all three the same arithmetic lane for lane as
/// `QRef::dot_lanes` (16 lanes: one 512-bit register, four 128-bit ones), multiply then
/// add (no FMA), so the bits agree on every target.
mod simd {
    #[cfg(not(any(
        all(target_arch = "x86_64", target_feature = "avx512f"),
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    use super::{reduce16, QL};

    /// Q8: `q` the row's int8 values (whole groups of `g`), `s` their scales.
    #[inline(always)]
    pub fn q8_row(q: &[u8], s: &[f32], g: usize, x: &[f32]) -> f32 {
        debug_assert!(q.len() == x.len() && q.len() == s.len() * g && g.is_multiple_of(16));
        #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
        // SAFETY: the build enables AVX-512F; the lengths are checked by the caller (whole
        // groups of a multiple of 16, as many values as inputs).
        unsafe {
            x86::q8_row(q, s, g, x)
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        // SAFETY: the build enables simd128; lengths as above.
        unsafe {
            wasm::q8_row(q, s, g, x)
        }
        #[cfg(not(any(
            all(target_arch = "x86_64", target_feature = "avx512f"),
            all(target_arch = "wasm32", target_feature = "simd128")
        )))]
        {
            let mut total = [0.0f32; QL];
            for ((qg, xg), &sc) in q.chunks_exact(g).zip(x.chunks_exact(g)).zip(s) {
                let mut acc = [0.0f32; QL];
                for (qc, xc) in qg.chunks_exact(QL).zip(xg.chunks_exact(QL)) {
                    for j in 0..QL {
                        acc[j] += (qc[j] as i8) as f32 * xc[j];
                    }
                }
                for j in 0..QL {
                    total[j] += sc * acc[j];
                }
            }
            reduce16(total)
        }
    }

    /// Q4: `qs` the row's groups (16 bytes each), `s` their scales.
    #[inline(always)]
    pub fn q4_row(qs: &[u8], s: &[f32], x: &[f32]) -> f32 {
        debug_assert!(qs.len() == 16 * s.len() && x.len() == 32 * s.len());
        #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
        // SAFETY: as in `q8_row`.
        unsafe {
            x86::q4_row(qs, s, x)
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        // SAFETY: as in `q8_row`.
        unsafe {
            wasm::q4_row(qs, s, x)
        }
        #[cfg(not(any(
            all(target_arch = "x86_64", target_feature = "avx512f"),
            all(target_arch = "wasm32", target_feature = "simd128")
        )))]
        {
            let mut total = [0.0f32; QL];
            for ((b, xg), &sc) in qs.chunks_exact(16).zip(x.chunks_exact(32)).zip(s) {
                let mut acc = [0.0f32; QL];
                for j in 0..QL {
                    acc[j] += ((b[j] & 15) as i32 - 8) as f32 * xg[j];
                }
                for j in 0..QL {
                    acc[j] += ((b[j] >> 4) as i32 - 8) as f32 * xg[16 + j];
                }
                for j in 0..QL {
                    total[j] += sc * acc[j];
                }
            }
            reduce16(total)
        }
    }

    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    mod x86 {
        use std::arch::x86_64::*;

        /// `reduce16`: lanes j + j+8, then j + j+4, j + j+2, j + j+1.
        #[inline(always)]
        unsafe fn reduce16(v: __m512) -> f32 {
            let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
            let a8 = _mm256_add_ps(_mm512_castps512_ps256(v), hi);
            let a4 = _mm_add_ps(_mm256_castps256_ps128(a8), _mm256_extractf128_ps(a8, 1));
            let a2 = _mm_add_ps(a4, _mm_movehl_ps(a4, a4));
            _mm_cvtss_f32(_mm_add_ss(a2, _mm_shuffle_ps(a2, a2, 0b01)))
        }

        #[inline(always)]
        pub unsafe fn q8_row(q: &[u8], s: &[f32], g: usize, x: &[f32]) -> f32 {
            let (qp, xp) = (q.as_ptr(), x.as_ptr());
            let mut total = _mm512_setzero_ps();
            for (gi, &sc) in s.iter().enumerate() {
                let mut acc = _mm512_setzero_ps();
                let mut k = gi * g;
                let end = k + g;
                while k < end {
                    let qi = _mm512_cvtepi8_epi32(_mm_loadu_si128(qp.add(k) as *const __m128i));
                    let p = _mm512_mul_ps(_mm512_cvtepi32_ps(qi), _mm512_loadu_ps(xp.add(k)));
                    acc = _mm512_add_ps(acc, p);
                    k += 16;
                }
                total = _mm512_add_ps(total, _mm512_mul_ps(_mm512_set1_ps(sc), acc));
            }
            reduce16(total)
        }

        /// Each nibble becomes the float q − 8 through a 16-entry table (`permutexvar` reads
        /// the index's low 4 bits: no mask, subtract or conversion), exactly the value the
        /// plain loop converts.
        #[inline(always)]
        pub unsafe fn q4_row(qs: &[u8], s: &[f32], x: &[f32]) -> f32 {
            let (qp, xp) = (qs.as_ptr(), x.as_ptr());
            let table = _mm512_setr_ps(
                -8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0,
                7.0,
            );
            let mut total = _mm512_setzero_ps();
            for (gi, &sc) in s.iter().enumerate() {
                let b = _mm512_cvtepu8_epi32(_mm_loadu_si128(qp.add(16 * gi) as *const __m128i));
                let lo = _mm512_permutexvar_ps(b, table);
                let hi = _mm512_permutexvar_ps(_mm512_srli_epi32::<4>(b), table);
                let xg = xp.add(32 * gi);
                let acc =
                    _mm512_add_ps(_mm512_setzero_ps(), _mm512_mul_ps(lo, _mm512_loadu_ps(xg)));
                let acc = _mm512_add_ps(acc, _mm512_mul_ps(hi, _mm512_loadu_ps(xg.add(16))));
                total = _mm512_add_ps(total, _mm512_mul_ps(_mm512_set1_ps(sc), acc));
            }
            reduce16(total)
        }
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    mod wasm {
        use core::arch::wasm32::*;

        /// `reduce16` on lanes 4v..4v+4 in vector v.
        #[inline(always)]
        unsafe fn reduce16(t: [v128; 4]) -> f32 {
            let a = f32x4_add(f32x4_add(t[0], t[2]), f32x4_add(t[1], t[3]));
            (f32x4_extract_lane::<0>(a) + f32x4_extract_lane::<2>(a))
                + (f32x4_extract_lane::<1>(a) + f32x4_extract_lane::<3>(a))
        }

        /// 16 bytes as four vectors of 4 lanes, signed or not.
        #[inline(always)]
        fn widen<const SIGNED: bool>(b: v128) -> [v128; 4] {
            if SIGNED {
                let (l, h) = (i16x8_extend_low_i8x16(b), i16x8_extend_high_i8x16(b));
                [
                    i32x4_extend_low_i16x8(l),
                    i32x4_extend_high_i16x8(l),
                    i32x4_extend_low_i16x8(h),
                    i32x4_extend_high_i16x8(h),
                ]
            } else {
                let (l, h) = (u16x8_extend_low_u8x16(b), u16x8_extend_high_u8x16(b));
                [
                    u32x4_extend_low_u16x8(l),
                    u32x4_extend_high_u16x8(l),
                    u32x4_extend_low_u16x8(h),
                    u32x4_extend_high_u16x8(h),
                ]
            }
        }

        #[inline(always)]
        pub unsafe fn q8_row(q: &[u8], s: &[f32], g: usize, x: &[f32]) -> f32 {
            let (qp, xp) = (q.as_ptr(), x.as_ptr());
            let mut total = [f32x4_splat(0.0); 4];
            for (gi, &sc) in s.iter().enumerate() {
                let mut acc = [f32x4_splat(0.0); 4];
                let mut k = gi * g;
                let end = k + g;
                while k < end {
                    let ints = widen::<true>(v128_load(qp.add(k) as *const v128));
                    for v in 0..4 {
                        let xv = v128_load(xp.add(k + 4 * v) as *const v128);
                        acc[v] = f32x4_add(acc[v], f32x4_mul(f32x4_convert_i32x4(ints[v]), xv));
                    }
                    k += 16;
                }
                let sv = f32x4_splat(sc);
                for v in 0..4 {
                    total[v] = f32x4_add(total[v], f32x4_mul(sv, acc[v]));
                }
            }
            reduce16(total)
        }

        #[inline(always)]
        pub unsafe fn q4_row(qs: &[u8], s: &[f32], x: &[f32]) -> f32 {
            let (qp, xp) = (qs.as_ptr(), x.as_ptr());
            let (low, eight) = (i32x4_splat(15), i32x4_splat(8));
            let mut total = [f32x4_splat(0.0); 4];
            for (gi, &sc) in s.iter().enumerate() {
                let b = widen::<false>(v128_load(qp.add(16 * gi) as *const v128));
                let xg = xp.add(32 * gi);
                let sv = f32x4_splat(sc);
                for v in 0..4 {
                    let lo = f32x4_convert_i32x4(i32x4_sub(v128_and(b[v], low), eight));
                    let hi = f32x4_convert_i32x4(i32x4_sub(u32x4_shr(b[v], 4), eight));
                    let x0 = v128_load(xg.add(4 * v) as *const v128);
                    let x1 = v128_load(xg.add(16 + 4 * v) as *const v128);
                    let acc = f32x4_add(f32x4_splat(0.0), f32x4_mul(lo, x0));
                    let acc = f32x4_add(acc, f32x4_mul(hi, x1));
                    total[v] = f32x4_add(total[v], f32x4_mul(sv, acc));
                }
            }
            reduce16(total)
        }
    }
}

/// Bytes a model's float32 tensors can be views into, shared by every tensor of the file:
/// natively the mapped checkpoint (`memmap2::Mmap`), so the weights are the file's pages and
/// not a copy of them (issue 11).
pub type SharedBytes = std::sync::Arc<dyn AsRef<[u8]> + Send + Sync>;

/// Float32 weights: a buffer of their own, or a view into the file's bytes.
#[derive(Clone)]
pub enum F32s {
    Owned(Vec<f32>),
    /// `len` floats from byte `start` of `bytes`; made only by `F32s::view`, which checks
    /// the range and the alignment, so taking the slice cannot fail.
    Shared {
        bytes: SharedBytes,
        start: usize,
        len: usize,
    },
}

impl F32s {
    /// The `len` little-endian floats at byte `start` of `bytes`, in place; `None` when they
    /// are not all there or not 4-byte aligned in memory (the caller then copies them), or
    /// on a big-endian machine, where the bytes would have to be turned around.
    pub fn view(bytes: &SharedBytes, start: usize, len: usize) -> Option<F32s> {
        let end = start.checked_add(len.checked_mul(4)?)?;
        let b = (**bytes).as_ref().get(start..end)?;
        (cfg!(target_endian = "little") && bytemuck::try_cast_slice::<u8, f32>(b).is_ok()).then(
            || F32s::Shared {
                bytes: bytes.clone(),
                start,
                len,
            },
        )
    }

    /// Whether the floats are a view into shared bytes (the mapped file), not a copy.
    pub fn is_shared(&self) -> bool {
        matches!(self, F32s::Shared { .. })
    }
}

impl std::ops::Deref for F32s {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        match self {
            F32s::Owned(v) => v,
            F32s::Shared { bytes, start, len } => {
                bytemuck::cast_slice(&(**bytes).as_ref()[*start..*start + 4 * *len])
            }
        }
    }
}

impl From<Vec<f32>> for F32s {
    fn from(v: Vec<f32>) -> Self {
        F32s::Owned(v)
    }
}

impl PartialEq for F32s {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for F32s {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.is_shared() { "shared" } else { "owned" };
        write!(f, "F32s({kind}, {} floats)", self.len())
    }
}

/// A matrix tensor of a model: float32 (its own or a view into the file) or quantized.
#[derive(Debug, Clone, PartialEq)]
pub enum Tensor {
    F32(F32s),
    Quant(QTensor),
}

impl Tensor {
    pub fn precision(&self) -> Precision {
        match self {
            Tensor::F32(_) => Precision::F32,
            Tensor::Quant(q) => q.precision,
        }
    }

    /// Weights it holds.
    pub fn len(&self) -> usize {
        match self {
            Tensor::F32(v) => v.len(),
            Tensor::Quant(q) => q.blocks * q.block_len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes it takes in memory (and on the GPU).
    pub fn bytes(&self) -> u64 {
        match self {
            Tensor::F32(v) => 4 * v.len() as u64,
            Tensor::Quant(q) => q.bytes(),
        }
    }

    /// Matrix `b` of `blocks` equal ones (layer b's).
    pub fn block(&self, b: usize, blocks: usize) -> MatRef<'_> {
        match self {
            Tensor::F32(v) => {
                let n = v.len() / blocks.max(1);
                MatRef::F32(&v[b * n..(b + 1) * n])
            }
            Tensor::Quant(q) => MatRef::Quant(q.block(b)),
        }
    }

    /// The float32 values (dequantized if quantized).
    pub fn to_f32(&self) -> std::borrow::Cow<'_, [f32]> {
        match self {
            Tensor::F32(v) => std::borrow::Cow::Borrowed(&v[..]),
            Tensor::Quant(q) => std::borrow::Cow::Owned(q.dequantize()),
        }
    }

    /// This tensor (`blocks` matrices) at `precision`, from its float32 values. Requantizing
    /// a quantized tensor starts from its dequantized values.
    pub fn at(&self, precision: Precision, blocks: usize, q8_group: usize) -> Tensor {
        if precision == self.precision()
            && !matches!(self, Tensor::Quant(q) if q.group != q8_group && precision == Precision::Q8)
        {
            return self.clone();
        }
        let f = self.to_f32();
        match precision {
            Precision::F32 => Tensor::F32(f.into_owned().into()),
            p => Tensor::Quant(QTensor::quantize(&f, blocks, p, q8_group)),
        }
    }
}

/// A matrix (rows of `n` weights) as the kernels see it.
#[derive(Debug, Clone, Copy)]
pub enum MatRef<'a> {
    F32(&'a [f32]),
    Quant(QRef<'a>),
}

impl MatRef<'_> {
    pub fn len(&self) -> usize {
        match self {
            MatRef::F32(v) => v.len(),
            MatRef::Quant(q) => q.len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `r` (n wide) dequantized into `out`.
    pub fn row_into(&self, r: usize, out: &mut [f32]) {
        let n = out.len();
        match self {
            MatRef::F32(v) => out.copy_from_slice(&v[r * n..(r + 1) * n]),
            MatRef::Quant(q) => q.dequantize_into(r * n, out),
        }
    }
}

impl<'a> From<&'a [f32]> for MatRef<'a> {
    fn from(v: &'a [f32]) -> Self {
        MatRef::F32(v)
    }
}

impl<'a> From<&'a Vec<f32>> for MatRef<'a> {
    fn from(v: &'a Vec<f32>) -> Self {
        MatRef::F32(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::dot_portable;

    fn values(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed.wrapping_mul(2654435761).wrapping_add(1);
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                (s >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
            })
            .collect()
    }

    /// Q8 by hand: one group of 4 with max 1.27 → d = 0.01, q = round(w / d) half to even.
    #[test]
    fn q8_follows_export_py() {
        let w = [1.27f32, -0.635, 0.005, 0.0];
        let q = QTensor::quantize(&w, 1, Precision::Q8, 4);
        assert_eq!(q.scales, vec![1.27 / 127.0]);
        let ints: Vec<i32> = (0..4).map(|k| q.block(0).int_at(k)).collect();
        // -0.635/0.01 = -63.5 → -64 (even); 0.005/0.01 = 0.5 → 0 (even)
        assert_eq!(ints, vec![127, -64, 0, 0]);
        assert_eq!(q.values.len(), 4);
    }

    /// Q4 by hand, GGML's rule: m = −2 (largest magnitude, its sign), d = m / −8 = 0.25,
    /// q = min(15, trunc(w/d + 8.5)); element j low nibble, j + 16 high nibble.
    #[test]
    fn q4_follows_ggml() {
        let mut w = vec![0.0f32; 32];
        w[0] = -2.0;
        w[1] = 1.0;
        w[16] = 0.3;
        w[31] = 1.9;
        let q = QTensor::quantize(&w, 1, Precision::Q4, 0);
        assert_eq!(q.scales, vec![0.25]);
        // -2/0.25 = -8 → trunc(0.5) = 0 → int -8; 1/0.25 = 4 → trunc(12.5)=12 → 4;
        // 0.3/0.25 = 1.2 → trunc(9.7)=9 → 1; 1.9/0.25 = 7.6 → trunc(16.1)=16 → min 15 → 7.
        assert_eq!(q.values[0], 9 << 4, "0 low, 9 high");
        assert_eq!(q.values[1], 12 | (8 << 4));
        assert_eq!(q.values[15], 8 | (15 << 4));
        let b = q.block(0);
        assert_eq!(
            [b.int_at(0), b.int_at(1), b.int_at(16), b.int_at(31)],
            [-8, 4, 1, 7]
        );
        assert_eq!(b.weight(31), 1.75);
    }

    /// The quantized row product is the float32 product of the dequantized weights, for
    /// rows aligned with the groups and rows straddling them (stories260K's w2: 64 × 172 with
    /// groups of 64 and of 32), in every block.
    #[test]
    fn row_products_equal_the_dequantized_products_for_straddling_rows() {
        for (rows, n, p, g) in [
            (64, 172, Precision::Q8, 64),
            (64, 172, Precision::Q4, 32),
            (32, 64, Precision::Q8, 64),
            (32, 64, Precision::Q4, 32),
            (5, 7, Precision::Q8, 4), // a padded last group
            (3, 9, Precision::Q4, 32),
        ] {
            let w = values(2 * rows * n, 7);
            let q = QTensor::quantize(&w, 2, p, g);
            let deq = q.dequantize();
            let x = values(n, 9);
            for b in 0..2 {
                for r in 0..rows {
                    let got = q.block(b).dot(r * n, &x);
                    let row = &deq[b * rows * n + r * n..][..n];
                    let want = dot_portable(row, &x);
                    let scale: f32 = row.iter().zip(&x).map(|(a, b)| (a * b).abs()).sum();
                    assert!(
                        (got - want).abs() <= 1e-5 * scale.max(1.0),
                        "{p} {rows}x{n} block {b} row {r}: {got} vs {want}"
                    );
                }
            }
        }
    }

    /// The SIMD row kernels give the bits of the plain loops, for rows of whole groups and
    /// rows straddling them (the wasm test runs the same check on simd128).
    #[test]
    fn row_kernels_give_the_plain_loops_bits() {
        crate::testing::assert_quant_kernel_bits();
    }

    /// Quantization error is within half a step of each group's scale, and the sizes are
    /// those of the formats: Q8 1 byte + 4 per group, Q4 16 + 4 bytes per 32.
    #[test]
    fn errors_are_within_half_a_step_and_sizes_are_the_formats() {
        let w = values(64 * 172, 3);
        for (p, g) in [(Precision::Q8, 64), (Precision::Q4, 32)] {
            let q = QTensor::quantize(&w, 1, p, g);
            let deq = q.dequantize();
            for (k, (a, b)) in w.iter().zip(&deq).enumerate() {
                let d = q.scales[k / q.group].abs();
                // Q4's top step is clipped (q ≤ 15): up to one step there.
                let bound = if p == Precision::Q4 { d } else { 0.5 * d };
                assert!((a - b).abs() <= bound * 1.0001, "{p} {k}: {a} vs {b}");
            }
            let expect = match p {
                Precision::Q8 => 64 * 172 + 4 * 172,
                _ => 64 * 172 / 32 * 20,
            };
            assert_eq!(q.bytes(), expect);
        }
    }
}
