//! The row kernels over whole groups: AVX-512 natively (the build targets its CPU), simd128
//! in the page, portable loops elsewhere; all three the same arithmetic lane for lane as
//! `QRef::dot_lanes` (16 lanes: one 512-bit register, four 128-bit ones), multiply then
//! add (no FMA), so the bits agree on every target.

/// Partial sums of the quantized dot products.
pub(super) const QL: usize = 16;

/// N partial sums (a power of two) folded in a fixed order: lane j + lane j + N/2, then
/// j + j + N/4, …, down to one (`dot_lanes`, the row kernels and the int8 epilogue alike).
#[inline(always)]
pub(super) fn fold_pairs<const N: usize>(mut a: [f32; N]) -> f32 {
    let mut w = N / 2;
    while w > 0 {
        for j in 0..w {
            a[j] += a[j + w];
        }
        w /= 2;
    }
    a[0]
}

/// The 16 partial sums of a quantized row folded: [`fold_pairs`].
#[inline(always)]
pub(super) fn reduce16(a: [f32; QL]) -> f32 {
    fold_pairs(a)
}

/// Q8: `q` the row's int8 values (whole groups of `g`), `s` their scales.
#[inline(always)]
pub fn q8_row(q: &[u8], s: &[f32], g: usize, x: &[f32]) -> f32 {
    debug_assert!(q.len() == x.len() && q.len() == s.len() * g && g.is_multiple_of(16));
    #[cfg(kernel = "avx512")]
    // SAFETY: the build enables AVX-512F; the lengths are checked by the caller (whole
    // groups of a multiple of 16, as many values as inputs).
    unsafe {
        x86::q8_row(q, s, g, x)
    }
    #[cfg(kernel = "wasm")]
    // SAFETY: the build enables simd128; lengths as above.
    unsafe {
        wasm::q8_row(q, s, g, x)
    }
    #[cfg(not(any(kernel = "avx512", kernel = "wasm")))]
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
    #[cfg(kernel = "avx512")]
    // SAFETY: as in `q8_row`.
    unsafe {
        x86::q4_row(qs, s, x)
    }
    #[cfg(kernel = "wasm")]
    // SAFETY: as in `q8_row`.
    unsafe {
        wasm::q4_row(qs, s, x)
    }
    #[cfg(not(any(kernel = "avx512", kernel = "wasm")))]
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

#[cfg(kernel = "avx512")]
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
