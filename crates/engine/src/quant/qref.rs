//! A row of a quantized matrix (`QRef`): its values, its dequantized weights, and its
//! product with float32 activations (`dot`: partial groups at a row's ends, whole groups in
//! the build's kernels, `simd`).

use super::rows::{reduce16, QL};
use super::simd::{Native, QuantIsa};
use super::{Activations, Precision, Q4_GROUP};

/// One layer's quantized matrix.
#[derive(Debug, Clone, Copy)]
pub struct QRef<'a> {
    pub precision: Precision,
    pub group: usize,
    /// weights in the block
    pub len: usize,
    pub values: &'a [u8],
    pub scales: &'a [f32],
    /// what the CPU's matrix product multiplies it with
    pub activations: Activations,
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
                Precision::Q4 => Native::q4_row(&self.values[g0 * 16..g1 * 16], scales, xs),
                _ => Native::q8_row(&self.values[a..b], scales, g, xs),
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
