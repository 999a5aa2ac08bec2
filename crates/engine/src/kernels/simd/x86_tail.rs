//! The end both x86 row kernels share once their 32-lane loop has folded each row to eight
//! partial sums `acc8`: 8-wide chunks from `k`, the pairwise reduction
//! ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)) and the scalar tail, as `dot_portable`.

use std::arch::x86_64::*;

#[inline(always)]
pub unsafe fn finish<const R: usize>(
    mut acc8: [__m256; R],
    pw: *const f32,
    px: [*const f32; R],
    mut k: usize,
    n: usize,
) -> [f32; R] {
    while k + 8 <= n {
        let w8 = _mm256_loadu_ps(pw.add(k));
        for r in 0..R {
            acc8[r] = _mm256_add_ps(acc8[r], _mm256_mul_ps(w8, _mm256_loadu_ps(px[r].add(k))));
        }
        k += 8;
    }
    let mut out = [0.0f32; R];
    for r in 0..R {
        let a = acc8[r];
        let t = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
        let u = _mm_add_ps(t, _mm_movehl_ps(t, t));
        out[r] = _mm_cvtss_f32(_mm_add_ss(u, _mm_shuffle_ps(u, u, 0b01)));
    }
    while k < n {
        for r in 0..R {
            out[r] += *pw.add(k) * *px[r].add(k);
        }
        k += 1;
    }
    out
}
