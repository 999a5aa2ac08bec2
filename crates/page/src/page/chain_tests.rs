//! The chain as the page runs it, on numbers worked out by hand.

use super::*;
use decoding_engine::decode::sampling::RawSettings;

fn settings(pairs: &[(&str, &str)]) -> Settings {
    RawSettings::from_pairs(pairs.iter().copied())
        .validate(512)
        .unwrap()
}

/// Logits built from logarithms: the softmax is exactly 1/2, 1/4, 1/8, 1/8.
fn next() -> NextView {
    NextView {
        step: 3,
        logits: [0.5f64, 0.25, 0.125, 0.125]
            .iter()
            .map(|p| p.ln() as f32)
            .collect(),
        prompt: vec![1],
        generated: vec![0, 3, 0],
        state: Default::default(),
        allowed: None,
        allowed_for: None,
        constraint_error: None,
    }
}

#[test]
fn the_next_distribution_is_the_softmax_of_the_logits_sent() {
    let t = next().trace(&Settings::default(), None).unwrap();
    for (got, want) in t.probs.iter().zip([0.5, 0.25, 0.125, 0.125]) {
        assert!((*got as f64 - want).abs() < 1e-6, "{:?}", t.probs);
    }
    assert_eq!(t.step, Some(3));
    assert_eq!(t.order[0], 0);
    // Top-k 2 keeps the two most likely, renormalised: 2/3 and 1/3; the other two greyed.
    let t = next().trace(&settings(&[("top_k", "2")]), None).unwrap();
    assert!(
        (t.probs[0] as f64 - 2.0 / 3.0).abs() < 1e-6,
        "{:?}",
        t.probs
    );
    assert!(
        (t.probs[1] as f64 - 1.0 / 3.0).abs() < 1e-6,
        "{:?}",
        t.probs
    );
    assert_eq!(t.kept, 2);
    for id in [2, 3] {
        let stage = t.removed_by(id).map(|i| t.stages[i].stage);
        assert_eq!(
            stage,
            Some(decoding_engine::decode::sampling::Stage::parse("top_k").unwrap())
        );
    }
    // Greedy takes the first; the coin is the step's (step 3 under seed 7), not step 0's.
    let t = next()
        .trace(&settings(&[("temperature", "0")]), None)
        .unwrap();
    assert_eq!(t.token, 0);
    let a = next()
        .trace(&settings(&[("seed", "7")]), None)
        .unwrap()
        .coin;
    let mut at0 = next();
    at0.step = 0;
    let b = at0.trace(&settings(&[("seed", "7")]), None).unwrap().coin;
    assert_ne!(a, b);
    assert_eq!(a, Some(step_coin(7, 3)));
}

/// The penalties see the history sent beside the logits: tokens 1 (the prompt's), 0 and 3
/// (generated) are present, so a presence penalty of ln 2 halves their weights: 1/2, 1/4,
/// 1/8, 1/8 become 1/4, 1/8, 1/8, 1/16, renormalised.
#[test]
fn the_penalties_see_the_history_sent_beside_the_logits() {
    let s = settings(&[("presence_penalty", &std::f64::consts::LN_2.to_string())]);
    let t = next().trace(&s, None).unwrap();
    let w = [0.25, 0.125, 0.125, 0.0625];
    let sum: f64 = w.iter().sum();
    for (got, want) in t.probs.iter().zip(w.map(|x| x / sum)) {
        assert!((*got as f64 - want).abs() < 1e-6, "{:?}", t.probs);
    }
}

#[test]
fn the_lessons_toy_logits_at_three_temperatures() {
    // z = [2, 1, 0.1]: the top token's mass 0.659 at T = 1, 0.864 at T = 0.5, 0.502 at 2.
    let z = [2.0, 1.0, 0.1];
    for (t, top) in [("1", 0.659), ("0.5", 0.864), ("2", 0.502)] {
        let trace = toy_trace(&z, &[], &settings(&[("temperature", t)])).unwrap();
        assert!(
            (trace.probs[0] as f64 - top).abs() < 5e-4,
            "T = {t}: {:?}",
            trace.probs
        );
        assert_eq!(trace.step, None);
    }
}

#[test]
fn bad_toy_logits_and_history_are_refused_with_the_reason() {
    let s = Settings::default();
    assert_eq!(
        toy_trace(&[], &[], &s).unwrap_err(),
        "type between 1 and 64 logits (got 0)"
    );
    assert_eq!(
        toy_trace(&[0.0; 65], &[], &s).unwrap_err(),
        "type between 1 and 64 logits (got 65)"
    );
    assert_eq!(
        toy_trace(&[1.0, 2.0], &[2], &s).unwrap_err(),
        "history token 2 is not one of the 2 logits"
    );
    // A bias naming a row the toy does not have is left out, not refused.
    let biased = settings(&[("logit_bias", "1:-100,400:5")]);
    let t = toy_trace(&[1.0, 1.0], &[], &biased).unwrap();
    assert!(
        t.probs[1] < 1e-6 && (t.probs[0] - 1.0).abs() < 1e-6,
        "{:?}",
        t.probs
    );
}

/// The worker's mask applies to its own constraint only: Z_t = 1/2 + 1/8 for tokens 0 and 2,
/// q = 4/5, 1/5 on them; a constraint typed since (no mask for it yet) leaves the chain as
/// if it were off, never the old mask under the new name.
#[test]
fn a_mask_applies_to_its_own_constraint_only() {
    let mut n = next();
    let mut a = decoding_engine::decode::constraint::Allowed::all(4);
    a.words[0] = 0b0101;
    a.count = 2;
    n.allowed = Some(a);
    n.allowed_for = Some("regex:(a|b)".into());
    let t = n
        .trace(&settings(&[("constraint", "regex:(a|b)")]), None)
        .unwrap();
    assert!((t.probs[0] as f64 - 0.8).abs() < 1e-6 && (t.probs[2] as f64 - 0.2).abs() < 1e-6);
    let st = t
        .stages
        .iter()
        .find(|s| s.stage.name() == "constraint")
        .unwrap();
    assert!(st.active);
    assert!((st.cut.value("feasible mass Z").unwrap() - 0.625).abs() < 1e-9);
    assert_eq!(st.cut.value("allowed"), Some(2.0));
    assert_eq!(
        t.removed_by(1).map(|i| t.stages[i].stage.name()),
        Some("constraint")
    );
    // The kind's other spelling is the same constraint.
    let t = n
        .trace(&settings(&[("constraint", "Regex:(a|b)")]), None)
        .unwrap();
    assert!((t.probs[0] as f64 - 0.8).abs() < 1e-6);
    // Another constraint: no mask applied (the softmax as sent) until its own arrives.
    let t = n
        .trace(&settings(&[("constraint", "regex:(a|c)")]), None)
        .unwrap();
    assert!((t.probs[1] as f64 - 0.25).abs() < 1e-6);
    assert!(!t
        .stages
        .iter()
        .any(|s| s.stage.name() == "constraint" && s.active));
}
