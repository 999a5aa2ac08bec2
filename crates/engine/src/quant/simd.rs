//! The quantized rows' kernels, chosen once ([`Native`], by the build's `cfg(kernel)`):
//! float32 activations over whole groups (AVX-512 natively, simd128 in the page, plain loops
//! elsewhere: the same arithmetic lane for lane as `QRef::dot_lanes`, 16 lanes, multiply then
//! add, no FMA) and int8 activations (`int8_simd.rs`), so the bits agree on every target.

use super::rows::{portable_sums, reduce16, row_with, QActRow, Sums, LANES, QL};

/// The quantized rows' kernels of an instruction set, each with the plain loops' bits (the
/// defaults are those loops). The products call [`Native`]'s.
pub trait QuantIsa {
    /// Activations are read widened to 16 bits (`QActs::wide`: simd128 multiplies 16-bit
    /// lanes).
    const WIDE_ACTS: bool = false;
    /// Rows `int8_rows` takes a call sharing each load of the activations (1: one a call).
    const INT8_ROWS_A_CALL: usize = 1;

    /// Q8 with float32 activations: `q` the row's int8 values (whole groups of `g`, a
    /// multiple of 16), `s` their scales.
    fn q8_row(q: &[u8], s: &[f32], g: usize, x: &[f32]) -> f32 {
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

    /// Q4 with float32 activations: `qs` the row's groups (16 bytes each), `s` their scales.
    fn q4_row(qs: &[u8], s: &[f32], x: &[f32]) -> f32 {
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

    /// A row's product with int8 activations (`QRef::dot_int8`): `w` and `ws` its groups'
    /// bytes and scales, as many groups as `x` has.
    fn int8_row(kind: Sums, w: &[u8], ws: &[f32], x: QActRow, g: usize) -> f32 {
        row_with(kind, w, ws, x, g, portable_sums)
    }

    /// `int8_row` of up to 8 rows of one group each (`w`, `ws` their bytes and scales in
    /// turn) against the one-group row `x`: lane j row j's (0 past the rows).
    fn int8_one_group_rows(kind: Sums, w: &[u8], ws: &[f32], x: QActRow, g: usize) -> [f32; LANES] {
        let m = ws.len();
        let per = w.len() / m.max(1);
        std::array::from_fn(|j| match j < m {
            true => Self::int8_row(kind, &w[j * per..(j + 1) * per], &ws[j..j + 1], x, g),
            false => 0.0,
        })
    }

    /// `int8_row` of R rows one after another (`w`, `ws` their bytes and scales in turn).
    fn int8_rows<const R: usize>(
        kind: Sums,
        w: &[u8],
        ws: &[f32],
        x: QActRow,
        g: usize,
    ) -> [f32; R] {
        let (per, groups) = (w.len() / R, ws.len() / R);
        std::array::from_fn(|r| {
            let (w, ws) = (
                &w[r * per..(r + 1) * per],
                &ws[r * groups..(r + 1) * groups],
            );
            Self::int8_row(kind, w, ws, x, g)
        })
    }
}

/// The plain loops.
pub struct Portable;

impl QuantIsa for Portable {}

/// The build's quantized-row kernels: chosen once, by the build's `cfg(kernel)`.
#[cfg(kernel = "avx512")]
pub type Native = x86::Avx512;
#[cfg(kernel = "avx2")]
pub type Native = x86_int8::Avx2;
#[cfg(kernel = "wasm")]
pub type Native = wasm::Simd128;
#[cfg(kernel = "portable")]
pub type Native = Portable;

/// AVX2 (no AVX-512): the int8 products in x86 SIMD, float32 activations in plain loops.
#[cfg(kernel = "avx2")]
mod x86_int8 {
    use super::super::int8_simd::x86;
    use super::*;

    pub struct Avx2;

    impl QuantIsa for Avx2 {
        #[inline(always)]
        fn int8_row(kind: Sums, w: &[u8], ws: &[f32], x: QActRow, g: usize) -> f32 {
            // SAFETY: the build enables AVX2; `w` and `ws` hold exactly the row's groups,
            // as many as `x` has.
            unsafe { x86::row(kind, w, ws, x, g) }
        }

        #[inline(always)]
        fn int8_one_group_rows(
            kind: Sums,
            w: &[u8],
            ws: &[f32],
            x: QActRow,
            g: usize,
        ) -> [f32; LANES] {
            // SAFETY: as in `int8_row`: the rows' whole groups, `x` one group.
            unsafe { x86::rows_of_one_group(kind, w, ws, x, g) }
        }
    }
}

#[cfg(kernel = "avx512")]
mod x86 {
    use super::super::int8_simd::x86 as int8;
    use super::{QActRow, QuantIsa, Sums, LANES};
    use std::arch::x86_64::*;

    /// AVX-512: float32 activations 16 lanes wide, int8 products in x86 SIMD (VNNI where
    /// the CPU has it).
    pub struct Avx512;

    impl QuantIsa for Avx512 {
        #[inline(always)]
        fn q8_row(q: &[u8], s: &[f32], g: usize, x: &[f32]) -> f32 {
            // SAFETY: the build enables AVX-512F; whole groups of a multiple of 16, as many
            // values as inputs (checked by the caller).
            unsafe { q8_row(q, s, g, x) }
        }

        #[inline(always)]
        fn q4_row(qs: &[u8], s: &[f32], x: &[f32]) -> f32 {
            // SAFETY: as in `q8_row`.
            unsafe { q4_row(qs, s, x) }
        }

        #[inline(always)]
        fn int8_row(kind: Sums, w: &[u8], ws: &[f32], x: QActRow, g: usize) -> f32 {
            // SAFETY: AVX-512 builds have AVX2; `w` and `ws` hold exactly the row's groups,
            // as many as `x` has.
            unsafe { int8::row(kind, w, ws, x, g) }
        }

        #[inline(always)]
        fn int8_one_group_rows(
            kind: Sums,
            w: &[u8],
            ws: &[f32],
            x: QActRow,
            g: usize,
        ) -> [f32; LANES] {
            // SAFETY: as in `int8_row`: the rows' whole groups, `x` one group.
            unsafe { int8::rows_of_one_group(kind, w, ws, x, g) }
        }
    }

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
            -8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0,
        );
        let mut total = _mm512_setzero_ps();
        for (gi, &sc) in s.iter().enumerate() {
            let b = _mm512_cvtepu8_epi32(_mm_loadu_si128(qp.add(16 * gi) as *const __m128i));
            let lo = _mm512_permutexvar_ps(b, table);
            let hi = _mm512_permutexvar_ps(_mm512_srli_epi32::<4>(b), table);
            let xg = xp.add(32 * gi);
            let acc = _mm512_add_ps(_mm512_setzero_ps(), _mm512_mul_ps(lo, _mm512_loadu_ps(xg)));
            let acc = _mm512_add_ps(acc, _mm512_mul_ps(hi, _mm512_loadu_ps(xg.add(16))));
            total = _mm512_add_ps(total, _mm512_mul_ps(_mm512_set1_ps(sc), acc));
        }
        reduce16(total)
    }
}

