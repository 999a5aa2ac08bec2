//! The one matrix product of the forward pass (`matmul`): X (t, n) times a list of matrices,
//! each weight row read once for all t rows, the rows split between threads; decode's
//! matrix-vector product (t = 1) several short rows a pass, batches several input rows a
//! pass (the passes themselves are the build's, `simd`).

use super::simd::{self, dot_streamed};
use super::tune::Variant;
use crate::par;
use crate::quant::{Activations, MatRef, QActs, QRef, ShiftedActs};

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

/// The activations of the matrices of one call that multiply them in int8.
struct Int8Acts {
    /// x quantized once per group size (the matrices of one call share it)
    aligned: Vec<QActs>,
    /// for matrices whose rows are not whole groups
    shifted: Vec<ShiftedActs>,
    /// per matrix: which of them it takes
    which: Vec<Option<Which>>,
}

#[derive(Clone, Copy)]
enum Which {
    Aligned(usize),
    Shifted(usize),
}

/// x quantized for each matrix that multiplies it in int8, before the rows split between
/// threads.
fn int8_activations(x: &[f32], n: usize, ws: &[MatRef]) -> Int8Acts {
    let mut acts = Int8Acts {
        aligned: Vec::new(),
        shifted: Vec::new(),
        which: Vec::with_capacity(ws.len()),
    };
    for w in ws {
        let which = match w {
            MatRef::Quant(q) if q.activations == Activations::Int8 && q.int8_ready(n) => Some(
                Which::Aligned(match acts.aligned.iter().position(|a| a.group == q.group) {
                    Some(i) => i,
                    None => {
                        acts.aligned.push(QActs::quantize(x, n, q.group));
                        acts.aligned.len() - 1
                    }
                }),
            ),
            MatRef::Quant(q) if q.activations == Activations::Int8 && q.int8_shifted_ready(n) => {
                acts.shifted
                    .push(ShiftedActs::quantize(x, n, q.group, q.len / n));
                Some(Which::Shifted(acts.shifted.len() - 1))
            }
            _ => None,
        };
        acts.which.push(which);
    }
    acts
}

/// out_t (d, t): out_t[i][r] = W_i · x_r, W_i the i-th row of the stacked matrices.
fn weight_rows_times(out_t: &mut [f32], x: &[f32], n: usize, t: usize, ws: &[MatRef]) {
    let acts = int8_activations(x, n, ws);
    let ahead = super::tune::prefetch_rows();
    // decode's products of long float32 rows are timed while their variants are on trial
    let trial = (t == 1
        && n > simd::GROUPED_ROW_MAX
        && ws.iter().all(|w| matches!(w, MatRef::F32(_)))
        && super::tune::f32_on_trial())
    .then(std::time::Instant::now);
    par::chunks(out_t, t, t * n, |first, chunk| {
        // The chunk's rows matrix by matrix: an int8 matrix's run of rows in its own loop.
        let (mut m, mut row, mut done) = (0, first, 0);
        while done < chunk.len() / t {
            let rows_m = ws[m].len() / n.max(1);
            if row >= rows_m {
                (m, row) = (m + 1, row - rows_m);
                continue;
            }
            let count = (rows_m - row).min(chunk.len() / t - done);
            let out = &mut chunk[done * t..(done + count) * t];
            match (&ws[m], acts.which[m]) {
                (MatRef::Quant(q), Some(Which::Aligned(a))) => {
                    int8_rows(out, q, row * n, n, &acts.aligned[a], ahead.int8)
                }
                (MatRef::Quant(q), Some(Which::Shifted(a))) => {
                    shifted_rows(out, q, row, t, &acts.shifted[a])
                }
                (MatRef::F32(w), _) if t == 1 && n > simd::GROUPED_ROW_MAX => {
                    f32_rows(out, &w[row * n..(row + count) * n], x, ahead.f32)
                }
                (MatRef::F32(w), _) if t == 1 => {
                    f32_short_rows(out, &w[row * n..(row + count) * n], x)
                }
                _ => float_rows(out, x, n, t, &ws[m..m + 1], row),
            }
            (row, done) = (row + count, done + count);
        }
    });
    if let Some(start) = trial {
        super::tune::record_f32(ahead.f32, start.elapsed().as_nanos() as u64);
    }
}

