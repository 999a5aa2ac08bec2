//! wasm SIMD (4-lane registers, the page's build): `dot_portable`'s arithmetic lane for
//! lane, decode's short rows two at a time, attention's scores four positions at a time.

use super::Isa;
use core::arch::wasm32::*;

/// The page's build's kernels (simd128).
pub struct Simd128;

impl Isa for Simd128 {
    const NAME: &'static str = "wasm simd128";
    /// Two: four rows' accumulators do not fit V8's registers (`dot_wrows`).
    const WEIGHT_ROWS_A_PASS: usize = 2;

    #[inline(always)]
    fn dot(a: &[f32], b: &[f32]) -> f32 {
        // SAFETY: the build enables simd128; the kernel reads within both slices.
        unsafe { dot_simd128(a, b) }
    }

    #[inline(always)]
    fn scores(att: &mut [f32], q: &[f32], keys: &[f32], stride: usize, scale: f32) {
        super::scores_in_groups::<SCORE_GROUP>(
            att,
            q,
            keys,
            stride,
            scale,
            // SAFETY: simd128; `k` holds the group's key rows (sliced by the caller).
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
        super::values::weighted_wasm(att, n, values, stride, offsets)
    }

    #[inline(always)]
    fn dot_wrows<const R: usize>(ws: [&[f32]; R], x: &[f32]) -> [f32; R] {
        // SAFETY: simd128; the kernel reads within every slice.
        unsafe { dot_wrows::<R>(ws, x) }
    }
}

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
/// pass fit its registers and decode faster; the same passes through `bulk_sums::<1, 4>`
/// give the same bits but run slower under V8, which lays that loop out differently
/// (figures: BENCHMARKS.md, "The wasm kernels are shaped for V8's 16 vector registers").
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
/// floats. Two rows in two groups a pass measured fastest of the shapes tried (figures:
/// BENCHMARKS.md, the same entry).
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

/// Positions `super::scores` reduces together: four, one a lane.
const SCORE_GROUP: usize = 4;

/// dot(q, k_j) for the four key rows k_j at `keys.add(j * stride)`, each `dot_simd128`'s
/// bits but for the scalar tail (from q.len() / 8 · 8, left to `super::scores`): the
/// pairwise reductions of the four done together by a 4×4 transpose (one at a time each was
/// four lane extracts and three scalar adds for a head of 8 multiplies). The caller checks
/// that every k_j lies in its slice.
#[inline(always)]
pub unsafe fn score_sums(q: &[f32], keys: *const f32, stride: usize) -> [f32; SCORE_GROUP] {
    let (pq, hs) = (q.as_ptr(), q.len());
    let [a, b, c, d] = [0, 1, 2, 3].map(|j| partial8(pq, keys.add(j * stride), hs));
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
    let mut s = [0.0f32; SCORE_GROUP];
    v128_store(s.as_mut_ptr() as *mut v128, r);
    s
}
