//! The int8 products of [`super::int8`] in the build's SIMD (`simd::QuantIsa`'s x86 and
//! wasm implementations call these): each returns, for up to 8 groups,
//! exactly the integers `portable_sums` returns (integer sums do not depend on their order).

#[cfg(any(kernel = "avx512", kernel = "avx2"))]
pub(super) mod x86 {
    use super::super::rows::{QActRow, Sums, LANES, STEP};
    use std::arch::x86_64::*;

    /// acc + Σ over 4-byte lanes of u·s (u unsigned, s signed bytes): AVX-512 VNNI's
    /// `vpdpbusd` where the build has it (llama.cpp's `mul_sum_us8_pairs_float`), else
    /// AVX2's `maddubs` (pairs to 16 bits, which cannot saturate here: |u| ≤ 128 and
    /// |s| ≤ 127 give at most 32,512) and `madd` with ones (to 32 bits).
    #[inline(always)]
    unsafe fn dot_us(acc: __m256i, u: __m256i, s: __m256i) -> __m256i {
        #[cfg(all(target_feature = "avx512vnni", target_feature = "avx512vl"))]
        {
            _mm256_dpbusd_epi32(acc, u, s)
        }
        #[cfg(not(all(target_feature = "avx512vnni", target_feature = "avx512vl")))]
        {
            let pairs = _mm256_maddubs_epi16(u, s);
            _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))
        }
    }

    /// Lane j of the result: the sum of v[j]'s 8 lanes.
    #[inline(always)]
    unsafe fn hsum8(v: [__m256i; LANES]) -> __m256i {
        let t0 = _mm256_hadd_epi32(v[0], v[1]);
        let t1 = _mm256_hadd_epi32(v[2], v[3]);
        let t2 = _mm256_hadd_epi32(v[4], v[5]);
        let t3 = _mm256_hadd_epi32(v[6], v[7]);
        // low halves: the first four lanes of v0..v3 (u0) and v4..v7 (u1); high: the rest
        let u0 = _mm256_hadd_epi32(t0, t1);
        let u1 = _mm256_hadd_epi32(t2, t3);
        _mm256_add_epi32(
            _mm256_permute2x128_si256::<0x20>(u0, u1),
            _mm256_permute2x128_si256::<0x31>(u0, u1),
        )
    }

    /// The integer sums of `m` ≤ 8 groups of `g` (a multiple of 32), lane j group j's
    /// (`portable_sums`' integers; lanes from m on 0): group j times the activations' group j,
    /// or, `shared`, every group times the activations' first (one-group rows side by side).
    #[inline(always)]
    unsafe fn sums8(
        kind: Sums,
        wp: *const u8,
        xp: *const i8,
        g: usize,
        m: usize,
        shared: bool,
    ) -> __m256i {
        let x_at = |j: usize| if shared { 0 } else { j * g };
        let mut v = [_mm256_setzero_si256(); LANES];
        match kind {
            Sums::Q8 => {
                for (j, acc) in v.iter_mut().enumerate().take(m) {
                    let (mut k, xj) = (j * g, xp.add(x_at(j)));
                    while k < (j + 1) * g {
                        let wv = _mm256_loadu_si256(wp.add(k) as *const __m256i);
                        let xv = _mm256_loadu_si256(xj.add(k - j * g) as *const __m256i);
                        // |w| times x with w's sign: the signed product as unsigned × signed
                        *acc = dot_us(*acc, _mm256_sign_epi8(wv, wv), _mm256_sign_epi8(xv, wv));
                        k += STEP;
                    }
                }
            }
            Sums::Q4 => {
                let low = _mm_set1_epi8(15);
                for (j, acc) in v.iter_mut().enumerate().take(m) {
                    let b = _mm_loadu_si128(wp.add(16 * j) as *const __m128i);
                    let lo = _mm_and_si128(b, low);
                    let hi = _mm_and_si128(_mm_srli_epi16::<4>(b), low);
                    let xv = _mm256_loadu_si256(xp.add(x_at(j)) as *const __m256i);
                    *acc = dot_us(*acc, _mm256_set_m128i(hi, lo), xv);
                }
            }
        }
        if m <= 4 {
            hsum4([v[0], v[1], v[2], v[3]])
        } else {
            hsum8(v)
        }
    }

    /// `hsum8` of 4 vectors (lanes 4…7 0): half the additions, for a row's last few groups.
    #[inline(always)]
    unsafe fn hsum4(v: [__m256i; 4]) -> __m256i {
        let u = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
        let s = _mm_add_epi32(_mm256_castsi256_si128(u), _mm256_extracti128_si256::<1>(u));
        _mm256_zextsi128_si256(s)
    }

    /// `reduce8` of the 8 lanes: j + j+4, j + j+2, 0 + 1.
    #[inline(always)]
    unsafe fn reduce8(v: __m256) -> f32 {
        let a4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let a2 = _mm_add_ps(a4, _mm_movehl_ps(a4, a4));
        _mm_cvtss_f32(_mm_add_ss(a2, _mm_shuffle_ps::<0b01>(a2, a2)))
    }

    /// The `m` ≤ 8 floats at `p`, lanes from m on 0: a plain load when there are 8 (the
    /// same values: the masked load stalled the q8 row, 1.24–1.28× its decode on Zen 5 at
    /// one thread without it: BENCHMARKS.md, the ISA table's Q8_0 decode).
    #[inline(always)]
    unsafe fn load8(p: *const f32, m: usize, mask: __m256i) -> __m256 {
        if m == LANES {
            _mm256_loadu_ps(p)
        } else {
            _mm256_maskload_ps(p, mask)
        }
    }

    /// `QRef::dot_int8_portable`'s row: groups 8 at a time into 8 float lanes, the scales
    /// of a last call of fewer groups loaded masked (the lanes they leave get + 0, which
    /// keeps a lane's bits: a lane that starts at + 0 is never − 0).
    #[inline(always)]
    pub unsafe fn row(kind: Sums, w: &[u8], ws: &[f32], x: QActRow, g: usize) -> f32 {
        let groups = ws.len();
        let bytes_a_group = match kind {
            Sums::Q4 => 16,
            Sums::Q8 => g,
        };
        let (wp, xp) = (w.as_ptr(), x.q.as_ptr());
        let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let mut lanes = _mm256_setzero_ps();
        let mut c = 0;
        while c < groups {
            let m = LANES.min(groups - c);
            let mut s = sums8(kind, wp.add(c * bytes_a_group), xp.add(c * g), g, m, false);
            let mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(m as i32), iota);
            let (sw, sx) = (
                load8(ws.as_ptr().add(c), m, mask),
                load8(x.scales.as_ptr().add(c), m, mask),
            );
            if let Sums::Q4 = kind {
                let xsum = if m == LANES {
                    _mm256_loadu_si256(x.sums.as_ptr().add(c) as *const __m256i)
                } else {
                    _mm256_maskload_epi32(x.sums.as_ptr().add(c), mask)
                };
                s = _mm256_sub_epi32(s, _mm256_slli_epi32::<3>(xsum));
            }
            lanes = _mm256_add_ps(
                lanes,
                _mm256_mul_ps(_mm256_mul_ps(sw, sx), _mm256_cvtepi32_ps(s)),
            );
            c += m;
        }
        reduce8(lanes)
    }

    /// `row` for each of `m` ≤ 8 rows of one group (n = g; `w` their bytes one after
    /// another, `ws` their scales) times the one-group activation row `x`: lane j row j's.
    /// `row`'s result for a row of one group is its lane 0, 0 + (d_w·d_x)·Σ (the other
    /// lanes add + 0); the rows' sums go through one `hsum8` instead of a reduction each.
    #[inline(always)]
    pub unsafe fn rows_of_one_group(
        kind: Sums,
        w: &[u8],
        ws: &[f32],
        x: QActRow,
        g: usize,
    ) -> [f32; LANES] {
        let m = ws.len();
        debug_assert!(m <= LANES && x.q.len() == g && x.scales.len() == 1);
        let mut s = sums8(kind, w.as_ptr(), x.q.as_ptr(), g, m, true);
        let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(m as i32), iota);
        let sw = load8(ws.as_ptr(), m, mask);
        if let Sums::Q4 = kind {
            s = _mm256_sub_epi32(s, _mm256_set1_epi32(8 * x.sums[0]));
        }
        let y = _mm256_mul_ps(
            _mm256_mul_ps(sw, _mm256_set1_ps(x.scales[0])),
            _mm256_cvtepi32_ps(s),
        );
        let mut out = [0.0f32; LANES];
        _mm256_storeu_ps(out.as_mut_ptr(), _mm256_add_ps(_mm256_setzero_ps(), y));
        out
    }
}

