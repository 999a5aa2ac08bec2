use super::*;

/// Logits whose softmax is p = (1/2, 1/4, 1/8, 1/16, 1/16) (each a log probability plus
/// the same 3: the softmax does not see a shift).
fn logits() -> Vec<f32> {
    [0.5f64, 0.25, 0.125, 0.0625, 0.0625]
        .iter()
        .map(|p| (p.ln() + 3.0) as f32)
        .collect()
}

fn guess(text: &str, count: u32) -> Guess {
    Guess {
        text: text.into(),
        count,
    }
}

#[test]
fn the_softmax_is_the_models_distribution_at_temperature_one() {
    let p = softmax(&logits()).unwrap();
    for (got, want) in p.iter().zip([0.5, 0.25, 0.125, 0.0625, 0.0625]) {
        assert!((got - want).abs() < 1e-6, "{p:?}");
    }
    assert_eq!(softmax(&[]), None);
    assert_eq!(softmax(&[0.0, f32::NAN]), None);
    // Large logits do not overflow: 1000 and 1000 − ln 3 are 3/4 and 1/4 (to the f32
    // rounding of 1000 − ln 3, 6e-5).
    let p = softmax(&[1000.0, 1000.0 - 3f32.ln()]).unwrap();
    assert!(
        (p[0] - 0.75).abs() < 1e-4 && (p[1] - 0.25).abs() < 1e-4,
        "{p:?}"
    );
}

#[test]
fn a_round_goes_from_the_guesses_to_the_reveal_to_the_drawn_token() {
    let mut m = ClassMode::default();
    // Three guesses: "cat" ×3 (token 2), "dog" ×1 (token 0), "?" that adds no token.
    let texts = m
        .ask(vec![guess("cat", 3), guess("dog", 1), guess("?", 2)], 7)
        .unwrap();
    assert_eq!(texts, ["cat", "dog", "?"]);
    // A second ask while the first is read is refused.
    assert_eq!(m.ask(vec![guess("x", 1)], 7), None);
    m.on_tokens(&[Some(2), Some(0), None], &logits(), 7)
        .unwrap();
    let Phase::Revealed(r) = &m.phase else {
        panic!("{:?}", m.phase)
    };
    assert_eq!(r.dropped, ["?"]);
    assert_eq!(r.typed, [(2, "cat".to_string()), (0, "dog".to_string())]);
    assert_eq!(r.reveal.total, 4);
    assert_eq!(r.model_top, 0);
    // The axis: the model's top 5 (here every token) by p, with the class's shares.
    let shares: Vec<(u32, f64)> = r.axis.iter().map(|a| (a.0, a.1)).collect();
    assert_eq!(shares, [(0, 0.25), (1, 0.0), (2, 0.75), (3, 0.0), (4, 0.0)]);
    assert!((r.axis[2].2 - 0.125).abs() < 1e-6);
    assert!(m.draw());
    assert!(matches!(m.phase, Phase::Drawing(_)));
    // A step that added no token (the text had stopped) leaves the reveal, to draw again.
    m.on_generated(&[9; 7]);
    assert!(matches!(m.phase, Phase::Revealed(_)));
    assert!(m.draw());
    // The model drew token 2: the class's top guess, not the model's top-1.
    let mut generated = vec![9; 7];
    generated.push(2);
    m.on_generated(&generated);
    assert_eq!(m.phase, Phase::Guessing);
    assert_eq!(m.last.as_ref().unwrap().drawn, Some(2));
    assert_eq!(
        (
            m.score.rounds,
            m.score.class_right,
            m.score.model_right,
            m.score.class_beat_model
        ),
        (1, 1, 0, 1)
    );
    // The next round: the class guessed the model's top-1 and the model drew it.
    m.ask(vec![guess("dog", 2)], 8).unwrap();
    m.on_tokens(&[Some(0)], &logits(), 8).unwrap();
    assert!(m.draw());
    generated.push(0);
    m.on_generated(&generated);
    assert_eq!(
        (
            m.score.rounds,
            m.score.class_right,
            m.score.model_right,
            m.score.class_beat_model
        ),
        (2, 2, 1, 1)
    );
    assert!(m
        .score
        .to_string()
        .ends_with("beat the model's top-1 on 1 of 2"));
}

#[test]
fn a_round_whose_text_moved_is_dropped_with_the_score_kept() {
    let mut m = ClassMode::default();
    m.score.rounds = 3;
    m.ask(vec![guess("cat", 1)], 4).unwrap();
    // The tokens came back for another step (the text was rewound meanwhile).
    let e = m.on_tokens(&[Some(1)], &logits(), 3).unwrap_err();
    assert!(e.contains("reveal again"), "{e}");
    assert_eq!(m.phase, Phase::Guessing);
    // Revealed, then stepped with the transcript's own Step: the token drawn scores it.
    m.ask(vec![guess("cat", 1)], 4).unwrap();
    m.on_tokens(&[Some(1)], &logits(), 4).unwrap();
    m.on_generated(&[1, 2, 3, 4, 1]);
    assert_eq!((m.score.rounds, m.score.class_right), (4, 1));
    assert_eq!(m.phase, Phase::Guessing);
    // Revealed, then rewound: the round is dropped, not scored.
    m.ask(vec![guess("cat", 1)], 4).unwrap();
    m.on_tokens(&[Some(1)], &logits(), 4).unwrap();
    m.on_generated(&[1, 2, 3]);
    assert_eq!(m.phase, Phase::Guessing);
    assert_eq!(m.score.rounds, 4);
    // Draw only from a reveal.
    assert!(!m.draw());
}

#[test]
fn a_reveal_with_nothing_to_show_says_why() {
    let mut m = ClassMode::default();
    assert_eq!(m.ask(Vec::new(), 0), None);
    m.ask(vec![guess("?", 1)], 0).unwrap();
    let e = m.on_tokens(&[None], &logits(), 0).unwrap_err();
    assert!(e.contains("no guess stands for a token"), "{e}");
    m.ask(vec![guess("cat", 1)], 0).unwrap();
    let e = m.on_tokens(&[Some(99)], &logits(), 0).unwrap_err();
    assert!(e.contains("outside the model's vocabulary"), "{e}");
    assert_eq!(m.phase, Phase::Guessing);
    // A room's tally: asked once, read against the logits.
    assert!(m.ask_room(0));
    assert!(!m.ask_room(0));
    // A room's counts: the axis holds a guessed token beyond the model's top 5.
    let mut l = vec![0f32; 12];
    l[0] = 5.0;
    m.on_counts(&[(11, 4)], Vec::new(), &l, 0).unwrap();
    let Phase::Revealed(r) = &m.phase else {
        panic!()
    };
    assert_eq!(r.axis.len(), 6);
    assert_eq!(r.axis[0].0, 0);
    assert!(r.axis.iter().any(|a| a.0 == 11 && a.1 == 1.0));
    assert_eq!(r.reveal.rows[0].rank, 2);
}
