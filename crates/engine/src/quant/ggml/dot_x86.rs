//! The k-quants' integer sums with AVX2 (x86-64 builds with AVX2 or AVX-512), as llama.cpp's
//! `ggml_vec_dot_q{4,5,6}_K_q8_K` (`ggml-cpu/arch/x86/quants.c`) computes them: the weights'
//! unsigned values times the activations' int8 by `maddubs` (pairs into i16: at most
//! 2·63·127, no saturation), each pair sum times its sub-block's scale by `madd` into i32;
//! Q4_K/Q5_K's scales and minimums unpacked from their 12 bytes as ggml does (`utmp`), the
//! minimums times the activations' sums of 16 by `madd`. Integers, so the bits of the plain
//! loops (`dot.rs`), tested.

use super::dot::Ints;
use std::arch::x86_64::*;

/// AVX2 (`WIDE` false) or AVX-512 (`WIDE` true: 64 weights a step, a chunk's two
/// sub-blocks side by side in one register against its 64 contiguous activations; an AVX2
/// build has only the narrow one).
pub(super) struct X86<const WIDE: bool>;

#[cfg(not(kernel = "avx512"))]
use self::{k45 as k45_wide, q6k as q6k_wide};

impl<const WIDE: bool> Ints for X86<WIDE> {
    #[inline(always)]
    fn q4k(b: &[u8], q: &[i8], bs: &[i16]) -> (i32, i32) {
        assert!(b.len() >= 144 && q.len() >= 256 && bs.len() >= 16);
        let (b, q, bs) = (b.as_ptr(), q.as_ptr(), bs.as_ptr());
        // SAFETY: AVX2 (and AVX-512 for WIDE) is in the build (cfg kernel); every read is
        // inside the lengths checked above (a Q4_K block of 144 bytes, 256 activations, 16
        // sums).
        unsafe {
            match WIDE {
                true => k45_wide(b, b.add(16), None, q, bs),
                false => k45(b, b.add(16), None, q, bs),
            }
        }
    }

    #[inline(always)]
    fn q5k(b: &[u8], q: &[i8], bs: &[i16]) -> (i32, i32) {
        assert!(b.len() >= 176 && q.len() >= 256 && bs.len() >= 16);
        let (b, q, bs) = (b.as_ptr(), q.as_ptr(), bs.as_ptr());
        // SAFETY: as `q4k`, a Q5_K block of 176 bytes (qh at 16, qs at 48).
        unsafe {
            let h = Some(b.add(16));
            match WIDE {
                true => k45_wide(b, b.add(48), h, q, bs),
                false => k45(b, b.add(48), h, q, bs),
            }
        }
    }

    #[inline(always)]
    fn q6k(b: &[u8], q: &[i8], bs: &[i16]) -> i32 {
        assert!(b.len() >= 210 && q.len() >= 256 && bs.len() >= 16);
        let (b, q, bs) = (b.as_ptr(), q.as_ptr(), bs.as_ptr());
        // SAFETY: as `q4k`, a Q6_K block of 210 bytes.
        unsafe {
            match WIDE {
                true => q6k_wide(b, q, bs),
                false => q6k(b, q, bs),
            }
        }
    }
}

/// The eight i32 lanes' sum.
#[inline(always)]
unsafe fn hsum(v: __m256i) -> i32 {
    hsum128(_mm_add_epi32(
        _mm256_castsi256_si128(v),
        _mm256_extracti128_si256(v, 1),
    ))
}

#[inline(always)]
unsafe fn hsum128(s: __m128i) -> i32 {
    let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01));
    _mm_cvtsi128_si32(s)
}

/// A 128-bit vector's i16 lane `K` in every lane of a 256-bit one.
#[inline(always)]
unsafe fn lane16<const K: i32>(v: __m256i) -> __m256i {
    let k = (2 * K) as i8;
    _mm256_shuffle_epi8(
        v,
        _mm256_set1_epi16(i16::from_le_bytes([k as u8, k as u8 + 1])),
    )
}

