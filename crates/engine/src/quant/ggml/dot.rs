//! A row of ggml blocks times a quantized activation row (llama.cpp's
//! `ggml_vec_dot_<type>_<vec_dot_type>`, `ggml-cpu/quants.c`). Each block's integer sums are
//! exact (i32: a Q6_K block's |Σ| < 2²⁸), computed by the build's instruction set
//! ([`Ints`]); the float part is this file's, in one order on every target:
//!
//! - Q4_K, Q5_K: acc += (d_x·d)·Σ_j sc_j·Σ q·q_x, then acc −= (d_x·dmin)·Σ_j m_j·bsum_j
//!   (eight sub-blocks of 32, each a 6-bit scale and min),
//! - Q6_K: acc += (d_x·d)·(Σ_k sc_k·Σ (q + 32)·q_x − 32·Σ_k sc_k·bsum_k) (sixteen of 16,
//!   signed 8-bit scales),
//! - Q8_0, Q4_0, Q5_0: acc += (d·d_x)·Σ q·q_x (q centred: nibble − 8, 5 bits − 16),
//! - Q4_1, Q5_1: acc += (d·d_x)·Σ q·q_x, then acc += m·s_x,
//!
//! block after block. llama.cpp adds the same terms (its float additions in other orders).

use super::blocks::{f16_at, k_values, legacy_values, scale_min};
use super::{GActRow, Kind};

/// The integer sums of one block, by an instruction set (each the bits of [`Portable`]'s:
/// integers). `b` the block, `q` its 256 activations, `bs` their 16 sums of 16.
pub(super) trait Ints {
    /// Q4_K: (Σ_j sc_j · Σ nibble·q over the 8 sub-blocks, Σ_j m_j · (bs_2j + bs_2j+1)).
    fn q4k(b: &[u8], q: &[i8], bs: &[i16]) -> (i32, i32);
    /// Q5_K: the same with the fifth bits.
    fn q5k(b: &[u8], q: &[i8], bs: &[i16]) -> (i32, i32);
    /// Q6_K: Σ_k sc_k · Σ q6·q over the 16 groups of 16 (q6 the signed values, −32 to 31).
    fn q6k(b: &[u8], q: &[i8], bs: &[i16]) -> i32;
}

/// The plain loops.
pub(super) struct Portable;

impl Ints for Portable {
    fn q4k(b: &[u8], q: &[i8], bs: &[i16]) -> (i32, i32) {
        k45(Kind::Q4_K, b, q, bs)
    }

    fn q5k(b: &[u8], q: &[i8], bs: &[i16]) -> (i32, i32) {
        k45(Kind::Q5_K, b, q, bs)
    }

    fn q6k(b: &[u8], q: &[i8], bs: &[i16]) -> i32 {
        let u = k_values(Kind::Q6_K, b);
        // Σ (u − 32)·q = Σ u·q − 32·Σq, Σq of each 16 being its bsum
        (0..16)
            .map(|k| {
                let sum = isum(&u[16 * k..16 * k + 16], &q[16 * k..]) - 32 * bs[k] as i32;
                b[192 + k] as i8 as i32 * sum
            })
            .sum()
    }
}

/// Σ u·q over `u`.
fn isum(u: &[u8], q: &[i8]) -> i32 {
    u.iter().zip(q).map(|(&u, &q)| u as i32 * q as i32).sum()
}

/// Q4_K/Q5_K's sums: each sub-block of 32 with its 6-bit scale and min from the block's 12
/// bytes at 4.
fn k45(kind: Kind, b: &[u8], q: &[i8], bs: &[i16]) -> (i32, i32) {
    let u = k_values(kind, b);
    let (mut total, mut mins) = (0, 0);
    for j in 0..8 {
        let (sc, m) = scale_min(j, &b[4..16]);
        total += sc as i32 * isum(&u[32 * j..32 * j + 32], &q[32 * j..]);
        mins += m as i32 * (bs[2 * j] as i32 + bs[2 * j + 1] as i32);
    }
    (total, mins)
}