#[cfg(kernel = "wasm")]
pub(super) mod wasm {
    use super::super::rows::{QActRow, Sums, LANES};
    use core::arch::wasm32::*;

    /// Lane j: the sum of v[j]'s 4 lanes (two rounds of shuffles and adds for 4 groups).
    #[inline(always)]
    fn hsum4x4(v: &[v128]) -> v128 {
        finish4(pair4(v[0], v[1]), pair4(v[2], v[3]))
    }

    /// `hsum4x4`'s first round for two of its vectors.
    #[inline(always)]
    fn pair4(a: v128, b: v128) -> v128 {
        i32x4_add(
            i32x4_shuffle::<0, 4, 1, 5>(a, b),
            i32x4_shuffle::<2, 6, 3, 7>(a, b),
        )
    }

    /// `hsum4x4`'s second round.
    #[inline(always)]
    fn finish4(a: v128, b: v128) -> v128 {
        i32x4_add(
            i32x4_shuffle::<0, 1, 4, 5>(a, b),
            i32x4_shuffle::<2, 3, 6, 7>(a, b),
        )
    }

    /// acc + the products of 16 weights widened to 16 bits (`w`: low 8, high 8) and 16
    /// activations already widened (`i32x4.dot_i16x8_s`: pairs summed to 32 bits, exact).
    #[inline(always)]
    unsafe fn dot16(acc: v128, w: [v128; 2], x: *const i16) -> v128 {
        let lo = i32x4_dot_i16x8(w[0], v128_load(x as *const v128));
        let hi = i32x4_dot_i16x8(w[1], v128_load(x.add(8) as *const v128));
        i32x4_add(acc, i32x4_add(lo, hi))
    }

