//! The KV cache's grid and the beam tree, placed by the page's own geometry
//! ([`crate::geometry::kv`], [`crate::geometry::beam`]).

use super::plot::{legend_with, PLOT_L, PLOT_T};
use super::*;
use crate::geometry::beam::Layout;
use crate::geometry::kv as kg;
use crate::geometry::Frame;
use decoding_engine::beam::{BeamNode, NodeStatus};

/// The page's colours of the cache's slots, and of V (`--v`; K is the accent).
const SLOT: &str = "#f0f1f6";
const VALUE: &str = "#7b4fc9";

/// The cache as the page draws it: a K and a V row per layer, `n` of the context's
/// positions filled.
pub fn kv_grid(cfg: &decoding_engine::Config, n: usize) -> Drawing {
    let pitch = 20.0;
    let frame = Frame::new(PLOT_L, PLOT_T, 400.0, cfg.n_layers as f64 * 2.0 * pitch);
    let mut d = Drawing::new(
        frame.right() + 30.0,
        frame.bottom() + 40.0,
        format!(
            "The cache: {n} of {} positions filled in each of {} layers, for keys and values",
            cfg.seq_len, cfg.n_layers
        ),
    );
    for r in kg::grid(cfg.n_layers, n, cfg.seq_len, frame) {
        d.shapes.push(text(
            frame.left - 8.0,
            r.label_y,
            r.label,
            11.0,
            Anchor::End,
        ));
        for (b, fill) in [
            (r.slots, SLOT),
            (r.filled, if r.value { VALUE } else { ACCENT }),
        ] {
            d.shapes.push(Shape::Rect {
                x: b.x,
                y: b.y,
                w: b.w,
                h: b.h,
                fill,
            });
        }
    }
    let y = d.height - 12.0;
    legend_with(&mut d, &[("K", ACCENT), ("V", VALUE)], y);
    d
}

/// Where the exported tree starts: under the title and the axis's line.
pub(super) const TREE_ORIGIN: (f64, f64) = (0.0, 44.0);

/// The beam tree as the page lays it out (its last levels, a level a column, older ones
/// collapsed into a line), each node its piece and Σ log p; the best beam's path in the
/// accent colour, pruned branches dashed.
pub fn beam_tree(
    nodes: &[BeamNode],
    best_node: Option<usize>,
    piece: &dyn Fn(u32) -> String,
) -> Drawing {
    let best = best_node.map_or(Vec::new(), |b| decoding_engine::beam::ancestry(nodes, b));
    let depth = nodes.iter().map(|n| n.depth).max().unwrap_or(0);
    let at = Layout::new(depth, nodes, TREE_ORIGIN);
    let shown = &nodes[at.start..];
    let (w, h) = at.size(false);
    let mut d = Drawing::new(
        (TREE_ORIGIN.0 + w).max(420.0),
        TREE_ORIGIN.1 + h,
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
    if at.first_depth > 0 {
        d.shapes.push(text(
            TREE_ORIGIN.0 + 4.0,
            TREE_ORIGIN.1 + 18.0,
            format!("… {} earlier levels", at.first_depth),
            11.0,
            Anchor::Start,
        ));
    }
    for (i, n) in shown.iter().enumerate() {
        let Some(p) = n.parent.and_then(|p| p.checked_sub(at.start)) else {
            continue;
        };
        let on = best.contains(&n.id) && n.parent.is_some_and(|p| best.contains(&p));
        let ((x1, y1), (x2, y2)) = (at.pos(p), at.pos(i));
        d.shapes.push(Shape::Line {
            x1,
            y1,
            x2,
            y2,
            stroke: if on { ACCENT } else { LINE },
            width: if on { 2.5 } else { 1.0 },
            dashed: n.status == NodeStatus::Pruned,
        });
    }
    for (i, n) in shown.iter().enumerate() {
        let (x, y) = at.pos(i);
        d.shapes.push(Shape::Circle {
            x,
            y,
            r: 6.0,
            fill: if best.contains(&n.id) { ACCENT } else { GREY },
        });
        let label = n.token.map_or_else(|| "prompt".to_string(), piece);
        d.shapes
            .push(text(x + 9.0, y - 4.0, label, 11.0, Anchor::Start));
        let mut lp = text(
            x + 9.0,
            y + 12.0,
            format!("{:.2}", n.cum_logprob),
            10.0,
            Anchor::Start,
        );
        if let Shape::Text { fill, .. } = &mut lp {
            *fill = MUTED;
        }
        d.shapes.push(lp);
    }
    d
}

#[cfg(test)]
#[path = "grids_tests.rs"]
mod tests;
