//! Integer products of quantized weights (q8, q4) with activations quantized to int8, the
//! way llama.cpp multiplies Q8_0/Q4_0 weights (their `vec_dot_type` is Q8_0: the activation
//! row is quantized once per matrix, `ggml_vec_dot_q8_0_q8_0`) and llama2.c's `runq.c` does
//! (`quantize(&s->xq, s->x, dim)` before each `matmul`).
//!
//! **The activations** (`QActs::quantize`): each input row in groups of the weights' group
//! size g, d = max|x| / 127, q = round(x / d) with ties away from zero (C's `roundf`, as
//! `runq.c`'s `quantize`), q = 0 where d = 0. One scalar loop on every target: the integers
//! and scales are the same bits natively and in the page.
//!
//! **The product** of a weight row and an activation row, group by group: the integer sum
//! Σ q_w·q_x is exact (|Σ| ≤ 127·127·g < 2²⁴ for g ≤ 1024, so it also converts to float32
//! exactly), whatever order the SIMD kernels add in. The float part has one order on every
//! target: group i goes into lane i mod 8, `lane += (d_w·d_x) · Σ`, and the 8 lanes fold
//! pairwise ([`reduce8`](super::rows::reduce8)). So AVX-512 VNNI, AVX2, simd128 and the
//! portable loops give the same bits (tests natively and in wasm).
//!
//! Eligible matrices ([`QRef::int8_ready`]): groups a multiple of 32 (the kernels' 32-byte
//! steps) of at most 1024, rows a whole number of groups (n a multiple of g).
//!
//! **Rows that are not whole groups** ([`QRef::int8_shifted_ready`]: stories260K's `w2`,
//! rows of 172 in groups of 64, so most rows start inside a group): llama.cpp refuses to
//! quantize such a matrix and `runq.c` reads it wrongly (its groups restart at each row).
//! Here each activation row is quantized with one scale (d = max|x| / 127 over the row),
//! then laid out once per offset o at which a weight row starts inside its group
//! ([`ShiftedActs`]): o zeros, the row, zeros to a whole number of groups. A weight row then
//! multiplies whole groups aligned with its own through the same kernels, the weights of
//! its neighbours meeting zeros (exactly 0), each group's scale its own.

use super::rows::{portable_sums, row_with, QActRow, Sums, LANES, MAX_GROUP, STEP};
use super::simd::{Native, QuantIsa};
use super::{Precision, QRef};

/// Activation rows quantized to int8 in groups of `group`.
#[derive(Debug, Clone, PartialEq)]
pub struct QActs {
    pub group: usize,
    pub n: usize,
    pub q: Vec<i8>,
    /// one scale a group
    pub scales: Vec<f32>,
    /// Σ q of each group (q4's nibbles are unsigned: Σ (u − 8)·x = Σ u·x − 8·Σ x)
    pub sums: Vec<i32>,
    /// q widened to 16 bits once for every weight row (simd128 multiplies 16-bit lanes):
    /// filled in the page's build only, empty elsewhere
    pub wide: Vec<i16>,
}

/// `v` emptied and filled to `len` with `fill`, its room kept.
pub(crate) fn refill<T: Copy>(v: &mut Vec<T>, len: usize, fill: T) {
    v.clear();
    v.resize(len, fill);
}

impl QActs {
    /// The rows (n wide) of `x` quantized in groups of `group` (which divides n).
    pub fn quantize(x: &[f32], n: usize, group: usize) -> QActs {
        let mut acts = QActs {
            group,
            n,
            q: Vec::new(),
            scales: Vec::new(),
            sums: Vec::new(),
            wide: Vec::new(),
        };
        acts.quantize_into(x, n, group);
        acts
    }

