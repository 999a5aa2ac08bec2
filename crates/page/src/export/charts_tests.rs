//! The bar-row figures the quant and speculative panels show: each bar's length worked out
//! by hand, each row a mark the page reads.

use super::*;
use crate::export::grids::tests::rects;
use decoding_engine::decode::generation::Step;
use decoding_engine::decode::sampling::{Cut, Stage};

/// The marks' (class, tooltip) of test id `id`, read back from the SVG.
fn marks(d: &Drawing, id: &str) -> Vec<(String, String)> {
    let svg = d.svg();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    doc.descendants()
        .filter(|n| n.attribute("data-testid") == Some(id))
        .map(|n| {
            let tip = n.children().find(|c| c.has_tag_name("title"));
            (
                n.attribute("class").unwrap_or_default().to_string(),
                tip.and_then(|t| t.text()).unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn quant_rows_are_four_bars_a_token_scaled_to_the_largest() {
    let token = |id, piece: &str, p| QuantToken {
        id,
        piece: piece.into(),
        p,
    };
    let q = QuantView {
        position: 7,
        shape: None,
        precisions: vec![],
        tokens: vec![
            token(1, "a", [0.5, 0.45, 0.4, 0.25]),
            token(2, " b", [0.25, 0.2, 0.3, 0.5]),
        ],
        row: WeightRowView {
            label: "w".into(),
            ..Default::default()
        },
        f32_is_dequantized: false,
        file: None,
    };
    let d = quant(&q, Lang::En);
    // The bars run 192 units (108 to 300); the largest probability, 0.5, fills them.
    let widths = |fill| rects(&d, fill).iter().map(|r| r.2).collect::<Vec<_>>();
    assert_eq!(widths(ACCENT), [192.0, 96.0]);
    assert_eq!(widths("#3f9b6b"), [0.45 / 0.5 * 192.0, 0.2 / 0.5 * 192.0]);
    assert_eq!(widths("#d08a1f"), [0.4 / 0.5 * 192.0, 0.3 / 0.5 * 192.0]);
    assert_eq!(widths("#b8336a"), [96.0, 192.0]);
    // Every bar on its full-length track.
    assert_eq!(widths(TRACK), [192.0; 8]);
    let rows = marks(&d, "quant-token");
    assert_eq!(
        rows[1].1, "\"␣b\": f32 25.0%, f16 20.0%, q8 30.0%, q4 50.0%",
        "the tooltip: the piece as the page writes it, and its four values"
    );
    let texts = d.texts();
    assert!(texts.contains(&"q4 50.0%".to_string()), "{texts:?}");
    assert!(d.svg().contains(r#"class="qbar q-q8""#));
    assert!(d.title.contains("position 7"));
}

/// A position where the draft's token x was accepted: p 0.6, q 0.3, and a second bar y.
pub(crate) fn spec_position_x() -> SpecPosition {
    let bar = |id, piece: &str, p, q| SpecBar {
        id,
        piece: piece.into(),
        p,
        q,
    };
    SpecPosition {
        token: 5,
        piece: "x".into(),
        p: 0.6,
        q: 0.3,
        accept_probability: 1.0,
        overlap: 0.5,
        accepted: true,
        forbidden: false,
        bars: vec![bar(5, "x", 0.6, Some(0.3)), bar(6, "y", 0.2, Some(0.5))],
    }
}

#[test]
fn a_spec_position_shows_p_over_q_and_their_overlap() {
    let p = spec_position_x();
    let bar = |id, piece: &str, p, q| SpecBar {
        id,
        piece: piece.into(),
        p,
        q,
    };
    let d = spec_position(0, &p, Lang::En);
    // Longest of p and q: 0.6, 192 units. Row x: p 192, q 96, overlap 96 (on both).
    let w = |fill| {
        rects(&d, fill)
            .iter()
            .map(|r| r.2)
            .take(2)
            .collect::<Vec<_>>()
    };
    assert_eq!(w(P_FILL), [192.0, 0.2 / 0.6 * 192.0]);
    assert_eq!(w(Q_FILL), [96.0, 0.5 / 0.6 * 192.0]);
    let overlap: Vec<f64> = rects(&d, MIN_FILL).iter().map(|r| r.2).take(4).collect();
    assert_eq!(overlap, [96.0, 96.0, 0.2 / 0.6 * 192.0, 0.2 / 0.6 * 192.0]);
    let texts = d.texts();
    assert!(texts.contains(&"▸ \"x\"".to_string()), "{texts:?}");
    assert!(texts.contains(&"p 0.600 · q 0.300 · residual 0.300".to_string()));
    assert!(texts.contains(&"p 0.200 · q 0.500".to_string()));
    let rows = marks(&d, "spec-bar");
    assert_eq!(rows[0].0, "spec-bar-row drafted");
    assert_eq!(rows[1].0, "spec-bar-row");
    // No q (a one-token draft): 1 on the drafted token, so it is the longest.
    let one = SpecPosition {
        bars: vec![bar(5, "x", 0.6, None), bar(6, "y", 0.2, None)],
        ..p
    };
    let d = spec_position(0, &one, Lang::En);
    assert_eq!(rects(&d, Q_FILL)[0].2, 192.0);
    assert_eq!(rects(&d, Q_FILL)[1].2, 0.0);
}

/// A step that drew token 1 ("a", p 0.5), its stages' states `cuts`.
pub(crate) fn step(cuts: Vec<(Stage, Cut)>) -> Step {
    Step {
        token: 1,
        piece: "a".into(),
        prob: 0.5,
        model_prob: 0.5,
        rank: 1,
        kept: 3,
        coin: Some(0.5),
        top: vec![],
        state: Default::default(),
        cuts,
    }
}

/// Two steps of mirostat and one of DRY: mirostat's μ and τ are two lines of two points
/// each; DRY's penalised token (an id, `Cut::token`) is not a line; each chart carries its
/// stage's id.
#[test]
fn stage_states_draw_each_named_value_over_the_steps() {
    let miro = Stage::parse("mirostat").unwrap();
    let dry = Stage::parse("dry_multiplier").unwrap();
    let steps = [
        step(vec![(
            miro,
            Cut::default().with("mu", 6.0).with("tau", 3.0),
        )]),
        step(vec![
            (miro, Cut::default().with("mu", 5.5).with("tau", 3.0)),
            (
                dry,
                Cut {
                    token: Some(337),
                    ..Cut::default().with("longest repeat", 4.0)
                },
            ),
        ]),
    ];
    let d = stage_states(&steps, Lang::En);
    assert_eq!(d.len(), 2);
    let texts = d[0].texts().join(" ");
    assert!(texts.contains("mirostat over the steps"), "{texts}");
    assert!(texts.contains("mu") && texts.contains("tau"), "{texts}");
    assert!(d[0].svg().contains("data-testid=\"state-mirostat\""));
    let dry_texts = d[1].texts().join(" ");
    assert!(dry_texts.contains("longest repeat"), "{dry_texts}");
    assert!(!dry_texts.contains("337"), "{dry_texts}");
    assert!(stage_states(&[step(vec![])], Lang::En).is_empty());
}
