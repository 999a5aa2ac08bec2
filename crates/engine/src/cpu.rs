//! CPU kernels of the reference forward pass, llama2.c style: tiny output-first functions
//! (`rmsnorm(o, x, w, eps)`, `matmul(out, x, n, w)`, `softmax(x)`), each mirrored by a WGSL kernel in
//! the GPU backend and tested against it.
//!
//! Floating-point order is fixed by the code, never by the compiler (Rust does not reassociate
//! float sums), so the same input gives bit-identical results natively and in wasm, and the
//! token-by-token and batched paths agree exactly. Transcendentals come from `libm` for the
//! same reason (the platform `expf` differs between glibc and wasm).

use crate::par;
use crate::quant::{MatRef, QRef};

/// Independent partial sums in `dot`'s main loop: enough to fill the vector units (4×8
/// lanes on AVX2, 8×4 on wasm SIMD) and hide the adder latency.
const LANES: usize = 32;

/// Σ a[i]·b[i]: 32 interleaved partial sums over the bulk, folded to 8, then 8-wide chunks
/// (short vectors such as stories260K's 8-wide heads take only this path), a fixed pairwise
/// reduction and the scalar tail. Every dot product in the engine goes through here.
#[inline(always)]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // The same arithmetic in 16-lane registers where the build has AVX-512 (the native
    // build targets its CPU, `.cargo/config.toml`): LLVM vectorises the portable loop below
    // with 4-lane registers only.
    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    {
        // SAFETY: the build enables AVX-512F; the kernel reads within both slices.
        unsafe { x86::dot_avx512(a, b) }
    }
    // And in four 8-lane registers where it has AVX2 only (LLVM had left the loop below
    // mostly 4 lanes wide and scalar there: 3.5 GFLOP/s of a core's 36).
    #[cfg(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        not(target_feature = "avx512f")
    ))]
    {
        // SAFETY: the build enables AVX2; the kernel reads within both slices.
        unsafe { avx2::dot_rows::<1, false>(a, [b])[0] }
    }
    // And in wasm's 4-lane registers where the page's build has SIMD (all current
    // browsers): left to LLVM, the loop below made stories260K's forward pass in the page
    // take 0.27 ms a token against 0.14 ms with the kernel.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        // SAFETY: the build enables simd128; the kernel reads within both slices.
        unsafe { wasm::dot_simd128(a, b) }
    }
    #[cfg(not(any(
        all(target_arch = "x86_64", target_feature = "avx512f"),
        all(
            target_arch = "x86_64",
            target_feature = "avx2",
            not(target_feature = "avx512f")
        ),
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    dot_portable(a, b)
}

/// [`dot`] of a weight row `w` streamed from memory (a matrix-vector product runs it on
/// row after row): the same bits. With AVX2 only, the rows ahead are prefetched in software
/// (measured on that machine: the hardware prefetcher alone left a single core at 26 GiB/s
/// of its 36; `cargo bench --bench matvec`). With AVX-512 they are not: on the Zen 4 of
/// 2026-12-04 the same prefetch made decode slower (110M shape, one thread, alternating
/// builds: 37–41 tok/s with it, 53–54 without; 15M 213–265 against 267–390), run.c (no
/// prefetch) being ahead of us until it went.
#[inline(always)]
fn dot_streamed(w: &[f32], x: &[f32]) -> f32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    {
        // SAFETY: as in `dot`.
        unsafe { x86::dot_avx512(w, x) }
    }
    #[cfg(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        not(target_feature = "avx512f")
    ))]
    {
        // SAFETY: as in `dot`; prefetches are hints and never fault.
        unsafe { avx2::dot_rows::<1, true>(w, [x])[0] }
    }
    #[cfg(not(any(
        all(target_arch = "x86_64", target_feature = "avx512f"),
        all(
            target_arch = "x86_64",
            target_feature = "avx2",
            not(target_feature = "avx512f")
        )
    )))]
    dot(w, x)
}

/// [`dot`] in portable code (what every target computes; the AVX-512 kernel gives its bits).
#[inline(always)]
pub fn dot_portable(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a32, a_rest) = a[..n].as_chunks::<LANES>();
    let (b32, b_rest) = b[..n].as_chunks::<LANES>();
    let mut acc8 = [0.0f32; 8];
    if !a32.is_empty() {
        let mut acc = [0.0f32; LANES];
        for (x, y) in a32.iter().zip(b32) {
            for i in 0..LANES {
                acc[i] += x[i] * y[i];
            }
        }
        for i in 0..8 {
            acc8[i] = (acc[i] + acc[i + 8]) + (acc[i + 16] + acc[i + 24]);
        }
    }
    let (a8, a_tail) = a_rest.as_chunks::<8>();
    let (b8, b_tail) = b_rest.as_chunks::<8>();
    for (x, y) in a8.iter().zip(b8) {
        for i in 0..8 {
            acc8[i] += x[i] * y[i];
        }
    }
    let mut sum =
        ((acc8[0] + acc8[4]) + (acc8[2] + acc8[6])) + ((acc8[1] + acc8[5]) + (acc8[3] + acc8[7]));
    for (x, y) in a_tail.iter().zip(b_tail) {
        sum += x * y;
    }
    sum
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
mod x86 {
    use std::arch::x86_64::*;

    /// How far ahead (in floats: 16 KiB) a batch's streamed weight row is prefetched
    /// (`x86_rows::dot_rows`): measured best for one core among 256 … 16,384 (`cargo bench
    /// --bench matvec`). Decode's rows are not prefetched on AVX-512 (`dot_streamed`).
    pub(super) const PREFETCH: usize = 4096;

    /// `dot_portable` lane for lane: the 32 partial sums as two 16-lane registers, each a
    /// separately rounded multiply then add (no FMA), the same fold, chunks, pairwise
    /// reduction and tail.
    #[inline(always)]
    pub unsafe fn dot_avx512(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let acc8 = partial8(pa, pb, n);
        // ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7))
        let t = _mm_add_ps(_mm256_castps256_ps128(acc8), _mm256_extractf128_ps(acc8, 1));
        let u = _mm_add_ps(t, _mm_movehl_ps(t, t));
        let mut sum = _mm_cvtss_f32(_mm_add_ss(u, _mm_shuffle_ps(u, u, 0b01)));
        for k in n / 8 * 8..n {
            sum += *pa.add(k) * *pb.add(k);
        }
        sum
    }

    /// The 32 partial sums acc[0..16] = `lo`, acc[16..32] = `hi` folded to eight:
    /// acc8[i] = (acc[i] + acc[i+8]) + (acc[i+16] + acc[i+24]).
    #[inline(always)]
    pub(super) unsafe fn fold32(lo: __m512, hi: __m512) -> __m256 {
        let upper = |v: __m512| _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
        let l8 = _mm256_add_ps(_mm512_castps512_ps256(lo), upper(lo));
        let h8 = _mm256_add_ps(_mm512_castps512_ps256(hi), upper(hi));
        _mm256_add_ps(l8, h8)
    }

    /// `dot_avx512`'s eight partial sums of a[..n]·b[..n] before its final reduction: the
    /// 32-lane loop folded to 8, then the 8-wide chunks (the tail from n / 8 · 8 is left).
    #[inline(always)]
    unsafe fn partial8(pa: *const f32, pb: *const f32, n: usize) -> __m256 {
        let mut k = 0;
        let mut acc8 = _mm256_setzero_ps();
        if n >= 32 {
            let (mut lo, mut hi) = (_mm512_setzero_ps(), _mm512_setzero_ps());
            while k + 32 <= n {
                let x0 = _mm512_mul_ps(_mm512_loadu_ps(pa.add(k)), _mm512_loadu_ps(pb.add(k)));
                let x1 = _mm512_mul_ps(
                    _mm512_loadu_ps(pa.add(k + 16)),
                    _mm512_loadu_ps(pb.add(k + 16)),
                );
                lo = _mm512_add_ps(lo, x0);
                hi = _mm512_add_ps(hi, x1);
                k += 32;
            }
            acc8 = fold32(lo, hi);
        }
        while k + 8 <= n {
            let p = _mm256_mul_ps(_mm256_loadu_ps(pa.add(k)), _mm256_loadu_ps(pb.add(k)));
            acc8 = _mm256_add_ps(acc8, p);
            k += 8;
        }
        acc8
    }

