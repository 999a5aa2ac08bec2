//! AVX-512 (16-lane registers): `dot_portable`'s arithmetic lane for lane, decode's rows
//! four at a time (`avx512_rows`), softmax's exp sixteen lanes wide, attention's scores
//! eight positions at a time.

use super::{Isa, LEAD};
use std::arch::x86_64::*;

/// The AVX-512 build's kernels.
pub struct Avx512;

// Decode's rows are not prefetched on AVX-512 (`dot_streamed` is the trait's, the plain
// dot): there the prefetch made decode slower (BENCHMARKS.md).
impl Isa for Avx512 {
    const NAME: &'static str = "avx512";
    const WEIGHT_ROWS_A_PASS: usize = 4;
    const ROWS_A_PASS: usize = 2;
    const PREFETCHES: bool = true;
    const LEADS: bool = true;

    #[inline(always)]
    fn dot(a: &[f32], b: &[f32]) -> f32 {
        // SAFETY: the build enables AVX-512F; the kernel reads within both slices.
        unsafe { dot_avx512(a, b) }
    }

    #[inline(always)]
    fn dot_led(w: &[f32], x: &[f32]) -> f32 {
        // SAFETY: as in `dot`; prefetches are hints and never fault.
        unsafe { dot_avx512_led::<LEAD>(w, x) }
    }

    #[inline(always)]
    fn exp_shifted(x: &mut [f32], shift: f32) {
        // SAFETY: the build enables AVX-512F; the kernel reads and writes within `x`.
        unsafe { exp_shifted(x, shift) }
    }

