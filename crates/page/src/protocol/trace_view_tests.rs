//! Traces shaped for drawing, checked.

use super::*;
use std::cmp::Ordering;

/// The keys order as `total_cmp` does, over signs, zeros, subnormals, infinities and NaNs.
#[test]
fn order_keys_order_as_total_cmp() {
    let xs = [
        f64::NEG_INFINITY,
        -1.0,
        -f64::MIN_POSITIVE,
        -0.0,
        0.0,
        f64::from_bits(1),
        1e-300,
        0.5,
        1.0,
        f64::INFINITY,
        f64::NAN,
        -f64::NAN,
    ];
    for &a in &xs {
        for &b in &xs {
            assert_eq!(
                order_key64(a).cmp(&order_key64(b)),
                a.total_cmp(&b),
                "{a} {b}"
            );
            let (a, b) = (a as f32, b as f32);
            assert_eq!(
                order_key32(a).cmp(&order_key32(b)),
                a.total_cmp(&b),
                "{a} {b}"
            );
        }
    }
}

/// The order and chart are those of the plain comparator sorts they replace, on a trace
/// with ties in probability and in ghost (top-k and min-p removing tokens of equal mass).
#[test]
fn order_and_chart_match_the_comparator_sorts() {
    use decoding_engine::decode::sampling::{
        chain::{process, History},
        RawSettings,
    };
    let logits: Vec<f32> = (0..3000).map(|i| ((i * 7919) % 23) as f32 * 0.25).collect();
    let settings = RawSettings::from_pairs([("top_k", "40"), ("min_p", "0.2")])
        .validate(logits.len())
        .unwrap();
    let history = History {
        prompt: &[1],
        generated: &[],
        ..History::default()
    };
    let t = process(&settings, &logits, history, 0.3, true).unwrap();
    let view = trace_view(&t, Some(0));
    let mut want: Vec<u32> = (0..logits.len() as u32).collect();
    want.sort_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        t.probs[b]
            .total_cmp(&t.probs[a])
            .then(view.ghost[b].total_cmp(&view.ghost[a]))
            .then(a.cmp(&b))
    });
    assert_eq!(view.order, want);
    // Ties were there to break: equal probabilities kept, and equal ghosts removed.
    let kept = |i: usize| t.probs[want[i] as usize];
    assert!((1..want.len()).any(|i| kept(i) > 0.0 && kept(i) == kept(i - 1)));
    let mut chart: Vec<u32> = (0..logits.len() as u32).collect();
    chart.sort_by(|&a, &b| {
        t.input_probs[b as usize]
            .total_cmp(&t.input_probs[a as usize])
            .then(a.cmp(&b))
    });
    chart.truncate(CHART_TOKENS);
    assert_eq!(view.chart_ids, chart);
    assert_eq!(
        t.input_probs[chart[0] as usize].total_cmp(&t.input_probs[chart[1] as usize]),
        Ordering::Equal,
        "the chart's top two tie, so the id decides"
    );
}
