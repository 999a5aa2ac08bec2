//! The kernels' one choosing point: the instruction set of the build (`cfg(kernel)`, set by
//! `build.rs` from the target's features) picks the file that computes `dot` and the matrix
//! product's row passes: `avx512` (+ `avx512_rows`), `avx2`, `wasm`, or the portable loops
//! of `kernels`. Every one gives `dot_portable`'s bits (tests natively and in wasm).

#[cfg(kernel = "avx2")]
mod avx2;
#[cfg(kernel = "avx512")]
mod avx512;
#[cfg(kernel = "avx512")]
mod avx512_rows;
mod values;
#[cfg(kernel = "wasm")]
mod wasm;
#[cfg(any(kernel = "avx512", kernel = "avx2"))]
mod x86_tail;

#[cfg(kernel = "portable")]
use super::dot_portable;

/// Σ a[i]·b[i]: 32 interleaved partial sums over the bulk, folded to 8, then 8-wide chunks
/// (short vectors such as stories260K's 8-wide heads take only this path), a fixed pairwise
/// reduction and the scalar tail. Every dot product in the engine goes through here.
#[inline(always)]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // The same arithmetic in 16-lane registers where the build has AVX-512 (the native
    // build targets its CPU, `.cargo/config.toml`): LLVM vectorises the portable loop below
    // with 4-lane registers only.
    #[cfg(kernel = "avx512")]
    {
        // SAFETY: the build enables AVX-512F; the kernel reads within both slices.
        unsafe { avx512::dot_avx512(a, b) }
    }
    // And in four 8-lane registers where it has AVX2 only (LLVM had left the loop below
    // mostly 4 lanes wide and scalar there).
    #[cfg(kernel = "avx2")]
    {
        // SAFETY: the build enables AVX2; the kernel reads within both slices.
        unsafe { avx2::dot_rows::<1, false>(a, [b])[0] }
    }
    // And in wasm's 4-lane registers where the page's build has SIMD (all current
    // browsers): left to LLVM, the loop below ran the page's forward pass at about half
    // the kernel's speed.
    #[cfg(kernel = "wasm")]
    {
        // SAFETY: the build enables simd128; the kernel reads within both slices.
        unsafe { wasm::dot_simd128(a, b) }
    }
    #[cfg(not(any(kernel = "avx512", kernel = "avx2", kernel = "wasm")))]
    dot_portable(a, b)
}

/// [`dot`] of a weight row `w` streamed from memory (a matrix-vector product runs it on
/// row after row): the same bits. With AVX2 only, the rows ahead are prefetched in software
/// (the hardware prefetcher alone left a single core short of its read bandwidth; `cargo
/// bench --bench matvec`). With AVX-512 they are not: there the same prefetch made decode
/// slower (BENCHMARKS.md, "AVX-512 decode has no software prefetch").
#[inline(always)]
pub(super) fn dot_streamed(w: &[f32], x: &[f32]) -> f32 {
    #[cfg(kernel = "avx512")]
    {
        // SAFETY: as in `dot`.
        unsafe { avx512::dot_avx512(w, x) }
    }
    #[cfg(kernel = "avx2")]
    {
        // SAFETY: as in `dot`; prefetches are hints and never fault.
        unsafe { avx2::dot_rows::<1, true>(w, [x])[0] }
    }
    #[cfg(not(any(kernel = "avx512", kernel = "avx2")))]
    dot(w, x)
}

/// [`dot_streamed`] prefetching the row [`super::tune::LEAD`] bytes ahead of its loads
/// (AVX-512 builds; elsewhere `dot_streamed`): the same bits.
#[inline(always)]
pub(super) fn dot_led(w: &[f32], x: &[f32]) -> f32 {
    #[cfg(kernel = "avx512")]
    {
        // SAFETY: as in `dot`; prefetches are hints and never fault.
        unsafe { avx512::dot_avx512_led::<{ super::tune::LEAD }>(w, x) }
    }
    #[cfg(not(kernel = "avx512"))]
    dot_streamed(w, x)
}

/// Attention's weighted values for one 8-wide slice of G heads (`values::weighted`): the
/// portable loop's bits.
pub(super) use values::weighted as weighted_values;

/// x[i] = `exp`(x[i] − shift) (softmax's pass): sixteen lanes at a time where the build has
/// AVX-512 (the same bits), elsewhere the scalar loop, which LLVM vectorises.
#[inline(always)]
pub fn exp_shifted(x: &mut [f32], shift: f32) {
    #[cfg(kernel = "avx512")]
    // SAFETY: the build enables AVX-512F; the kernel reads and writes within `x`.
    unsafe {
        avx512::exp_shifted(x, shift)
    }
    #[cfg(not(kernel = "avx512"))]
    for v in x.iter_mut() {
        *v = super::exp(*v - shift);
    }
}

