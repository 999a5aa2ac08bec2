//! The tokenizers against their references and the known answers.

use super::*;

fn toy_vocab() -> Llama2cVocab {
    let mut pieces: Vec<String> = vec!["<unk>".into(), "\n<s>\n".into(), "\n</s>\n".into()];
    pieces.extend((0..=255u8).map(|b| format!("<0x{b:02X}>")));
    let merges = [" ", "a", "b", "c", " a", "ab", " ab", "bc", "abc"];
    pieces.extend(merges.iter().map(|s| s.to_string()));
    let n = pieces.len();
    // Scores: later pieces lower, like SentencePiece's -rank.
    let scores = (0..n)
        .map(|i| if i < 259 { 0.0 } else { -((i - 259) as f32) })
        .collect();
    Llama2cVocab {
        // The longest piece ("\n</s>\n", "<0x0A>"), as llama2.c's tokenizer.py writes it.
        max_token_length: 6,
        pieces,
        scores,
    }
}

/// The encoder's choices worked out by hand: a tie goes to the leftmost pair, a merge
/// changes its neighbours' pairs, a character without a piece falls back to its bytes
/// (a byte without a `<0xNN>` piece is dropped), and repeated pieces (not checked in a
/// GGUF vocabulary) resolve to the later id, as a map built in id order would.
#[test]
fn llama2c_encoder_takes_the_leftmost_best_merge() {
    let mut pieces: Vec<String> = ["<unk>", "<s>", "</s>", "<0xC3>", "<0xA9>"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // ids 5.. : " ", "a", "b", "c", "ab", "bc", " a", "abc", "a" again
    let rest = [" ", "a", "b", "c", "ab", "bc", " a", "abc", "a"];
    pieces.extend(rest.iter().map(|s| s.to_string()));
    let scores = vec![
        0.0, 0.0, 0.0, 0.0, 0.0, -1.0, -1.0, -1.0, -1.0, -5.0, -5.0, -7.0, -9.0, -1.0,
    ];
    let v = Llama2cVocab {
        max_token_length: 6,
        pieces,
        scores,
    };
    let tk = Tokenizer::from_llama2c_vocab(v.clone(), 1, 2).unwrap();
    let cases: [(&str, &[u32]); 4] = [
        // " " a b c: "ab" and "bc" tie at -5: "ab" (leftmost), then " a"+? no: " "+"ab"
        // is not a piece, "ab"+"c" = "abc" (-9).
        ("abc", &[1, 5, 12]),
        // " " a: " a" (-7); the second "a" resolves to id 13.
        ("a", &[1, 11]),
        // é has no piece: its bytes C3 A9; b c merge to "bc".
        ("ébc", &[1, 5, 3, 4, 10]),
        // x has neither a piece nor byte pieces: dropped.
        ("xb", &[1, 5, 7]),
    ];
    for (text, want) in cases {
        assert_eq!(tk.encode(text, true).unwrap(), want, "{text:?}");
        assert_eq!(reference_encode(&v, text, Some(1)), want, "{text:?}");
    }
    assert_eq!(tk.encode("", false).unwrap(), Vec::<u32>::new());
    // A vocabulary that did not come through tokenizer.bin's parser (a GGUF file's) is
    // still refused with a score the merges cannot be ordered by.
    let mut nan = v.clone();
    nan.scores[9] = f32::NAN;
    assert!(matches!(
        Tokenizer::from_llama2c_vocab(nan, 1, 2),
        Err(TokenizerError::NonFiniteScore { id: 9, .. })
    ));
}

/// A hostile file: one 1 MB piece. Refused from the header's bound before
/// the conversion (quadratic in the piece) runs; a header bound out of range too.
#[test]
fn a_piece_longer_than_max_token_length_is_refused_at_once() {
    let mut v = toy_vocab();
    v.pieces.push("x".repeat(1 << 20));
    v.scores.push(-100.0);
    let e = Llama2cVocab::from_bytes(&v.to_bytes()).unwrap_err();
    assert_eq!(
        e,
        TokenizerError::PieceTooLong {
            id: 268,
            len: 1 << 20,
            max: 6
        }
    );
    // The whole load (parse, then the conversion) stops at the parse.
    assert_eq!(Tokenizer::from_bytes(&v.to_bytes()).unwrap_err(), e);
    for bad in [0i32, -3, 1 << 20] {
        let mut b = v.to_bytes();
        b[..4].copy_from_slice(&bad.to_le_bytes());
        assert_eq!(
            Llama2cVocab::from_bytes(&b).unwrap_err(),
            TokenizerError::BadMaxTokenLength(bad as i64)
        );
    }
}

#[test]
fn vocab_round_trips_through_bytes() {
    let v = toy_vocab();
    assert_eq!(Llama2cVocab::from_bytes(&v.to_bytes()).unwrap(), v);
}

#[test]
fn reference_and_hf_agree_on_toy_vocab() {
    let v = toy_vocab();
    let tk = Tokenizer::from_llama2c_bytes(&v.to_bytes()).unwrap();
    for text in ["", "a", "abc", "ab c", "cab", "é", "a\nb", "bcabc abc"] {
        let r = reference_encode(&v, text, Some(1));
        assert_eq!(tk.encode(text, true).unwrap(), r, "text {text:?}");
    }
    // [" ", "a", "b", "c"]: " a" (score -4) beats "ab" (-5) and "bc" (-7); then
    // " ab" (-6) beats "bc" (-7); " abc" is not a piece, so [" ab", "c"].
    let ids = reference_encode(&v, "abc", None);
    let pieces: Vec<&str> = ids.iter().map(|&i| v.pieces[i as usize].as_str()).collect();
    assert_eq!(pieces, [" ab", "c"]);
}

#[test]
fn unknown_characters_fall_back_to_bytes() {
    let v = toy_vocab();
    let ids = reference_encode(&v, "é", None);
    // " " then the two UTF-8 bytes of é (0xC3 0xA9) as <0xNN> pieces (byte + 3).
    assert_eq!(ids, vec![259, 0xC3 + 3, 0xA9 + 3]);
}

#[test]
fn decoder_drops_space_after_bos_and_joins_bytes() {
    let v = toy_vocab();
    let tk = Tokenizer::from_llama2c_bytes(&v.to_bytes()).unwrap();
    let ids = tk.encode("é ab", true).unwrap();
    assert_eq!(tk.decode(&ids).unwrap(), "é ab");
}

#[test]
fn text_decoder_never_panics_on_invalid_utf8() {
    let mut d = TextDecoder::default();
    assert_eq!(d.push(&[0xE2, 0x82]), "");
    assert_eq!(d.push(&[0xAC]), "€");
    assert_eq!(d.push(&[0xFF, b'a']), "\u{FFFD}a");
    assert_eq!(d.push(&[0xE2]), "");
    assert_eq!(d.finish(), "\u{FFFD}");
}

#[test]
fn malformed_tokenizer_files_give_typed_errors() {
    assert_eq!(Llama2cVocab::from_bytes(&[]), Err(TokenizerError::Empty));
    let good = toy_vocab().to_bytes();
    assert!(matches!(
        Llama2cVocab::from_bytes(&good[..good.len() - 1]),
        Err(TokenizerError::Truncated { .. })
    ));
    let mut bad = toy_vocab();
    bad.pieces[266] = "a".into();
    assert!(matches!(
        Llama2cVocab::from_bytes(&bad.to_bytes()),
        Err(TokenizerError::DuplicatePiece { .. })
    ));
    // A piece whose bytes are not UTF-8 (header: the longest piece is 2 bytes).
    let mut bytes = 2i32.to_le_bytes().to_vec();
    bytes.extend_from_slice(&0f32.to_le_bytes());
    bytes.extend_from_slice(&2i32.to_le_bytes());
    bytes.extend_from_slice(&[0xC3, 0x28]);
    assert_eq!(
        Llama2cVocab::from_bytes(&bytes),
        Err(TokenizerError::InvalidUtf8 {
            id: 0,
            bytes: vec![0xC3, 0x28]
        })
    );
    let mut neg = 2i32.to_le_bytes().to_vec();
    neg.extend_from_slice(&0f32.to_le_bytes());
    neg.extend_from_slice(&(-5i32).to_le_bytes());
    assert_eq!(
        Llama2cVocab::from_bytes(&neg),
        Err(TokenizerError::BadPieceLength { id: 0, len: -5 })
    );
}
