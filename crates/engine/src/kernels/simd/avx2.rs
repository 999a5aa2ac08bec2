//! `dot_portable` for R input rows against one weight row in AVX2's 8-lane registers
//! (machines without AVX-512): each row's 32 partial sums as four registers (lanes 8q..8q+8
//! in register q), a separately rounded multiply then add, the fold (acc[i] + acc[i+8]) +
//! (acc[i+16] + acc[i+24]) as (r0 + r1) + (r2 + r3), then the 8-wide chunks, the pairwise
//! reduction and the tail; the weight chunk is loaded once for all R rows. `dot` is R = 1.

use std::arch::x86_64::*;

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
