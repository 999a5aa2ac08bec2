use std::arch::x86_64::*;

/// `dot_avx512` of one weight row `w` with R input rows at once: each row's arithmetic is
/// exactly `dot_avx512`'s (its own two 16-lane accumulators, the same fold, chunks,
/// reduction and tail), but the weight chunk is loaded once for all R and the 2R
/// accumulator chains run side by side (one row's two chains leave the adders idle: a
/// 5-row verify pass ran far below the machine's arithmetic rate, BENCHMARKS.md, "Figures
/// behind the code").
#[inline(always)]
pub unsafe fn dot_rows<const R: usize, const STREAM: bool>(w: &[f32], xs: [&[f32]; R]) -> [f32; R] {
    super::x86_tail::dot_rows(w, xs, |pw, px, n| {
        let mut lo = [_mm512_setzero_ps(); R];
        let mut hi = [_mm512_setzero_ps(); R];
        let mut k = 0;
        while k + 32 <= n {
            if STREAM {
                let ahead = PREFETCH;
                _mm_prefetch::<_MM_HINT_T0>(pw.wrapping_add(k + ahead) as *const i8);
                _mm_prefetch::<_MM_HINT_T0>(pw.wrapping_add(k + ahead + 16) as *const i8);
            }
            let w0 = _mm512_loadu_ps(pw.add(k));
            let w1 = _mm512_loadu_ps(pw.add(k + 16));
            for r in 0..R {
                let x0 = _mm512_mul_ps(w0, _mm512_loadu_ps(px[r].add(k)));
                let x1 = _mm512_mul_ps(w1, _mm512_loadu_ps(px[r].add(k + 16)));
                lo[r] = _mm512_add_ps(lo[r], x0);
                hi[r] = _mm512_add_ps(hi[r], x1);
            }
            k += 32;
        }
        std::array::from_fn(|r| fold32(lo[r], hi[r]))
    })
}

/// `dot_avx512` of R weight rows with one input row `x` (decode's matrix-vector
/// product, R rows of W at a time): each weight row's arithmetic is exactly
/// `dot_avx512`'s, but the chunk of `x` is loaded once for all R rows and their 2R
/// accumulator chains run side by side. One row alone keeps two chains of dependent
/// adds, so the adders wait on their own latency; short rows (stories260K's 64)
/// also pay the fold and reduction per row with nothing to overlap it. It is `dot_rows`
/// with the roles of the one row and the R rows swapped: x·w is w·x bit for bit (IEEE
/// multiplication commutes), and these rows are short and sit in cache (no prefetch).
#[inline(always)]
pub unsafe fn dot_wrows<const R: usize>(ws: [&[f32]; R], x: &[f32]) -> [f32; R] {
    dot_rows::<R, false>(x, ws)
}

/// How far ahead (in floats: 16 KiB) a batch's streamed weight row is prefetched
/// (`dot_rows`): the best for one core of the distances `cargo bench --bench matvec` tried
/// (BENCHMARKS.md, "Figures behind the code"). Decode's rows are not prefetched on AVX-512
/// (`dot_streamed`).
pub(super) const PREFETCH: usize = 4096;

/// The 32 partial sums acc[0..16] = `lo`, acc[16..32] = `hi` folded to eight:
/// acc8[i] = (acc[i] + acc[i+8]) + (acc[i+16] + acc[i+24]).
#[inline(always)]
pub(super) unsafe fn fold32(lo: __m512, hi: __m512) -> __m256 {
    let upper = |v: __m512| _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    let l8 = _mm256_add_ps(_mm512_castps512_ps256(lo), upper(lo));
    let h8 = _mm256_add_ps(_mm512_castps512_ps256(hi), upper(hi));
    _mm256_add_ps(l8, h8)
}
