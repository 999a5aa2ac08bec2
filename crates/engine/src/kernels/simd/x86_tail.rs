//! What both x86 row kernels share around their own 32-lane loop: the rows' common length,
//! then, once that loop has folded each row to eight partial sums `acc8`, the 8-wide chunks,
//! the pairwise reduction ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)) and the scalar
//! tail, as `dot_portable`.

use std::arch::x86_64::*;

/// An x86 build's row kernel: `dot_portable(w, x)` for each of R rows at once, the weight
/// row streamed (prefetched ahead) when `STREAM`.
pub trait Rows {
    /// # Safety
    /// The build's instruction set is enabled; the kernel reads within every slice.
    unsafe fn rows<const R: usize, const STREAM: bool>(w: &[f32], xs: [&[f32]; R]) -> [f32; R];
}

/// `Isa::dot_rows` on x86: the 1 to 4 rows `xs` (`out` as many) through `K`'s kernel, with
/// the count a constant in each call.
///
/// # Safety
/// As `Rows::rows`.
#[inline(always)]
pub unsafe fn dot_rows_by_count<K: Rows>(out: &mut [f32], w: &[f32], xs: &[&[f32]], stream: bool) {
    macro_rules! pass {
        ($r:literal) => {{
            let a: [&[f32]; $r] = std::array::from_fn(|i| xs[i]);
            let r = match stream {
                true => K::rows::<$r, true>(w, a),
                false => K::rows::<$r, false>(w, a),
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

/// `dot_portable(w, x)` for each of the R rows `xs` (over the shortest length n): the bulk,
/// the first n / 32 · 32 floats, by the kernel's own loop `bulk(pw, px, n)` (run only where
/// n ≥ 32), which returns each row's 32 partial sums folded to eight; then `finish`.
#[inline(always)]
pub unsafe fn dot_rows<const R: usize>(
    w: &[f32],
    xs: [&[f32]; R],
    bulk: impl FnOnce(*const f32, [*const f32; R], usize) -> [__m256; R],
) -> [f32; R] {
    let n = xs.iter().fold(w.len(), |n, x| n.min(x.len()));
    let pw = w.as_ptr();
    let px = xs.map(|x| x.as_ptr());
    let acc8 = if n >= 32 {
        bulk(pw, px, n)
    } else {
        [_mm256_setzero_ps(); R]
    };
    finish(acc8, pw, px, n / 32 * 32, n)
}

#[inline(always)]
unsafe fn finish<const R: usize>(
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

/// Asks for `bytes` in cache a line at a time (a hint: it never faults, changes no value).
#[inline(always)]
pub fn prefetch(bytes: &[u8]) {
    for line in bytes.chunks(64) {
        // SAFETY: a prefetch reads nothing architecturally and never faults.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr() as *const i8) };
    }
}

/// Evicts `bytes` from every cache level (`clflush` a line at a time), then fences.
pub fn flush(bytes: &[u8]) {
    for line in bytes.chunks(64) {
        // SAFETY: the line is within `bytes`; clflush only evicts it.
        unsafe { _mm_clflush(line.as_ptr()) };
    }
    // SAFETY: a fence has no operands.
    unsafe { _mm_mfence() };
}
