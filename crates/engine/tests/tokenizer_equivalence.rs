//! The engine's llama2.c encoder (a sorted index, pairs kept between rounds), the readable
//! reference encoder and the vocabulary converted into a `tokenizers` BPE model (an encoder
//! that is not ours) give identical ids: on the lesson's text, the known answers, and random
//! strings.

mod common;

use decoding_engine::tokenizer::{reference_encode, Llama2cVocab};
use proptest::prelude::*;

const LESSON: &str = include_str!("lesson-excerpt.txt");

fn check(text: &str) {
    let m = common::stories260k();
    let tk = &m.tokenizer;
    let vocab = Llama2cVocab::from_bytes(&common::read("tok512.bin")).unwrap();
    let ours = tk.encode(text, true).unwrap();
    let reference = reference_encode(&vocab, text, Some(tk.bos));
    assert_eq!(ours, reference, "text {text:?}");
    let hf = vocab.to_hf_tokenizer().unwrap();
    let mut by_hf = vec![tk.bos];
    by_hf.extend_from_slice(hf.encode(text, false).unwrap().get_ids());
    assert_eq!(ours, by_hf, "text {text:?}");
}

#[test]
fn known_answers_and_lesson_text() {
    check("Once upon a time");
    check(common::GREEDY);
    for line in LESSON.lines() {
        check(line);
    }
    check(LESSON);
    check("");
    check(" ");
    check("  leading and trailing  ");
    check("émoji 🙂 and ünïcödé — “quotes” \t tabs\r\nand newlines\n\n");
}

#[test]
fn decode_round_trips_known_text() {
    let m = common::stories260k();
    let ids = m.tokenizer.encode(common::GREEDY, true).unwrap();
    assert_eq!(m.tokenizer.decode(&ids).unwrap(), common::GREEDY);
    let emoji = "a 🙂 b";
    let ids = m.tokenizer.encode(emoji, true).unwrap();
    assert_eq!(m.tokenizer.decode(&ids).unwrap(), emoji);
}

/// A long paste (300,000 characters; the prompt's length is checked only after encoding)
/// is encoded in one pass of merges, not one scan of every pair per merge, and comes back
/// whole.
#[test]
fn a_long_text_is_encoded_and_decodes_back() {
    let m = common::stories260k();
    let text = LESSON.repeat(300_000 / LESSON.len() + 1);
    let ids = m.tokenizer.encode(&text, true).unwrap();
    // Fewer ids than characters: merges ran (each character starts as one piece or more).
    assert!(ids.len() < text.chars().count(), "{} ids", ids.len());
    assert_eq!(m.tokenizer.decode(&ids).unwrap(), text);
    // Its first part as a prompt of its own gives the same ids as the reference.
    let head: String = text.chars().take(3_000).collect();
    check(&head);
}

fn text_strategy() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        "[a-zA-Z ,.!?'\"]{1,12}",
        "[àéîõüçñß]{1,3}",
        "[🙂🚀🌍✨]{1,2}",
        Just("\n".to_string()),
        Just("  ".to_string()),
        "[ -~]{1,6}",
        "\\PC{1,3}",
    ];
    proptest::collection::vec(pieces, 0..12).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn reference_and_tokenizers_agree_on_random_text(text in text_strategy()) {
        check(&text);
    }
}

#[test]
fn hugging_face_tokenizer_json_is_accepted() {
    // The converted tokenizer written as a Hugging Face tokenizer.json, then loaded back
    // through the JSON path: same ids, same text.
    let m = common::stories260k();
    let vocab = Llama2cVocab::from_bytes(&common::read("tok512.bin")).unwrap();
    let json = vocab.to_hf_tokenizer().unwrap().to_string(false).unwrap();
    let from_json = decoding_engine::Tokenizer::from_bytes(json.as_bytes()).unwrap();
    assert_eq!(from_json.vocab_size(), 512);
    for text in ["Once upon a time", common::GREEDY, "é🙂\n"] {
        let ids = from_json.encode(text, true).unwrap();
        assert_eq!(ids, m.tokenizer.encode(text, true).unwrap());
        assert_eq!(from_json.decode(&ids).unwrap(), text);
    }
    assert_eq!(from_json.piece(403).unwrap(), " Once");
}