#[cfg(kernel = "wasm")]
mod wasm {
    use super::super::int8_simd::wasm as int8;
    use super::{QActRow, QuantIsa, Sums, LANES};
    use core::arch::wasm32::*;

    /// simd128 (the page): float32 activations four lanes a register, int8 products on
    /// activations widened to 16 bits, four rows a call.
    pub struct Simd128;

    impl QuantIsa for Simd128 {
        const WIDE_ACTS: bool = true;
        const INT8_ROWS_A_CALL: usize = 4;

        #[inline(always)]
        fn q8_row(q: &[u8], s: &[f32], g: usize, x: &[f32]) -> f32 {
            // SAFETY: the build enables simd128; lengths as the caller checks them.
            unsafe { q8_row(q, s, g, x) }
        }

        #[inline(always)]
        fn q4_row(qs: &[u8], s: &[f32], x: &[f32]) -> f32 {
            // SAFETY: as in `q8_row`.
            unsafe { q4_row(qs, s, x) }
        }

        #[inline(always)]
        fn int8_row(kind: Sums, w: &[u8], ws: &[f32], x: QActRow, g: usize) -> f32 {
            // SAFETY: simd128; `w` and `ws` the row's groups, `x` widened.
            unsafe { int8::row(kind, w, ws, x, g) }
        }

        #[inline(always)]
        fn int8_one_group_rows(
            kind: Sums,
            w: &[u8],
            ws: &[f32],
            x: QActRow,
            g: usize,
        ) -> [f32; LANES] {
            // SAFETY: simd128; the rows' whole groups, `x` one group, widened.
            unsafe { int8::rows_of_one_group(kind, w, ws, x, g) }
        }

        #[inline(always)]
        fn int8_rows<const R: usize>(
            kind: Sums,
            w: &[u8],
            ws: &[f32],
            x: QActRow,
            g: usize,
        ) -> [f32; R] {
            // SAFETY: simd128; exactly R rows of x's groups.
            unsafe { int8::rows::<R>(kind, w, ws, x, g) }
        }
    }

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