    /// [`QActs::quantize`] into this one's buffers: no allocation once they have the room
    /// (a decode step's activations, every step the same size).
    pub fn quantize_into(&mut self, x: &[f32], n: usize, group: usize) {
        debug_assert!(group > 0 && n.is_multiple_of(group) && x.len().is_multiple_of(n));
        let groups = x.len() / group;
        let acts = self;
        (acts.group, acts.n) = (group, n);
        refill(&mut acts.q, x.len(), 0);
        refill(&mut acts.scales, groups, 0.0);
        refill(&mut acts.sums, groups, 0);
        for (gi, (xg, qg)) in x
            .chunks_exact(group)
            .zip(acts.q.chunks_exact_mut(group))
            .enumerate()
        {
            let max = xg.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let d = max / 127.0;
            let mut sum = 0i32;
            for (q, &v) in qg.iter_mut().zip(xg) {
                // |v / d| ≤ 127 up to rounding; `as` saturates what a NaN or ∞ would give.
                *q = if d > 0.0 { (v / d).round() as i8 } else { 0 };
                sum += *q as i32;
            }
            acts.scales[gi] = d;
            acts.sums[gi] = sum;
        }
        acts.widen();
    }

    /// `wide` filled where the build's kernel reads it (`QuantIsa::WIDE_ACTS`: simd128).
    fn widen(&mut self) {
        self.wide.clear();
        if Native::WIDE_ACTS {
            self.wide.extend(self.q.iter().map(|&v| v as i16));
        }
    }

    fn widened(mut self) -> QActs {
        self.widen();
        self
    }

    /// Input row `r`.
    pub fn row(&self, r: usize) -> QActRow<'_> {
        let gpr = self.n / self.group;
        QActRow {
            q: &self.q[r * self.n..(r + 1) * self.n],
            scales: &self.scales[r * gpr..(r + 1) * gpr],
            sums: &self.sums[r * gpr..(r + 1) * gpr],
            wide: self
                .wide
                .get(r * self.n..(r + 1) * self.n)
                .unwrap_or_default(),
        }
    }
}

/// Activation rows for a matrix whose rows are not whole groups: each row quantized with
/// one scale, laid out for each offset at which one of the matrix's rows starts in a group.
#[derive(Debug, Clone, PartialEq)]
pub struct ShiftedActs {
    pub group: usize,
    pub n: usize,
    /// offset in the group → its layout in `layouts`
    at: Vec<Option<usize>>,
    layouts: Vec<QActs>,
}

impl ShiftedActs {
    /// The rows (n wide) of `x`, for weight rows 0..`rows` of a matrix in groups of `group`.
    pub fn quantize(x: &[f32], n: usize, group: usize, rows: usize) -> ShiftedActs {
        let one = QActs::quantize(x, n, n);
        let t = x.len() / n.max(1);
        let mut acts = ShiftedActs {
            group,
            n,
            at: vec![None; group],
            layouts: Vec::new(),
        };
        // the offsets repeat every group / gcd(n, group) rows
        for i in 0..rows.min(group) {
            let o = i * n % group;
            if acts.at[o].is_some() {
                break;
            }
            let width = (o + n).next_multiple_of(group);
            let (gpr, mut q) = (width / group, vec![0i8; t * width]);
            for (r, dst) in q.chunks_exact_mut(width).enumerate() {
                dst[o..o + n].copy_from_slice(&one.q[r * n..(r + 1) * n]);
            }
            let sums = q
                .chunks_exact(group)
                .map(|c| c.iter().map(|&v| v as i32).sum())
                .collect();
            let scales = (0..t * gpr).map(|k| one.scales[k / gpr]).collect();
            acts.at[o] = Some(acts.layouts.len());
            acts.layouts.push(
                QActs {
                    group,
                    n: width,
                    q,
                    scales,
                    sums,
                    wide: Vec::new(),
                }
                .widened(),
            );
        }
        acts
    }

    /// Weight row `i`'s aligned start (its first group's first weight) and input row `r`
    /// laid out for it.
    #[inline(always)]
    pub fn row(&self, i: usize, r: usize) -> (usize, QActRow<'_>) {
        let start = i * self.n;
        let o = start % self.group;
        let layout = self.at[o].expect("a layout for every row's offset");
        (start - o, self.layouts[layout].row(r))
    }
}