    /// The final reduction ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)) of eight
    /// vectors of partial sums at once, each sum's additions in that order: lane j of the
    /// result is vector j's sum.
    #[inline(always)]
    unsafe fn reduce8(acc: [__m256; 8]) -> __m256 {
        // [x.lo + x.hi | y.lo + y.hi]: a_i = s_i + s_(i+4) of two vectors.
        let pair = |x: __m256, y: __m256| {
            _mm256_add_ps(
                _mm256_permute2f128_ps::<0x20>(x, y),
                _mm256_permute2f128_ps::<0x31>(x, y),
            )
        };
        let (a01, a23) = (pair(acc[0], acc[1]), pair(acc[2], acc[3]));
        let (a45, a67) = (pair(acc[4], acc[5]), pair(acc[6], acc[7]));
        // Per 128-bit half [x0 + x2, x1 + x3, y0 + y2, y1 + y3]: (a0 + a2) and (a1 + a3).
        let halves = |x: __m256, y: __m256| {
            _mm256_add_ps(
                _mm256_shuffle_ps::<0b01_00_01_00>(x, y),
                _mm256_shuffle_ps::<0b11_10_11_10>(x, y),
            )
        };
        let (b0123, b4567) = (halves(a01, a23), halves(a45, a67));
        // [x0 + x1, x2 + x3, y0 + y1, y2 + y3]: lanes hold sums 0, 2, 4, 6 | 1, 3, 5, 7.
        let s = _mm256_add_ps(
            _mm256_shuffle_ps::<0b10_00_10_00>(b0123, b4567),
            _mm256_shuffle_ps::<0b11_01_11_01>(b0123, b4567),
        );
        _mm256_permutevar8x32_ps(s, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
    }

    /// att[t] = dot(q, k_t) · scale with k_t = keys[t·stride + offset..][..q.len()], for
    /// every t of `att`: `dot_avx512`'s bits, the final reductions of eight positions done
    /// together (one at a time they were a chain of dependent shuffles and adds per
    /// position: the most of stories260K's attention, whose heads are 8 wide). The caller
    /// checks that every k_t lies in `keys`.
    #[inline(always)]
    pub unsafe fn scores(
        att: &mut [f32],
        q: &[f32],
        keys: &[f32],
        stride: usize,
        offset: usize,
        scale: f32,
    ) {
        let hs = q.len();
        let (pq, pk) = (q.as_ptr(), keys.as_ptr().add(offset));
        let mut t = 0;
        while t + 8 <= att.len() {
            let mut acc = [_mm256_setzero_ps(); 8];
            for (j, acc) in acc.iter_mut().enumerate() {
                *acc = partial8(pq, pk.add((t + j) * stride), hs);
            }
            let mut s = [0.0f32; 8];
            _mm256_storeu_ps(s.as_mut_ptr(), reduce8(acc));
            super::finish_scores(&mut att[t..t + 8], &s, q, pk.add(t * stride), stride, scale);
            t += 8;
        }
        super::rest_scores(&mut att[t..], q, pk.add(t * stride), stride, scale);
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
mod x86_rows {
    use std::arch::x86_64::*;

    /// `dot_avx512` of one weight row `w` with R input rows at once: each row's arithmetic is
    /// exactly `dot_avx512`'s (its own two 16-lane accumulators, the same fold, chunks,
    /// reduction and tail), but the weight chunk is loaded once for all R and the 2R
    /// accumulator chains run side by side (one row's two chains leave the adders idle:
    /// a 5-row verify pass ran at a third of the machine's arithmetic rate).
    #[inline(always)]
    pub unsafe fn dot_rows<const R: usize, const STREAM: bool>(
        w: &[f32],
        xs: [&[f32]; R],
    ) -> [f32; R] {
        let n = xs.iter().fold(w.len(), |n, x| n.min(x.len()));
        let pw = w.as_ptr();
        let px = xs.map(|x| x.as_ptr());
        let mut k = 0;
        let mut acc8 = [_mm256_setzero_ps(); R];
        if n >= 32 {
            let mut lo = [_mm512_setzero_ps(); R];
            let mut hi = [_mm512_setzero_ps(); R];
            while k + 32 <= n {
                if STREAM {
                    let ahead = super::x86::PREFETCH;
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
            for r in 0..R {
                acc8[r] = super::x86::fold32(lo[r], hi[r]);
            }
        }
        super::rows_tail::finish(acc8, pw, px, k, n)
    }

    /// `dot_avx512` of R weight rows with one input row `x` (decode's matrix-vector
    /// product, R rows of W at a time): each weight row's arithmetic is exactly
    /// `dot_avx512`'s, but the chunk of `x` is loaded once for all R rows and their 2R
    /// accumulator chains run side by side. One row alone keeps two chains of dependent
    /// adds, so the adders wait on their own latency; short rows (stories260K's 64)
    /// also pay the fold and reduction per row with nothing to overlap it.
    #[inline(always)]
    pub unsafe fn dot_wrows<const R: usize>(ws: [&[f32]; R], x: &[f32]) -> [f32; R] {
        let n = ws.iter().fold(x.len(), |n, w| n.min(w.len()));
        let pw = ws.map(|w| w.as_ptr());
        let px = x.as_ptr();
        let mut k = 0;
        let mut acc8 = [_mm256_setzero_ps(); R];
        if n >= 32 {
            let mut lo = [_mm512_setzero_ps(); R];
            let mut hi = [_mm512_setzero_ps(); R];
            while k + 32 <= n {
                let x0 = _mm512_loadu_ps(px.add(k));
                let x1 = _mm512_loadu_ps(px.add(k + 16));
                for r in 0..R {
                    let p0 = _mm512_mul_ps(_mm512_loadu_ps(pw[r].add(k)), x0);
                    let p1 = _mm512_mul_ps(_mm512_loadu_ps(pw[r].add(k + 16)), x1);
                    lo[r] = _mm512_add_ps(lo[r], p0);
                    hi[r] = _mm512_add_ps(hi[r], p1);
                }
                k += 32;
            }
            for r in 0..R {
                acc8[r] = super::x86::fold32(lo[r], hi[r]);
            }
        }
        // The shared tail with the roles of the one row and the R rows swapped: x·w is w·x
        // bit for bit (IEEE multiplication commutes).
        super::rows_tail::finish(acc8, px, pw, k, n)
    }
}

/// `dot_portable` for R input rows against one weight row in AVX2's 8-lane registers
/// (machines without AVX-512): each row's 32 partial sums as four registers (lanes 8q..8q+8
/// in register q), a separately rounded multiply then add, the fold (acc[i] + acc[i+8]) +
/// (acc[i+16] + acc[i+24]) as (r0 + r1) + (r2 + r3), then the 8-wide chunks, the pairwise
/// reduction and the tail; the weight chunk is loaded once for all R rows. `dot` is R = 1.
#[cfg(all(
    target_arch = "x86_64",
    target_feature = "avx2",
    not(target_feature = "avx512f")
))]
mod avx2 {
    use std::arch::x86_64::*;

    /// As the AVX-512 kernel's: 16 KiB ahead in a streamed weight row.
    const PREFETCH: usize = 4096;

    #[inline(always)]
    pub unsafe fn dot_rows<const R: usize, const STREAM: bool>(
        w: &[f32],
        xs: [&[f32]; R],
    ) -> [f32; R] {
        let n = xs.iter().fold(w.len(), |n, x| n.min(x.len()));
        let pw = w.as_ptr();
        let px = xs.map(|x| x.as_ptr());
        let mut k = 0;
        let mut acc8 = [_mm256_setzero_ps(); R];
        if n >= 32 {
            let mut acc = [[_mm256_setzero_ps(); 4]; R];
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
            for r in 0..R {
                let [a0, a1, a2, a3] = acc[r];
                acc8[r] = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
            }
        }
        super::rows_tail::finish(acc8, pw, px, k, n)
    }
}

/// The end both x86 row kernels share once their 32-lane loop has folded each row to eight
/// partial sums `acc8`: 8-wide chunks from `k`, the pairwise reduction
/// ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)) and the scalar tail, as `dot_portable`.
#[cfg(all(
    target_arch = "x86_64",
    any(target_feature = "avx512f", target_feature = "avx2")
))]
mod rows_tail {
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
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm {
    use core::arch::wasm32::*;

    /// `dot_portable` lane for lane in 4-lane registers: the 32 partial sums as eight
    /// vectors (lanes 4q..4q+4 in vector q), multiply then add (wasm SIMD has no fused
    /// multiply-add outside relaxed SIMD, whose rounding varies by machine), the same fold,
    /// chunks, pairwise reduction and tail.
    #[inline(always)]
    pub unsafe fn dot_simd128(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        reduce_tail(partial8(pa, pb, n), pa, pb, n)
    }

    /// The first n / 8 · 8 elements of `dot_simd128(a, b)` (n long) as t[i] = s[i] + s[i+4],
    /// s the eight sums before the pairwise reduction: the bulk, then the 8-wide chunks.
    ///
    /// The 32 partial sums of the bulk are taken in two passes over the row, lanes 0..16
    /// (the first cache line of every 128 bytes) then lanes 16..32, each lane's additions in
    /// the same order as one pass: V8 schedules a loop's loads ahead of its arithmetic, and
    /// with all eight accumulators and sixteen loads live at once it spilled five or six
    /// vectors to the stack every 32 floats (`node --print-wasm-code`). Four accumulators a
    /// pass fit its registers: the 15M file's decode under Node went from 270–291 to
    /// 318–343 tok/s (five alternating runs), stories260K's unchanged. (The same passes
    /// through `bulk_sums::<1, 4>` gave the same bits but ran the 15M file 3–4 % slower
    /// under Node, five alternating runs: V8 laid the loop out differently.)
    #[inline(always)]
    unsafe fn partial8(pa: *const f32, pb: *const f32, n: usize) -> v128 {
        let load = |p: *const f32| v128_load(p as *const v128);
        let bulk = n / 32 * 32;
        // acc8[0..4] and acc8[4..8]
        let (mut lo, mut hi) = (f32x4_splat(0.0), f32x4_splat(0.0));
        if bulk > 0 {
            let mut acc = [f32x4_splat(0.0); 8];
            for half in 0..2 {
                let mut h = [f32x4_splat(0.0); 4];
                let mut j = 16 * half;
                while j < bulk {
                    for (q, h) in h.iter_mut().enumerate() {
                        let p = f32x4_mul(load(pa.add(j + 4 * q)), load(pb.add(j + 4 * q)));
                        *h = f32x4_add(*h, p);
                    }
                    j += 32;
                }
                acc[4 * half..4 * half + 4].copy_from_slice(&h);
            }
            // acc8[i] = (acc[i] + acc[i+8]) + (acc[i+16] + acc[i+24]): lanes i and i+8 are
            // vectors q and q+2.
            lo = f32x4_add(f32x4_add(acc[0], acc[2]), f32x4_add(acc[4], acc[6]));
            hi = f32x4_add(f32x4_add(acc[1], acc[3]), f32x4_add(acc[5], acc[7]));
        }
        chunks(lo, hi, pa, pb, bulk, n)
    }

    /// The bulk (the first `bulk` floats, a multiple of 32) of R rows times `x` (`dot_wrows`'s;
    /// `partial8` has its own passes for one row): each row's
    /// 32 partial sums (lanes 4q..4q+4 in group q, each lane's additions in the order of one
    /// pass over the row), taken Q groups a pass over the rows so that the R·Q accumulators
    /// and their loads fit the 16 registers V8 gives wasm SIMD, then folded to eight as
    /// acc8[0..4], acc8[4..8]: acc8[i] = (acc[i] + acc[i+8]) + (acc[i+16] + acc[i+24]), lanes
    /// i and i+8 being groups q and q+2. With no bulk, zeros.
    #[inline(always)]
    unsafe fn bulk_sums<const R: usize, const Q: usize>(
        pw: [*const f32; R],
        px: *const f32,
        bulk: usize,
    ) -> [(v128, v128); R] {
        let load = |p: *const f32| v128_load(p as *const v128);
        // acc[q][r]: group q of row r.
        let mut acc = [[f32x4_splat(0.0); R]; 8];
        for pass in 0..8 / Q {
            let mut h = [[f32x4_splat(0.0); R]; Q];
            let mut j = 4 * Q * pass;
            while j < bulk {
                for (q, h) in h.iter_mut().enumerate() {
                    let xv = load(px.add(j + 4 * q));
                    for r in 0..R {
                        h[r] = f32x4_add(h[r], f32x4_mul(load(pw[r].add(j + 4 * q)), xv));
                    }
                }
                j += 32;
            }
            acc[Q * pass..Q * pass + Q].copy_from_slice(&h);
        }
        std::array::from_fn(|r| {
            let c = |q: usize| acc[q][r];
            (
                f32x4_add(f32x4_add(c(0), c(2)), f32x4_add(c(4), c(6))),
                f32x4_add(f32x4_add(c(1), c(3)), f32x4_add(c(5), c(7))),
            )
        })
    }

    /// The 8-wide chunks of a·b from `k` to n / 8 · 8 onto the eight sums (lo, hi), summed
    /// to t[i] = s[i] + s[i+4].
    #[inline(always)]
    unsafe fn chunks(
        mut lo: v128,
        mut hi: v128,
        pa: *const f32,
        pb: *const f32,
        mut k: usize,
        n: usize,
    ) -> v128 {
        let load = |p: *const f32| v128_load(p as *const v128);
        while k + 8 <= n {
            lo = f32x4_add(lo, f32x4_mul(load(pa.add(k)), load(pb.add(k))));
            hi = f32x4_add(hi, f32x4_mul(load(pa.add(k + 4)), load(pb.add(k + 4))));
            k += 8;
        }
        f32x4_add(lo, hi)
    }

    /// `dot_simd128`'s end from `partial8`'s t: ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 +
    /// s7)), then the scalar tail from n / 8 · 8.
    #[inline(always)]
    unsafe fn reduce_tail(t: v128, pa: *const f32, pb: *const f32, n: usize) -> f32 {
        let mut sum = (f32x4_extract_lane::<0>(t) + f32x4_extract_lane::<2>(t))
            + (f32x4_extract_lane::<1>(t) + f32x4_extract_lane::<3>(t));
        for k in n / 8 * 8..n {
            sum += *pa.add(k) * *pb.add(k);
        }
        sum
    }

    /// `dot_simd128(w_r, x)` of R weight rows at once, each row's bits exactly those, each
    /// load of `x` serving all R rows: the bulk in four passes of two groups (`bulk_sums`).
    /// With R = 2 that is 4 accumulators and 6 loads live, within V8's registers: all eight
    /// groups of R rows did not fit, and V8 spilled (`node --print-wasm-code --no-liftoff`);
    /// one group at a time of four rows stored and reloaded the accumulators every 64
    /// floats. stories260K decode under Node, positions 168–205, alternating builds (rows ×
    /// groups a pass): 4 × 1 (as before) 0.120–0.129 ms a token, 2 × 2 0.092–0.096, 2 × 1
    /// 0.094–0.110, 3 × 2 0.097–0.102, 2 × 4 0.093–0.138.
    #[inline(always)]
    pub unsafe fn dot_wrows<const R: usize>(ws: [&[f32]; R], x: &[f32]) -> [f32; R] {
        let n = ws.iter().fold(x.len(), |n, w| n.min(w.len()));
        let (pw, px) = (ws.map(|w| w.as_ptr()), x.as_ptr());
        let bulk = n / 32 * 32;
        let sums = bulk_sums::<R, 2>(pw, px, bulk);
        std::array::from_fn(|r| {
            let (lo, hi) = sums[r];
            reduce_tail(chunks(lo, hi, pw[r], px, bulk, n), pw[r], px, n)
        })
    }

    /// att[t] = dot(q, k_t) · scale for every t (`super::scores`): `dot_simd128`'s bits, the
    /// pairwise reductions of four positions done together by a 4×4 transpose (one at a
    /// time each was four lane extracts and three scalar adds for a head of 8 multiplies).
    /// The caller checks that every k_t lies in `keys`.
    #[inline(always)]
    pub unsafe fn scores(
        att: &mut [f32],
        q: &[f32],
        keys: &[f32],
        stride: usize,
        offset: usize,
        scale: f32,
    ) {
        let hs = q.len();
        let (pq, pk) = (q.as_ptr(), keys.as_ptr().add(offset));
        let mut t = 0;
        while t + 4 <= att.len() {
            let [a, b, c, d] = [0, 1, 2, 3].map(|j| partial8(pq, pk.add((t + j) * stride), hs));
            // e = (a0+a2, b0+b2, a1+a3, b1+b3), f the same of c and d.
            let e = f32x4_add(
                i32x4_shuffle::<0, 4, 1, 5>(a, b),
                i32x4_shuffle::<2, 6, 3, 7>(a, b),
            );
            let f = f32x4_add(
                i32x4_shuffle::<0, 4, 1, 5>(c, d),
                i32x4_shuffle::<2, 6, 3, 7>(c, d),
            );
            // ((x0 + x2) + (x1 + x3)) for x = a, b, c, d.
            let r = f32x4_add(
                i32x4_shuffle::<0, 1, 4, 5>(e, f),
                i32x4_shuffle::<2, 3, 6, 7>(e, f),
            );
            let mut s = [0.0f32; 4];
            v128_store(s.as_mut_ptr() as *mut v128, r);
            super::finish_scores(&mut att[t..t + 4], &s, q, pk.add(t * stride), stride, scale);
            t += 4;
        }
        super::rest_scores(&mut att[t..], q, pk.add(t * stride), stride, scale);
    }
}

/// e^x in f32 from arithmetic only (Cephes `expf`: Cody–Waite range reduction x = k·ln2 + r,
/// a degree-6 polynomial for e^r, then 2^k through the exponent bits); about 1 ulp from the
/// exact value. Written without branches or library calls so that loops over it vectorise
/// (the softmax of attention scores is the hot spot of small models) and give the same bits
/// natively and in wasm. Below −87.3 the result is 0.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let xc = x.clamp(-87.33, 88.72);
    let k = (xc * LOG2E + 0.5).floor();
    let r = xc - k * LN2_HI - k * LN2_LO;
    let r2 = r * r;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 0.5;
    let y = p * r2 + r + 1.0;
    // 2^k: k is a whole number in [−126, 128], so k + 1.5·2²³ is exact and its low bits are
    // k in two's complement: the bits of `(k as i32 + 127) << 23` without a float-to-int
    // conversion, whose NaN and saturation checks kept the loops around `exp` scalar (a
    // NaN x gives a NaN y, and NaN · anything is NaN, as before).
    const MAGIC: f32 = 12_582_912.0;
    let k_int = (k + MAGIC).to_bits().wrapping_sub(MAGIC.to_bits());
    let scale = f32::from_bits(k_int.wrapping_add(127) << 23);
    if x < -87.33 {
        0.0
    } else {
        y * scale
    }
}

