//! Each panel's chart from its view: the distribution, the chain's stages, the beam tree, the
//! KV cache, the compared columns, the three precisions, the speculative cycle, throughput
//! and the roofline, the serving timelines.

use super::plot::*;
use super::*;
use crate::protocol::*;
use decoding_engine::beam::BeamNode;

/// The next-token distribution: its `n` most likely tokens (final probability, and before
/// the stage that removed a token).
pub fn distribution(t: &TraceView, piece: &dyn Fn(u32) -> String, n: usize) -> Drawing {
    let ids: Vec<u32> = t.order.iter().take(n.max(1)).copied().collect();
    let labels: Vec<String> = ids.iter().map(|&id| piece(id)).collect();
    let kept: Vec<f64> = ids.iter().map(|&i| t.probs[i as usize] as f64).collect();
    let ghost: Vec<f64> = ids.iter().map(|&i| t.ghost[i as usize] as f64).collect();
    let title = match t.step {
        Some(s) => format!(
            "Next-token distribution at step {s}: entropy {:.3} nats, {} tokens kept",
            t.entropy, t.kept
        ),
        None => format!("Toy distribution: entropy {:.3} nats", t.entropy),
    };
    bars(
        &title,
        "token (most likely first)",
        "probability",
        &labels,
        &[("final p", kept), ("p before removal", ghost)],
    )
}

/// Each stage of the chain: the probability of the chart's tokens after it.
pub fn stages(t: &TraceView, piece: &dyn Fn(u32) -> String) -> Drawing {
    let labels: Vec<String> = t.chart_ids.iter().map(|&id| piece(id)).collect();
    // The stages that changed something, two charts a row; the neutral ones named in one
    // line (each of them would be a chart of identical bars: eight stacked made a PNG
    // 7,148 px tall, issue 32).
    let neutral: Vec<&str> = t
        .stages
        .iter()
        .filter(|s| !s.active)
        .map(|s| s.stage.name())
        .collect();
    let parts = t
        .stages
        .iter()
        .filter(|s| s.active)
        .map(|s| {
            bars(
                &format!(
                    "{} ({}){}: {} kept",
                    s.stage.name(),
                    s.setting,
                    if s.active { "" } else { ", inactive" },
                    s.kept
                ),
                "token",
                "probability",
                &labels,
                &[
                    ("before", s.before.iter().map(|&v| v as f64).collect()),
                    ("after", s.after.iter().map(|&v| v as f64).collect()),
                ],
            )
        })
        .collect();
    let mut d = Drawing::grid("The sampling chain, stage by stage", parts, 2);
    if !neutral.is_empty() {
        let y = d.height + 16.0;
        d.shapes.push(text(
            12.0,
            y,
            format!("Neutral here (no change): {}", neutral.join(", ")),
            12.0,
            Anchor::Start,
        ));
        d.height = y + 12.0;
    }
    d
}

/// The beam tree: one column per depth, each node its piece and Σ log p; the best beam's
/// path in the accent colour.
pub fn beam_tree(
    nodes: &[BeamNode],
    best_node: Option<usize>,
    piece: &dyn Fn(u32) -> String,
) -> Drawing {
    let best = best_node.map_or(Vec::new(), |b| decoding_engine::beam::ancestry(nodes, b));
    let depth = nodes.iter().map(|n| n.depth).max().unwrap_or(0);
    let mut rows = vec![0usize; depth + 1];
    let mut at = vec![(0.0, 0.0); nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        let r = rows[n.depth];
        rows[n.depth] += 1;
        at[i] = (40.0 + n.depth as f64 * 110.0, 60.0 + r as f64 * 34.0);
    }
    let tall = rows.iter().copied().max().unwrap_or(1) as f64;
    let mut d = Drawing::new(
        (80.0 + (depth + 1) as f64 * 110.0).max(420.0),
        90.0 + tall * 34.0,
        format!(
            "Beam tree: {} nodes over {depth} levels (Σ log p beside each)",
            nodes.len()
        ),
    );
    d.shapes.push(text(
        12.0,
        40.0,
        "depth → (tokens generated)",
        11.0,
        Anchor::Start,
    ));
    for (i, n) in nodes.iter().enumerate() {
        if let Some(p) = n.parent.filter(|&p| p < nodes.len()) {
            let on = best.contains(&i) && best.contains(&p);
            d.shapes.push(Shape::Line {
                x1: at[p].0 + 4.0,
                y1: at[p].1,
                x2: at[i].0 - 4.0,
                y2: at[i].1,
                stroke: if on { ACCENT } else { LINE },
                width: if on { 2.5 } else { 1.0 },
                dashed: matches!(n.status, decoding_engine::beam::NodeStatus::Pruned),
            });
        }
    }
    for (i, n) in nodes.iter().enumerate() {
        let (x, y) = at[i];
        let on = best.contains(&i);
        d.shapes.push(Shape::Circle {
            x,
            y,
            r: 4.0,
            fill: if on { ACCENT } else { GREY },
        });
        let label = match n.token {
            Some(t) => format!("{} {:.2}", piece(t), n.cum_logprob),
            None => "prompt".to_string(),
        };
        d.shapes
            .push(text(x + 6.0, y - 6.0, label, 10.0, Anchor::Start));
    }
    d
}

