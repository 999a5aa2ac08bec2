//! The shared-geometry exports: every mark where the geometry puts it, and the geometry's
//! numbers checked by hand where they matter (the log scale's bar height).

use super::*;
use crate::geometry::batching::tests::{row, sim};
use crate::geometry::distribution::tests::trace;
use decoding_engine::serving::roofline::{Peaks, Roof};

/// The drawing's rectangles of colour `fill` inside the plot (the legend's swatches, under
/// it, left out): (x, y, w, h).
pub(in crate::export) fn rects(d: &Drawing, fill: &str, below: f64) -> Vec<(f64, f64, f64, f64)> {
    d.leaves()
        .into_iter()
        .filter_map(|s| match s {
            Shape::Rect {
                x,
                y,
                w,
                h,
                fill: f,
            } if *f == fill && y + h <= below + 1e-9 => Some((*x, *y, *w, *h)),
            _ => None,
        })
        .collect()
}

fn circles(d: &Drawing, fill: &str) -> Vec<(f64, f64)> {
    d.leaves()
        .into_iter()
        .filter_map(|s| match s {
            Shape::Circle { x, y, fill: f, .. } if *f == fill => Some((*x, *y)),
            _ => None,
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn the_distribution_follows_the_pages_scale() {
    let t = trace();
    let piece = |id: u32| format!("t{id}");
    let base = PLOT_T + PLOT_H;
    for scale in [Scale::Probability, Scale::LogProbability] {
        let d = distribution(&t, &piece, 4, scale, Lang::En);
        // Four slots of 60 px (560 / 4, at most 60) from the plot's left.
        let g = dg::distribution(&t, scale, 4, Frame::new(PLOT_L, PLOT_T, 240.0, PLOT_H));
        let mut drawn: Vec<(f64, f64, f64, f64)> = [ACCENT, CHOSEN, REMOVED]
            .iter()
            .flat_map(|f| rects(&d, f, base))
            .collect();
        drawn.sort_by(|a, b| a.0.total_cmp(&b.0));
        let want: Vec<(f64, f64, f64, f64)> =
            g.bars.iter().map(|b| (b.x, b.y, b.w, b.height())).collect();
        assert_eq!(drawn, want, "{scale:?}: the bars are the geometry's");
        // The chosen token (p 0.5) by hand: half the plot, or on the log scale
        // (ln 0.5 + 18.420681) / 18.420681 = 0.962371 of it.
        let chosen = rects(&d, CHOSEN, base)[0];
        let want_h = match scale {
            Scale::Probability => 100.0,
            Scale::LogProbability => 200.0 * 0.962371,
        };
        assert!((chosen.3 - want_h).abs() < 1e-3, "{scale:?}: {chosen:?}");
        assert_eq!(chosen.0, PLOT_L);
        // The SVG carries it: a rect of that height in the chosen colour.
        let svg = d.svg();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let h: f64 = doc
            .descendants()
            .find(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(CHOSEN))
            .and_then(|n| n.attribute("height")?.parse().ok())
            .unwrap();
        assert!((h - want_h).abs() < 0.051, "{h}");
        // top-p's running sum where the geometry draws it.
        let path = d.leaves().into_iter().find_map(|s| match s {
            Shape::Path { points, .. } => Some(points.clone()),
            _ => None,
        });
        assert_eq!(path, g.cut.as_ref().map(|c| c.points.clone()));
        let texts = d.texts();
        assert!(texts.contains(&"t2".to_string()) && texts.contains(&"final p".to_string()));
        assert_eq!(
            texts.contains(&"1e-4".to_string()),
            scale == Scale::LogProbability
        );
    }
}

/// A machine of 10 GFLOP/s and 1 GB/s (its ridge at 10 FLOP/byte), one thread.
pub(crate) fn peaks() -> Peaks {
    Peaks {
        roof: Roof {
            flops: 1e10,
            bytes_per_s: 1e9,
        },
        buffer_bytes: 1 << 20,
        threads: 1,
    }
}

pub(crate) fn sweep_view() -> SweepView {
    SweepView {
        model: SweepModel::Loaded,
        backend: "cpu".into(),
        weight_bytes: 1 << 20,
        peaks: peaks(),
        rows: vec![
            row(1, 100.0, 10.0),
            row(4, 150.0, 30.0),
            row(16, 200.0, 50.0),
        ],
        spread: vec![],
    }
}

#[test]
fn throughput_and_roofline_are_the_pages() {
    let v = sweep_view();
    let d = sweep(&v, Lang::En);
    let frame = Frame::new(PLOT_L, PLOT_T, PLOT_W, PLOT_H);
    let g = bg::throughput(&v.rows, frame);
    // Stacked under a 34 px title: the throughput chart first, then the roofline.
    let dy = 34.0;
    let moved = |p: &[(f64, f64)], dy: f64| p.iter().map(|&(x, y)| (x, y + dy)).collect::<Vec<_>>();
    let decode = circles(&d, ACCENT);
    assert_eq!(decode[..3], moved(&g.decode, dy)[..], "decode points");
    assert_eq!(circles(&d, CHOSEN), moved(&g.prefill, dy), "prefill points");
    // B = 4 half way along log₂ B from 1 to 16; 50 tokens/s a quarter up.
    assert!(close(decode[1].0, PLOT_L + PLOT_W / 2.0));
    assert!(close(decode[2].1, dy + PLOT_T + PLOT_H * 0.75));
    // The roofline's points, its prefill squares centred on them, under the drawn roof.
    let rg = bg::roofline(v.peaks.roof, &bg::machine_points(&v.rows), frame);
    let dy2 = dy + PLOT_T + PLOT_H + 80.0;
    let decode_dots = &decode[3..];
    let want: Vec<(f64, f64)> = rg
        .points
        .iter()
        .skip(1)
        .step_by(2)
        .map(|p| (p.x, p.y + dy2))
        .collect();
    assert_eq!(decode_dots, &want[..]);
    // (The legends' swatches are 10 px; the squares 8.)
    let squares: Vec<_> = rects(&d, CHOSEN, d.height)
        .into_iter()
        .filter(|r| r.2 == 8.0)
        .collect();
    assert_eq!(squares.len(), 3);
    for (s, p) in squares.iter().zip(rg.points.iter().step_by(2)) {
        assert!(close(s.0 + 4.0, p.x) && close(s.1 + 4.0, p.y + dy2));
    }
    let roof = d.leaves().into_iter().find_map(|s| match s {
        Shape::Path { points, width, .. } if *width == 2.5 => Some(points.clone()),
        _ => None,
    });
    assert_eq!(roof, Some(moved(&rg.roof_line, dy2)));
    // Decode's FLOP/s is its passes' FLOPs over their time (1e8 here, not × the tokens).
    let d1 = (decode_dots[0].1 - dy2 - PLOT_T) / PLOT_H;
    assert!((d1 - (1.0 - (1e8f64 / 3e5).log10() / 5.0)).abs() < 1e-9);
}

#[test]
fn timelines_are_the_pages_rows() {
    let v = ServeView {
        slots: 1,
        seed: 1,
        requests: vec![(4, 3), (4, 3)],
        continuous: sim(),
        static_: sim(),
    };
    let d = serve(&v, Lang::En);
    let frame = Frame::new(PLOT_L, PLOT_T, PLOT_W, 32.0);
    let rows = bg::timeline(&v.continuous, 10, frame);
    let dy = 34.0;
    let prefill = rects(&d, CHOSEN, dy + frame.bottom());
    assert_eq!(prefill.len(), 2);
    for (r, row) in prefill.iter().zip(&rows) {
        let p = row.prefill;
        assert_eq!(*r, (p.x, p.y + dy, p.w, p.h));
    }
    // 480 px over 10 steps: request 0's prefill at step 2, 96 px in.
    assert!(close(prefill[0].0, PLOT_L + 96.0));
    assert!(d.texts().contains(&"#1".to_string()));
}

/// The marks the page reads (its tests, its tooltips) are in the SVG it shows, parsed back
/// with roxmltree: each point a group with its figure, at the shape's own coordinates; the
/// page's figure name on the root; groups moved with their shapes when stacked.
#[test]
fn the_figures_the_page_shows_carry_their_marks() {
    let v = sweep_view();
    let svg = throughput(&v, Lang::En).on_page("tp-chart").svg();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let root = doc.root_element();
    assert_eq!(root.attribute("data-testid"), Some("tp-chart"));
    let tips = |id: &str| tips_in(&doc, id);
    // The rows' own figures (row(b, prefill, decode) above), written by hand.
    assert_eq!(
        tips("tp-decode-point"),
        [
            "B = 1: decode 10 tokens/s",
            "B = 4: decode 30 tokens/s",
            "B = 16: decode 50 tokens/s"
        ]
    );
    assert_eq!(tips("tp-prefill-point")[2], "B = 16: prefill 200 tokens/s");

    // A roofline point's data-x is its dot's centre, in the stacked export too.
    let d = sweep(&v, Lang::En);
    let svg = d.svg();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let points: Vec<_> = doc
        .descendants()
        .filter(|n| n.attribute("data-testid") == Some("roof-decode"))
        .collect();
    assert_eq!(points.len(), 3);
    for g in &points {
        let c = g.children().find(|c| c.has_tag_name("circle")).unwrap();
        let cx: f64 = c.attribute("cx").unwrap().parse().unwrap();
        let x: f64 = g.attribute("data-x").unwrap().parse().unwrap();
        assert!((cx - x).abs() < 0.051, "{cx} {x}");
        let cy: f64 = c.attribute("cy").unwrap().parse().unwrap();
        assert!(
            cy > 34.0 + PLOT_T + PLOT_H + 80.0,
            "stacked under the throughput chart"
        );
    }
    let first = tips_in(&doc, "roof-decode")[0].clone();
    // Decode's 1e8 FLOP/s at 0.5 FLOP/byte (the test row) under a roof of 1e9 B/s × 0.5.
    assert!(
        first.starts_with("D1: 0.50 FLOP/byte") && first.ends_with("(20 % of the roof there)"),
        "{first}"
    );
    assert_eq!(
        doc.descendants()
            .filter(|n| n.attribute("data-testid") == Some("roofline-roof"))
            .count(),
        1
    );

    // A timeline's rows: one group per request, its request as the tooltip.
    let s = ServeView {
        slots: 1,
        seed: 1,
        requests: vec![(4, 3), (5, 3)],
        continuous: sim(),
        static_: sim(),
    };
    let svg = timeline(&s, Policy::Static, Lang::En)
        .on_page("serve-static")
        .svg();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let rows = tips_in(&doc, "tl-request");
    assert_eq!(rows.len(), 2);
    assert!(
        rows[1].starts_with("request 1: 5-token prompt"),
        "{}",
        rows[1]
    );
    assert!(svg.contains("static, 1 slots"));
}

/// The tooltips of the groups marked `id`.
fn tips_in(doc: &roxmltree::Document, id: &str) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.attribute("data-testid") == Some(id))
        .filter_map(|g| g.children().find(|c| c.has_tag_name("title")))
        .map(|t| t.text().unwrap_or_default().to_string())
        .collect()
}