/// The build's integer sums.
#[cfg(any(kernel = "avx512", kernel = "avx2"))]
type NativeInts = super::dot_x86::X86<{ cfg!(kernel = "avx512") }>;
#[cfg(kernel = "wasm")]
type NativeInts = super::dot_wasm::Wasm;
#[cfg(not(any(kernel = "avx512", kernel = "avx2", kernel = "wasm")))]
type NativeInts = Portable;

/// A row of `kind` blocks (`row`, as many weights as `a` has) times `a`.
#[inline]
pub fn row_dot(kind: Kind, row: &[u8], a: &GActRow) -> f32 {
    row_dot_with::<NativeInts>(kind, row, a)
}

/// out[r] = `row` · `acts[r]` for a batch's input rows, the bits of [`row_dot`] on each:
/// with AVX-512 each k-quant block unpacked once for all of them (`rows_x86.rs`).
pub fn rows_dot(kind: Kind, row: &[u8], acts: &[GActRow], out: &mut [f32]) {
    #[cfg(kernel = "avx512")]
    if super::rows_x86::rows(kind, row, acts, out) {
        return;
    }
    for (o, a) in out.iter_mut().zip(acts) {
        *o = row_dot(kind, row, a);
    }
}

/// [`row_dot`] on the plain loops (every target's bits).
pub fn row_dot_portable(kind: Kind, row: &[u8], a: &GActRow) -> f32 {
    row_dot_with::<Portable>(kind, row, a)
}

#[inline(always)]
pub(super) fn row_dot_with<I: Ints>(kind: Kind, row: &[u8], a: &GActRow) -> f32 {
    match kind {
        Kind::Q4_K => k_row::<144>(row, a, |b, q, bs| I::q4k(b, q, bs)),
        Kind::Q5_K => k_row::<176>(row, a, |b, q, bs| I::q5k(b, q, bs)),
        Kind::Q6_K => {
            let mut acc = 0.0f32;
            for (i, b) in row.chunks_exact(210).enumerate() {
                let (q, bs) = k_acts(a, i);
                acc += (a.d[i] * f16_at(b, 208)) * I::q6k(b, q, bs) as f32;
            }
            acc
        }
        _ => {
            let size = kind.block().1 as usize;
            let mut acc = 0.0f32;
            for (i, b) in row.chunks_exact(size).enumerate() {
                acc = legacy(kind, b, &a.qs[32 * i..32 * i + 32], a.d[i], a.s, i, acc);
            }
            acc
        }
    }
}

/// Block i's 256 activations and their 16 sums.
#[inline(always)]
fn k_acts<'a>(a: &GActRow<'a>, i: usize) -> (&'a [i8], &'a [i16]) {
    (&a.qs[256 * i..256 * i + 256], &a.bsums[16 * i..16 * i + 16])
}

/// A row of Q4_K or Q5_K blocks (`SIZE` bytes each): acc += (d_x·d)·Σ, acc −= (d_x·dmin)·M.
#[inline(always)]
fn k_row<const SIZE: usize>(
    row: &[u8],
    a: &GActRow,
    ints: impl Fn(&[u8], &[i8], &[i16]) -> (i32, i32),
) -> f32 {
    let mut acc = 0.0f32;
    for (i, b) in row.chunks_exact(SIZE).enumerate() {
        let (q, bs) = k_acts(a, i);
        let (isum, msum) = ints(b, q, bs);
        let dx = a.d[i];
        acc += (dx * f16_at(b, 0)) * isum as f32;
        acc -= (dx * f16_at(b, 2)) * msum as f32;
    }
    acc
}

/// One 32-weight block of Q8_0, Q4_0, Q4_1, Q5_0 or Q5_1 added to `acc`.
#[inline(always)]
fn legacy(kind: Kind, b: &[u8], q: &[i8], dx: f32, s: &[f32], i: usize, acc: f32) -> f32 {
    let (w, d, offset) = legacy_values(kind, b);
    let isum: i32 = w.iter().zip(q).map(|(&w, &q)| w * q as i32).sum();
    let acc = acc + (d * dx) * isum as f32;
    match offset {
        Some(m) => acc + m * s[i],
        None => acc,
    }
}
