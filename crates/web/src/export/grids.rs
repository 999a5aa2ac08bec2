//! The KV cache's grid and the beam tree, placed by the page's own geometry
//! ([`crate::geometry::kv`], [`crate::geometry::beam`]).

use super::plot::{legend_with, PLOT_L, PLOT_T};
use super::*;
use crate::geometry::beam::{paths, Layout, Paths};
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

/// Greedy's run beside the search: its tokens and its cumulative log p after each (the
/// beam view's `greedy_tokens` and `greedy_cum`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Greedy<'a> {
    pub tokens: &'a [u32],
    pub cum: &'a [f64],
}

/// The colour of greedy's path (the page's `--ok`).
const GREEDY: &str = "#2e8b57";

/// The beam tree as the page lays it out (its last levels, a level a column, older ones
/// collapsed into a line), each node its piece and Σ log p; the best beam's path in the
/// accent colour, greedy's in green (dashed on its own row once beam search pruned it),
/// pruned branches dashed.
pub fn beam_tree(
    nodes: &[BeamNode],
    best_node: Option<usize>,
    greedy: Greedy,
    piece: &dyn Fn(u32) -> String,
) -> Drawing {
    let paths = paths(best_node, greedy.tokens, nodes);
    let depth = nodes.iter().map(|n| n.depth).max().unwrap_or(0);
    let at = Layout::new(depth, nodes, TREE_ORIGIN);
    let off_tree = at.greedy_off_tree(&paths, greedy.tokens.len(), depth);
    let (w, h) = at.size(!off_tree.is_empty());
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
    tree_edges(&mut d, &at, &nodes[at.start..], &paths);
    for (i, n) in nodes[at.start..].iter().enumerate() {
        let fill = match (paths.best[n.id], paths.greedy[n.id]) {
            (true, _) => ACCENT,
            (false, true) => GREEDY,
            _ => GREY,
        };
        let label = n.token.map_or_else(|| "prompt".to_string(), piece);
        tree_node(&mut d, at.pos(i), fill, label, n.cum_logprob);
    }
    for o in off_tree {
        if let Some(from) = o.from {
            d.shapes
                .push(super::figures::dashed(from, o.at, GREEDY, 2.5));
        }
        let t = greedy.tokens[o.depth - 1];
        let cum = greedy.cum.get(o.depth - 1).copied().unwrap_or(f64::NAN);
        tree_node(&mut d, o.at, GREEDY, piece(t), cum);
    }
    d
}

/// Parent to child: the best beam's path thick in the accent colour, greedy's (where it is
/// not the best's) thick in green, pruned branches dashed.
fn tree_edges(d: &mut Drawing, at: &Layout, shown: &[BeamNode], paths: &Paths) {
    for (i, n) in shown.iter().enumerate() {
        let Some(p) = n.parent.and_then(|p| p.checked_sub(at.start)) else {
            continue;
        };
        let (stroke, width) = if paths.best[n.id] {
            (ACCENT, 2.5)
        } else if paths.greedy[n.id] {
            (GREEDY, 2.5)
        } else {
            (LINE, 1.0)
        };
        let dashed = n.status == NodeStatus::Pruned;
        d.shapes.push(super::figures::line(
            at.pos(p),
            at.pos(i),
            stroke,
            width,
            dashed,
        ));
    }
}

/// A node: its circle, its piece above right, its Σ log p below right.
fn tree_node(d: &mut Drawing, (x, y): (f64, f64), fill: &'static str, label: String, cum: f64) {
    d.shapes.push(Shape::Circle { x, y, r: 6.0, fill });
    d.shapes
        .push(text(x + 9.0, y - 4.0, label, 11.0, Anchor::Start));
    let mut lp = text(x + 9.0, y + 12.0, format!("{cum:.2}"), 10.0, Anchor::Start);
    if let Shape::Text { fill, .. } = &mut lp {
        *fill = MUTED;
    }
    d.shapes.push(lp);
}

#[cfg(test)]
#[path = "grids_tests.rs"]
mod tests;