/// Q4_K/Q5_K: the 8 scales and 8 mins (ggml's `utmp`), then 4 chunks of 64, each 32 bytes
/// of nibbles (low: sub-block 2c, high: 2c + 1).
#[inline(always)]
unsafe fn k45(
    b: *const u8,
    qs: *const u8,
    qh: Option<*const u8>,
    q: *const i8,
    bs: *const i16,
) -> (i32, i32) {
    let sm = scales_and_mins(b);
    let mins = mins45(sm, bs);
    let scales = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm));
    let sc = [
        lane16::<0>(scales),
        lane16::<1>(scales),
        lane16::<2>(scales),
        lane16::<3>(scales),
        lane16::<4>(scales),
        lane16::<5>(scales),
        lane16::<6>(scales),
        lane16::<7>(scales),
    ];
    let m4 = _mm256_set1_epi8(0x0F);
    let h = qh.map(|p| _mm256_loadu_si256(p as *const __m256i));
    let mut acc = _mm256_setzero_si256();
    for c in 0..4 {
        let bytes = _mm256_loadu_si256(qs.add(32 * c) as *const __m256i);
        let mut lo = _mm256_and_si256(bytes, m4);
        let mut hi = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), m4);
        if let Some(h) = h {
            // bits 2c and 2c + 1 of each qh byte, moved to bit 4
            let one = _mm256_set1_epi8(1);
            let shifted = |s: i32| _mm256_and_si256(_mm256_srl_epi16(h, _mm_cvtsi32_si128(s)), one);
            lo = _mm256_or_si256(lo, _mm256_slli_epi16(shifted(2 * c as i32), 4));
            hi = _mm256_or_si256(hi, _mm256_slli_epi16(shifted(2 * c as i32 + 1), 4));
        }
        let x0 = _mm256_loadu_si256(q.add(64 * c) as *const __m256i);
        let x1 = _mm256_loadu_si256(q.add(64 * c + 32) as *const __m256i);
        let s0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, x0), sc[2 * c]);
        let s1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, x1), sc[2 * c + 1]);
        acc = _mm256_add_epi32(acc, _mm256_add_epi32(s0, s1));
    }
    (hsum(acc), mins)
}

/// Q6_K: two halves of 128, each 64 bytes of `ql` (low 4 bits) and 32 of `qh` (2 bits a
/// weight); 32 weights a step, its two groups of 16 each with its scale; the unsigned values
/// (q6 + 32) multiplied, 32·Σ_k sc_k·bs_k taken off.
#[inline(always)]
unsafe fn q6k(b: *const u8, q: *const i8, bs: *const i16) -> i32 {
    let m4 = _mm256_set1_epi8(0x0F);
    let m2 = _mm256_set1_epi8(3);
    let scales = _mm256_cvtepi8_epi16(_mm_loadu_si128(b.add(192) as *const __m128i));
    let bias = bias6(scales, bs);
    let mut acc = _mm256_setzero_si256();
    for n in 0..2 {
        let ql0 = _mm256_loadu_si256(b.add(64 * n) as *const __m256i);
        let ql1 = _mm256_loadu_si256(b.add(64 * n + 32) as *const __m256i);
        let qh = _mm256_loadu_si256(b.add(128 + 32 * n) as *const __m256i);
        let high = |shift: i32| {
            let v = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(shift)), m2);
            _mm256_slli_epi16(v, 4)
        };
        let u = [
            _mm256_or_si256(_mm256_and_si256(ql0, m4), high(0)),
            _mm256_or_si256(_mm256_and_si256(ql1, m4), high(2)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4), high(4)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4), high(6)),
        ];
        for (j, u) in u.into_iter().enumerate() {
            let k = 8 * n + 2 * j;
            let x = _mm256_loadu_si256(q.add(128 * n + 32 * j) as *const __m256i);
            let s = _mm256_set_m128i(
                _mm_set1_epi16(*b.add(192 + k + 1) as i8 as i16),
                _mm_set1_epi16(*b.add(192 + k) as i8 as i16),
            );
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), s));
        }
    }
    hsum(acc) - 32 * bias
}

