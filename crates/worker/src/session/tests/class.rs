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
