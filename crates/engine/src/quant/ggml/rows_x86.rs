//! A batch's products of k-quant blocks with AVX-512 (prefill, verification): each weight
//! block unpacked once into registers (its 256 unsigned values and the scale of each 16) and
//! multiplied by every input row, rather than unpacked again for each row. The integers and
//! the float order are `dot.rs`'s, so every row gets the bits it gets alone (tested).

use super::blocks::f16_at;
use super::dot_x86::{bias6, dot4, mins45, unpack45, unpack6};
use super::{GActRow, Kind};

/// out[r] = `row` · `acts[r]` for Q4_K, Q5_K and Q6_K rows (false for other types, left to
/// the caller).
pub(super) fn rows(kind: Kind, row: &[u8], acts: &[GActRow], out: &mut [f32]) -> bool {
    let size = match kind {
        Kind::Q4_K => 144,
        Kind::Q5_K => 176,
        Kind::Q6_K => 210,
        _ => return false,
    };
    out.fill(0.0);
    for (i, b) in row.chunks_exact(size).enumerate() {
        // each row's block i: 256 activations, 16 sums (checked here, read by pointer below)
        let block = |a: &GActRow| {
            let (q, bs) = (&a.qs[256 * i..256 * i + 256], &a.bsums[16 * i..16 * i + 16]);
            (q.as_ptr(), bs.as_ptr(), a.d[i])
        };
        // SAFETY: AVX-512 is in the build (cfg kernel); `b` is a whole block of `size`
        // bytes (chunks_exact) and each row's reads are the slices `block` checked.
        unsafe {
            if kind == Kind::Q6_K {
                let (w, scales) = unpack6(b.as_ptr());
                let d = f16_at(b, 208);
                for (o, a) in out.iter_mut().zip(acts) {
                    let (q, bs, dx) = block(a);
                    let isum = dot4(&w, q) - 32 * bias6(scales, bs);
                    *o += (dx * d) * isum as f32;
                }
            } else {
                let qh = (kind == Kind::Q5_K).then(|| b.as_ptr().add(16));
                let qs = b.as_ptr().add(if kind == Kind::Q5_K { 48 } else { 16 });
                let (w, sm) = unpack45(b.as_ptr(), qs, qh);
                let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
                for (o, a) in out.iter_mut().zip(acts) {
                    let (q, bs, dx) = block(a);
                    let (isum, msum) = (dot4(&w, q), mins45(sm, bs));
                    *o += (dx * d) * isum as f32;
                    *o -= (dx * dmin) * msum as f32;
                }
            }
        }
    }
    true
}