/// out_t (rows, t) of the int8 matrix `q`, whose rows are not whole groups, from row
/// `first`: each row's whole groups times the activations laid out for its offset.
#[inline(always)]
fn shifted_rows(out_t: &mut [f32], q: &QRef, first: usize, t: usize, a: &ShiftedActs) {
    for (i, o) in out_t.chunks_exact_mut(t).enumerate() {
        for (r, o) in o.iter_mut().enumerate() {
            let (start, x) = a.row(first + i, r);
            *o = q.dot_int8(start, x);
        }
    }
}

/// out_t (rows, t) of the int8 matrix `q` from weight `start` on: one row product a weight
/// row and input row (`QRef::dot_int8`), in the order and with the prefetch of variant `v`
/// (chosen by measuring: `tune`); the bits are the same.
#[inline(always)]
pub(super) fn int8_rows(
    out_t: &mut [f32],
    q: &QRef,
    start: usize,
    n: usize,
    a: &QActs,
    v: Variant,
) {
    let t = a.q.len() / n;
    let first = start / n;
    if n == q.group {
        // Rows of one group (stories260K's): 8 rows a call; short rows gain nothing from
        // the streams or the prefetch.
        let rows = out_t.len() / t;
        let mut eight = [0.0f32; 8];
        for i in (0..rows).step_by(8) {
            let m = 8.min(rows - i);
            for r in 0..t {
                q.dot_int8_one_group_rows(first + i, a.row(r), &mut eight[..m]);
                for (k, &v) in eight[..m].iter().enumerate() {
                    out_t[(i + k) * t + r] = v;
                }
            }
        }
        return;
    }
    int8_long_rows(out_t, q, start, n, a, v);
}

/// `int8_rows` of rows of several groups: streamed as variant `v` says, one row product a
/// call.
#[cfg(not(kernel = "wasm"))]
#[inline(always)]
fn int8_long_rows(out_t: &mut [f32], q: &QRef, start: usize, n: usize, a: &QActs, v: Variant) {
    let t = a.q.len() / n;
    let first = start / n;
    let row_bytes = match q.precision {
        crate::quant::Precision::Q4 => n / 2,
        _ => n,
    };
    streamed(out_t.len() / t, v, |i, next| {
        if let Some(j) = next {
            prefetch(&q.values[(first + j) * row_bytes..(first + j + 1) * row_bytes]);
        }
        for (r, o) in out_t[i * t..(i + 1) * t].iter_mut().enumerate() {
            *o = q.dot_int8(start + i * n, a.row(r));
        }
    });
}

/// `int8_rows` of rows of several groups in the page (no prefetch, one stream): the rows
/// in order, 4 a call sharing each load of an input row's activations (`dot_int8_rows`;
/// 2 or 8 a call were slower on the 15M shape in Node, BENCHMARKS.md).
#[cfg(kernel = "wasm")]
#[inline(always)]
fn int8_long_rows(out_t: &mut [f32], q: &QRef, start: usize, n: usize, a: &QActs, _: Variant) {
    const R: usize = 4;
    let t = a.q.len() / n;
    let rows = out_t.len() / t;
    let whole = rows / R * R;
    if t == 1 {
        // decode: out_t is the rows' outputs in order
        let x = a.row(0);
        for i in (0..whole).step_by(R) {
            out_t[i..i + R].copy_from_slice(&q.dot_int8_rows::<R>(start + i * n, x));
        }
        for (i, o) in out_t.iter_mut().enumerate().skip(whole) {
            *o = q.dot_int8(start + i * n, x);
        }
        return;
    }
    for i in (0..whole).step_by(R) {
        for r in 0..t {
            let four = q.dot_int8_rows::<R>(start + i * n, a.row(r));
            for (k, v) in four.into_iter().enumerate() {
                out_t[(i + k) * t + r] = v;
            }
        }
    }
    for i in whole..rows {
        for r in 0..t {
            out_t[i * t + r] = q.dot_int8(start + i * n, a.row(r));
        }
    }
}