/// e^x in f64 for x ≤ 0 (logits less their maximum), within 2 ulp of `f64::exp`, eight at
/// a time in straight-line arithmetic with no multiply-add (so the same bits natively and
/// in wasm), each step a loop over the lanes so that it vectorises (AVX-512: one register;
/// glibc's scalar `exp` over a 32,000-token vocabulary was the largest part of the chain's
/// time in a step, issue 11). Below −708.39 (2^k no longer a normal number) the result is
/// 0: the sums it joins hold e^0 = 1 from the maximum, so a term under 1e-307 changes
/// nothing.
#[inline(always)]
pub fn exp_nonpositive8(x: [f64; 8]) -> [f64; 8] {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    // ln 2 split so that k · LN2_HI is exact for |k| < 2^11 (LN2_HI has 32 significant
    // bits), as in fdlibm's `exp`: 6.93147180369123816490e-1 and 1.90821492927058770002e-10.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    // Round to nearest (ties to even) by adding 1.5 · 2^52: exact, and its low bits are k.
    const MAGIC: f64 = 6_755_399_441_055_744.0;
    // Taylor series to r^13 on |r| ≤ ln2/2: truncation error below 5e-18 relative.
    const C: [f64; 13] = [
        1.0 / 479_001_600.0,
        1.0 / 39_916_800.0,
        1.0 / 3_628_800.0,
        1.0 / 362_880.0,
        1.0 / 40_320.0,
        1.0 / 5_040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ];
    let mut t = [0.0f64; 8];
    let mut r = [0.0f64; 8];
    let mut p = [1.0 / 6_227_020_800.0; 8];
    let mut out = [0.0f64; 8];
    for l in 0..8 {
        t[l] = x[l] * LOG2E + MAGIC;
        let k = t[l] - MAGIC;
        r[l] = (x[l] - k * LN2_HI) - k * LN2_LO;
    }
    for c in C {
        for l in 0..8 {
            p[l] = p[l] * r[l] + c;
        }
    }
    for l in 0..8 {
        let k_int = t[l].to_bits().wrapping_sub(MAGIC.to_bits());
        let scale = f64::from_bits(k_int.wrapping_add(1023) << 52);
        let y = p[l] * scale;
        out[l] = if x[l] < -708.39 { 0.0 } else { y };
    }
    out
}