    /// Group j's integer sums as 4 lanes (their total is `portable_sums`' integer).
    #[inline(always)]
    unsafe fn group(kind: Sums, wp: *const u8, xp: *const i16, g: usize, j: usize) -> v128 {
        group_rows::<1>(kind, [wp], xp, g, j)[0]
    }

    /// `group` of R rows (`wp[r]`: row r's first byte) against the same activations, each
    /// load of the activations shared by the rows.
    #[inline(always)]
    unsafe fn group_rows<const R: usize>(
        kind: Sums,
        wp: [*const u8; R],
        xp: *const i16,
        g: usize,
        j: usize,
    ) -> [v128; R] {
        let mut acc = [i32x4_splat(0); R];
        match kind {
            Sums::Q8 => {
                let mut k = j * g;
                while k < (j + 1) * g {
                    let x = xp.add(k);
                    for (acc, wp) in acc.iter_mut().zip(wp) {
                        // each 8 bytes widened as they load (one `pmovsxbw` on x86)
                        let w = [
                            i16x8_load_extend_i8x8(wp.add(k) as *const i8),
                            i16x8_load_extend_i8x8(wp.add(k + 8) as *const i8),
                        ];
                        *acc = dot16(*acc, w, x);
                    }
                    k += 16;
                }
            }
            Sums::Q4 => {
                let x = xp.add(32 * j);
                for (acc, wp) in acc.iter_mut().zip(wp) {
                    // bytes e and 8 + e widened as they load; nibbles in 16-bit lanes: the
                    // low ones are weights e and 8 + e, the high ones 16 + e and 24 + e
                    let b = [
                        u16x8_load_extend_u8x8(wp.add(16 * j)),
                        u16x8_load_extend_u8x8(wp.add(16 * j + 8)),
                    ];
                    let low = b.map(|b| v128_and(b, u16x8_splat(15)));
                    let high = b.map(|b| u16x8_shr(b, 4));
                    *acc = dot16(*acc, low, x);
                    *acc = dot16(*acc, high, x.add(16));
                }
            }
        }
        acc
    }

    /// `QRef::dot_int8_portable`'s row: groups 4 at a time, their sums reduced by a shuffle
    /// tree into one i32x4, the epilogue `lane += (d_w·d_x)·Σ` in one f32x4, the lanes of
    /// groups 0–3 mod 8 and 4–7 mod 8 taking turns (lane for lane the portable loop's
    /// operations; lanes past the last groups add + 0), the 8 lanes folded as `reduce8`.
    /// Scales are read in place, and q8's usual groups of 32 and 64 are unrolled. The
    /// activations are read widened (`QActRow::wide`).
    #[inline(always)]
    pub unsafe fn row(kind: Sums, w: &[u8], ws: &[f32], x: QActRow, g: usize) -> f32 {
        rows::<1>(kind, w, ws, x, g)[0]
    }

    /// `row` of R rows one after another (`w`, `ws`: their bytes and scales in turn), each
    /// load of the activations shared by the rows; row r's bits are `row`'s.
    #[inline(always)]
    pub unsafe fn rows<const R: usize>(
        kind: Sums,
        w: &[u8],
        ws: &[f32],
        x: QActRow,
        g: usize,
    ) -> [f32; R] {
        match (kind, g) {
            (Sums::Q8, 32) => rows4::<R>(Sums::Q8, w, ws, x, 32),
            (Sums::Q8, 64) => rows4::<R>(Sums::Q8, w, ws, x, 64),
            _ => rows4::<R>(kind, w, ws, x, g),
        }
    }

