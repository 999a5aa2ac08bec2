//! The KV cache's grid and the beam tree, placed by the page's own geometry
//! ([`crate::geometry::kv`], [`crate::geometry::beam`]).

use super::figures::rect;
use super::figures::REMOVED;
use super::plot::{legend_sized, PLOT_T};
use super::*;
use crate::geometry::beam::{paths, Layout, Paths};
use crate::geometry::kv as kg;
use crate::geometry::Frame;
use crate::page::piece_text;
use decoding_engine::decode::beam::{BeamNode, NodeStatus};

/// The page's colours of the cache's slots, and of V (`--v`; K is the accent).
const SLOT: &str = "#f0f1f6";
const VALUE: &str = "#7b4fc9";

/// The cache's grid, the page's figure and the export's: a K and a V row per layer, `n` of
/// the context's positions filled. Its texts are 15 units in a figure 470 wide, so at
/// least 11 px on a phone.
pub fn kv_grid(cfg: &decoding_engine::Config, n: usize, lang: Lang) -> Drawing {
    const SIZE: f64 = 15.0;
    let screen = kg::screen_frame(cfg.n_layers);
    let frame = Frame::new(screen.left, PLOT_T, screen.width, screen.height);
    let mut d = Drawing::new(
        frame.right() + 10.0,
        frame.bottom() + 34.0,
        tr(lang).fmt(
            "fig-kv-grid-title",
            &[
                ("n", int(lang, n)),
                ("context", int(lang, cfg.seq_len)),
                ("layers", int(lang, cfg.n_layers)),
            ],
        ),
    );
    for r in kg::grid(cfg.n_layers, n, cfg.seq_len, frame) {
        d.shapes.push(text(
            frame.left - 6.0,
            r.label_y,
            r.label,
            SIZE,
            Anchor::End,
        ));
        for (b, fill) in [
            (r.slots, SLOT),
            (r.filled, if r.value { VALUE } else { ACCENT }),
        ] {
            d.shapes.push(rect(b, fill));
        }
    }
    let y = d.height - 8.0;
    legend_sized(&mut d, &[("K", ACCENT), ("V", VALUE)], y, SIZE);
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

/// The colour of greedy's path and of a finished hypothesis's ring (the page's `--ok`).
const GREEDY: &str = "#2e8b57";
/// A finished hypothesis's centre.
const WHITE: &str = "#ffffff";

/// The beam tree, the page's figure and the export's: its last levels, a level a column
/// (older ones collapsed into a line), each node its piece and Σ log p, its status as its
/// class and its fill (pruned grey, finished ringed); the best beam's path thick in orange,
/// greedy's in green (dashed on its own row once beam search pruned it), pruned branches
/// dashed. `piece`: a token's text as the tokenizer has it; its words in `lang`.
pub fn beam_tree(
    nodes: &[BeamNode],
    best_node: Option<usize>,
    greedy: Greedy,
    piece: &dyn Fn(u32) -> String,
    lang: Lang,
) -> Drawing {
    beam_tree_along(
        nodes,
        &paths(best_node, greedy.tokens, nodes),
        greedy,
        piece,
        lang,
    )
}

/// The beam tree with its best and greedy `paths` already found (the page finds them once
/// for its legend and its figure).
pub fn beam_tree_along(
    nodes: &[BeamNode],
    paths: &Paths,
    greedy: Greedy,
    piece: &dyn Fn(u32) -> String,
    lang: Lang,
) -> Drawing {
    let tr = tr(lang);
    let depth = nodes.iter().map(|n| n.depth).max().unwrap_or(0);
    let at = Layout::new(depth, nodes, TREE_ORIGIN);
    let off_tree = at.greedy_off_tree(paths, greedy.tokens.len(), depth);
    let (w, h) = at.size(!off_tree.is_empty());
    let mut d = Drawing::new(
        (TREE_ORIGIN.0 + w).max(420.0),
        TREE_ORIGIN.1 + h,
        tr.fmt(
            "fig-beam-title",
            &[
                ("nodes", int(lang, nodes.len())),
                ("depth", int(lang, depth)),
            ],
        ),
    );
    d.root = Mark {
        class: "tree".into(),
        testid: "beam-tree".into(),
        ..Mark::default()
    };
    d.shapes.push(text(
        12.0,
        40.0,
        tr.fmt("fig-beam-depth", &[]),
        11.0,
        Anchor::Start,
    ));
    if at.first_depth > 0 {
        let levels = ("levels", int(lang, at.first_depth));
        let line = tr.fmt("fig-beam-collapsed", &[levels]);
        let (x, y) = (TREE_ORIGIN.0 + 4.0, TREE_ORIGIN.1 + 18.0);
        let t = text(x, y, line, 12.0, Anchor::Start);
        d.shapes.push(Mark::id("beam-collapsed").around(vec![t]));
    }
    let shown = &nodes[at.start..];
    tree_edges(&mut d, &at, shown, paths);
    for (i, n) in shown.iter().enumerate() {
        d.shapes.push(tree_node(n, at.pos(i), paths, (piece, lang)));
    }
    for o in off_tree {
        if let Some(from) = o.from {
            let edge = super::figures::dashed(from, o.at, GREEDY, 3.0);
            d.shapes
                .push(class("edge greedy off-tree").around(vec![edge]));
        }
        let t = greedy.tokens[o.depth - 1];
        let cum = greedy.cum.get(o.depth - 1).copied().unwrap_or(f64::NAN);
        let tip = tr.fmt(
            "fig-beam-greedy-tip",
            &[
                ("n", int(lang, o.depth)),
                ("piece", piece_text(&piece(t), true, None)),
                ("cum", num(lang, cum, 3)),
            ],
        );
        let mark = Mark {
            class: "node greedy off-tree".into(),
            testid: "greedy-node".into(),
            title: tip,
            data: vec![],
        };
        let label = piece_text(&piece(t), false, Some(10));
        d.shapes
            .push(mark.around(node_marks(o.at, (GREEDY, None), label, num(lang, cum, 2))));
    }
    d
}

/// A mark with a class only.
fn class(c: &str) -> Mark {
    Mark {
        class: c.into(),
        ..Mark::default()
    }
}

/// Parent to child: the best beam's path thick in orange, greedy's (where it is not the
/// best's) in green and dashed, pruned branches grey and dashed; each edge's kind its class.
fn tree_edges(d: &mut Drawing, at: &Layout, shown: &[BeamNode], paths: &Paths) {
    for (i, n) in shown.iter().enumerate() {
        let Some(p) = n.parent.and_then(|p| p.checked_sub(at.start)) else {
            continue;
        };
        let pruned = n.status == NodeStatus::Pruned;
        let (best, on_greedy) = (paths.best[n.id], paths.greedy[n.id]);
        let (stroke, width, dashed, kind) = match (best, on_greedy) {
            (true, true) => (CHOSEN, 5.0, false, " both"),
            (true, false) => (CHOSEN, 4.0, false, " best"),
            (false, true) => (GREEDY, 3.0, true, " greedy"),
            _ if pruned => (REMOVED, 1.2, true, ""),
            _ => (ACCENT, 1.2, false, ""),
        };
        let edge = super::figures::line(at.pos(p), at.pos(i), stroke, width, dashed);
        let c = format!("edge{}{kind}", if pruned { " pruned" } else { "" });
        d.shapes.push(class(&c).around(vec![edge]));
    }
}

/// A node of the tree: its status and paths as its class, its token and log p as its
/// tooltip; its circle filled as the page fills it (root dark, pruned grey, finished
/// ringed, the best path orange, greedy's green); its words in `lang` (its class English).
fn tree_node(
    n: &BeamNode,
    at: (f64, f64),
    paths: &Paths,
    (piece, lang): (&dyn Fn(u32) -> String, Lang),
) -> Shape {
    let tr = tr(lang);
    let (status, said) = match n.status {
        NodeStatus::Root => ("root", tr.fmt("fig-status-root", &[])),
        NodeStatus::Beam => ("beam", tr.fmt("fig-status-beam", &[])),
        NodeStatus::Pruned => ("pruned", tr.fmt("fig-status-pruned", &[])),
        NodeStatus::Finished => ("finished", tr.fmt("fig-status-finished", &[])),
        NodeStatus::Unfinished => ("unfinished", tr.fmt("fig-status-unfinished", &[])),
    };
    let (best, on_greedy) = (paths.best[n.id], paths.greedy[n.id]);
    let path = match (best, on_greedy) {
        (true, true) => " best greedy",
        (true, false) => " best",
        (false, true) => " greedy",
        _ => "",
    };
    let ended = matches!(n.status, NodeStatus::Finished | NodeStatus::Unfinished);
    let fill = match n.status {
        _ if on_greedy && !best => GREEDY,
        _ if best => CHOSEN,
        _ if ended => WHITE,
        NodeStatus::Pruned => REMOVED,
        NodeStatus::Root => INK,
        _ => ACCENT,
    };
    let full = n.token.map_or_else(
        || tr.fmt("fig-beam-the-prompt", &[]),
        |t| piece_text(&piece(t), true, None),
    );
    let mark = Mark {
        class: format!("node {status}{path}"),
        testid: "beam-node".into(),
        title: tr.fmt(
            "fig-beam-node-tip",
            &[
                ("piece", full),
                ("logp", num(lang, n.logprob, 3)),
                ("cum", num(lang, n.cum_logprob, 3)),
                ("status", said),
            ],
        ),
        data: vec![("status", status.into())],
    };
    let label = n.token.map_or_else(
        || tr.fmt("fig-beam-prompt", &[]),
        |t| piece_text(&piece(t), false, Some(10)),
    );
    let ring = ended.then_some(GREEDY);
    let cum = num(lang, n.cum_logprob, 2);
    mark.around(node_marks(at, (fill, ring), label, cum))
}

/// A node's shapes: its circle (filled, perhaps ringed), its piece above right, its Σ log p
/// (written) below right.
fn node_marks(
    (x, y): (f64, f64),
    (fill, ring): (&'static str, Option<&'static str>),
    label: String,
    cum: String,
) -> Vec<Shape> {
    let mut lp = text(x + 9.0, y + 12.0, cum, 12.0, Anchor::Start);
    if let Shape::Text { fill, .. } = &mut lp {
        *fill = MUTED;
    }
    vec![
        Shape::Circle {
            x,
            y,
            r: 6.0,
            fill,
            ring,
        },
        text(x + 9.0, y - 4.0, label, 14.0, Anchor::Start),
        class("lp").around(vec![lp]),
    ]
}

#[cfg(test)]
#[path = "grids_tests.rs"]
pub(super) mod tests;