/// One e^x of [`exp_nonpositive8`] (its first lane: the same bits).
pub fn exp_nonpositive(x: f64) -> f64 {
    exp_nonpositive8([x; 8])[0]
}

/// RMSNorm: o = w ⊙ x / sqrt(mean(x²) + ε) (ε = 1e-5 in llama2.c, the model's
/// `rms_eps` otherwise).
pub fn rmsnorm(o: &mut [f32], x: &[f32], weight: &[f32], eps: f32) {
    let ss = dot(x, x) / x.len() as f32 + eps;
    let inv = 1.0 / ss.sqrt();
    for ((o, &x), &w) in o.iter_mut().zip(x).zip(weight) {
        *o = w * (inv * x);
    }
}

/// Σ x[i] in 8 interleaved partial sums and a fixed pairwise reduction (vectorises, unlike a
/// single running sum).
#[inline(always)]
pub fn sum(x: &[f32]) -> f32 {
    let (x8, tail) = x.as_chunks::<8>();
    let mut acc = [0.0f32; 8];
    for c in x8 {
        for i in 0..8 {
            acc[i] += c[i];
        }
    }
    let mut s = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
    for &v in tail {
        s += v;
    }
    s
}

/// The largest element (−∞ for none; NaNs ignored, as `f32::max` does): 16 running maxima
/// then one over them. The maximum of a set does not depend on the order it is taken in, so
/// this is the single running maximum's value, but without its chain of dependent
/// comparisons (a third of a stories260K decode step went to softmax, most of it there).
#[inline(always)]
pub fn max(x: &[f32]) -> f32 {
    let (x16, tail) = x.as_chunks::<16>();
    let mut m = [f32::NEG_INFINITY; 16];
    for c in x16 {
        for i in 0..16 {
            m[i] = larger(m[i], c[i]);
        }
    }
    m.iter()
        .chain(tail)
        .copied()
        .fold(f32::NEG_INFINITY, larger)
}

