//! The k-quants' integer sums with wasm's simd128 (the page): 16 weights a step, each
//! weight's unsigned value (at most 63, so also a valid i8) times its activation by
//! `i16x8.extmul_{low,high}_i8x16_s` (at most 63·127 in i16), the products times the
//! sub-block's scale and paired into i32 by `i32x4.dot_i16x8_s`. The scales, minimums and
//! Q6_K's offset are the plain loops' (`dot.rs`). Integers: the bits of the plain loops and
//! of the native kernels (tested in wasm: `tests/wasm_seeded.rs`).

use super::blocks::scale_min;
use super::dot::Ints;
use core::arch::wasm32::*;

pub(super) struct Wasm;

/// 16 unsigned values times their 16 activations at `q`, each product times `sc`, into
/// four i32 lanes.
#[inline(always)]
unsafe fn sub16(u: v128, q: *const i8, sc: v128) -> v128 {
    let x = v128_load(q as *const v128);
    let lo = i16x8_extmul_low_i8x16(u, x);
    let hi = i16x8_extmul_high_i8x16(u, x);
    i32x4_add(i32x4_dot_i16x8(lo, sc), i32x4_dot_i16x8(hi, sc))
}

#[inline(always)]
fn lanes_sum(v: v128) -> i32 {
    i32x4_extract_lane::<0>(v)
        + i32x4_extract_lane::<1>(v)
        + i32x4_extract_lane::<2>(v)
        + i32x4_extract_lane::<3>(v)
}

/// Q4_K/Q5_K's sums (`Ints::q4k`): chunk c's 32 bytes of nibbles, 16 at a time.
#[inline(always)]
fn k45(b: &[u8], qs: &[u8], qh: Option<&[u8]>, q: &[i8], bs: &[i16]) -> (i32, i32) {
    assert!(qs.len() >= 128 && q.len() >= 256 && bs.len() >= 16);
    assert!(qh.is_none_or(|h| h.len() >= 32));
    let (mut sc, mut mins) = ([0i16; 8], 0);
    for j in 0..8 {
        let (s, m) = scale_min(j, &b[4..16]);
        sc[j] = s as i16;
        mins += m as i32 * (bs[2 * j] as i32 + bs[2 * j + 1] as i32);
    }
    let m4 = u8x16_splat(0x0F);
    let mut acc = i32x4_splat(0);
    // SAFETY: every load is 16 bytes inside the slices checked above (qs[32c + 16h ..],
    // qh[16h ..], q[64c + 32s + 16h ..]).
    unsafe {
        for c in 0..4 {
            let (s0, s1) = (i16x8_splat(sc[2 * c]), i16x8_splat(sc[2 * c + 1]));
            for h in 0..2 {
                let bytes = v128_load(qs.as_ptr().add(32 * c + 16 * h) as *const v128);
                let (mut lo, mut hi) = (v128_and(bytes, m4), u8x16_shr(bytes, 4));
                if let Some(qh) = qh {
                    let bits = v128_load(qh.as_ptr().add(16 * h) as *const v128);
                    let bit = |s: u32| i8x16_shl(v128_and(u8x16_shr(bits, s), u8x16_splat(1)), 4);
                    lo = v128_or(lo, bit(2 * c as u32));
                    hi = v128_or(hi, bit(2 * c as u32 + 1));
                }
                let x = q.as_ptr().add(64 * c + 16 * h);
                acc = i32x4_add(acc, sub16(lo, x, s0));
                acc = i32x4_add(acc, sub16(hi, x.add(32), s1));
            }
        }
    }
    (lanes_sum(acc), mins)
}

impl Ints for Wasm {
    #[inline(always)]
    fn q4k(b: &[u8], q: &[i8], bs: &[i16]) -> (i32, i32) {
        k45(b, &b[16..144], None, q, bs)
    }

    #[inline(always)]
    fn q5k(b: &[u8], q: &[i8], bs: &[i16]) -> (i32, i32) {
        k45(b, &b[48..176], Some(&b[16..48]), q, bs)
    }

    #[inline(always)]
    fn q6k(b: &[u8], q: &[i8], bs: &[i16]) -> i32 {
        assert!(b.len() >= 210 && q.len() >= 256 && bs.len() >= 16);
        let sc = |k: usize| b[192 + k] as i8;
        let bias: i32 = (0..16).map(|k| sc(k) as i32 * bs[k] as i32).sum();
        let (m4, m2) = (u8x16_splat(0x0F), u8x16_splat(3));
        let mut acc = i32x4_splat(0);
        // SAFETY: loads of 16 bytes inside the block (ql at 64n + 16h and + 32, qh at
        // 128 + 32n + 16h) and inside q (128n + 32j + 16h), lengths checked above.
        unsafe {
            for n in 0..2 {
                for h in 0..2 {
                    let at = |i: usize| v128_load(b.as_ptr().add(i) as *const v128);
                    let (ql0, ql1, qh) = (
                        at(64 * n + 16 * h),
                        at(64 * n + 32 + 16 * h),
                        at(128 + 32 * n + 16 * h),
                    );
                    let high = |s: u32| i8x16_shl(v128_and(u8x16_shr(qh, s), m2), 4);
                    let u = [
                        v128_or(v128_and(ql0, m4), high(0)),
                        v128_or(v128_and(ql1, m4), high(2)),
                        v128_or(u8x16_shr(ql0, 4), high(4)),
                        v128_or(u8x16_shr(ql1, 4), high(6)),
                    ];
                    for (j, u) in u.into_iter().enumerate() {
                        // weights 128n + 32j + 16h …: the group of 16 k = 8n + 2j + h
                        let k = 8 * n + 2 * j + h;
                        let x = q.as_ptr().add(128 * n + 32 * j + 16 * h);
                        acc = i32x4_add(acc, sub16(u, x, i16x8_splat(sc(k) as i16)));
                    }
                }
            }
        }
        lanes_sum(acc) - 32 * bias
    }
}
