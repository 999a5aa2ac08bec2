//! Attention against the cache: one query head's softmax weights over the cached positions
//! and their weighted sum of the values (`attend_head`), and several query heads of a row
//! together (`attend_heads`), each head's bits those of `attend_head` alone.

use super::simd::{weighted_queries, Isa, Native};
use super::softmax;

/// One query head against the cached keys/values of one layer, positions 0..=pos:
/// scores = q·k_t / sqrt(head_size), softmax, out = Σ_t att_t · v_t.
/// `keys`/`values` are the layer's cache rows (position-major, kv_dim wide); `offset` selects
/// the K/V head this query head shares (grouped-query attention). [`attend_heads`] with one
/// head.
#[allow(clippy::too_many_arguments)]
pub fn attend_head(
    out: &mut [f32],
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    kv_dim: usize,
    offset: usize,
    pos: usize,
    att: &mut [f32],
) {
    attend_heads::<1>(out, q, keys, values, kv_dim, [offset], pos, att);
}

/// G query heads of one row against the cache at once: `q` and `out` hold the G heads one
/// after another (head_size = q.len() / G each), `offsets[g]` is head g's K/V head in a
/// cache row, `att` has room for G × (pos + 1) weights (head g's at g·(pos + 1), left there
/// for the probe). Each head's numbers are [`attend_head`]'s alone, bit for bit: the
/// weighted sum of the values adds in position order per output element whatever G is;
/// only the G heads' running sums advance side by side, so the adder is not waiting on one
/// chain (a head of 8 is one chain of dependent adds, a position at a time, and these
/// chains were a large part of a stories260K step: BENCHMARKS.md, "What moved stories260K's
/// decode").
#[allow(clippy::too_many_arguments)]
pub fn attend_heads<const G: usize>(
    out: &mut [f32],
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    kv_dim: usize,
    offsets: [usize; G],
    pos: usize,
    att: &mut [f32],
) {
    let hs = q.len() / G;
    let n = pos + 1;
    let scale = 1.0 / (hs as f32).sqrt();
    let att = &mut att[..G * n];
    for (g, att) in att.chunks_exact_mut(n).enumerate() {
        let (q, offset) = (&q[g * hs..(g + 1) * hs], offsets[g]);
        Native::scores(att, q, &keys[offset..], kv_dim, scale);
        softmax(att);
    }
    let att = &*att;
    // out = Σ_t att_t · v_t, accumulated per output element in t order, over 8-wide slices
    // of the heads: the build's vectors (`Isa::weighted_values`) hold the G heads' sums side
    // by side, so the adder is not waiting on one head's chain of dependent adds (a head of 8
    // is one chain, a position at a time, a large part of a stories260K step); the
    // slices left over go element by element, in the same order. Every value read ends
    // within `values` (the last at (n − 1)·kv_dim + the largest offset + hs), or everything
    // goes element by element, checked.
    let end = offsets.iter().max().map_or(0, |&o| o + hs);
    let fits = end <= kv_dim && (n - 1) * kv_dim + end <= values.len();
    let chunks = if fits { hs / 8 } else { 0 };
    for c in 0..chunks {
        // SAFETY: `att` holds G·n weights and the reads end within `values` (`fits`).
        let sums =
            unsafe { Native::weighted_values(att, n, values.as_ptr().add(c * 8), kv_dim, offsets) };
        for (g, s) in sums.iter().enumerate() {
            out[g * hs + c * 8..][..8].copy_from_slice(s);
        }
    }
    for i in chunks * 8..hs {
        let mut acc = [0.0f32; G];
        for t in 0..n {
            for (g, acc) in acc.iter_mut().enumerate() {
                *acc += att[g * n + t] * values[t * kv_dim + offsets[g] + i];
            }
        }
        for (g, acc) in acc.iter().enumerate() {
            out[g * hs + i] = *acc;
        }
    }
}

/// Positions of keys whose scores the query rows of [`attend_queries`] take in turn (a
/// multiple of every build's score group: the same groups as a whole row's).
const KEYS_A_BLOCK: usize = 64;

/// Q query rows of one head against the cache at once (prefill): row i at position
/// `pos[i]` (the cache holding 0..=max), `q[i]` its head's query, `out` the Q heads' outputs
/// one after another, `att` room for Q × (max + 1) weights. Each row's numbers are
/// [`attend_head`]'s alone, bit for bit: its scores in the same groups of positions, its
/// softmax, and each output element's sum over the positions in order. The rows share
/// each load of the cache: a block of keys is scored for every row while it sits in L1,
/// and each value slice is read once for all of them (row by row, every prefill row read
/// the whole cache of its heads, most of a long prefill's attention: BENCHMARKS.md).
#[allow(clippy::too_many_arguments)]
pub fn attend_queries<const Q: usize>(
    out: &mut [f32],
    q: [&[f32]; Q],
    keys: &[f32],
    values: &[f32],
    kv_dim: usize,
    offset: usize,
    pos: [usize; Q],
    att: &mut [f32],
) {
    let hs = q[0].len();
    let n = pos.map(|p| p + 1);
    let (lo, hi) = (n.iter().min().copied(), n.iter().max().copied());
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return;
    };
    let scale = 1.0 / (hs as f32).sqrt();
    let mut rows = att[..Q * hi].chunks_exact_mut(hi);
    let mut att: [&mut [f32]; Q] = std::array::from_fn(|i| match rows.next() {
        Some(row) => &mut row[..n[i]],
        None => &mut [],
    });
    for t0 in (0..hi).step_by(KEYS_A_BLOCK) {
        for (i, att) in att.iter_mut().enumerate() {
            if t0 < n[i] {
                let t1 = (t0 + KEYS_A_BLOCK).min(n[i]);
                let k = &keys[t0 * kv_dim + offset..];
                Native::scores(&mut att[t0..t1], q[i], k, kv_dim, scale);
            }
        }
    }
    att.iter_mut().for_each(|a| softmax(a));
    let att = att.map(|a| &*a);
    // The values 8 floats at a time for all rows up to the shortest, then each row's own
    // last positions, as `attend_heads` checked that every read lies in the cache.
    let fits = offset + hs <= kv_dim && (hi - 1) * kv_dim + offset + hs <= values.len();
    let chunks = if fits { hs / 8 } else { 0 };
    for c in 0..chunks {
        let mut acc = [[0.0f32; 8]; Q];
        // SAFETY: every read ends within `values` (`fits`); att[i] holds n[i] ≥ lo weights.
        unsafe {
            let v = values.as_ptr().add(offset + c * 8);
            weighted_queries(&mut acc, att, 0, lo, v, kv_dim);
            for (i, acc) in acc.iter_mut().enumerate() {
                let one = std::array::from_mut(acc);
                weighted_queries(one, [att[i]], lo, n[i], v, kv_dim);
            }
        }
        for (i, acc) in acc.iter().enumerate() {
            out[i * hs + c * 8..][..8].copy_from_slice(acc);
        }
    }
    for i in 0..Q {
        for e in chunks * 8..hs {
            let mut acc = 0.0f32;
            for (t, &a) in att[i].iter().enumerate() {
                acc += a * values[t * kv_dim + offset + e];
            }
            out[i * hs + e] = acc;
        }
    }
}