/// `b` where it is larger than `a`, else `a`: `f32::max` for every pair without a NaN, and a
/// NaN `b` is passed over as `f32::max` passes it. Written as a comparison and a select, which
/// every target has in vector form (x86 `vmaxps`, wasm `f32x4.pmax`); `f32::max`'s own rule
/// (IEEE maxNum) has no wasm SIMD instruction, so LLVM made every lane a call to `fmaxf`.
#[inline(always)]
fn larger(a: f32, b: f32) -> f32 {
    if a < b {
        b
    } else {
        a
    }
}

/// In-place softmax, shifted by the maximum for stability.
pub fn softmax(x: &mut [f32]) {
    let max = max(x);
    for v in x.iter_mut() {
        *v = exp(*v - max);
    }
    let total = sum(x);
    for v in x.iter_mut() {
        *v /= total;
    }
}

/// The one matrix product of the forward pass: X (t, n) times each of a list of matrices
/// W₀, W₁, … (each (dᵢ, n), row-major as llama2.c stores them). `out` holds the products one
/// after another: (t, d₀) then (t, d₁) … (for t = 1 simply [W₀·x; W₁·x; …]). t = 1 is
/// decode's matrix-vector product, t > 1 a batch (prefill, verification, batched decode);
/// several matrices multiply the same rows (Q, K and V, or the two MLP inputs) in one
/// parallel pass instead of one per matrix (each pass costs a fork and a join).
///
/// Every element is one `dot` of a weight row and an input row, whatever t is, so a token
/// gives the same bits alone or in a batch. The loop runs over weight rows outside and input
/// rows inside: each weight row is read from memory once for all t rows, which is what
/// batching buys (lesson 10, section 5). Weight rows run in parallel natively when the work
/// pays for it.
pub fn matmul(out: &mut [f32], x: &[f32], n: usize, ws: &[MatRef]) {
    let t = x.len() / n.max(1);
    let d: usize = ws.iter().map(|w| w.len() / n.max(1)).sum();
    debug_assert_eq!(out.len(), t * d);
    if t == 1 {
        // (d,) is already the layout of the one output row.
        weight_rows_times(out, x, n, 1, ws);
        return;
    }
    // Work on rows of W: build the (d, t) transposed result, whose rows are independent,
    // then scatter each matrix's part into its (t, dᵢ) block.
    let mut out_t = vec![0.0f32; d * t];
    weight_rows_times(&mut out_t, x, n, t, ws);
    let mut rows_t = out_t.chunks(t);
    let mut base = 0;
    for w in ws {
        let di = w.len() / n;
        for (j, col) in rows_t.by_ref().take(di).enumerate() {
            for (r, &v) in col.iter().enumerate() {
                out[base + r * di + j] = v;
            }
        }
        base += t * di;
    }
}

/// out_t (d, t): out_t[i][r] = W_i · x_r, W_i the i-th row of the stacked matrices.
fn weight_rows_times(out_t: &mut [f32], x: &[f32], n: usize, t: usize, ws: &[MatRef]) {
    par::chunks(out_t, t, t * n, |first, chunk| {
        let rows = StackedRows {
            ws,
            n,
            m: 0,
            row: first,
        };
        if t == 1 {
            // Decode: one input row, one output per weight row.
            decode_rows(chunk, rows, x);
        } else {
            for (o, w_i) in chunk.chunks_exact_mut(t).zip(rows) {
                match w_i {
                    RowRef::F32(w) => dot_rows_into(o, w, x, n),
                    RowRef::Quant(q, start) => {
                        for (o, x_r) in o.iter_mut().zip(x.chunks_exact(n)) {
                            *o = q.dot(start, x_r);
                        }
                    }
                }
            }
        }
    });
}

/// The end of a scores kernel that reduced several positions together to `sums`, each
/// `dot`'s bulk and eight-wide chunks (`x86::scores`, `wasm::scores`): each position's scalar
/// tail (elements hs / 8 · 8 .. hs, in order, as `dot_portable`), then the scale. Position j
/// is the key row at `keys.add(j * stride)`; the caller checks that each lies in its slice.
#[cfg(any(
    all(target_arch = "x86_64", target_feature = "avx512f"),
    all(target_arch = "wasm32", target_feature = "simd128")
))]
#[inline(always)]
unsafe fn finish_scores(
    att: &mut [f32],
    sums: &[f32],
    q: &[f32],
    keys: *const f32,
    stride: usize,
    scale: f32,
) {
    let hs = q.len();
    for (j, (a, &sum)) in att.iter_mut().zip(sums).enumerate() {
        let mut s = sum;
        for (i, &qi) in q.iter().enumerate().skip(hs / 8 * 8) {
            s += qi * *keys.add(j * stride + i);
        }
        *a = s * scale;
    }
}

/// att[j] = dot(q, k_j) · scale one position at a time, k_j at `keys.add(j * stride)`: the
/// positions left over after a scores kernel's groups. The caller checks that each key
/// row lies in its slice.
#[cfg(any(
    all(target_arch = "x86_64", target_feature = "avx512f"),
    all(target_arch = "wasm32", target_feature = "simd128")
))]
#[inline(always)]
unsafe fn rest_scores(att: &mut [f32], q: &[f32], keys: *const f32, stride: usize, scale: f32) {
    for (j, a) in att.iter_mut().enumerate() {
        let k = std::slice::from_raw_parts(keys.add(j * stride), q.len());
        *a = dot(q, k) * scale;
    }
}

/// Weight rows a pass of decode's matrix-vector product takes (`x86_rows::dot_wrows`,
/// `wasm::dot_wrows`).
#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
const WEIGHT_ROWS_A_PASS: usize = 4;
/// Two in wasm: four rows' accumulators do not fit V8's registers (`wasm::dot_wrows`).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
const WEIGHT_ROWS_A_PASS: usize = 2;

/// The longest weight row (in floats) that decode's matrix-vector product takes
/// [`WEIGHT_ROWS_A_PASS`] at a time; longer rows go one at a time. Short rows are
/// stories260K's (64 and 172): there the matrices sit in cache and each row's reduction and
/// each load of `x` are a large part of its work, which several rows a pass share. Long rows
/// (the 15M shape's 288 and 768, 110M's 768 and 2,048) stream from memory, and there four
/// rows side by side fell behind one sequential row at a time: on an AMD EPYC (Zen 4), the
/// 15M shape's decode at one thread went from 167–182 to 280–287 tokens/s natively and from
/// 111–126 to 269–279 in wasm (Node), while stories260K's stayed within the noise natively
/// and got 1.4× slower in wasm with one row a pass (throwaway harness, alternating builds).
#[cfg(any(
    all(target_arch = "x86_64", target_feature = "avx512f"),
    all(target_arch = "wasm32", target_feature = "simd128")
))]
const GROUPED_ROW_MAX: usize = 256;

/// R float32 weight rows times `x`, each row's bits those of [`dot`], `x` loaded once for
/// all R: AVX-512's kernel or wasm SIMD's.
#[cfg(any(
    all(target_arch = "x86_64", target_feature = "avx512f"),
    all(target_arch = "wasm32", target_feature = "simd128")
))]
#[inline(always)]
fn dot_wrows<const R: usize>(ws: [&[f32]; R], x: &[f32]) -> [f32; R] {
    // SAFETY: the build enables AVX-512F; the kernel reads within every slice. No prefetch:
    // these rows are short and sit in cache (`GROUPED_ROW_MAX`).
    #[cfg(target_arch = "x86_64")]
    unsafe {
        x86_rows::dot_wrows::<R>(ws, x)
    }
    // SAFETY: the build enables simd128; the kernel reads within every slice.
    #[cfg(target_arch = "wasm32")]
    unsafe {
        wasm::dot_wrows::<R>(ws, x)
    }
}

