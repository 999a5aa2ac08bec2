//! The one matrix product of the forward pass (`matmul`): X (t, n) times a list of matrices,
//! each weight row read once for all t rows, the rows split between threads; decode's
//! matrix-vector product (t = 1) several short rows a pass, batches several input rows a
//! pass (the passes themselves are the build's, `simd`).

use super::rows::{f32_rows, int8_rows};
use super::simd::{Isa, Native};
use crate::par;
use crate::quant::ggml::{row_bytes, row_dot, rows_dot, GActRow, GActs, GRef};
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
    #[cfg(all(kernel = "avx512", target_feature = "avx512vnni"))]
    if super::tiled::takes(ws, n, t) {
        // prefill's q8 products, several weight rows × several input rows a pass
        return super::tiled::matmul(out, x, n, t, ws);
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

/// The activations of the matrices of one call that multiply them in int8. Kept per thread
/// from call to call (`ACTS`): the next call quantizes into the same buffers, so a decode
/// step allocates nothing (`tests/decode_allocations.rs`).
#[derive(Default)]
struct Int8Acts {
    /// x quantized once per group size (the matrices of one call share it)
    aligned: Vec<QActs>,
    /// for matrices whose rows are not whole groups
    shifted: Vec<ShiftedActs>,
    /// for matrices in ggml blocks, once per family
    ggml: Vec<GActs>,
    /// per matrix: which of them it takes
    which: Vec<Option<Which>>,
    /// entries of `aligned`, `shifted` and `ggml` this call filled (the rest are an earlier
    /// call's, kept for their room)
    used: [usize; 3],
}

#[derive(Clone, Copy)]
enum Which {
    Aligned(usize),
    Shifted(usize),
    Ggml(usize),
}

thread_local! {
    static ACTS: std::cell::RefCell<Int8Acts> = std::cell::RefCell::default();
}

/// Entry `i` of `v` refilled by `into`, or a new one made by `new` where there is none yet.
fn reuse<T>(v: &mut Vec<T>, i: usize, into: impl FnOnce(&mut T), new: impl FnOnce() -> T) {
    match v.get_mut(i) {
        Some(a) => into(a),
        None => v.push(new()),
    }
}

impl Int8Acts {
    /// x quantized for each matrix that multiplies it in int8, before the rows split
    /// between threads.
    fn fill(&mut self, x: &[f32], n: usize, ws: &[MatRef]) {
        self.which.clear();
        self.used = [0; 3];
        for w in ws {
            let which = match w {
                MatRef::Quant(q) if q.activations == Activations::Int8 && q.int8_ready(n) => {
                    let [a, ..] = self.used;
                    Some(Which::Aligned(
                        match self.aligned[..a].iter().position(|s| s.group == q.group) {
                            Some(i) => i,
                            None => {
                                let g = q.group;
                                reuse(
                                    &mut self.aligned,
                                    a,
                                    |s| s.quantize_into(x, n, g),
                                    || QActs::quantize(x, n, g),
                                );
                                self.used[0] += 1;
                                a
                            }
                        },
                    ))
                }
                MatRef::Quant(q)
                    if q.activations == Activations::Int8 && q.int8_shifted_ready(n) =>
                {
                    // (rows not whole groups: stories260K's; laid out anew each call)
                    let i = self.used[1];
                    let acts = ShiftedActs::quantize(x, n, q.group, q.len / n);
                    match self.shifted.get_mut(i) {
                        Some(s) => *s = acts,
                        None => self.shifted.push(acts),
                    }
                    self.used[1] += 1;
                    Some(Which::Shifted(i))
                }
                MatRef::Ggml(g) if g.int8() => {
                    let family = g.kind.family();
                    let k = self.used[2];
                    Some(Which::Ggml(
                        match self.ggml[..k].iter().position(|a| a.family == family) {
                            Some(i) => i,
                            None => {
                                reuse(
                                    &mut self.ggml,
                                    k,
                                    |a| a.quantize_into(x, n, family),
                                    || GActs::quantize(x, n, family),
                                );
                                self.used[2] += 1;
                                k
                            }
                        },
                    ))
                }
                _ => None,
            };
            self.which.push(which);
        }
    }
}

/// The longest weight row (in floats) that decode's matrix-vector product takes
/// `Isa::WEIGHT_ROWS_A_PASS` at a time; longer rows go one at a time. Short rows are
/// stories260K's (64 and 172): there the matrices sit in cache and each row's reduction and
/// each load of `x` are a large part of its work, which several rows a pass share. Long
/// rows stream from memory, and there several rows side by side fell behind one row at a
/// time (BENCHMARKS.md).
const GROUPED_ROW_MAX: usize = 256;

/// out_t (d, t): out_t[i][r] = W_i · x_r, W_i the i-th row of the stacked matrices.
fn weight_rows_times(out_t: &mut [f32], x: &[f32], n: usize, t: usize, ws: &[MatRef]) {
    ACTS.with(|kept| match kept.try_borrow_mut() {
        Ok(mut acts) => {
            acts.fill(x, n, ws);
            rows_times(out_t, x, n, t, ws, &acts);
        }
        // (a product inside another's rows on this thread: its own activations)
        Err(_) => {
            let mut acts = Int8Acts::default();
            acts.fill(x, n, ws);
            rows_times(out_t, x, n, t, ws, &acts);
        }
    });
}

/// `weight_rows_times` with the activations quantized.
fn rows_times(out_t: &mut [f32], x: &[f32], n: usize, t: usize, ws: &[MatRef], acts: &Int8Acts) {
    let ahead = super::tune::prefetch_rows();
    // decode's products of long float32 rows are timed while their variants are on trial
    let trial = (t == 1
        && n > GROUPED_ROW_MAX
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
                (MatRef::Ggml(g), Some(Which::Ggml(a))) => {
                    ggml_rows(out, g, row, n, t, &acts.ggml[a])
                }
                (MatRef::F32(w), _) if t == 1 && n > GROUPED_ROW_MAX => {
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

/// out_t (rows, t) of the matrix `g` in ggml blocks from row `first`, each row times each
/// quantized input row of `a`.
#[inline(always)]
fn ggml_rows(out_t: &mut [f32], g: &GRef, first: usize, n: usize, t: usize, a: &GActs) {
    let rb = row_bytes(g.kind, n);
    let rows = g.bytes[first * rb..].chunks_exact(rb);
    if t == 1 {
        let a = a.row(0);
        for (o, w) in out_t.iter_mut().zip(rows) {
            *o = row_dot(g.kind, w, &a);
        }
        return;
    }
    let acts: Vec<GActRow> = (0..t).map(|r| a.row(r)).collect();
    for (o, w) in out_t.chunks_exact_mut(t).zip(rows) {
        rows_dot(g.kind, w, &acts, o);
    }
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
                    RowRef::Ggml(g, r) => with_row(g, r, n, |w| dot_rows_into(o, w, x, n)),
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
            RowRef::F32(w) => Native::dot_streamed(w, x),
            RowRef::F16(w) => with_widened(w, |w| Native::dot_streamed(w, x)),
            RowRef::Ggml(g, r) => with_row(g, r, x.len(), |w| Native::dot_streamed(w, x)),
            RowRef::Quant(q, start) => q.dot(start, x),
        };
    }
}

/// Decode's float32 rows of at most [`GROUPED_ROW_MAX`] floats, `w` the rows one after
/// another (one matrix's): `Isa::WEIGHT_ROWS_A_PASS` at a time sharing each load of `x`,
/// the rest one at a time; each row's bits those of [`dot`](super::dot). Cut straight from
/// the matrix (walking them through `StackedRows` was slower: BENCHMARKS.md).
#[inline(always)]
fn f32_short_rows(out: &mut [f32], w: &[f32], x: &[f32]) {
    const R: usize = Native::WEIGHT_ROWS_A_PASS;
    let n = x.len().max(1);
    let whole = if R > 1 { out.len() / R * R } else { 0 };
    let (grouped, rest) = out.split_at_mut(whole);
    for (o, g) in grouped.chunks_exact_mut(R).zip(w.chunks_exact(R * n)) {
        let rows: [&[f32]; R] = std::array::from_fn(|i| &g[i * n..(i + 1) * n]);
        o.copy_from_slice(&Native::dot_wrows::<R>(rows, x));
    }
    for (o, w) in rest.iter_mut().zip(w[whole * n..].chunks_exact(n)) {
        *o = Native::dot_streamed(w, x);
    }
}

/// out[r] = dot(w, x_r) for the input rows x_r (n wide) of `x`: the same bits as one `dot`
/// a row; `Isa::ROWS_A_PASS` rows a pass share each load of the weight row, the first pass
/// streaming it from memory (the later ones find it in cache).
#[inline(always)]
pub(super) fn dot_rows_into(out: &mut [f32], w: &[f32], x: &[f32], n: usize) {
    const R: usize = Native::ROWS_A_PASS;
    let mut rows = x.chunks_exact(n);
    for (g, o) in out.chunks_mut(R).enumerate() {
        let mut xs: [&[f32]; R] = [&[]; R];
        for (slot, x_r) in xs.iter_mut().zip(rows.by_ref()) {
            *slot = x_r;
        }
        Native::dot_rows(o, w, &xs[..o.len()], g == 0);
    }
}

/// One weight row: float32, or a quantized matrix and the index of the row's first weight
#[derive(Clone, Copy)]
enum RowRef<'a> {
    F32(&'a [f32]),
    F16(&'a [half::f16]),
    Quant(QRef<'a>, usize),
    /// a matrix in ggml blocks and the row's index
    Ggml(GRef<'a>, usize),
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

/// `f` on row `r` (n wide) of `g` dequantized by ggml's rules (float32 activations).
#[inline]
fn with_row<T>(g: GRef, r: usize, n: usize, f: impl FnOnce(&[f32]) -> T) -> T {
    WIDE.with(|cell| {
        let mut wide = cell.borrow_mut();
        if wide.len() < n {
            wide.resize(n, 0.0);
        }
        g.row_into(r, &mut wide[..n]);
        f(&wide[..n])
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
                    MatRef::Ggml(g) => RowRef::Ggml(g, r),
                });
            }
            self.row -= w.len() / n;
            self.m += 1;
        }
        None
    }
}