impl QRef<'_> {
    /// Whether rows of `n` weights of this matrix can take int8 activations.
    pub fn int8_ready(&self, n: usize) -> bool {
        let g = self.group;
        g.is_multiple_of(STEP) && g <= MAX_GROUP && n.is_multiple_of(g) && n > 0
    }

    /// Whether rows of `n` weights of this matrix, not whole groups, can take int8
    /// activations laid out by [`ShiftedActs`] (its groups as `int8_ready`'s, the matrix
    /// a whole number of groups, so every row's last group lies within it).
    pub fn int8_shifted_ready(&self, n: usize) -> bool {
        let g = self.group;
        g.is_multiple_of(STEP)
            && g <= MAX_GROUP
            && n > 0
            && !n.is_multiple_of(g)
            && self.len.is_multiple_of(g)
            && self.len.is_multiple_of(n)
    }

    /// Σ w[start + i]·x[i] over a row (start a multiple of the group) with quantized
    /// activations: the build's kernel.
    #[inline(always)]
    pub fn dot_int8(&self, start: usize, x: QActRow) -> f32 {
        let (kind, w, ws) = self.int8_row(start, x);
        Native::int8_row(kind, w, ws, x, self.group)
    }

    /// [`QRef::dot_int8`] of rows `first..first + out.len()` (at most 8) of a matrix whose
    /// rows are one group (n = g): x86 and simd128 sum them side by side, one horizontal
    /// reduction for all (at one group a row the per-row reduction was most of a row's
    /// time); the bits are `dot_int8`'s a row.
    #[inline(always)]
    pub fn dot_int8_one_group_rows(&self, first: usize, x: QActRow, out: &mut [f32]) {
        debug_assert!(out.len() <= LANES && x.q.len() == self.group);
        let (kind, bytes_a_group) = match self.precision {
            Precision::Q4 => (Sums::Q4, 16),
            _ => (Sums::Q8, self.group),
        };
        let w = &self.values[first * bytes_a_group..(first + out.len()) * bytes_a_group];
        let ws = &self.scales[first..first + out.len()];
        let r = Native::int8_one_group_rows(kind, w, ws, x, self.group);
        out.copy_from_slice(&r[..out.len()]);
    }

    /// [`QRef::dot_int8`] in plain loops: the reference every kernel equals bit for bit.
    pub fn dot_int8_portable(&self, start: usize, x: QActRow) -> f32 {
        let (kind, w, ws) = self.int8_row(start, x);
        row_with(kind, w, ws, x, self.group, portable_sums)
    }

    /// [`QRef::dot_int8`] of the `R` rows from weight `start` on: simd128 shares each load
    /// of the activations between them; each row's bits are `dot_int8`'s.
    #[inline(always)]
    pub fn dot_int8_rows<const R: usize>(&self, start: usize, x: QActRow) -> [f32; R] {
        let (kind, w, ws) = self.int8_rows_of(start, x, R);
        Native::int8_rows::<R>(kind, w, ws, x, self.group)
    }

    /// The row's kind, value bytes and scales.
    #[inline(always)]
    fn int8_row(&self, start: usize, x: QActRow) -> (Sums, &[u8], &[f32]) {
        self.int8_rows_of(start, x, 1)
    }

    /// The kind, value bytes and scales of `rows` rows from weight `start` on.
    #[inline(always)]
    fn int8_rows_of(&self, start: usize, x: QActRow, rows: usize) -> (Sums, &[u8], &[f32]) {
        let g = self.group;
        debug_assert!(start.is_multiple_of(g) && self.int8_ready(x.q.len()));
        let (g0, groups) = (start / g, rows * x.scales.len());
        let (kind, bytes_a_group) = match self.precision {
            Precision::Q4 => (Sums::Q4, 16),
            _ => (Sums::Q8, g),
        };
        let w = &self.values[g0 * bytes_a_group..(g0 + groups) * bytes_a_group];
        (kind, w, &self.scales[g0..g0 + groups])
    }
}
