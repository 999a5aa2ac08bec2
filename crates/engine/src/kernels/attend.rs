//! Attention against the cache: one query head's softmax weights over the cached positions
//! and their weighted sum of the values (`attend_head`), and several query heads of a row
//! together (`attend_heads`), each head's bits those of `attend_head` alone.

use super::simd::{Isa, Native};
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