/// Two 256-bit halves as one register.
#[cfg(kernel = "avx512")]
#[inline(always)]
unsafe fn join(lo: __m256i, hi: __m256i) -> __m512i {
    _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1)
}

/// i16 lanes 0–15 of `v`'s lane `a`, 16–31 its lane `b`.
#[cfg(kernel = "avx512")]
#[inline(always)]
unsafe fn two_lanes(v: __m512i, a: i16, b: i16) -> __m512i {
    let idx = join(_mm256_set1_epi16(a), _mm256_set1_epi16(b));
    _mm512_permutexvar_epi16(idx, v)
}

/// A block's 256 values (4 × 64 in the activations' order) and each one's scale (i16, a
/// register's 32 lanes for its 64), as the wide kernels multiply them.
#[cfg(kernel = "avx512")]
pub(super) type Unpacked = ([__m512i; 4], [__m512i; 4]);

/// A Q4_K/Q5_K block unpacked (a chunk's two sub-blocks side by side), and its scales and
/// minimums (`scales_and_mins`).
#[cfg(kernel = "avx512")]
#[inline(always)]
pub(super) unsafe fn unpack45(
    b: *const u8,
    qs: *const u8,
    qh: Option<*const u8>,
) -> (Unpacked, __m256i) {
    let sm = scales_and_mins(b);
    let scales = _mm512_castsi256_si512(sm);
    let m4 = _mm512_set1_epi8(0x0F);
    let h = qh.map(|p| _mm256_loadu_si256(p as *const __m256i));
    let mut u = [_mm512_setzero_si512(); 4];
    let mut sc = u;
    for c in 0..4 {
        let bytes = _mm256_loadu_si256(qs.add(32 * c) as *const __m256i);
        u[c] = _mm512_and_si512(join(bytes, _mm256_srli_epi16(bytes, 4)), m4);
        if let Some(h) = h {
            let s = |s: i32| _mm256_srl_epi16(h, _mm_cvtsi32_si128(s));
            let bits = join(s(2 * c as i32), s(2 * c as i32 + 1));
            let bits = _mm512_and_si512(bits, _mm512_set1_epi8(1));
            u[c] = _mm512_or_si512(u[c], _mm512_slli_epi16(bits, 4));
        }
        sc[c] = two_lanes(scales, 2 * c as i16, 2 * c as i16 + 1);
    }
    ((u, sc), sm)
}

/// Σ_c madd(maddubs(u_c, q_c), sc_c): an unpacked block times its 256 activations.
#[cfg(kernel = "avx512")]
#[inline(always)]
pub(super) unsafe fn dot4((u, sc): &Unpacked, q: *const i8) -> i32 {
    let mut acc = _mm512_setzero_si512();
    for c in 0..4 {
        let x = _mm512_loadu_si512(q.add(64 * c) as *const _);
        acc = _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(u[c], x), sc[c]));
    }
    _mm512_reduce_add_epi32(acc)
}

#[cfg(kernel = "avx512")]
#[inline(always)]
unsafe fn k45_wide(
    b: *const u8,
    qs: *const u8,
    qh: Option<*const u8>,
    q: *const i8,
    bs: *const i16,
) -> (i32, i32) {
    let (w, sm) = unpack45(b, qs, qh);
    (dot4(&w, q), mins45(sm, bs))
}

