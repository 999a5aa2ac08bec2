//! Decode's loops over the weight rows of one matrix, in the order and with the prefetch of
//! a measured [`Variant`] (`tune` measures which is fastest on this machine): float32 rows
//! (`f32_rows`) and int8 rows (`int8_rows`). A variant changes the order rows are read and
//! what is prefetched, never a value: every row's product is the build's kernel's.

use super::simd::{Isa, Native};
use crate::quant::simd::{Native as QNative, QuantIsa};
use crate::quant::{QActs, QRef};

/// How a decode loop reads its weight rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Variant {
    /// runs of rows read side by side (memory keeps more reads in flight)
    pub streams: usize,
    /// rows ahead each run prefetches (0: none)
    pub ahead: usize,
    /// bytes ahead of its loads a float32 row's loop prefetches, a line each step (0: none;
    /// AVX-512 builds: the dot product's loop, 128 bytes a step)
    pub lead: usize,
}

pub const fn v(streams: usize, ahead: usize) -> Variant {
    Variant {
        streams,
        ahead,
        lead: 0,
    }
}

/// `streams` runs, each row's loop prefetching `lead` bytes ahead.
pub const fn led(streams: usize, lead: usize) -> Variant {
    Variant {
        streams,
        ahead: 0,
        lead,
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = if self.streams == 1 { "" } else { "s" };
        match (self.ahead, self.lead) {
            (0, 0) => write!(f, "{} stream{s}, no prefetch", self.streams),
            (a, 0) => write!(f, "{} stream{s}, {a} rows ahead", self.streams),
            (0, l) => write!(f, "{} stream{s}, {l} bytes ahead in the row", self.streams),
            (a, l) => write!(
                f,
                "{} stream{s}, {a} rows and {l} bytes ahead",
                self.streams
            ),
        }
    }
}

/// out_t (rows, t) of the int8 matrix `q` from weight `start` on: one row product a weight
/// row and input row (`QRef::dot_int8`), in the order and with the prefetch of variant `v`
/// (chosen by measuring: `tune`); the bits are the same.
#[inline(always)]
pub fn int8_rows(out_t: &mut [f32], q: &QRef, start: usize, n: usize, a: &QActs, v: Variant) {
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
/// call; where the build's kernel takes several rows a call sharing each load of an input
/// row's activations (`QuantIsa::INT8_ROWS_A_CALL`: the page's, which has no prefetch) and
/// the variant reads the rows in order, that many rows a call.
#[inline(always)]
fn int8_long_rows(out_t: &mut [f32], q: &QRef, start: usize, n: usize, a: &QActs, v: Variant) {
    const R: usize = QNative::INT8_ROWS_A_CALL;
    if R > 1 && v.streams == 1 && v.ahead == 0 {
        return int8_rows_a_call::<R>(out_t, q, start, n, a);
    }
    let t = a.q.len() / n;
    let first = start / n;
    let row_bytes = match q.precision {
        crate::quant::Precision::Q4 => n / 2,
        _ => n,
    };
    streamed(out_t.len() / t, v, |i, next| {
        if let Some(j) = next {
            Native::prefetch(&q.values[(first + j) * row_bytes..(first + j + 1) * row_bytes]);
        }
        for (r, o) in out_t[i * t..(i + 1) * t].iter_mut().enumerate() {
            *o = q.dot_int8(start + i * n, a.row(r));
        }
    });
}

/// `int8_long_rows` R rows a call (`QRef::dot_int8_rows`), the rows in order.
#[inline(always)]
fn int8_rows_a_call<const R: usize>(
    out_t: &mut [f32],
    q: &QRef,
    start: usize,
    n: usize,
    a: &QActs,
) {
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
pub fn f32_rows(out: &mut [f32], w: &[f32], x: &[f32], v: Variant) {
    let n = x.len();
    streamed(out.len(), v, |i, next| {
        if let Some(j) = next {
            Native::prefetch(bytemuck::cast_slice(&w[j * n..(j + 1) * n]));
        }
        out[i] = match v.lead {
            0 => Native::dot_streamed(&w[i * n..(i + 1) * n], x),
            _ => Native::dot_led(&w[i * n..(i + 1) * n], x),
        };
    });
}