/// Rows 0..rows in the order variant `v` reads them: `v.streams` runs of the rows side by
/// side (row i of each run, then row i + 1 of each), each prefetching the row `v.ahead` on
/// in its own run (`next`). More streams keep more of memory's reads in flight at once.
#[inline(always)]
fn streamed(rows: usize, v: Variant, mut f: impl FnMut(usize, Option<usize>)) {
    let s = v.streams.clamp(1, rows.max(1));
    let run = rows.div_ceil(s);
    for i in 0..run {
        for k in 0..s {
            let r = k * run + i;
            if r < rows {
                let ahead = v.ahead > 0 && i + v.ahead < run && r + v.ahead < rows;
                f(r, ahead.then_some(r + v.ahead));
            }
        }
    }
}

/// out[i] = dot(W_i, x) for float32 weight rows `w` (decode, rows longer than the grouped
/// ones): `dot_streamed` a row, in the order and with the prefetch of variant `v` (chosen by
/// measuring: `tune`); the bits are `dot`'s either way.
#[inline(always)]
pub(super) fn f32_rows(out: &mut [f32], w: &[f32], x: &[f32], v: Variant) {
    let n = x.len();
    streamed(out.len(), v, |i, next| {
        if let Some(j) = next {
            prefetch(bytemuck::cast_slice(&w[j * n..(j + 1) * n]));
        }
        out[i] = match v.lead {
            0 => dot_streamed(&w[i * n..(i + 1) * n], x),
            _ => simd::dot_led(&w[i * n..(i + 1) * n], x),
        };
    });
}

/// Asks for `bytes` in cache a line at a time (a hint: it never faults, changes no value).
#[inline(always)]
fn prefetch(bytes: &[u8]) {
    #[cfg(any(kernel = "avx512", kernel = "avx2"))]
    for line in bytes.chunks(64) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing architecturally and never faults.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr() as *const i8) };
    }
    #[cfg(not(any(kernel = "avx512", kernel = "avx2")))]
    let _ = bytes;
}

/// out_t (rows, t) of the float32, f16 and float-activation rows of `ws` from row `first`.
#[inline(always)]
fn float_rows(chunk: &mut [f32], x: &[f32], n: usize, t: usize, ws: &[MatRef], first: usize) {
    {
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
                    RowRef::F16(w) => with_widened(w, |w| dot_rows_into(o, w, x, n)),
                    RowRef::Quant(q, start) => {
                        for (o, x_r) in o.iter_mut().zip(x.chunks_exact(n)) {
                            *o = q.dot(start, x_r);
                        }
                    }
                }
            }
        }
    }
}

/// out[i] = dot(W_i, x) for the weight rows `rows` (decode) that are not float32 (those go
/// through `f32_rows` and `f32_short_rows`): float16 rows widened, quantized rows with
/// float32 activations, one at a time; each row's bits those of [`dot`] on the widened or
/// dequantized row.
#[inline(always)]
fn decode_rows<'a>(out: &mut [f32], rows: impl Iterator<Item = RowRef<'a>>, x: &[f32]) {
    for (o, w_i) in out.iter_mut().zip(rows) {
        *o = match w_i {
            RowRef::F32(w) => dot_streamed(w, x),
            RowRef::F16(w) => with_widened(w, |w| dot_streamed(w, x)),
            RowRef::Quant(q, start) => q.dot(start, x),
        };
    }
}

