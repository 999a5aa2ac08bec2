//! The KV grid and the beam tree exported where the page's geometry puts them.

use super::*;
use crate::geometry::beam::tests::node;
use crate::geometry::beam::{COL, LEFT, ROW};

/// A two-layer model of 256 positions (the i18n tests' KV cache: the same, 2048 long).
pub(crate) fn config() -> decoding_engine::Config {
    decoding_engine::Config {
        dim: 8,
        hidden_dim: 16,
        n_layers: 2,
        n_heads: 2,
        n_kv_heads: 1,
        vocab_size: 512,
        seq_len: 256,
        shared_classifier: true,
        rope_theta: decoding_engine::Config::LLAMA2C_ROPE_THETA,
        rms_eps: decoding_engine::Config::LLAMA2C_RMS_EPS,
    }
}

/// The drawing's rectangles of colour `fill`: (x, y, w, h).
pub(in crate::export) fn rects(d: &Drawing, fill: &str) -> Vec<(f64, f64, f64, f64)> {
    d.leaves()
        .into_iter()
        .filter_map(|s| match s {
            Shape::Rect {
                x,
                y,
                w,
                h,
                fill: f,
            } if *f == fill => Some((*x, *y, *w, *h)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_kv_grid_is_the_pages() {
    let d = kv_grid(&config(), 64, Lang::En);
    // The page's frame (60 from the left, 400 wide, 20 a row), under the title.
    let frame = Frame::new(60.0, PLOT_T, 400.0, 80.0);
    let rows = kg::grid(2, 64, 256, frame);
    let slots: Vec<_> = rows
        .iter()
        .map(|r| (r.slots.x, r.slots.y, r.slots.w, r.slots.h))
        .collect();
    assert_eq!(rects(&d, SLOT), slots);
    // V's rows filled a quarter (64 of 256) of the 400 px, 16 high, 20 apart; the legend's
    // swatch last.
    let v = rects(&d, VALUE);
    assert_eq!(
        v[..2],
        [
            (60.0, PLOT_T + 20.0, 100.0, 16.0),
            (60.0, PLOT_T + 60.0, 100.0, 16.0)
        ]
    );
    assert_eq!(v.len(), 3);
    assert!(d.texts().contains(&"L1 V".to_string()));
    // Every text 15 units in a figure 470 wide: 11 px or more at a phone's 340 px.
    assert_eq!(d.width, 470.0);
    assert!(d
        .leaves()
        .iter()
        .all(|s| s.label().is_none_or(|l| l.size * 340.0 / d.width >= 10.8)));
    // The whole export: the grid over the bytes chart, its label kept.
    let all = kv(&config(), 64, Lang::En);
    assert!(all.texts().iter().any(|t| t.contains("n = 64 holds")));
    assert!(all.height > d.height);
}

/// The root, its two children 1 and 2, and a grandchild 3 under `under`.
pub(crate) fn four_nodes(under: usize) -> Vec<BeamNode> {
    vec![
        node(0, None, 0),
        node(1, Some(0), 1),
        node(2, Some(0), 1),
        node(3, Some(under), 2),
    ]
}

/// Greedy's run: token 1 (node 1), then token 9, which the tree does not hold.
pub(crate) fn greedy_off_the_tree() -> Greedy<'static> {
    Greedy {
        tokens: &[1, 9],
        cum: &[-0.5, -2.25],
    }
}

/// The drawing's circles in order: (x, y, fill).
fn circles(d: &Drawing) -> Vec<(f64, f64, &'static str)> {
    d.leaves()
        .into_iter()
        .filter_map(|s| match s {
            Shape::Circle { x, y, fill, .. } => Some((*x, *y, *fill)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_beam_tree_is_laid_out_as_the_pages() {
    // The root, two children (one pruned), a grandchild of the first: the best path 0-1-3.
    let mut nodes = four_nodes(1);
    nodes[2].status = decoding_engine::decode::beam::NodeStatus::Pruned;
    let d = beam_tree(
        &nodes,
        Some(3),
        Greedy::default(),
        &|t| format!("t{t}"),
        Lang::En,
    );
    let circles = circles(&d);
    // The page's layout (origin 0, 0) moved under the title: by hand, column 132 apart
    // from 20, rows 32 apart from 20, then 44 down.
    let screen = Layout::new(2, &nodes, (0.0, 0.0));
    let (ox, oy) = TREE_ORIGIN;
    for (i, c) in circles.iter().enumerate() {
        let (x, y) = screen.pos(i);
        assert_eq!((c.0, c.1), (x + ox, y + oy));
    }
    assert_eq!(
        (circles[2].0, circles[2].1),
        (LEFT + COL, 44.0 + 20.0 + ROW)
    );
    assert_eq!(
        (circles[3].0, circles[3].1),
        (LEFT + 2.0 * COL, 44.0 + 20.0)
    );
    // The best path orange (the root on it too), the pruned node grey: the page's fills.
    let best: Vec<&str> = circles.iter().map(|c| c.2).collect();
    assert_eq!(best, [CHOSEN, CHOSEN, REMOVED, CHOSEN]);
    // Edges from parent to child, the pruned one grey and dashed, the best path's orange.
    let edges: Vec<(f64, f64, bool, &str)> = d
        .leaves()
        .into_iter()
        .filter_map(|s| match s {
            Shape::Line {
                x2,
                y2,
                dashed,
                stroke,
                ..
            } if *y2 > 44.0 => Some((*x2, *y2, *dashed, *stroke)),
            _ => None,
        })
        .collect();
    assert_eq!(edges.len(), 3);
    assert_eq!(edges[1], (circles[2].0, circles[2].1, true, REMOVED));
    assert_eq!(edges[2].3, CHOSEN);
    // Each node a mark the page reads: its status, its class, its tooltip.
    let svg = d.svg();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let marks: Vec<(String, String)> = doc
        .descendants()
        .filter(|n| n.attribute("data-testid") == Some("beam-node"))
        .map(|n| {
            let tip = n.children().find(|c| c.has_tag_name("title")).unwrap();
            (
                n.attribute("class").unwrap().to_string(),
                tip.text().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(marks.len(), 4);
    assert_eq!(marks[2].0, "node pruned");
    assert_eq!(marks[3].0, "node beam best");
    assert!(marks[3].1.starts_with("\"t3\" — log p"), "{}", marks[3].1);
    let texts = d.texts();
    assert!(texts.contains(&"prompt".to_string()) && texts.contains(&"t3".to_string()));
}

#[test]
fn greedy_runs_green_and_leaves_the_tree_on_its_own_row() {
    // Root 0; children 1 (token 1) and 2 (token 2); 3 (token 3) under 2: the best path
    // 0-2-3. Greedy took token 1, then token 9, which the tree does not hold: its second
    // token runs off the tree.
    let nodes = four_nodes(2);
    let greedy = greedy_off_the_tree();
    let d = beam_tree(&nodes, Some(3), greedy, &|t| format!("t{t}"), Lang::En);
    let circles = circles(&d);
    let green = "#2e8b57";
    // The root, 2 and 3 on the best path, node 1 greedy's; then greedy's token 9 at depth
    // 2 on the row under the tree: by hand, rows from 44 + 20, two rows tall, 8 below.
    let fills: Vec<&str> = circles.iter().map(|c| c.2).collect();
    assert_eq!(fills, [CHOSEN, green, CHOSEN, CHOSEN, green]);
    let off = circles[4];
    assert_eq!(
        off,
        (LEFT + 2.0 * COL, 44.0 + 20.0 + 8.0 + 2.0 * ROW, green)
    );
    // Its edge comes from node 1, dashed, and its label is its piece and Σ log p.
    assert!(d.leaves().into_iter().any(|s| matches!(s,
        Shape::Line { x1, y1, x2, y2, stroke, dashed: true, .. }
            if (*x1, *y1) == (circles[1].0, circles[1].1)
                && (*x2, *y2) == (off.0, off.1)
                && *stroke == green)));
    let texts = d.texts();
    assert!(texts.iter().any(|t| t == "t9"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "-2.25"), "{texts:?}");
    assert!(d.height >= off.1 + 12.0, "{}", d.height);
}
