//! The quantization panel.

use super::*;

/// The quantization panel: three precisions with their bytes, KL from f32 (0 for f32, the
/// KL of the two distributions computed here for q8), the same top token, the tokens' three
/// probabilities, stories260K's straddling w2 row; and a new view after each step.
#[test]
fn the_quantization_panel_compares_three_precisions_and_follows_the_transcript() {
    use decoding_engine::Precision;
    let (mut s, host) = prompted(&[("temperature", "0")]);
    let ev = ask(&mut s, &host, Request::Quantization { open: true });
    let [Event::Quant { view }] = &ev[..] else {
        panic!("{ev:?}")
    };
    assert_eq!(view.position, 5);
    let bytes: Vec<u64> = view.precisions.iter().map(|p| p.weight_bytes).collect();
    assert_eq!(bytes, [1_040_128, 278_352, 164_896]);
    assert_eq!(view.precisions[0].kl, 0.0);
    let original = s.model().unwrap().transformer.clone();
    let context = [1, 403, 407, 261, 378];
    let (pf, pq) = (
        model_probs(&original, &context),
        model_probs(&original.at(Precision::Q8), &context),
    );
    let kl: f64 = pf.iter().zip(&pq).map(|(a, b)| a * (a / b).ln()).sum();
    assert!(
        (view.precisions[1].kl - kl).abs() < 1e-9,
        "{} vs {kl}",
        view.precisions[1].kl
    );
    assert!(view.precisions[2].kl > view.precisions[1].kl);
    assert!(view.precisions.iter().all(|p| p.decode_ms > 0.0));
    assert_eq!(view.precisions[1].top, 432);
    assert!(view.precisions[1].same_top);
    let t = &view.tokens[0];
    assert_eq!(t.id, 432);
    assert!((t.p[0] - pf[432]).abs() < 1e-12 && (t.p[1] - pq[432]).abs() < 1e-12);
    // w2 row 1 spans weights 172..344: q8 groups 2–5, q4 groups 5–10.
    assert!(view.row.straddles);
    assert_eq!(view.row.groups, [4, 6]);
    assert!(view.row.max_error[0] > 0.0 && view.row.max_error[1] > view.row.max_error[0]);
    // A step: the transcript and then the panel's view at the new position.
    let ev = ask(&mut s, &host, Request::Step { count: 1 });
    match ev.last() {
        Some(Event::Quant { view }) => assert_eq!(view.position, 6),
        e => panic!("{e:?}"),
    }
    // Closed: no more views.
    ask(&mut s, &host, Request::Quantization { open: false });
    let ev = ask(&mut s, &host, Request::Step { count: 1 });
    assert!(!ev.iter().any(|e| matches!(e, Event::Quant { .. })));
}
