//! The class area's translations checked: the taxonomy's table (its English kept in
//! `taxonomy.rs`, which its own tests read) has each word in every language, and the class
//! round's and the room's messages are, in English, the text the page showed before it
//! spoke other languages.

use super::*;
use crate::page::class_mode::RoundError;
use crate::page::class_round::{parse_tally, Score, TallyError, MAX_COUNT, MAX_GUESS_CHARS};
use crate::page::room;
use crate::taxonomy::{self, Category, ROWS};

/// `id` is in every language, and English's is `english`.
fn said_everywhere(id: &str, english: &str) {
    assert_eq!(Tr::new(Lang::En).get(id), english, "en {id}");
    for lang in [Lang::ZhCn, Lang::Es] {
        assert!(Tr::new(lang).has(id), "{} lacks {id}", lang.name());
    }
}

#[test]
fn every_word_of_the_taxonomy_is_in_every_language_as_the_table_writes_it() {
    let mut n = 0;
    for r in &ROWS {
        said_everywhere(&taxonomy::at_inference_id(r.row), r.at_inference);
        said_everywhere(&taxonomy::cell_id(r.row), r.cell);
        for (id, english) in taxonomy::members_said(r.row) {
            said_everywhere(&id, english);
            n += 1;
        }
    }
    for c in [Category::Learned, Category::Config, Category::State] {
        said_everywhere(taxonomy::meaning_id(c), taxonomy::meaning(c));
    }
    // Every knob and every item is in some row.
    assert_eq!(
        n,
        crate::taxonomy::ITEMS.len() + decoding_engine::decode::sampling::KNOBS.len()
    );
    assert_eq!(Tr::new(Lang::En).get("taxonomy-separator"), ", ");
    assert_eq!(Tr::new(Lang::ZhCn).get("taxonomy-separator"), "、");
}

#[test]
fn a_rounds_errors_are_their_english_messages() {
    for e in RoundError::ALL {
        said_everywhere(e.id(), &e.to_string());
        assert_eq!(RoundError::from_english(&e.to_string()), Some(e));
    }
    assert_eq!(RoundError::from_english("the server's own words"), None);
}

#[test]
fn a_tallys_errors_and_the_score_are_their_english_messages() {
    let en = Tr::new(Lang::En);
    let max = MAX_COUNT.to_string();
    let long = "x".repeat(MAX_GUESS_CHARS + 1);
    for (e, id, args) in [
        (
            parse_tally(&long).unwrap_err(),
            "class-err-bad-guess",
            vec![
                ("guess", long.clone()),
                ("max", MAX_GUESS_CHARS.to_string()),
            ],
        ),
        (
            parse_tally("cat ×0").unwrap_err(),
            "class-err-bad-count",
            vec![("count", "0".to_string()), ("max", max.clone())],
        ),
        (
            TallyError::TooMany(11_000),
            "class-err-too-many",
            vec![("total", "11000".to_string()), ("max", max.clone())],
        ),
    ] {
        assert_eq!(en.fmt(id, &args), e.to_string());
    }
    let score = Score {
        rounds: 3,
        class_right: 1,
        model_right: 2,
        class_beat_model: 0,
    };
    let args = [
        ("class", "1".to_string()),
        ("rounds", "3".to_string()),
        ("model", "2".to_string()),
        ("beat", "0".to_string()),
    ];
    assert_eq!(en.fmt("class-score", &args), format!("Score: {score}."));
    assert_eq!(
        Tr::new(Lang::ZhCn).fmt("class-score", &args),
        "得分：全班票数最多的猜测在 3 轮中猜中 1 轮，模型的 top-1 在 3 轮中猜中 2 轮；全班在 3 轮中有 0 轮胜过模型的 top-1。"
    );
}

#[test]
fn the_rooms_messages_are_in_english_as_the_page_wrote_them() {
    let en = Tr::new(Lang::En);
    // The panel clears this error by its start.
    assert_eq!(
        en.fmt(
            "room-err-vocab",
            &[("vocab", "512".into()), ("mine", "32000".into())]
        ),
        "The classroom server reads guesses with a vocabulary of 512 tokens, this page's model has 32000: start it with the page's model."
    );
    let count = |id, students: &str| {
        en.fmt(
            id,
            &[
                ("round", "2".into()),
                ("students", students.into()),
                ("guessed", "0".into()),
            ],
        )
    };
    assert_eq!(
        count("room-count-one", "1"),
        "Round 2: 1 student in, 0 guessed"
    );
    assert_eq!(
        count("room-count-other", "30"),
        "Round 2: 30 students in, 0 guessed"
    );
    // A link's code the page cannot read: the text as typed, quoted.
    let message = room::check_code("nope").unwrap_err();
    let code = room::refused_code(&message).unwrap();
    assert_eq!(code, "\"nope\"");
    let args = [
        ("code", code.to_string()),
        ("length", room::CODE_LEN.to_string()),
        ("alphabet", room::CODE_ALPHABET.to_string()),
    ];
    assert_eq!(en.fmt("room-err-code", &args), message);
    assert_eq!(room::refused_code("\"x\" is not auto, gpu or cpu"), None);
}

/// The notes the presenter's page tells (`Note::new("id")` in the app's `classroom.rs`) are
/// in English (the scan of `ui.t` does not see them).
#[test]
fn every_note_of_the_room_is_in_english() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/src/ui/classroom.rs");
    let src = std::fs::read_to_string(path).unwrap();
    let ids: Vec<&str> = src
        .match_indices("Note::new(\"")
        .map(|(i, m)| src[i + m.len()..].split('"').next().unwrap())
        .collect();
    assert!(ids.len() >= 7, "only {} notes read", ids.len());
    for id in ids {
        assert!(
            Tr::new(Lang::En).has(id),
            "classroom.rs tells {id}, which en/*.ftl lacks"
        );
    }
}
