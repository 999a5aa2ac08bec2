//! Prefill's attention: many rows of one sequence, head by head, several rows at a time
//! sharing each load of the head's cache (`kernels::attend_queries`), where decode's path
//! (`Transformer::attend_rows`) takes each row's heads against the whole cache in turn.
//! Every row's numbers are the same bits either way.

use super::{KvCache, Row, Transformer, SCORES};
use crate::kernels::attend_queries;
use crate::par;

/// Rows of one sequence from which a pass attends head by head.
pub(super) const ROWS: usize = 16;

/// Query rows a call of `attend_queries` takes.
const ROWS_AT_ONCE: usize = 8;

impl Transformer {
    /// `attend_rows` for `rows` of one sequence (its `cache`, their K/V in it already), no
    /// probe: `xb` (rows, dim) gets each row's heads' weighted values.
    pub(super) fn attend_prefill(
        &self,
        l: usize,
        xb: &mut [f32],
        q: &[f32],
        cache: &KvCache,
        rows: &[Row],
    ) {
        let c = &self.config;
        let (dim, hs, kv_dim, n) = (c.dim, c.head_size(), c.kv_dim(), rows.len());
        let kv_mul = c.kv_mul();
        let ctx = rows.iter().map(|r| r.pos + 1).max().unwrap_or(1);
        let (keys, values) = cache.layer(l);
        // (head, row, hs): a head's rows one after another, so a thread's run of units
        // takes a head's rows together.
        let mut by_head = vec![0.0f32; c.n_heads * n * hs];
        par::chunks(&mut by_head, hs, 2 * ctx * hs, |first, out| {
            SCORES.with_borrow_mut(|att| {
                att.resize((ROWS_AT_ONCE * ctx).max(att.len()), 0.0);
                let units = out.len() / hs;
                let mut u = 0;
                while u < units {
                    let (h, i) = ((first + u) / n, (first + u) % n);
                    let left = (units - u).min(n - i);
                    let m = [ROWS_AT_ONCE, 4, 2]
                        .into_iter()
                        .find(|&m| m <= left)
                        .unwrap_or(1);
                    let o = &mut out[u * hs..(u + m) * hs];
                    let offset = (h / kv_mul) * hs;
                    macro_rules! rows {
                        ($m:literal) => {
                            attend_queries::<$m>(
                                o,
                                std::array::from_fn(|j| &q[(i + j) * dim + h * hs..][..hs]),
                                keys,
                                values,
                                kv_dim,
                                offset,
                                std::array::from_fn(|j| rows[i + j].pos),
                                att,
                            )
                        };
                    }
                    match m {
                        ROWS_AT_ONCE => rows!(8),
                        4 => rows!(4),
                        2 => rows!(2),
                        _ => rows!(1),
                    }
                    u += m;
                }
            })
        });
        for (k, o) in by_head.chunks_exact(hs).enumerate() {
            let (h, i) = (k / n, k % n);
            xb[i * dim + h * hs..][..hs].copy_from_slice(o);
        }
    }
}