    #[inline(always)]
    fn scores(att: &mut [f32], q: &[f32], keys: &[f32], stride: usize, scale: f32) {
        super::scores_in_groups::<SCORE_GROUP>(
            att,
            q,
            keys,
            stride,
            scale,
            // SAFETY: AVX-512F; `k` holds the group's key rows (sliced by the caller).
            |q, k| unsafe { score_sums(q, k.as_ptr(), stride) },
            Self::dot,
        )
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
    fn dot_wrows<const R: usize>(ws: [&[f32]; R], x: &[f32]) -> [f32; R] {
        // SAFETY: AVX-512F; the kernel reads within every slice. No prefetch: these rows
        // are short and sit in cache.
        unsafe { super::avx512_rows::dot_wrows::<R>(ws, x) }
    }

    #[inline(always)]
    fn dot_rows(out: &mut [f32], w: &[f32], xs: &[&[f32]], stream: bool) {
        // SAFETY: the build enables AVX-512F; `Rows` reads within every slice, and prefetches are hints
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

/// `dot_portable` lane for lane: the 32 partial sums as two 16-lane registers, each a
/// separately rounded multiply then add (no FMA), the same fold, chunks, pairwise
/// reduction and tail.
#[inline(always)]
pub unsafe fn dot_avx512(a: &[f32], b: &[f32]) -> f32 {
    dot_avx512_led::<0>(a, b)
}

/// `dot_avx512` asking for `a`'s line `LEAD` bytes ahead of each step's loads (0: none),
/// a hint that changes no value.
#[inline(always)]
pub unsafe fn dot_avx512_led<const LEAD: usize>(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let acc8 = partial8::<LEAD>(pa, pb, n);
    // ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7))
    let t = _mm_add_ps(_mm256_castps256_ps128(acc8), _mm256_extractf128_ps(acc8, 1));
    let u = _mm_add_ps(t, _mm_movehl_ps(t, t));
    let mut sum = _mm_cvtss_f32(_mm_add_ss(u, _mm_shuffle_ps(u, u, 0b01)));
    for k in n / 8 * 8..n {
        sum += *pa.add(k) * *pb.add(k);
    }
    sum
}

/// `dot_avx512`'s eight partial sums of a[..n]·b[..n] before its final reduction: the
/// 32-lane loop folded to 8, then the 8-wide chunks (the tail from n / 8 · 8 is left).
#[inline(always)]
unsafe fn partial8<const LEAD: usize>(pa: *const f32, pb: *const f32, n: usize) -> __m256 {
    let mut k = 0;
    let mut acc8 = _mm256_setzero_ps();
    if n >= 32 {
        let (mut lo, mut hi) = (_mm512_setzero_ps(), _mm512_setzero_ps());
        while k + 32 <= n {
            if LEAD > 0 {
                // past the row's end this is the next row's (or no) memory: a prefetch
                // never faults
                let ahead = (pa.add(k) as *const i8).wrapping_add(LEAD);
                _mm_prefetch::<_MM_HINT_T0>(ahead);
            }
            let x0 = _mm512_mul_ps(_mm512_loadu_ps(pa.add(k)), _mm512_loadu_ps(pb.add(k)));
            let x1 = _mm512_mul_ps(
                _mm512_loadu_ps(pa.add(k + 16)),
                _mm512_loadu_ps(pb.add(k + 16)),
            );
            lo = _mm512_add_ps(lo, x0);
            hi = _mm512_add_ps(hi, x1);
            k += 32;
        }
        acc8 = super::avx512_rows::fold32(lo, hi);
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

/// Positions `super::scores` reduces together: eight, in one register.
const SCORE_GROUP: usize = 8;

/// dot(q, k_j) for the eight key rows k_j at `keys.add(j * stride)`, each `dot_avx512`'s
/// bits but for the scalar tail (from q.len() / 8 · 8, left to `super::scores`): the final
/// reductions of the eight done together (one at a time they were a chain of dependent
/// shuffles and adds per position: the most of stories260K's attention, whose heads are 8
/// wide). The caller checks that every k_j lies in its slice.
#[inline(always)]
pub unsafe fn score_sums(q: &[f32], keys: *const f32, stride: usize) -> [f32; SCORE_GROUP] {
    let mut acc = [_mm256_setzero_ps(); SCORE_GROUP];
    for (j, acc) in acc.iter_mut().enumerate() {
        *acc = partial8::<0>(q.as_ptr(), keys.add(j * stride), q.len());
    }
    let mut s = [0.0f32; SCORE_GROUP];
    _mm256_storeu_ps(s.as_mut_ptr(), reduce8(acc));
    s
}

/// x[i] = `exp`(x[i] − shift) sixteen lanes at a time, every operation of the scalar `exp`
/// in the same order, each separately rounded (no FMA): its bits, NaN and the clamp
/// included; the last x.len() % 16 by the scalar `exp`. (LLVM vectorised the scalar loop
/// 8 lanes wide only, and the softmax of stories260K's attention was a large share of its
/// decode: BENCHMARKS.md, "Figures behind the code".)
#[inline(always)]
pub unsafe fn exp_shifted(x: &mut [f32], shift: f32) {
    const LO: f32 = -87.33;
    let c = |v: f32| _mm512_set1_ps(v);
    let (x16, tail) = x.as_chunks_mut::<16>();
    for chunk in x16 {
        let p = chunk.as_mut_ptr();
        let x = _mm512_sub_ps(_mm512_loadu_ps(p), c(shift));
        // clamp: NaN passes (the second operand is returned when either is NaN)
        let xc = _mm512_min_ps(c(88.72), _mm512_max_ps(c(LO), x));
        let k = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(
            _mm512_add_ps(_mm512_mul_ps(xc, c(std::f32::consts::LOG2_E)), c(0.5)),
        );
        let r = _mm512_sub_ps(
            _mm512_sub_ps(xc, _mm512_mul_ps(k, c(0.693_359_4))),
            _mm512_mul_ps(k, c(-2.121_944_4e-4)),
        );
        let r2 = _mm512_mul_ps(r, r);
        let mut q = _mm512_mul_ps(c(1.987_569_1e-4), r);
        for coef in [1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 1.666_666_5e-1] {
            q = _mm512_mul_ps(_mm512_add_ps(q, c(coef)), r);
        }
        let q = _mm512_add_ps(q, c(0.5));
        let y = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(q, r2), r), c(1.0));
        const MAGIC: f32 = 12_582_912.0;
        let k_int = _mm512_sub_epi32(
            _mm512_castps_si512(_mm512_add_ps(k, c(MAGIC))),
            _mm512_set1_epi32(MAGIC.to_bits() as i32),
        );
        let scale = _mm512_castsi512_ps(_mm512_slli_epi32::<23>(_mm512_add_epi32(
            k_int,
            _mm512_set1_epi32(127),
        )));
        // 0 where x < −87.33 (false for NaN, as in `exp`)
        let below = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x, c(LO));
        _mm512_storeu_ps(p, _mm512_maskz_mul_ps(!below, y, scale));
    }
    for v in tail {
        *v = super::super::exp(*v - shift);
    }
}

impl super::x86_tail::Rows for Avx512 {
    #[inline(always)]
    unsafe fn rows<const R: usize, const STREAM: bool>(w: &[f32], xs: [&[f32]; R]) -> [f32; R] {
        super::avx512_rows::dot_rows::<R, STREAM>(w, xs)
    }
}
