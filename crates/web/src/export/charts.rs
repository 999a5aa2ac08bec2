//! Each panel's chart from its view: the KV cache's bytes, the three precisions, the
//! speculative cycle (the charts whose geometry the page shares are in `figures`, `grids`
//! and `panels`).

use super::plot::*;
use super::*;
use crate::protocol::*;

/// The KV cache: its grid as the page draws it, and its bytes against the positions held.
pub fn kv(cfg: &decoding_engine::Config, n: usize) -> Drawing {
    Drawing::stack("The KV cache", vec![kv_grid(cfg, n), kv_bytes(cfg, n)])
}

/// The KV cache's bytes against the positions held: the formula's line over the context and
/// this sequence's point.
fn kv_bytes(cfg: &decoding_engine::Config, n: usize) -> Drawing {
    let kv_dim = cfg.kv_dim();
    let bytes = |n: usize| {
        decoding_engine::kv_cache::cache_bytes_formula(
            n as u64,
            cfg.n_layers as u64,
            kv_dim as u64,
            4,
        ) as f64
    };
    let line: Vec<(f64, f64)> = (0..=8)
        .map(|i| {
            let n = cfg.seq_len * i / 8;
            (n as f64, bytes(n))
        })
        .collect();
    xy(
        &format!(
            "KV cache: 2 × n × {} layers × {kv_dim} × 4 bytes; n = {n} holds {} bytes",
            cfg.n_layers,
            decoding_engine::units::thousands(bytes(n) as u64)
        ),
        "positions cached n",
        "bytes",
        &[
            XySeries {
                name: "2·n·N_layers·d·4",
                points: line,
                line: true,
                labels: vec![],
            },
            XySeries {
                name: "this sequence",
                points: vec![(n as f64, bytes(n))],
                line: false,
                labels: vec![format!("n = {n}")],
            },
        ],
        false,
        false,
    )
}

/// f32, q8 and q4: each token's probability under the three precisions.
pub fn quant(q: &QuantView) -> Drawing {
    let labels: Vec<String> = q
        .tokens
        .iter()
        .map(|t| crate::page::piece_text(&t.piece, true, Some(10)))
        .collect();
    let series: Vec<(&str, Vec<f64>)> = q
        .precisions
        .iter()
        .enumerate()
        .map(|(k, p)| {
            (
                p.precision.name(),
                q.tokens
                    .iter()
                    .map(|t| t.p.get(k).copied().unwrap_or(0.0))
                    .collect(),
            )
        })
        .collect();
    bars(
        &format!("The same θ at three precisions, position {}", q.position),
        "token",
        "probability",
        &labels,
        &series,
    )
}

/// The last speculative cycle: p (target) and q (draft) of each drafted token.
pub fn spec(s: &SpecView) -> Option<Drawing> {
    let c = s.last.as_ref()?;
    let labels: Vec<String> = c
        .positions
        .iter()
        .map(|p| crate::page::piece_text(&p.piece, true, Some(10)))
        .collect();
    Some(bars(
        &format!(
            "Speculative cycle {}: {} of {} drafted tokens accepted (α = {:.3})",
            c.index,
            c.accepted,
            c.drafted.len(),
            s.alpha
        ),
        "drafted token",
        "probability",
        &labels,
        &[
            ("p (target)", c.positions.iter().map(|p| p.p).collect()),
            ("q (draft)", c.positions.iter().map(|p| p.q).collect()),
            (
                "min(p, q)",
                c.positions.iter().map(|p| p.p.min(p.q)).collect(),
            ),
        ],
    ))
}
