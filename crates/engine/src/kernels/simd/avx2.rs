//! `dot_portable` for R input rows against one weight row in AVX2's 8-lane registers
//! (machines without AVX-512): each row's 32 partial sums as four registers (lanes 8q..8q+8
//! in register q), a separately rounded multiply then add, the fold (acc[i] + acc[i+8]) +
//! (acc[i+16] + acc[i+24]) as (r0 + r1) + (r2 + r3), then the 8-wide chunks, the pairwise
//! reduction and the tail; the weight chunk is loaded once for all R rows. `dot` is R = 1.

use super::Isa;
use std::arch::x86_64::*;

/// The AVX2 build's kernels (x86-64 without AVX-512).
pub struct Avx2;

impl Isa for Avx2 {
    const NAME: &'static str = "avx2";
    const ROWS_A_PASS: usize = 2;
    const PREFETCHES: bool = true;

    #[inline(always)]
    fn dot(a: &[f32], b: &[f32]) -> f32 {
        // SAFETY: the build enables AVX2; the kernel reads within both slices.
        unsafe { dot_rows::<1, false>(a, [b])[0] }
    }

    /// The row prefetched 16 KiB ahead in software (the hardware prefetcher alone left a
    /// single core short of its read bandwidth: BENCHMARKS.md).
    #[inline(always)]
    fn dot_streamed(w: &[f32], x: &[f32]) -> f32 {
        // SAFETY: as in `dot`; prefetches are hints and never fault.
        unsafe { dot_rows::<1, true>(w, [x])[0] }
    }

    #[inline(always)]
    unsafe fn weighted_values<const G: usize>(
        att: &[f32],
        n: usize,
        values: *const f32,
        stride: usize,
        offsets: [usize; G],
    ) -> [[f32; 8]; G] {
        super::values::weighted_x86(att, n, values, stride, offsets)
    }

    #[inline(always)]
    fn dot_rows(out: &mut [f32], w: &[f32], xs: &[&[f32]], stream: bool) {
        // SAFETY: the build enables AVX2; `Rows` reads within every slice, and prefetches are hints
        // that never fault.
        unsafe { super::x86_tail::dot_rows_by_count::<Self>(out, w, xs, stream) }
    }

    #[inline(always)]
    fn prefetch(bytes: &[u8]) {
        super::x86_tail::prefetch(bytes)
    }

    fn flush(bytes: &[u8]) {
        super::x86_tail::flush(bytes)
    }
}

/// As the AVX-512 kernel's: 16 KiB ahead in a streamed weight row.
const PREFETCH: usize = 4096;

#[inline(always)]
pub unsafe fn dot_rows<const R: usize, const STREAM: bool>(w: &[f32], xs: [&[f32]; R]) -> [f32; R] {
    super::x86_tail::dot_rows(w, xs, |pw, px, n| {
        let mut acc = [[_mm256_setzero_ps(); 4]; R];
        let mut k = 0;
        while k + 32 <= n {
            if STREAM {
                _mm_prefetch::<_MM_HINT_T0>(pw.wrapping_add(k + PREFETCH) as *const i8);
                _mm_prefetch::<_MM_HINT_T0>(pw.wrapping_add(k + PREFETCH + 16) as *const i8);
            }
            let wq: [__m256; 4] = std::array::from_fn(|q| _mm256_loadu_ps(pw.add(k + 8 * q)));
            for r in 0..R {
                for q in 0..4 {
                    let p = _mm256_mul_ps(wq[q], _mm256_loadu_ps(px[r].add(k + 8 * q)));
                    acc[r][q] = _mm256_add_ps(acc[r][q], p);
                }
            }
            k += 32;
        }
        acc.map(|[a0, a1, a2, a3]| _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)))
    })
}

impl super::x86_tail::Rows for Avx2 {
    #[inline(always)]
    unsafe fn rows<const R: usize, const STREAM: bool>(w: &[f32], xs: [&[f32]; R]) -> [f32; R] {
        dot_rows::<R, STREAM>(w, xs)
    }
}
