//! A round of the class guessing the next token: each guess's token after the text so far.

use super::*;

fn class_tokens(s: &mut Session, host: &TestHost, guesses: &[&str]) -> Vec<Option<u32>> {
    let guesses = guesses.iter().map(|g| g.to_string()).collect();
    let ev = ask(
        s,
        host,
        Request::Class(ClassRequest::ClassTokens { guesses }),
    );
    match &ev[..] {
        [Event::Class(ClassEvent::ClassTokens { tokens })] => tokens.clone(),
        _ => panic!("{ev:?}"),
    }
}

/// Greedy on stories260K writes ", there was a little girl named Lily." after "Once upon a
/// time": the guess "girl" after ", there was a little" is the token greedy takes next,
/// and "," after the prompt is the first one; a guess that adds nothing has none.
#[test]
fn a_guess_is_the_token_the_model_would_write_for_it_after_the_text_so_far() {
    let (mut s, host) = prompted(&[("temperature", "0")]);
    let at_prompt = class_tokens(&mut s, &host, &[",", "there", ""]);
    let ev = step(&mut s, &host, 1);
    let first = last!(&ev, Transcript).steps[0].clone();
    assert_eq!(
        (at_prompt[0], first.piece.as_str()),
        (Some(first.token), ",")
    );
    assert_eq!(at_prompt[2], None);
    let ev = step(&mut s, &host, 4);
    let text = last!(&ev, Transcript).generated_text.clone();
    assert_eq!(text, ", there was a little");
    let tokens = class_tokens(&mut s, &host, &["girl", "Girl", "dog"]);
    let ev = step(&mut s, &host, 1);
    let next = last!(&ev, Transcript).steps.last().unwrap().clone();
    // stories260K writes " girl" as " g" "irl": the guess counts for its first token.
    assert_eq!(next.piece, " g");
    assert_eq!(tokens[0], Some(next.token));
    // Another word is another token, and case counts.
    assert!(tokens[1].is_some() && tokens[1] != tokens[0]);
    assert!(tokens[2].is_some() && tokens[2] != tokens[0]);
}

/// A lesson step's class check, opened as the track opens it: the transcript's last logits,
/// the chain on them under the check's knobs, and the tokens of `guesses` there.
struct Checked {
    p: Vec<f64>,
    /// The chain's final distribution under the check's knobs.
    q: Vec<f32>,
    text: String,
    /// Each generated token's piece and model probability (T = 1).
    steps: Vec<(String, f64)>,
    tokens: Vec<Option<u32>>,
}

fn open_check(s: &mut Session, host: &TestHost, key: &str, guesses: &[&str]) -> Checked {
    let (_, step) = decoding_page::lesson::by_key(key).unwrap();
    let check = step
        .check
        .unwrap_or_else(|| panic!("{key} has no class check"));
    let r = decoding_page::page::from_query(check.query, 512);
    assert!(r.problems.is_empty(), "{key}: {:?}", r.problems);
    assert!(r.page.class, "{key}: the check opens the class round");
    let mut events = Vec::new();
    for req in decoding_page::page::view_requests(&r.page, &r.settings) {
        events.extend(ask(s, host, req));
    }
    let next = last!(&events, Next).clone();
    let q = next.trace(&r.settings, None).unwrap().probs;
    let t = last!(&events, Transcript);
    let text = t.generated_text.clone();
    let steps = t
        .steps
        .iter()
        .map(|s| (s.piece.clone(), s.model_prob))
        .collect();
    Checked {
        steps,
        p: decoding_page::page::class_mode::softmax(&next.logits).unwrap(),
        q,
        text,
        tokens: class_tokens(s, host, guesses),
    }
}

/// The mean model probability of the steps that start inside each time `sentence` is
/// written.
fn rounds_of(steps: &[(String, f64)], sentence: &str) -> Vec<f64> {
    let mut starts = Vec::new();
    let mut text = String::new();
    for (piece, _) in steps {
        starts.push(text.len());
        text.push_str(piece);
    }
    text.match_indices(sentence)
        .map(|(off, _)| {
            let inside: Vec<f64> = steps
                .iter()
                .zip(&starts)
                .filter(|(_, &at)| at >= off && at < off + sentence.len())
                .map(|(s, _)| s.1)
                .collect();
            inside.iter().sum::<f64>() / inside.len() as f64
        })
        .collect()
}