#[cfg(kernel = "avx512")]
use avx512::{score_sums, SCORE_GROUP};
#[cfg(kernel = "wasm")]
use wasm::{score_sums, SCORE_GROUP};

/// att[j] = dot(q, k_j) · scale for every j of `att`, k_j the key row at `keys.add(j *
/// stride)`: `dot`'s bits, `SCORE_GROUP` positions at a time by the build's kernel
/// (`avx512::score_sums`, `wasm::score_sums`: each position's bulk and eight-wide chunks,
/// their final reductions done together), then each one's scalar tail (elements hs / 8 · 8
/// .. hs, in order, as `dot_portable`) and the scale; the positions left over one at a
/// time. The caller checks that each key row lies in its slice.
#[cfg(any(kernel = "avx512", kernel = "wasm"))]
#[inline(always)]
pub(super) unsafe fn scores(
    att: &mut [f32],
    q: &[f32],
    keys: *const f32,
    stride: usize,
    scale: f32,
) {
    let hs = q.len();
    let mut t = 0;
    while t + SCORE_GROUP <= att.len() {
        let k = keys.add(t * stride);
        let sums = score_sums(q, k, stride);
        for (j, (a, &sum)) in att[t..t + SCORE_GROUP].iter_mut().zip(&sums).enumerate() {
            let mut s = sum;
            for (i, &qi) in q.iter().enumerate().skip(hs / 8 * 8) {
                s += qi * *k.add(j * stride + i);
            }
            *a = s * scale;
        }
        t += SCORE_GROUP;
    }
    for (j, a) in att.iter_mut().enumerate().skip(t) {
        let k = std::slice::from_raw_parts(keys.add(j * stride), hs);
        *a = dot(q, k) * scale;
    }
}

/// Weight rows a pass of decode's matrix-vector product takes (`avx512_rows::dot_wrows`,
/// `wasm::dot_wrows`).
#[cfg(kernel = "avx512")]
pub(super) const WEIGHT_ROWS_A_PASS: usize = 4;

/// Two in wasm: four rows' accumulators do not fit V8's registers (`wasm::dot_wrows`).
#[cfg(kernel = "wasm")]
pub(super) const WEIGHT_ROWS_A_PASS: usize = 2;

/// The longest weight row (in floats) that decode's matrix-vector product takes
/// [`WEIGHT_ROWS_A_PASS`] at a time; longer rows go one at a time. Short rows are
/// stories260K's (64 and 172): there the matrices sit in cache and each row's reduction and
/// each load of `x` are a large part of its work, which several rows a pass share. Long rows
/// (the 15M shape's 288 and 768, 110M's 768 and 2,048) stream from memory, and there four
/// rows side by side fell behind one sequential row at a time: on an AMD EPYC (Zen 4), the
/// 15M shape's decode at one thread went from 167–182 to 280–287 tokens/s natively and from
/// 111–126 to 269–279 in wasm (Node), while stories260K's stayed within the noise natively
/// and got 1.4× slower in wasm with one row a pass (throwaway harness, alternating builds).
/// (With AVX2 only, and in the portable build, every row goes one at a time.)
pub(super) const GROUPED_ROW_MAX: usize = 256;

/// R float32 weight rows times `x`, each row's bits those of [`dot`], `x` loaded once for
/// all R: AVX-512's kernel or wasm SIMD's.
#[cfg(any(kernel = "avx512", kernel = "wasm"))]
#[inline(always)]
pub(super) fn dot_wrows<const R: usize>(ws: [&[f32]; R], x: &[f32]) -> [f32; R] {
    // SAFETY: the build enables AVX-512F; the kernel reads within every slice. No prefetch:
    // these rows are short and sit in cache (`GROUPED_ROW_MAX`).
    #[cfg(target_arch = "x86_64")]
    unsafe {
        avx512_rows::dot_wrows::<R>(ws, x)
    }
    // SAFETY: the build enables simd128; the kernel reads within every slice.
    #[cfg(target_arch = "wasm32")]
    unsafe {
        wasm::dot_wrows::<R>(ws, x)
    }
}

#[cfg(kernel = "avx2")]
use avx2 as simd_rows;

/// The rows kernel of the build: AVX-512's, or AVX2's where that is all there is.
#[cfg(kernel = "avx512")]
use avx512_rows as simd_rows;

/// Input rows a pass of `simd_rows::dot_rows` takes.
#[cfg(any(kernel = "avx512", kernel = "avx2"))]
pub(super) const ROWS_A_PASS: usize = 2;

/// One pass of `x86_rows::dot_rows` over 1–4 input rows.
#[cfg(any(kernel = "avx512", kernel = "avx2"))]
#[inline(always)]
pub(super) unsafe fn rows_pass(out: &mut [f32], w: &[f32], xs: &[&[f32]], stream: bool) {
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