/// out[i] = dot(W_i, x) for the weight rows `rows` (decode): float32 rows of at most
/// [`GROUPED_ROW_MAX`] floats [`WEIGHT_ROWS_A_PASS`] at a time sharing each load of `x`
/// (AVX-512 and wasm SIMD), longer ones and quantized rows one at a time; each row's bits
/// those of [`dot`].
#[inline(always)]
fn decode_rows<'a>(out: &mut [f32], rows: impl Iterator<Item = RowRef<'a>>, x: &[f32]) {
    #[cfg(any(
        all(target_arch = "x86_64", target_feature = "avx512f"),
        all(target_arch = "wasm32", target_feature = "simd128")
    ))]
    {
        const R: usize = WEIGHT_ROWS_A_PASS;
        if x.len() > GROUPED_ROW_MAX {
            for (o, w_i) in out.iter_mut().zip(rows) {
                *o = match w_i {
                    RowRef::F32(w) => dot_streamed(w, x),
                    RowRef::Quant(q, start) => q.dot(start, x),
                };
            }
            return;
        }
        let mut pending: [&[f32]; R] = [&[]; R];
        let (mut waiting, mut first) = (0, 0);
        // The rows held back, one at a time (fewer than R: a matrix's or the chunk's end).
        let flush = |out: &mut [f32], pending: &[&[f32]], first: usize| {
            for (o, w) in out[first..].iter_mut().zip(pending) {
                *o = dot_streamed(w, x);
            }
        };
        let len = out.len();
        for (i, w_i) in rows.take(len).enumerate() {
            match w_i {
                RowRef::F32(w) => {
                    if waiting == 0 {
                        first = i;
                    }
                    pending[waiting] = w;
                    waiting += 1;
                    if waiting == R {
                        let r = dot_wrows::<R>(pending, x);
                        out[first..first + R].copy_from_slice(&r);
                        waiting = 0;
                    }
                }
                RowRef::Quant(q, start) => {
                    flush(out, &pending[..waiting], first);
                    waiting = 0;
                    out[i] = q.dot(start, x);
                }
            }
        }
        flush(out, &pending[..waiting], first);
    }
    #[cfg(not(any(
        all(target_arch = "x86_64", target_feature = "avx512f"),
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    for (o, w_i) in out.iter_mut().zip(rows) {
        *o = match w_i {
            RowRef::F32(w) => dot_streamed(w, x),
            RowRef::Quant(q, start) => q.dot(start, x),
        };
    }
}

/// out[r] = dot(w, x_r) for the input rows x_r (n wide) of `x`: the same bits as one `dot`
/// a row; natively four rows at a time share each load of the weight row.
#[inline(always)]
fn dot_rows_into(out: &mut [f32], w: &[f32], x: &[f32], n: usize) {
    #[cfg(all(
        target_arch = "x86_64",
        any(target_feature = "avx512f", target_feature = "avx2")
    ))]
    {
        // Two input rows a pass (an odd one alone); the first pass over the
        // weight row streams it from memory (with the prefetch), the later ones find it in
        // cache.
        let rows: Vec<&[f32]> = x.chunks_exact(n).collect();
        for (g, (o, xs)) in out
            .chunks_mut(ROWS_A_PASS)
            .zip(rows.chunks(ROWS_A_PASS))
            .enumerate()
        {
            // SAFETY: the build enables AVX-512F or AVX2; the kernel reads within every slice, and
            // prefetches are hints that never fault.
            unsafe { rows_pass(o, w, xs, g == 0) };
        }
    }
    #[cfg(not(all(
        target_arch = "x86_64",
        any(target_feature = "avx512f", target_feature = "avx2")
    )))]
    for (o, x_r) in out.iter_mut().zip(x.chunks_exact(n)) {
        *o = dot(w, x_r);
    }
}

#[cfg(all(
    target_arch = "x86_64",
    target_feature = "avx2",
    not(target_feature = "avx512f")
))]
use avx2 as simd_rows;
/// The rows kernel of the build: AVX-512's, or AVX2's where that is all there is.
#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
use x86_rows as simd_rows;

/// Input rows a pass of `simd_rows::dot_rows` takes.
#[cfg(all(
    target_arch = "x86_64",
    any(target_feature = "avx512f", target_feature = "avx2")
))]
const ROWS_A_PASS: usize = 2;

/// One pass of `x86_rows::dot_rows` over 1–4 input rows.
#[cfg(all(
    target_arch = "x86_64",
    any(target_feature = "avx512f", target_feature = "avx2")
))]
#[inline(always)]
unsafe fn rows_pass(out: &mut [f32], w: &[f32], xs: &[&[f32]], stream: bool) {
    macro_rules! pass {
        ($r:literal) => {{
            let a: [&[f32]; $r] = std::array::from_fn(|i| xs[i]);
            let r = if stream {
                simd_rows::dot_rows::<$r, true>(w, a)
            } else {
                simd_rows::dot_rows::<$r, false>(w, a)
            };
            out.copy_from_slice(&r);
        }};
    }
    match xs.len() {
        1 => pass!(1),
        2 => pass!(2),
        3 => pass!(3),
        _ => pass!(4),
    }
}

/// One weight row: float32, or a quantized matrix and the index of the row's first weight.
#[derive(Clone, Copy)]
enum RowRef<'a> {
    F32(&'a [f32]),
    Quant(QRef<'a>, usize),
}

/// The rows (n wide) of the matrices `ws` one after another, from row `row` of matrix `m`.
struct StackedRows<'a, 'w> {
    ws: &'w [MatRef<'a>],
    n: usize,
    m: usize,
    row: usize,
}

impl<'a> Iterator for StackedRows<'a, '_> {
    type Item = RowRef<'a>;

    #[inline]
    fn next(&mut self) -> Option<RowRef<'a>> {
        let n = self.n.max(1);
        while let Some(w) = self.ws.get(self.m) {
            let r = self.row;
            if r < w.len() / n {
                self.row += 1;
                return Some(match *w {
                    MatRef::F32(v) => RowRef::F32(&v[r * n..(r + 1) * n]),
                    MatRef::Quant(q) => RowRef::Quant(q, r * n),
                });
            }
            self.row -= w.len() / n;
            self.m += 1;
        }
        None
    }
}

/// Rotary position embedding tables: cos and sin of pos·θ_j, θ_j = base^(−2j/head_size)
/// (base 10,000 in llama2.c, the model's `rope_theta` otherwise),
/// (seq_len, head_size/2), computed once per model exactly as llama2.c computes them per call.
#[derive(Debug, Clone)]
pub struct RopeTable {
    half: usize,
    cos: Vec<f32>,
    sin: Vec<f32>,
}

impl RopeTable {
    pub fn new(head_size: usize, seq_len: usize, base: f32) -> RopeTable {
        let half = head_size / 2;
        let mut cos = Vec::with_capacity(seq_len * half);
        let mut sin = Vec::with_capacity(seq_len * half);
        for pos in 0..seq_len {
            for j in 0..half {
                let freq = 1.0 / libm::powf(base, (2 * j) as f32 / head_size as f32);
                let val = pos as f32 * freq;
                cos.push(libm::cosf(val));
                sin.push(libm::sinf(val));
            }
        }
        RopeTable { half, cos, sin }
    }

    /// (cos, sin) rows for one position, head_size/2 each.
    pub fn at(&self, pos: usize) -> (&[f32], &[f32]) {
        let r = pos * self.half..(pos + 1) * self.half;
        (&self.cos[r.clone()], &self.sin[r])
    }
}

/// Rotates each consecutive pair (v[2j], v[2j+1]) of every head by pos·θ_j.
pub fn rope(v: &mut [f32], head_size: usize, cos: &[f32], sin: &[f32]) {
    for head in v.chunks_exact_mut(head_size) {
        for (j, pair) in head.chunks_exact_mut(2).enumerate() {
            let (v0, v1) = (pair[0], pair[1]);
            pair[0] = v0 * cos[j] - v1 * sin[j];
            pair[1] = v0 * sin[j] + v1 * cos[j];
        }
    }
}