/// The rank of `t` in `p` (1: the most likely).
fn rank(p: &[f64], t: u32) -> usize {
    1 + p.iter().filter(|&&x| x > p[t as usize]).count()
}

/// Each of the lesson's four class checks (greedy against sampling, temperature, top-p's
/// kept set, the penalty's loop) teaches what its question says, on its own numbers.
#[test]
fn each_class_check_of_the_lesson_shows_what_its_question_asks() {
    let (mut s, host) = loaded();
    let with_checks: Vec<&str> = decoding_page::lesson::STEPS
        .iter()
        .filter(|st| st.check.is_some())
        .map(|st| st.key)
        .collect();
    assert_eq!(with_checks, ["loop", "temperature", "topk-topp", "penalty"]);

    // Greedy: the guess "girl" is the model's favourite; greedy gives it q = 1 and every
    // other token 0, while a sample would take another token 1 − p of the time.
    let c = open_check(&mut s, &host, "loop", &["girl", "dog"]);
    let girl = c.tokens[0].unwrap();
    assert_eq!(rank(&c.p, girl), 1);
    assert!(c.p[girl as usize] < 0.999, "a sample could take another");
    assert_eq!(c.q[girl as usize], 1.0);
    assert_eq!(c.q[c.tokens[1].unwrap() as usize], 0.0);

    // Temperature 0.5: the favourite's q above its p, a tail guess's q below its p.
    let c = open_check(&mut s, &host, "temperature", &["zebra"]);
    let top = (0..c.p.len())
        .max_by(|a, b| c.p[*a].total_cmp(&c.p[*b]))
        .unwrap();
    assert!(
        f64::from(c.q[top]) > c.p[top] + 0.01,
        "{} vs {}",
        c.q[top],
        c.p[top]
    );
    let zebra = c.tokens[0].unwrap() as usize;
    assert!(rank(&c.p, zebra as u32) > 5);
    assert!(f64::from(c.q[zebra]) < c.p[zebra]);

    // Top-p 0.9: q > 0 exactly on the fewest most likely tokens whose p adds up to 0.9
    // (worked out here from p alone), "park" among them.
    let c = open_check(&mut s, &host, "topk-topp", &["park"]);
    let mut order: Vec<usize> = (0..c.p.len()).collect();
    order.sort_by(|a, b| c.p[*b].total_cmp(&c.p[*a]));
    let mut sum = 0.0;
    let kept_by_hand = order
        .iter()
        .take_while(|&&i| {
            let before = sum;
            sum += c.p[i];
            before < 0.9
        })
        .count();
    let kept = c.q.iter().filter(|&&q| q > 0.0).count();
    assert_eq!(kept, kept_by_hand);
    assert!(kept > 1 && kept < 100, "{kept} kept");
    assert!(order[..kept].iter().all(|&i| c.q[i] > 0.0));
    let park = c.tokens[0].unwrap() as usize;
    assert!(
        c.q[park] > 0.0,
        "\"park\" after \"Lily went to the\" is in top-p 0.9's set"
    );

    // The penalty's loop: after 40 greedy tokens the text repeats a sentence, its next
    // token is the model's favourite, and the model is surer of the sentence each time
    // round (its tokens' mean probability rises from one time to the next).
    let c = open_check(&mut s, &host, "penalty", &["liked"]);
    let sentence = " He liked to play with his ball.";
    assert!(c.text.matches(sentence).count() >= 2, "{}", c.text);
    let liked = c.tokens[0].unwrap();
    assert_eq!(rank(&c.p, liked), 1, "{}", c.text);
    let means = rounds_of(&c.steps, sentence);
    eprintln!("the loop's sentence, its mean p each time round: {means:?}");
    assert!(means.len() >= 2, "{means:?}");
    assert!(means.windows(2).all(|w| w[1] > w[0]), "{means:?}");
}
