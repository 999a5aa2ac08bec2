use super::*;

fn guesses(text: &str) -> Vec<(String, u32)> {
    parse_tally(text)
        .unwrap()
        .into_iter()
        .map(|g| (g.text, g.count))
        .collect()
}

fn owned(v: &[(&str, u32)]) -> Vec<(String, u32)> {
    v.iter().map(|(s, n)| (s.to_string(), *n)).collect()
}

#[test]
fn a_tally_reads_as_the_presenter_types_it() {
    assert_eq!(guesses("cat ×5, dog ×3"), owned(&[("cat", 5), ("dog", 3)]));
    assert_eq!(
        guesses("cat x5\ndog*2, cat\n\n , bird X 2"),
        owned(&[("cat", 6), ("dog", 2), ("bird", 2)])
    );
    // A word ending in x, or a count glued to a word by x, is a guess.
    assert_eq!(
        guesses("box, fox x2, ax5, park×2"),
        owned(&[("box", 1), ("fox", 2), ("ax5", 1), ("park", 2)])
    );
    assert_eq!(guesses(" the  "), owned(&[("the", 1)]));
    assert_eq!(guesses(""), owned(&[]));
}

#[test]
fn a_bad_tally_says_which_entry_and_why() {
    assert_eq!(parse_tally("cat ×0"), Err(TallyError::BadCount("0".into())));
    assert_eq!(
        parse_tally("cat ×5a"),
        Err(TallyError::BadCount("5a".into()))
    );
    assert_eq!(
        parse_tally("cat ×10001"),
        Err(TallyError::BadCount("10001".into()))
    );
    assert_eq!(
        parse_tally("a ×6000, b ×5000"),
        Err(TallyError::TooMany(11_000))
    );
    let long = "é".repeat(65);
    assert_eq!(parse_tally(&long), Err(TallyError::BadGuess(long.clone())));
    assert!(parse_tally(&"é".repeat(64)).is_ok());
    assert_eq!(
        parse_tally("ca\u{7}t"),
        Err(TallyError::BadGuess("ca\u{7}t".into()))
    );
    assert!(TallyError::BadCount("0".into())
        .to_string()
        .contains("from 1 to 10000"));
}

/// p = (1/2, 1/4, 1/8, 1/8); the class: token 0 twice, tokens 1 and 3 once, so
/// c = (1/2, 1/4, 0, 1/4). By hand, in units of ln 2:
/// H(c, p) = 1/2·1 + 1/4·2 + 1/4·3 = 1.75; H(c) = 1/2·1 + 1/4·2 + 1/4·2 = 1.5;
/// KL = 0.25 (= 1/4·log2((1/4)/(1/8))); H(p) = 1/2 + 2/4 + 3/8 + 3/8 = 1.75.
#[test]
fn the_reveal_is_worked_out_by_hand() {
    let ln2 = std::f64::consts::LN_2;
    let p = [0.5, 0.25, 0.125, 0.125];
    let r = reveal(&[(3, 1), (0, 2), (1, 1)], &p).unwrap();
    assert_eq!(r.total, 4);
    let rows: Vec<(u32, u32, f64, f64, usize)> = r
        .rows
        .iter()
        .map(|x| (x.token, x.count, x.class, x.model, x.rank))
        .collect();
    // By count, then by p; tokens 2 and 3 are as likely: both rank 3.
    assert_eq!(
        rows,
        vec![
            (0, 2, 0.5, 0.5, 1),
            (1, 1, 0.25, 0.25, 2),
            (3, 1, 0.25, 0.125, 3)
        ]
    );
    assert!(
        (r.cross_entropy - 1.75 * ln2).abs() < 1e-12,
        "{}",
        r.cross_entropy
    );
    assert!((r.class_entropy - 1.5 * ln2).abs() < 1e-12);
    assert!((r.kl - 0.25 * ln2).abs() < 1e-12);
    assert!((r.model_entropy - 1.75 * ln2).abs() < 1e-12);
}

