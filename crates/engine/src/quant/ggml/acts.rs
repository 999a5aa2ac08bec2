//! Activation rows quantized as llama.cpp quantizes them for a dot product with ggml blocks
//! (`ggml-quants.c`): the weights' `vec_dot_type` decides the [`Family`].
//!
//! - **Q8_K** (k-quants; `quantize_row_q8_K_ref`, which x86's `quantize_row_q8_K` calls):
//!   per 256 values, `max` the value of largest magnitude (with its sign), iscale =
//!   −127 / max, q = min(127, nearest_int(iscale·x)) (round half to even), d = 1 / iscale;
//!   the sum of each 16 q's (`bsums`) is kept for the weights' minimums and offsets.
//! - **Q8_0 / Q8_1** (32-weight types; x86's `quantize_row_q8_0`/`_1`, AVX): per 32 values,
//!   d = max|x| / 127, q = round(x · 127 / max|x|) (half to even, `_mm256_round_ps`), d
//!   stored as f16 (and read back from it); Q8_1 also s = f16(d · Σq) for the weights'
//!   offsets m.

use super::blocks::f16_at;

/// The activations a ggml type's dot product takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// float32 rows (F32, F16, BF16 weights)
    Float,
    /// Q8_K: 256 a block (Q4_K, Q5_K, Q6_K)
    K,
    /// Q8_0/Q8_1: 32 a block (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0)
    Legacy,
}

impl Family {
    /// Values a scale covers.
    pub fn block(self) -> usize {
        match self {
            Family::K => 256,
            Family::Legacy => 32,
            Family::Float => 1,
        }
    }
}

/// Input rows (each `n` wide) quantized for one family.
#[derive(Debug, Clone)]
pub struct GActs {
    pub family: Family,
    n: usize,
    /// a scale a block
    d: Vec<f32>,
    qs: Vec<i8>,
    /// K: Σq of each 16
    bsums: Vec<i16>,
    /// Legacy: f16(d·Σq) a block
    s: Vec<f32>,
}

/// One quantized activation row.
#[derive(Debug, Clone, Copy)]
pub struct GActRow<'a> {
    pub d: &'a [f32],
    pub qs: &'a [i8],
    pub bsums: &'a [i16],
    pub s: &'a [f32],
}

impl GActs {
    /// The rows of `x` (each `n` wide, n a multiple of the family's block).
    pub fn quantize(x: &[f32], n: usize, family: Family) -> GActs {
        let mut a = GActs {
            family,
            n,
            d: Vec::new(),
            qs: Vec::new(),
            bsums: Vec::new(),
            s: Vec::new(),
        };
        a.quantize_into(x, n, family);
        a
    }

    /// [`GActs::quantize`] into this one's buffers: no allocation once they have the room.
    pub fn quantize_into(&mut self, x: &[f32], n: usize, family: Family) {
        let per = family.block();
        let a = self;
        (a.family, a.n) = (family, n);
        a.d.clear();
        a.bsums.clear();
        a.s.clear();
        crate::quant::int8::refill(&mut a.qs, x.len(), 0);
        for (x, q) in x.chunks_exact(per).zip(a.qs.chunks_exact_mut(per)) {
            match family {
                Family::K => {
                    a.d.push(q8_k(x, q));
                    a.bsums.extend(
                        q.chunks_exact(16)
                            .map(|c| c.iter().map(|&v| v as i16).sum::<i16>()),
                    );
                }
                _ => {
                    let (d, s) = q8_1(x, q);
                    a.d.push(d);
                    a.s.push(s);
                }
            }
        }
    }

    /// Row `r`.
    pub fn row(&self, r: usize) -> GActRow<'_> {
        let (n, per) = (self.n, self.family.block());
        let blocks = n / per;
        let sums = |v: usize| r * v..(r + 1) * v;
        GActRow {
            d: &self.d[sums(blocks)],
            qs: &self.qs[sums(n)],
            bsums: if self.family == Family::K {
                &self.bsums[sums(n / 16)]
            } else {
                &[]
            },
            s: if self.family == Family::Legacy {
                &self.s[sums(blocks)]
            } else {
                &[]
            },
        }
    }
}

/// `quantize_row_q8_K_ref` for one block of 256: its q's into `q`, its scale returned.
fn q8_k(x: &[f32], q: &mut [i8]) -> f32 {
    let (mut amax, mut max) = (0.0f32, 0.0f32);
    for &v in x {
        if v.abs() > amax {
            (amax, max) = (v.abs(), v);
        }
    }
    if amax == 0.0 {
        q.fill(0);
        return 0.0;
    }
    let iscale = -127.0 / max;
    for (q, &v) in q.iter_mut().zip(x) {
        // |iscale·v| ≤ 127: the cast cannot saturate
        *q = ((iscale * v).round_ties_even() as i32).min(127) as i8;
    }
    1.0 / iscale
}

/// x86's `quantize_row_q8_1` for one block of 32: (d, s), both read back from f16.
fn q8_1(x: &[f32], q: &mut [i8]) -> (f32, f32) {
    let amax = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let d = amax / 127.0;
    let id = if amax != 0.0 { 127.0 / amax } else { 0.0 };
    let mut sum = 0i32;
    for (q, &v) in q.iter_mut().zip(x) {
        *q = (v * id).round_ties_even() as i8;
        sum += *q as i32;
    }
    let f16 = |v: f32| f16_at(&half::f16::from_f32(v).to_le_bytes(), 0);
    (f16(d), f16(d * sum as f32))
}