/// Decode's float32 rows of at most [`GROUPED_ROW_MAX`] floats, `w` the rows one after
/// another (one matrix's): [`WEIGHT_ROWS_A_PASS`] at a time sharing each load of `x`
/// (AVX-512 and wasm SIMD), the rest one at a time; each row's bits those of [`dot`]. Cut
/// straight from the matrix: walked row by row through an iterator and a list of rows held
/// back, as before, stories260K's shape decoded 11,783–12,129 tok/s on one Intel core, and
/// cut straight 16,557–17,020 (BENCHMARKS.md).
#[inline(always)]
fn f32_short_rows(out: &mut [f32], w: &[f32], x: &[f32]) {
    let n = x.len().max(1);
    #[cfg(any(kernel = "avx512", kernel = "wasm"))]
    {
        const R: usize = simd::WEIGHT_ROWS_A_PASS;
        let (mut groups, mut outs) = (w.chunks_exact(R * n), out.chunks_exact_mut(R));
        for (o, g) in outs.by_ref().zip(groups.by_ref()) {
            let rows: [&[f32]; R] = std::array::from_fn(|i| &g[i * n..(i + 1) * n]);
            o.copy_from_slice(&simd::dot_wrows::<R>(rows, x));
        }
        let rest = groups.remainder().chunks_exact(n);
        for (o, w) in outs.into_remainder().iter_mut().zip(rest) {
            *o = dot_streamed(w, x);
        }
    }
    #[cfg(not(any(kernel = "avx512", kernel = "wasm")))]
    for (o, w) in out.iter_mut().zip(w.chunks_exact(n)) {
        *o = dot_streamed(w, x);
    }
}

/// out[r] = dot(w, x_r) for the input rows x_r (n wide) of `x`: the same bits as one `dot`
/// a row; natively four rows at a time share each load of the weight row.
#[inline(always)]
pub(super) fn dot_rows_into(out: &mut [f32], w: &[f32], x: &[f32], n: usize) {
    #[cfg(any(kernel = "avx512", kernel = "avx2"))]
    {
        // Two input rows a pass (an odd one alone); the first pass over the
        // weight row streams it from memory (with the prefetch), the later ones find it in
        // cache.
        let rows: Vec<&[f32]> = x.chunks_exact(n).collect();
        for (g, (o, xs)) in out
            .chunks_mut(simd::ROWS_A_PASS)
            .zip(rows.chunks(simd::ROWS_A_PASS))
            .enumerate()
        {
            // SAFETY: the build enables AVX-512F or AVX2; the kernel reads within every slice, and
            // prefetches are hints that never fault.
            unsafe { simd::rows_pass(o, w, xs, g == 0) };
        }
    }
    #[cfg(not(any(kernel = "avx512", kernel = "avx2")))]
    for (o, x_r) in out.iter_mut().zip(x.chunks_exact(n)) {
        *o = super::dot(w, x_r);
    }
}

/// One weight row: float32, or a quantized matrix and the index of the row's first weight
#[derive(Clone, Copy)]
enum RowRef<'a> {
    F32(&'a [f32]),
    F16(&'a [half::f16]),
    Quant(QRef<'a>, usize),
}

thread_local! {
    /// A thread's widened f16 row (as long as the longest row it has met).
    static WIDE: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `f` on the f16 row `w` widened to float32: the float32 kernels then give the bits of the
/// float32 model whose weights are the rounded ones.
#[inline]
fn with_widened<T>(w: &[half::f16], f: impl FnOnce(&[f32]) -> T) -> T {
    WIDE.with(|cell| {
        let mut wide = cell.borrow_mut();
        if wide.len() < w.len() {
            wide.resize(w.len(), 0.0);
        }
        crate::quant::widen(w, &mut wide[..w.len()]);
        f(&wide[..w.len()])
    })
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
                    MatRef::F16(v) => RowRef::F16(&v[r * n..(r + 1) * n]),
                    MatRef::Quant(q) => RowRef::Quant(q, r * n),
                });
            }
            self.row -= w.len() / n;
            self.m += 1;
        }
        None
    }
}