/// SwiGLU: hb = silu(hb) ⊙ hb2, silu(x) = x·σ(x).
pub fn swiglu(hb: &mut [f32], hb2: &[f32]) {
    for (h, &g) in hb.iter_mut().zip(hb2) {
        let val = *h;
        *h = val * (1.0 / (1.0 + exp(-val))) * g;
    }
}

/// x += y (the residual connection).
pub fn add_in_place(x: &mut [f32], y: &[f32]) {
    for (a, &b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

/// att[t] = dot(q, k_t) · scale, k_t the key at position t (`keys` rows `stride` wide, the
/// head's part from `offset`): one position at a time, what every target computes.
fn scores(att: &mut [f32], q: &[f32], keys: &[f32], stride: usize, offset: usize, scale: f32) {
    let hs = q.len();
    for (t, a) in att.iter_mut().enumerate() {
        let k = &keys[t * stride + offset..t * stride + offset + hs];
        *a = dot(q, k) * scale;
    }
}

/// One query head against the cached keys/values of one layer, positions 0..=pos:
/// scores = q·k_t / sqrt(head_size), softmax, out = Σ_t att_t · v_t.
/// `keys`/`values` are the layer's cache rows (position-major, kv_dim wide); `offset` selects
/// the K/V head this query head shares (grouped-query attention). [`attend_heads`] with one
/// head.
#[allow(clippy::too_many_arguments)]
pub fn attend_head(
    out: &mut [f32],
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    kv_dim: usize,
    offset: usize,
    pos: usize,
    att: &mut [f32],
) {
    attend_heads::<1>(out, q, keys, values, kv_dim, [offset], pos, att);
}

/// G query heads of one row against the cache at once: `q` and `out` hold the G heads one
/// after another (head_size = q.len() / G each), `offsets[g]` is head g's K/V head in a
/// cache row, `att` has room for G × (pos + 1) weights (head g's at g·(pos + 1), left there
/// for the probe). Each head's numbers are [`attend_head`]'s alone, bit for bit: the
/// weighted sum of the values adds in position order per output element whatever G is;
/// only the G heads' running sums advance side by side, so the adder is not waiting on one
/// chain (a head of 8 is one chain of dependent adds, a position at a time: the largest
/// part of a stories260K step).
#[allow(clippy::too_many_arguments)]
pub fn attend_heads<const G: usize>(
    out: &mut [f32],
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    kv_dim: usize,
    offsets: [usize; G],
    pos: usize,
    att: &mut [f32],
) {
    let hs = q.len() / G;
    let n = pos + 1;
    let scale = 1.0 / (hs as f32).sqrt();
    let att = &mut att[..G * n];
    for (g, att) in att.chunks_exact_mut(n).enumerate() {
        let (q, offset) = (&q[g * hs..(g + 1) * hs], offsets[g]);
        #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
        if pos * kv_dim + offset + hs <= keys.len() {
            // SAFETY: the build enables AVX-512F; every key row read, the last at
            // pos · kv_dim + offset, ends within `keys` (checked above).
            unsafe { x86::scores(att, q, keys, kv_dim, offset, scale) };
        } else {
            scores(att, q, keys, kv_dim, offset, scale);
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        if pos * kv_dim + offset + hs <= keys.len() {
            // SAFETY: the build enables simd128; every key row read ends within `keys`
            // (checked above).
            unsafe { wasm::scores(att, q, keys, kv_dim, offset, scale) };
        } else {
            scores(att, q, keys, kv_dim, offset, scale);
        }
        #[cfg(not(any(
            all(target_arch = "x86_64", target_feature = "avx512f"),
            all(target_arch = "wasm32", target_feature = "simd128")
        )))]
        scores(att, q, keys, kv_dim, offset, scale);
        softmax(att);
    }
    let att = &*att;
    // out = Σ_t att_t · v_t, accumulated per output element in t order. The loop runs over
    // 8-wide slices of the head outside and positions inside, so the running sums stay in
    // registers instead of round-tripping through memory at every position.
    let (chunks, rest) = (hs / 8, hs % 8);
    for c in 0..chunks {
        let mut acc = [[0.0f32; 8]; G];
        for t in 0..n {
            for (g, acc) in acc.iter_mut().enumerate() {
                let a = att[g * n + t];
                let at = t * kv_dim + offsets[g] + c * 8;
                let v: &[f32; 8] = values[at..at + 8].try_into().unwrap_or(&[0.0; 8]);
                for i in 0..8 {
                    acc[i] += a * v[i];
                }
            }
        }
        for (g, acc) in acc.iter().enumerate() {
            out[g * hs + c * 8..][..8].copy_from_slice(acc);
        }
    }
    for i in hs - rest..hs {
        let mut acc = [0.0f32; G];
        for t in 0..n {
            for (g, acc) in acc.iter_mut().enumerate() {
                *acc += att[g * n + t] * values[t * kv_dim + offsets[g] + i];
            }
        }
        for (g, acc) in acc.iter().enumerate() {
            out[g * hs + i] = *acc;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_kernel_gives_one_dot_a_rows_bits() {
        for (a, b) in crate::testing::dot_cases() {
            let n = a.len();
            if n == 0 {
                continue;
            }
            // Seven input rows (a group of four and three more), each a shifted copy of b.
            let x: Vec<f32> = (0..7)
                .flat_map(|r| b[..n].iter().map(move |v| v * (1.0 + r as f32 * 0.1)))
                .collect();
            let mut out = vec![0.0f32; 7];
            dot_rows_into(&mut out, &a, &x, n);
            for (r, o) in out.iter().enumerate() {
                assert_eq!(
                    o.to_bits(),
                    dot_portable(&a, &x[r * n..(r + 1) * n]).to_bits(),
                    "n = {n}, row {r}"
                );
            }
        }
    }

    /// Decode's matrix-vector product (`testing::assert_matvec_bits`; wasm runs it too).
    #[test]
    fn decode_rows_give_one_dot_a_rows_bits() {
        crate::testing::assert_matvec_bits();
    }

    /// Attention weights and outputs (`testing::assert_attention_bits`; wasm runs it too).
    #[test]
    fn attention_gives_one_dot_a_positions_bits() {
        crate::testing::assert_attention_bits();
    }

    /// Attention scores eight positions at a time give one `dot` a position's bits: head
    /// sizes below, at and above the kernel's 8- and 32-wide steps (with tails), 0 to 40
    /// positions, the head's keys at an offset in rows of several heads.
    #[test]
    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    fn scores_kernel_gives_one_dot_a_positions_bits() {
        let mut seed = 7u32;
        let mut next = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 * 8.0 - 4.0
        };
        for hs in [1, 3, 8, 12, 16, 24, 32, 40, 48, 64] {
            let stride = 3 * hs + 5;
            let keys: Vec<f32> = (0..41 * stride).map(|_| next()).collect();
            let q: Vec<f32> = (0..hs).map(|_| next()).collect();
            for positions in 0..=40 {
                let offset = hs + 2;
                let scale = 1.0 / (hs as f32).sqrt();
                let (mut want, mut got) = (vec![0.0f32; positions], vec![0.0f32; positions]);
                scores(&mut want, &q, &keys, stride, offset, scale);
                // SAFETY: this build has AVX-512F; the keys hold 41 rows.
                unsafe { x86::scores(&mut got, &q, &keys, stride, offset, scale) };
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "hs = {hs}, {positions} positions");
            }
        }
    }

    /// Heads attending together give each head's `attend_head` alone, bit for bit, and leave
    /// each head's weights in its part of `att`: 1, 2, 4 and 8 heads, head sizes with and
    /// without a remainder of 8, GQA offsets (heads sharing a K/V head), 1 to 20 positions.
    #[test]
    fn heads_together_give_each_heads_own_bits() {
        fn check<const G: usize>(hs: usize, pos: usize) {
            let kv_dim = 4 * hs;
            let (keys, values): (Vec<f32>, Vec<f32>) = (0..(pos + 1) * kv_dim)
                .map(|i| ((i as f32 * 0.37).sin(), (i as f32 * 0.53).cos()))
                .unzip();
            let q: Vec<f32> = (0..G * hs).map(|i| (i as f32 * 0.71).sin() * 2.0).collect();
            // Heads 2j and 2j + 1 share K/V head j (mod 4).
            let offsets: [usize; G] = std::array::from_fn(|g| (g / 2 % 4) * hs);
            let mut out = vec![0.0f32; G * hs];
            let mut att = vec![0.0f32; G * (pos + 1)];
            attend_heads::<G>(&mut out, &q, &keys, &values, kv_dim, offsets, pos, &mut att);
            for g in 0..G {
                let (mut one, mut att1) = (vec![0.0f32; hs], vec![0.0f32; pos + 1]);
                let q_g = &q[g * hs..(g + 1) * hs];
                attend_head(
                    &mut one, q_g, &keys, &values, kv_dim, offsets[g], pos, &mut att1,
                );
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                let at = format!("G = {G}, hs = {hs}, pos = {pos}, head {g}");
                assert_eq!(bits(&out[g * hs..(g + 1) * hs]), bits(&one), "{at}");
                assert_eq!(bits(&att[g * (pos + 1)..][..=pos]), bits(&att1), "{at}");
            }
        }
        for hs in [3, 8, 12, 48] {
            for pos in [0, 1, 7, 8, 19] {
                check::<1>(hs, pos);
                check::<2>(hs, pos);
                check::<4>(hs, pos);
                check::<8>(hs, pos);
            }
        }
    }

    #[test]
    fn dot_kernel_gives_the_portable_bits() {
        crate::testing::assert_dot_kernel_bits(dot);
        crate::testing::assert_dot_kernel_bits(dot_streamed);
    }

    #[test]
    fn dot_matches_naive_sum_closely() {
        for n in [0, 1, 7, 31, 32, 33, 100, 1000] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let exact: f64 = a.iter().zip(&b).map(|(&x, &y)| x as f64 * y as f64).sum();
            assert!((dot(&a, &b) as f64 - exact).abs() < 1e-4, "n = {n}");
        }
    }

    #[test]
    fn exp_is_within_two_ulp_of_libm() {
        let mut worst = 0.0f64;
        let mut x = -87.0f32;
        while x < 88.0 {
            let (got, want) = (exp(x) as f64, (x as f64).exp());
            worst = worst.max(((got - want) / want).abs());
            x += 0.0137;
        }
        assert!(worst < 2.5e-7, "worst relative error {worst}");
        assert_eq!(exp(0.0), 1.0);
        // 2^k by the exponent bits is the float-to-int conversion's, at every k (each
        // power of two in range is hit exactly at x = k·ln 2, rounding aside) and at the ends.
        for k in -126..=128i32 {
            for x in [
                k as f32 * std::f32::consts::LN_2,
                -87.33,
                88.72,
                -87.0,
                88.0,
            ] {
                let xc = x.clamp(-87.33, 88.72);
                let kf = (xc * std::f32::consts::LOG2_E + 0.5).floor();
                let by_cast = f32::from_bits(((kf as i32 + 127) as u32) << 23);
                let magic = (kf + 12_582_912.0f32).to_bits().wrapping_sub(0x4b40_0000);
                assert_eq!(
                    f32::from_bits(magic.wrapping_add(127) << 23).to_bits(),
                    by_cast.to_bits(),
                    "x = {x}"
                );
            }
        }
        assert!(exp(f32::NAN).is_nan());
        assert_eq!(exp(-100.0), 0.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
    }

    /// The chunked maximum is the running one, ties of ±0 aside (x − (+0) and x − (−0) are
    /// equal but for x = −0, and exp gives 1 for both): over lengths around its chunk, with
    /// NaNs and infinities among the values.
    #[test]
    fn max_is_the_running_maximum() {
        for (a, _) in crate::testing::dot_cases() {
            for n in 0..=a.len().min(40) {
                let v = &a[..n];
                let want = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                assert_eq!(max(v), want, "n = {n}");
            }
        }
        let mut v: Vec<f32> = (0..37).map(|i| (i as f32 * 0.7).sin()).collect();
        v[20] = f32::NAN;
        v[33] = 5.0;
        assert_eq!(max(&v), 5.0);
        v[3] = f32::INFINITY;
        assert_eq!(max(&v), f32::INFINITY);
        // All NaN: the running maximum stays at its start, −∞.
        assert_eq!(max(&[f32::NAN; 17]), f32::NEG_INFINITY);
        assert_eq!(max(&[]), f32::NEG_INFINITY);
    }

    #[test]
    fn softmax_of_lesson_example() {
        // z = [2, 1, 0.1] -> top mass 0.659 (lesson 10, section 3).
        let mut z = [2.0f32, 1.0, 0.1];
        softmax(&mut z);
        assert!((z[0] - 0.6590).abs() < 1e-4);
        assert!((z.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn rmsnorm_of_constant_vector_is_weight() {
        let x = [3.0f32; 4];
        let w = [1.0, 2.0, 3.0, 4.0];
        let mut o = [0.0; 4];
        rmsnorm(&mut o, &x, &w, 1e-5);
        for (o, w) in o.iter().zip(w) {
            assert!((o - w).abs() < 1e-5);
        }
    }

    #[test]
    fn batched_matmul_equals_matmul_per_row() {
        let (n, d, t) = (37, 53, 5);
        let w: Vec<f32> = (0..n * d)
            .map(|i| ((i * 7919) % 101) as f32 / 50.0 - 1.0)
            .collect();
        let x: Vec<f32> = (0..n * t)
            .map(|i| ((i * 104729) % 97) as f32 / 48.0 - 1.0)
            .collect();
        let mut batch = vec![0.0; t * d];
        matmul(&mut batch, &x, n, &[(&w).into()]);
        for tok in 0..t {
            let mut row = vec![0.0; d];
            matmul(&mut row, &x[tok * n..(tok + 1) * n], n, &[(&w).into()]);
            assert_eq!(row, batch[tok * d..(tok + 1) * d]);
            // Against a plain f64 sum, so the batched layout is checked independently.
            for (i, &got) in row.iter().enumerate() {
                let want: f64 = (0..n)
                    .map(|j| w[i * n + j] as f64 * x[tok * n + j] as f64)
                    .sum();
                assert!((got as f64 - want).abs() < 1e-4, "row {tok}, output {i}");
            }
        }
        // Two matrices: their (t, d) products one after the other.
        let w2: Vec<f32> = w.iter().map(|v| v * 0.5 - 0.25).collect();
        let mut both = vec![0.0; 2 * t * d];
        matmul(&mut both, &x, n, &[(&w).into(), (&w2).into()]);
        let mut second = vec![0.0; t * d];
        matmul(&mut second, &x, n, &[(&w2).into()]);
        assert_eq!(both[..t * d], batch[..]);
        assert_eq!(both[t * d..], second[..]);
    }

    #[test]
    fn rope_at_position_zero_is_identity_and_preserves_norm() {
        let table = RopeTable::new(8, 16, 10000.0);
        let v0: Vec<f32> = (0..16).map(|i| i as f32 - 4.0).collect();
        let mut v = v0.clone();
        let (c, s) = table.at(0);
        rope(&mut v, 8, c, s);
        assert_eq!(v, v0);
        let (c, s) = table.at(5);
        rope(&mut v, 8, c, s);
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>();
        assert!((norm(&v) - norm(&v0)).abs() < 1e-3);
        assert_ne!(v, v0);
    }
}