/// The KV cache's bytes against the positions held: the formula's line over the context and
/// this sequence's point.
pub fn kv(cfg: &decoding_engine::Config, n: usize) -> Drawing {
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

/// The compared columns: each column's next distribution.
pub fn columns(v: &ColumnsView, piece: &dyn Fn(u32) -> String) -> Drawing {
    let parts = v
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let labels: Vec<String> = c.top.iter().map(|&(id, _)| piece(id)).collect();
            let knobs = crate::page::column_text(&c.settings);
            bars(
                &format!(
                    "Column {} ({}): {} tokens, entropy {:.3} nats",
                    i + 1,
                    if knobs.is_empty() {
                        "defaults".to_string()
                    } else {
                        knobs
                    },
                    c.steps.len(),
                    c.entropy
                ),
                "token",
                "probability",
                &labels,
                &[("next p", c.top.iter().map(|&(_, p)| p).collect())],
            )
        })
        .collect();
    Drawing::stack(
        &format!(
            "Same θ, different config — differing knobs: {}",
            v.differ.join(", ")
        ),
        parts,
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

/// Throughput against the batch size, and the roofline of the measured machine.
pub fn sweep(v: &SweepView) -> Drawing {
    let b = |f: &dyn Fn(&decoding_engine::batching::Throughput) -> f64| -> Vec<(f64, f64)> {
        v.rows.iter().map(|r| (r.batch as f64, f(r))).collect()
    };
    let tp = xy(
        &format!("Tokens per second against batch size B ({})", v.backend),
        "batch size B",
        "tokens / s",
        &[
            XySeries {
                name: "prefill",
                points: b(&|r| r.prefill_tokens_per_s),
                line: true,
                labels: vec![],
            },
            XySeries {
                name: "decode",
                points: b(&|r| r.decode_tokens_per_s),
                line: true,
                labels: vec![],
            },
        ],
        true,
        false,
    );
    let roof = v.peaks.roof;
    let ridge = roof.ridge();
    let line: Vec<(f64, f64)> = [ridge / 100.0, ridge, ridge * 100.0]
        .iter()
        .map(|&i| (i, roof.attainable(i)))
        .collect();
    let point = |r: &decoding_engine::batching::Throughput, decode: bool| {
        let (c, ms, passes) = if decode {
            (&r.decode, r.decode_ms, r.gen_tokens.max(1) as f64)
        } else {
            (&r.prefill, r.prefill_ms, 1.0)
        };
        (
            c.intensity(),
            c.flops as f64 * passes / (ms / 1e3).max(1e-12),
        )
    };
    let rl = xy(
        &format!("Roofline of this machine: ridge {ridge:.1} FLOP/byte"),
        "arithmetic intensity (FLOP / byte)",
        "FLOP / s",
        &[
            XySeries {
                name: "attainable",
                points: line,
                line: true,
                labels: vec![],
            },
            XySeries {
                name: "prefill",
                points: v.rows.iter().map(|r| point(r, false)).collect(),
                line: false,
                labels: v.rows.iter().map(|r| format!("P{}", r.batch)).collect(),
            },
            XySeries {
                name: "decode",
                points: v.rows.iter().map(|r| point(r, true)).collect(),
                line: false,
                labels: v.rows.iter().map(|r| format!("D{}", r.batch)).collect(),
            },
        ],
        true,
        true,
    );
    Drawing::stack("Batching and the two regimes", vec![tp, rl])
}

/// Both policies' requests: steps waiting, to the first token, and decoding.
pub fn serve(v: &ServeView) -> Drawing {
    let part = |name: &str, r: &decoding_engine::batching::SimResult| {
        let labels: Vec<String> = r.served.iter().map(|s| format!("#{}", s.id)).collect();
        bars(
            &format!(
                "{name}: {} passes, occupancy {:.0} %",
                r.passes,
                r.occupancy * 100.0
            ),
            "request",
            "steps",
            &labels,
            &[
                (
                    "waiting",
                    r.served
                        .iter()
                        .map(|s| s.admitted.saturating_sub(s.arrival) as f64)
                        .collect(),
                ),
                (
                    "to first token",
                    r.served
                        .iter()
                        .map(|s| s.first_token.saturating_sub(s.admitted) as f64)
                        .collect(),
                ),
                (
                    "decoding",
                    r.served
                        .iter()
                        .map(|s| s.finished.saturating_sub(s.first_token) as f64)
                        .collect(),
                ),
            ],
        )
    };
    Drawing::stack(
        &format!(
            "Serving {} requests through {} slots",
            v.requests.len(),
            v.slots
        ),
        vec![
            part("continuous", &v.continuous),
            part("static", &v.static_),
        ],
    )
}
