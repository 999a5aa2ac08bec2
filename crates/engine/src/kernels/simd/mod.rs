//! The CPU kernels' instruction set, chosen once: `build.rs` sets `cfg(kernel)` from the
//! target's features, and [`Native`] (at the end of this file) is that set's [`Isa`], one
//! file each: `avx512` (+ `avx512_rows`), `avx2`, `wasm`. [`Portable`] is the reference
//! loops, which every other implementation equals bit for bit; both are compiled in every
//! build, so a test compares them in one binary (natively and in wasm).

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

pub use values::weighted_queries;

use super::{dot_portable, exp};

/// The float32 rows' prefetch lead inside a row, bytes (`Isa::dot_led`).
pub const LEAD: usize = 1024;

/// What an instruction set computes fast, each method with the reference loops' bits (the
/// defaults are those loops). The kernels call [`Native`]'s.
pub trait Isa {
    /// Its name (`bench` prints it).
    const NAME: &'static str;
    /// Weight rows a pass of decode's product of short float32 rows takes (`dot_wrows`).
    const WEIGHT_ROWS_A_PASS: usize = 1;
    /// Input rows a pass of a batch's float32 product takes (`dot_rows`).
    const ROWS_A_PASS: usize = 1;
    /// It has a software prefetch (`prefetch`): decode's row variants ahead are measured.
    const PREFETCHES: bool = false;
    /// Its float32 row loop can prefetch inside the row (`dot_led`): those variants too.
    const LEADS: bool = false;

    /// Σ a[i]·b[i]: 32 interleaved partial sums over the bulk, folded to 8, then 8-wide
    /// chunks, a fixed pairwise reduction and the scalar tail (`dot_portable`).
    fn dot(a: &[f32], b: &[f32]) -> f32 {
        dot_portable(a, b)
    }

    /// [`Isa::dot`] of a weight row streamed from memory (a matrix-vector product runs it
    /// on row after row): the same bits, maybe prefetching ahead in the row.
    fn dot_streamed(w: &[f32], x: &[f32]) -> f32 {
        Self::dot(w, x)
    }

    /// [`Isa::dot_streamed`] prefetching the row [`LEAD`] bytes ahead of its loads.
    fn dot_led(w: &[f32], x: &[f32]) -> f32 {
        Self::dot_streamed(w, x)
    }

    /// x[i] = `exp`(x[i] − shift) (softmax's pass).
    fn exp_shifted(x: &mut [f32], shift: f32) {
        for v in x.iter_mut() {
            *v = exp(*v - shift);
        }
    }

    /// att[t] = dot(q, k_t) · scale for every t of `att`, k_t = keys[t · stride ..][..
    /// q.len()] (each within `keys`).
    fn scores(att: &mut [f32], q: &[f32], keys: &[f32], stride: usize, scale: f32) {
        let hs = q.len();
        for (t, a) in att.iter_mut().enumerate() {
            *a = Self::dot(q, &keys[t * stride..t * stride + hs]) * scale;
        }
    }

    /// For each head g of G: Σ_t att[g·n + t] · v[t·stride + offsets[g] ..][..8], t from 0
    /// to n − 1, a separately rounded multiply then add per position, in order.
    ///
    /// # Safety
    /// `values` points at the slice's first float in position 0; every read
    /// (t·stride + offsets[g] + 0..8 for t < n) lies in the cache, and `att` holds G·n
    /// weights.
    unsafe fn weighted_values<const G: usize>(
        att: &[f32],
        n: usize,
        values: *const f32,
        stride: usize,
        offsets: [usize; G],
    ) -> [[f32; 8]; G] {
        let mut out = [[0.0f32; 8]; G];
        for (g, out) in out.iter_mut().enumerate() {
            for t in 0..n {
                let (at, p) = (att[g * n + t], values.add(t * stride + offsets[g]));
                for (i, o) in out.iter_mut().enumerate() {
                    *o += at * *p.add(i);
                }
            }
        }
        out
    }

    /// R float32 weight rows times `x` (decode's short rows), each row's bits those of
    /// [`Isa::dot`].
    fn dot_wrows<const R: usize>(ws: [&[f32]; R], x: &[f32]) -> [f32; R] {
        std::array::from_fn(|r| Self::dot_streamed(ws[r], x))
    }

    /// out[r] = dot(w, xs[r]) for one pass of up to [`Isa::ROWS_A_PASS`] input rows;
    /// `stream` on the first pass over the weight row (it comes from memory then).
    fn dot_rows(out: &mut [f32], w: &[f32], xs: &[&[f32]], stream: bool) {
        let _ = stream;
        for (o, x) in out.iter_mut().zip(xs) {
            *o = Self::dot(w, x);
        }
    }

    /// Asks for `bytes` in cache a line at a time (a hint: it never faults, changes no
    /// value).
    fn prefetch(bytes: &[u8]) {
        let _ = bytes;
    }

    /// Evicts `bytes` from every cache level (a timed pass then streams them from memory,
    /// as a model's weights are).
    fn flush(bytes: &[u8]) {
        let _ = bytes;
    }
}

/// [`Isa::scores`] `GROUP` positions at a time: `sums` gives their bulk and 8-wide chunks
/// (each position's `dot` but for its scalar tail, from hs / 8 · 8), then each one's scalar
/// tail in order and the scale; the positions left over one at a time by `dot`.
#[cfg(any(kernel = "avx512", kernel = "wasm"))]
#[inline(always)]
fn scores_in_groups<const GROUP: usize>(
    att: &mut [f32],
    q: &[f32],
    keys: &[f32],
    stride: usize,
    scale: f32,
    sums: impl Fn(&[f32], &[f32]) -> [f32; GROUP],
    dot: impl Fn(&[f32], &[f32]) -> f32,
) {
    let hs = q.len();
    let mut t = 0;
    while t + GROUP <= att.len() {
        let k = &keys[t * stride..(t + GROUP - 1) * stride + hs];
        let s = sums(q, k);
        for (j, (a, &sum)) in att[t..t + GROUP].iter_mut().zip(&s).enumerate() {
            let mut s = sum;
            for (i, &qi) in q.iter().enumerate().skip(hs / 8 * 8) {
                s += qi * k[j * stride + i];
            }
            *a = s * scale;
        }
        t += GROUP;
    }
    for (j, a) in att.iter_mut().enumerate().skip(t) {
        *a = dot(q, &keys[j * stride..j * stride + hs]) * scale;
    }
}

/// The reference loops: what every instruction set computes.
pub struct Portable;

impl Isa for Portable {
    const NAME: &'static str = "portable";
}

/// The build's instruction set: the one choosing point of the CPU kernels.
#[cfg(kernel = "avx512")]
pub type Native = avx512::Avx512;
#[cfg(kernel = "avx2")]
pub type Native = avx2::Avx2;
#[cfg(kernel = "wasm")]
pub type Native = wasm::Simd128;
#[cfg(kernel = "portable")]
pub type Native = Portable;