/// Q4_K/Q5_K's 8 scales and 8 minimums from their 12 bytes at 4 (ggml's `utmp`), as i16
/// lanes: 0–7 the scales, 8–15 the minimums.
#[inline(always)]
unsafe fn scales_and_mins(b: *const u8) -> __m256i {
    let word = |i: usize| (b.add(4 + 4 * i) as *const u32).read_unaligned();
    let (u0, u1, u2) = (word(0), word(1), word(2));
    const M1: u32 = 0x3f3f_3f3f;
    const M2: u32 = 0x0f0f_0f0f;
    const M3: u32 = 0x0303_0303;
    let mins_hi = ((u2 >> 4) & M2) | (((u1 >> 6) & M3) << 4);
    let scales_hi = (u2 & M2) | (((u0 >> 6) & M3) << 4);
    let (scales_lo, mins_lo) = (u0 & M1, u1 & M1);
    _mm256_cvtepu8_epi16(_mm_set_epi32(
        mins_hi as i32,
        mins_lo as i32,
        scales_hi as i32,
        scales_lo as i32,
    ))
}

/// Σ_j m_j·(bs_2j + bs_2j+1), the minimums in `sm`'s i16 lanes 8–15.
#[inline(always)]
pub(super) unsafe fn mins45(sm: __m256i, bs: *const i16) -> i32 {
    let sums = _mm256_loadu_si256(bs as *const __m256i);
    let pairs = _mm_hadd_epi16(
        _mm256_castsi256_si128(sums),
        _mm256_extracti128_si256(sums, 1),
    );
    hsum128(_mm_madd_epi16(_mm256_extracti128_si256(sm, 1), pairs))
}

/// Σ_k sc_k·bs_k, Q6_K's 16 scales as i16 in `scales`.
#[inline(always)]
pub(super) unsafe fn bias6(scales: __m256i, bs: *const i16) -> i32 {
    hsum(_mm256_madd_epi16(
        scales,
        _mm256_loadu_si256(bs as *const __m256i),
    ))
}

/// A Q6_K block unpacked (its unsigned values, q6 + 32), and its 16 scales as i16.
#[cfg(kernel = "avx512")]
#[inline(always)]
pub(super) unsafe fn unpack6(b: *const u8) -> (Unpacked, __m256i) {
    let m4 = _mm512_set1_epi8(0x0F);
    let m2 = _mm512_set1_epi8(3);
    let scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(b.add(192) as *const __m128i));
    let scales = _mm512_castsi256_si512(scales16);
    let mut u = [_mm512_setzero_si512(); 4];
    let mut sc = u;
    for n in 0..2 {
        let ql = _mm512_loadu_si512(b.add(64 * n) as *const _);
        let qh = _mm256_loadu_si256(b.add(128 + 32 * n) as *const __m256i);
        // [qh | qh >> 2]: bits 0–1 the first 32 weights', then the next 32's
        let h = join(qh, _mm256_srli_epi16(qh, 2));
        u[2 * n] = _mm512_or_si512(
            _mm512_and_si512(ql, m4),
            _mm512_slli_epi16(_mm512_and_si512(h, m2), 4),
        );
        u[2 * n + 1] = _mm512_or_si512(
            _mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
            _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(h, 4), m2), 4),
        );
        for j in 0..2 {
            // 64 weights: four groups of 16, scales k … k + 3
            let k = (8 * n + 4 * j) as i16;
            let idx = join(
                _mm256_set_m128i(_mm_set1_epi16(k + 1), _mm_set1_epi16(k)),
                _mm256_set_m128i(_mm_set1_epi16(k + 3), _mm_set1_epi16(k + 2)),
            );
            sc[2 * n + j] = _mm512_permutexvar_epi16(idx, scales);
        }
    }
    ((u, sc), scales16)
}

#[cfg(kernel = "avx512")]
#[inline(always)]
unsafe fn q6k_wide(b: *const u8, q: *const i8, bs: *const i16) -> i32 {
    let (w, scales) = unpack6(b);
    dot4(&w, q) - 32 * bias6(scales, bs)
}