#[test]
fn a_class_that_guesses_in_the_models_proportions_has_no_kl() {
    let p = [0.5, 0.25, 0.25];
    let r = reveal(&[(0, 2), (1, 1), (2, 1)], &p).unwrap();
    assert!(r.kl.abs() < 1e-12);
    assert!((r.cross_entropy - r.model_entropy).abs() < 1e-12);
    // One guess on an unlikely token: all the class's mass there, KL = -ln p.
    let r = reveal(&[(2, 7)], &[0.9, 0.09, 0.01]).unwrap();
    assert!((r.kl - 100f64.ln()).abs() < 1e-12);
    assert_eq!(r.rows[0].rank, 3);
}

#[test]
fn no_reveal_without_guesses_or_outside_the_distribution() {
    let p = [0.5, 0.5];
    assert_eq!(reveal(&[], &p), None);
    assert_eq!(reveal(&[(0, 0)], &p), None);
    assert_eq!(reveal(&[(2, 1)], &p), None);
    assert_eq!(reveal(&[(0, 1)], &[0.5, 0.6]), None);
    assert_eq!(reveal(&[(0, 1)], &[f64::NAN, 1.0]), None);
}

#[test]
fn the_score_counts_rounds_the_class_and_the_model_got_right() {
    let p = [0.6, 0.3, 0.1];
    let mut s = Score::default();
    // The class's top guess (1) drawn where the model's top-1 (0) was not: a win.
    s.add(&reveal(&[(1, 3), (0, 1)], &p).unwrap(), 0, 1);
    // Both right.
    s.add(&reveal(&[(0, 2)], &p).unwrap(), 0, 0);
    // A tie at the top counts as right if either is drawn.
    s.add(&reveal(&[(2, 2), (1, 2)], &p).unwrap(), 0, 2);
    // Neither.
    s.add(&reveal(&[(1, 1)], &p).unwrap(), 0, 2);
    assert_eq!(
        s,
        Score {
            rounds: 4,
            class_right: 3,
            model_right: 1,
            class_beat_model: 2
        }
    );
    assert_eq!(
        s.to_string(),
        "the class's top guess was the token on 3 of 4, the model's top-1 on 1 of 4; \
         the class beat the model's top-1 on 2 of 4"
    );
}

fn stories_tokenizer() -> Tokenizer {
    let bytes = std::fs::read("../../assets/models/stories260K/tok512.bin")
        .expect("assets/models/stories260K/tok512.bin: the set-up copies it");
    Tokenizer::from_bytes(&bytes).unwrap()
}

/// The piece of a guess's first token after a context, on stories260K's 512 pieces.
fn piece_after(tok: &Tokenizer, context: &str, guess: &str) -> String {
    let id = first_token(tok, context, guess).unwrap();
    tok.piece(id).unwrap().to_string()
}

#[test]
fn a_guess_counts_for_its_first_token_as_the_model_would_write_it() {
    let tok = stories_tokenizer();
    let ctx = "Once upon a time, there was a little";
    // A next word starts with its space; the piece is the word's start.
    for guess in ["girl", " girl", "dog", "Tom"] {
        let piece = piece_after(&tok, ctx, guess);
        let word = format!(" {}", guess.trim());
        assert!(
            piece.starts_with(' ') && word.starts_with(&piece) && piece.len() > 1,
            "{guess:?} -> {piece:?}"
        );
    }
    // Punctuation as typed; after a space, no second one; at the start of the text, a word
    // still gets its space (SentencePiece's dummy prefix).
    assert_eq!(piece_after(&tok, "Once upon a time", ","), ",");
    assert_eq!(
        piece_after(&tok, "Once upon a ", "time"),
        piece_after(&tok, "Once upon a", "time")
    );
    assert!(piece_after(&tok, "", "Once").starts_with(" O"));
    assert_eq!(first_token(&tok, "Once", ""), None);
}
