//! The chain's stages and the compared columns exported where the page's geometry puts
//! them, checked against values worked out by hand.

use super::*;
use crate::export::figures::tests::rects;
use crate::geometry::chain::tests::stage as top_k;
use crate::geometry::Rect;

fn tuple(r: Rect) -> (f64, f64, f64, f64) {
    (r.x, r.y, r.w, r.h)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn trace(stages: Vec<StageView>) -> TraceView {
    let mut t = crate::geometry::distribution::tests::trace();
    t.chart_ids = vec![2, 0, 3, 1];
    t.stages = stages;
    t
}

#[test]
fn the_stages_are_the_pages_square_root_bars() {
    let mut neutral = top_k();
    neutral.stage = decoding_engine::decode::sampling::Stage::parse("min_p").unwrap();
    neutral.active = false;
    neutral.after = neutral.before.clone();
    let t = trace(vec![top_k(), neutral]);
    let piece = |id: u32| format!("t{id}");
    let d = stages(&t, &piece, Lang::En);
    // One chart (the active stage) under the title's 34 px; the neutral one named.
    assert!(d
        .texts()
        .iter()
        .any(|s| s == "Neutral here (no change): min_p"));
    assert!(d
        .texts()
        .iter()
        .any(|s| s.starts_with("top_k (k = 2): 2 kept")));
    // Four slots of 60 px from the plot's left: the geometry's bars, moved down 34 px.
    let frame = stage_frame(4);
    assert_eq!(frame, Frame::new(PLOT_L, PLOT_T, 240.0, PLOT_H));
    let g = cg_bars(&top_k(), frame);
    let base = 34.0 + PLOT_T + PLOT_H;
    let shifted = |r: Rect| (r.x, r.y + 34.0, r.w, r.h);
    let before: Vec<_> = g.iter().map(|b| shifted(b.before)).collect();
    let after: Vec<_> = g
        .iter()
        .filter(|b| b.after.h > 0.0)
        .map(|b| shifted(b.after))
        .collect();
    assert_eq!(rects(&d, REMOVED, base), before);
    assert_eq!(rects(&d, ACCENT, base), after, "no bar where p is 0");
    // By hand: p 0.25 → √0.25 × 200 = 100 px high, 0.45 × 60 = 27 px wide at the left;
    // its "after" (0.28) 27 px right of it.
    let first = rects(&d, REMOVED, base)[0];
    assert!(close(first.0, PLOT_L) && close(first.2, 27.0) && close(first.3, 100.0));
    assert!(close(first.1 + first.3, base));
    let after0 = rects(&d, ACCENT, base)[0];
    assert!(close(after0.0, PLOT_L + 27.0) && close(after0.3, (0.28f32 as f64).sqrt() * 200.0));
    // The square-root axis: 0.25 half way up.
    assert!(d.leaves().into_iter().any(|s| matches!(s,
        Shape::Text { text, y, .. } if text == "0.25" && close(*y, 34.0 + PLOT_T + 100.0 + 4.0))));
    let svg = d.svg();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert!(doc.descendants().any(|n| n.text() == Some("t3")));
}

fn cg_bars(s: &StageView, frame: Frame) -> Vec<crate::geometry::chain::TokenBars> {
    crate::geometry::chain::stage_bars(s, frame)
}

pub(crate) fn column(top: Vec<(u32, f64)>) -> ColumnView {
    ColumnView {
        settings: Default::default(),
        steps: vec![],
        text: String::new(),
        stop: None,
        top,
        kept: 3,
        entropy: 1.0,
        next: None,
        logprob: 0.0,
    }
}

#[test]
fn the_columns_are_the_pages_horizontal_bars() {
    let top = vec![(7, 0.5), (3, 0.25), (9, 0.125)];
    let v = ColumnsView {
        prompt: vec![],
        prompt_text: String::new(),
        columns: vec![column(top.clone()), column(vec![(4, 1.0)])],
        differ: vec!["temperature".into()],
    };
    let piece = |id: u32| format!("t{id}");
    let d = columns(&v, &piece, Lang::En);
    let frame = top_frame(3);
    let g = crate::geometry::compare::top_bars(&top, frame);
    // The first column's bars: the geometry's, moved down under the title's 34 px.
    let want: Vec<_> = g
        .iter()
        .map(|b| (b.bar.x, b.bar.y + 34.0, b.bar.w, b.bar.h))
        .collect();
    let drawn: Vec<_> = rects(&d, ACCENT, f64::INFINITY)
        .into_iter()
        .filter(|r| r.1 < 34.0 + frame.bottom())
        .take(3)
        .collect();
    assert_eq!(drawn, want);
    // By hand: p 0.5 → half the bars' width, 0.25 a quarter; rows of 20 px.
    assert!(close(drawn[0].2, frame.width / 2.0) && close(drawn[1].2, frame.width / 4.0));
    assert!(close(drawn[1].1 - drawn[0].1, 20.0));
    assert_eq!(tuple(g[0].bar).0, frame.left);
    // The second column sits right of the first, its one bar the whole width.
    let second = rects(&d, ACCENT, f64::INFINITY)[3];
    assert!(second.0 > frame.right() && close(second.2, frame.width));
    let texts = d.texts();
    for want in ["t7", "0.500", "t4", "1.000", "Column 1 (defaults)"] {
        assert!(texts.iter().any(|t| t == want), "{want} in {texts:?}");
    }
    assert!(d.title.ends_with("differing knobs: temperature"));
    assert!(roxmltree::Document::parse(&d.svg()).is_ok());
}