    /// `rows`, 4 groups a step (`g` a constant where `rows` matched it).
    #[inline(always)]
    unsafe fn rows4<const R: usize>(
        kind: Sums,
        w: &[u8],
        ws: &[f32],
        x: QActRow,
        g: usize,
    ) -> [f32; R] {
        let groups = x.scales.len();
        debug_assert!(x.wide.len() == x.q.len() && ws.len() == R * groups);
        let bytes_a_group = match kind {
            Sums::Q4 => 16,
            Sums::Q8 => g,
        };
        let row_bytes = groups * bytes_a_group;
        let wp: [*const u8; R] = std::array::from_fn(|r| w.as_ptr().add(r * row_bytes));
        let sp: [*const f32; R] = std::array::from_fn(|r| ws.as_ptr().add(r * groups));
        let xp = x.wide.as_ptr();
        let q4 = matches!(kind, Sums::Q4);
        let mut lanes = [[f32x4_splat(0.0); 2]; R];
        // 4 groups into lanes[r][half], the last 1–3 groups padded: the missing ones sum to
        // 0 with scales 0, and each adds + 0.
        let block = |lanes: &mut [[v128; 2]; R], c: usize, m: usize, half: usize| {
            let at = wp.map(|p| p.add(c * bytes_a_group));
            let sums = |j| match j < m {
                true => group_rows::<R>(kind, at, xp.add(c * g), g, j),
                false => [i32x4_splat(0); R],
            };
            // hsum4x4's rounds as the groups come (fewer vectors live at once)
            let (a0, a1) = (sums(0), sums(1));
            let p01: [v128; R] = std::array::from_fn(|r| pair4(a0[r], a1[r]));
            let (a2, a3) = (sums(2), sums(3));
            let p23: [v128; R] = std::array::from_fn(|r| pair4(a2[r], a3[r]));
            let sx = load4(x.scales.as_ptr().add(c), m);
            let xsum = if q4 {
                load4(x.sums.as_ptr().add(c), m)
            } else {
                i32x4_splat(0)
            };
            for r in 0..R {
                let mut s = finish4(p01[r], p23[r]);
                if q4 {
                    s = i32x4_sub(s, i32x4_shl(xsum, 3));
                }
                let d = f32x4_mul(load4(sp[r].add(c), m), sx);
                let l = &mut lanes[r][half];
                *l = f32x4_add(*l, f32x4_mul(d, f32x4_convert_i32x4(s)));
            }
        };
        let (mut c, mut half) = (0, 0);
        while c + 4 <= groups {
            block(&mut lanes, c, 4, half);
            (c, half) = (c + 4, half ^ 1);
        }
        if c < groups {
            block(&mut lanes, c, groups - c, half);
        }
        lanes.map(|l| {
            let mut out = [0.0f32; LANES];
            v128_store(out.as_mut_ptr() as *mut v128, l[0]);
            v128_store(out.as_mut_ptr().add(4) as *mut v128, l[1]);
            super::super::rows::reduce8(out)
        })
    }

    /// The `m` ≤ 4 values (4-byte) at `p`, zeros after them.
    #[inline(always)]
    unsafe fn load4<T: Copy + Default>(p: *const T, m: usize) -> v128 {
        if m == 4 {
            return v128_load(p as *const v128);
        }
        let mut v = [T::default(); 4];
        v[..m].copy_from_slice(std::slice::from_raw_parts(p, m));
        v128_load(v.as_ptr() as *const v128)
    }

    /// `row` for each of `m` ≤ 8 rows of one group (n = g; `w` their bytes one after
    /// another, `ws` their scales) times the one-group row `x`: lane j row j's, 0 + (d_w·
    /// d_x)·Σ as `row` gives a row of one group (its other lanes add + 0).
    #[inline(always)]
    pub unsafe fn rows_of_one_group(
        kind: Sums,
        w: &[u8],
        ws: &[f32],
        x: QActRow,
        g: usize,
    ) -> [f32; LANES] {
        let m = ws.len();
        debug_assert!(m <= LANES && x.wide.len() == g && x.scales.len() == 1);
        let mut accs = [i32x4_splat(0); LANES];
        for (j, acc) in accs.iter_mut().enumerate().take(m) {
            // row j is group j of `w`, each against the same activations
            let wj = w.as_ptr().add(j * w.len() / m);
            *acc = group(kind, wj, x.wide.as_ptr(), g, 0);
        }
        let mut sw = [0.0f32; LANES];
        sw[..m].copy_from_slice(ws);
        let sx = f32x4_splat(x.scales[0]);
        let mut out = [0.0f32; LANES];
        for h in 0..m.div_ceil(4) {
            let mut s = hsum4x4(&accs[4 * h..4 * h + 4]);
            if let Sums::Q4 = kind {
                s = i32x4_sub(s, i32x4_splat(8 * x.sums[0]));
            }
            let d = f32x4_mul(v128_load(sw.as_ptr().add(4 * h) as *const v128), sx);
            let y = f32x4_add(f32x4_splat(0.0), f32x4_mul(d, f32x4_convert_i32x4(s)));
            v128_store(out.as_mut_ptr().add(4 * h) as *mut v128, y);
        }
        out
    }
}
