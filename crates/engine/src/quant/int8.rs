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
//! pairwise ([`reduce8`]). So AVX-512 VNNI, AVX2, simd128 and the portable loops give the
//! same bits (tests natively and in wasm).
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

use super::{Precision, QRef};

/// One kernel step: 32 weights (a 256-bit register of bytes; a q4 group).
pub const STEP: usize = 32;
/// The largest group whose integer sums convert to float32 exactly.
pub const MAX_GROUP: usize = 1024;
/// Groups a kernel call sums (the epilogue's lanes).
pub const LANES: usize = 8;

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

/// One row of [`QActs`].
#[derive(Debug, Clone, Copy)]
pub struct QActRow<'a> {
    pub q: &'a [i8],
    pub scales: &'a [f32],
    pub sums: &'a [i32],
    /// `q` widened (the page's build; empty elsewhere)
    pub wide: &'a [i16],
}

impl QActs {
    /// The rows (n wide) of `x` quantized in groups of `group` (which divides n).
    pub fn quantize(x: &[f32], n: usize, group: usize) -> QActs {
        debug_assert!(group > 0 && n.is_multiple_of(group) && x.len().is_multiple_of(n));
        let groups = x.len() / group;
        let mut acts = QActs {
            group,
            n,
            q: vec![0; x.len()],
            scales: vec![0.0; groups],
            sums: vec![0; groups],
            wide: Vec::new(),
        };
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
        acts.widened()
    }

    /// `wide` filled where the build's kernel reads it (simd128).
    fn widened(mut self) -> QActs {
        if cfg!(kernel = "wasm") {
            self.wide = self.q.iter().map(|&v| v as i16).collect();
        }
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

/// The 8 lanes folded in a fixed order: j + j+4, then j + j+2, then 0 + 1.
#[inline(always)]
pub fn reduce8(a: [f32; LANES]) -> f32 {
    super::simd::fold_pairs(a)
}

/// `lanes[j] += (w[j]·x[j]) · sums[j]` for the first `m` groups of a call: the one float
/// order of the product (LLVM keeps it lane for lane when it vectorises; nothing fuses).
#[inline(always)]
fn fold(lanes: &mut [f32; LANES], sums: &[i32; LANES], ws: &[f32], xs: &[f32]) {
    for j in 0..ws.len() {
        lanes[j] += (ws[j] * xs[j]) * sums[j] as f32;
    }
}

/// The integer sums of up to 8 groups: which kernel, and its data.
#[derive(Clone, Copy)]
pub(super) enum Sums {
    /// int8 weights (groups of `g`)
    Q8,
    /// 16 bytes of nibbles a group of 32 (low nibble j, high nibble j + 16), unsigned
    Q4,
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
        #[cfg(any(kernel = "avx512", kernel = "avx2"))]
        // SAFETY: the build enables AVX2 (and AVX-512 VNNI where it uses it); `int8_row`
        // sliced `w` and `ws` to exactly the row's groups, as many as x has.
        unsafe {
            super::int8_simd::x86::row(kind, w, ws, x, self.group)
        }
        #[cfg(kernel = "wasm")]
        // SAFETY: the build enables simd128; lengths as above.
        unsafe {
            super::int8_simd::wasm::row(kind, w, ws, x, self.group)
        }
        #[cfg(not(any(kernel = "avx512", kernel = "avx2", kernel = "wasm")))]
        row_with(kind, w, ws, x, self.group, portable_sums)
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
        #[cfg(any(kernel = "avx512", kernel = "avx2"))]
        // SAFETY: the build enables AVX2 (and AVX-512 VNNI where it uses it); `w` holds the
        // rows' whole groups and `x` one group.
        let r = unsafe { super::int8_simd::x86::rows_of_one_group(kind, w, ws, x, self.group) };
        #[cfg(kernel = "wasm")]
        // SAFETY: the build enables simd128; `w` holds the rows' whole groups and `x` one
        // group, widened.
        let r = unsafe { super::int8_simd::wasm::rows_of_one_group(kind, w, ws, x, self.group) };
        #[cfg(not(any(kernel = "avx512", kernel = "avx2", kernel = "wasm")))]
        let r: [f32; LANES] = {
            let _ = (kind, w, ws);
            std::array::from_fn(|i| match i < out.len() {
                true => self.dot_int8((first + i) * self.group, x),
                false => 0.0,
            })
        };
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
        #[cfg(kernel = "wasm")]
        {
            let (kind, w, ws) = self.int8_rows_of(start, x, R);
            // SAFETY: the build enables simd128; `int8_rows_of` sliced `w` and `ws` to
            // exactly R rows of x's groups.
            unsafe { super::int8_simd::wasm::rows::<R>(kind, w, ws, x, self.group) }
        }
        #[cfg(not(kernel = "wasm"))]
        std::array::from_fn(|r| self.dot_int8(start + r * x.q.len(), x))
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

/// A row's product from its groups' integer sums (`sums8`, up to 8 groups a call): the one
/// float order, lane i mod 8.
#[inline(always)]
pub(super) fn row_with(
    kind: Sums,
    w: &[u8],
    ws: &[f32],
    x: QActRow,
    g: usize,
    sums8: impl Fn(Sums, &[u8], &[i8], usize, usize) -> [i32; LANES],
) -> f32 {
    let groups = ws.len();
    let bytes_a_group = w.len() / groups.max(1);
    let mut lanes = [0.0f32; LANES];
    let mut c = 0;
    while c < groups {
        let m = LANES.min(groups - c);
        let wc = &w[c * bytes_a_group..(c + m) * bytes_a_group];
        let mut s = sums8(kind, wc, &x.q[c * g..(c + m) * g], g, m);
        if let Sums::Q4 = kind {
            for (s, &xs) in s.iter_mut().zip(&x.sums[c..c + m]) {
                *s -= 8 * xs;
            }
        }
        fold(&mut lanes, &s, &ws[c..c + m], &x.scales[c..c + m]);
        c += m;
    }
    reduce8(lanes)
}

/// The integer sums of `m` ≤ 8 groups, in plain loops (q4: Σ u·x over the unsigned nibbles).
pub(super) fn portable_sums(kind: Sums, w: &[u8], x: &[i8], g: usize, m: usize) -> [i32; 8] {
    let mut s = [0i32; LANES];
    for (j, sj) in s.iter_mut().enumerate().take(m) {
        let xg = &x[j * g..(j + 1) * g];
        *sj = match kind {
            Sums::Q8 => w[j * g..(j + 1) * g]
                .iter()
                .zip(xg)
                .map(|(&a, &b)| (a as i8) as i32 * b as i32)
                .sum(),
            Sums::Q4 => {
                let b = &w[j * 16..(j + 1) * 16];
                (0..16)
                    .map(|e| {
                        (b[e] & 15) as i32 * xg[e] as i32 + (b[e] >> 4) as i32 * xg[16 + e] as i32
                    })
                    .sum()
            }
        };
    }
    s
}
