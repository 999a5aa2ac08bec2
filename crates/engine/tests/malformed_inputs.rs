//! Every kind of bad input gets its typed error, and nothing panics.

mod common;

use decoding_engine::formats::llama2c::{CheckpointError, HEADER_BYTES};
use decoding_engine::tokenizer::{Llama2cVocab, TokenizerError};
use decoding_engine::ConfigError;
use decoding_engine::{Checkpoint, Model, ModelError, Tokenizer};
use proptest::prelude::*;

fn model_bytes() -> Vec<u8> {
    common::read("stories260K.bin")
}

/// The real tokenizer, read once for the property tests.
static TOK: std::sync::LazyLock<Vec<u8>> = std::sync::LazyLock::new(tok_bytes);

fn tok_bytes() -> Vec<u8> {
    common::read("tok512.bin")
}

fn load(model: &[u8]) -> ModelError {
    Model::from_memory(
        [("model.bin", model), ("tokenizer.bin", &tok_bytes())],
        decoding_engine::budget::Budget::default(),
    )
    .unwrap_err()
}

#[test]
fn empty_checkpoint() {
    assert_eq!(load(&[]), ModelError::Checkpoint(CheckpointError::Empty));
}

#[test]
fn truncated_checkpoint_names_both_sizes() {
    let b = model_bytes();
    let e = load(&b[..1000]);
    assert_eq!(
        e.to_string(),
        "model: file is 1,000 bytes, header implies 1,056,540"
    );
    assert!(matches!(
        load(&b[..20]),
        ModelError::Checkpoint(CheckpointError::TooShortForHeader { len: 20 })
    ));
}

#[test]
fn wrong_size_checkpoint() {
    let mut b = model_bytes();
    b.extend_from_slice(&[0; 8]);
    assert_eq!(
        load(&b).to_string(),
        "model: file is 1,056,548 bytes, header implies 1,056,540"
    );
}

#[test]
fn absurd_header_rejected_before_allocating() {
    let mut b = model_bytes();
    b[0..4].copy_from_slice(&(1i32 << 30).to_le_bytes());
    assert!(matches!(
        load(&b),
        ModelError::Checkpoint(CheckpointError::Config(ConfigError::OutOfRange {
            field: "dim",
            ..
        }))
    ));
    let mut b = model_bytes();
    b[12..16].copy_from_slice(&(-3i32).to_le_bytes()); // n_heads
    assert!(matches!(
        load(&b),
        ModelError::Checkpoint(CheckpointError::Config(ConfigError::OutOfRange {
            field: "n_heads",
            ..
        }))
    ));
}

#[test]
fn nan_weight() {
    let mut b = model_bytes();
    let at = HEADER_BYTES + 4 * 1000; // inside the token embedding
    b[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    match load(&b) {
        ModelError::Checkpoint(CheckpointError::NonFinite { tensor, index, .. }) => {
            assert_eq!((tensor, index), ("token_embedding", 1000))
        }
        e => panic!("unexpected {e}"),
    }
    let mut b = model_bytes();
    b[at..at + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    assert!(matches!(
        load(&b),
        ModelError::Checkpoint(CheckpointError::NonFinite { .. })
    ));
}

#[test]
fn tokenizer_vocab_differs_from_model() {
    let mut vocab = Llama2cVocab::from_bytes(&tok_bytes()).unwrap();
    vocab.pieces.truncate(500);
    vocab.scores.truncate(500);
    let e = Model::from_memory(
        [
            ("model.bin", &model_bytes()),
            ("tokenizer.bin", &vocab.to_bytes()),
        ],
        decoding_engine::budget::Budget::default(),
    )
    .unwrap_err();
    assert_eq!(
        e,
        ModelError::Tokenizer(TokenizerError::VocabMismatch {
            tokenizer: 500,
            model: 512
        })
    );
    assert_eq!(
        e.to_string(),
        "tokenizer: the tokenizer has 500 tokens but the model's vocabulary has 512"
    );
}

#[test]
fn prompt_longer_than_context() {
    let m = common::stories260k();
    let long = "Once upon a time ".repeat(200);
    match m.encode_prompt(&long).unwrap_err() {
        ModelError::PromptTooLong { tokens, seq_len } => {
            assert!(tokens > 512);
            assert_eq!(seq_len, 512);
        }
        e => panic!("unexpected {e}"),
    }
}

#[test]
fn non_utf8_piece() {
    let mut b = tok_bytes();
    // Piece 259 (" t") starts after the header and 259 earlier pieces; overwrite its first
    // byte with 0xFF, which is never valid UTF-8.
    let mut at = 4;
    for _ in 0..259 {
        let n = i32::from_le_bytes(b[at + 4..at + 8].try_into().unwrap()) as usize;
        at += 8 + n;
    }
    b[at + 8] = 0xFF;
    match Tokenizer::from_bytes(&b).unwrap_err() {
        TokenizerError::InvalidUtf8 { id, .. } => assert_eq!(id, 259),
        e => panic!("unexpected {e}"),
    }
}

#[test]
fn truncated_tokenizer() {
    let b = tok_bytes();
    assert!(matches!(
        Tokenizer::from_bytes(&b[..b.len() - 3]).unwrap_err(),
        TokenizerError::Truncated { .. }
    ));
    assert_eq!(
        Tokenizer::from_bytes(&[]).unwrap_err(),
        TokenizerError::Empty
    );
}

#[test]
fn garbage_tokenizer_json() {
    assert!(matches!(
        Tokenizer::from_bytes(b"{\"model\": 3}").unwrap_err(),
        TokenizerError::Json(_)
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random bytes never panic the loaders, and never pass as a model.
    #[test]
    fn loaders_never_panic_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let _ = Checkpoint::from_bytes(&bytes);
        let _ = Tokenizer::from_bytes(&bytes);
        let budget = decoding_engine::budget::Budget::default();
        prop_assert!(Model::from_memory([("model.bin", &bytes), ("tokenizer.bin", &bytes)], budget).is_err());
        // Beside a real tokenizer the random file is taken for the checkpoint (it is not a
        // tokenizer), so its own check runs on it.
        prop_assert!(Model::from_memory([("model.bin", bytes), ("tokenizer.bin", TOK.clone())], budget).is_err());
    }

    /// A valid header followed by random bytes: no panic, and no allocation beyond the file.
    #[test]
    fn random_headers_never_panic(header in proptest::array::uniform7(any::<i32>()), tail in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut bytes: Vec<u8> = header.iter().flat_map(|h| h.to_le_bytes()).collect();
        bytes.extend_from_slice(&tail);
        let _ = Checkpoint::from_bytes(&bytes);
    }

    /// The real model with bytes flipped: loads or fails with a typed error, never panics.
    #[test]
    fn corrupted_model_never_panics(flips in proptest::collection::vec((0usize..1_056_540, any::<u8>()), 1..8)) {
        let mut b = model_bytes();
        for (at, v) in flips {
            b[at] = v;
        }
        let _ = Checkpoint::from_bytes(&b);
    }
}

/// A hostile header: tiny dims, a million positions. The file (12.7 MB) passes every size
/// check, but its KV cache would need 32 GiB: refused from the header, before anything is
/// allocated, with the figure, natively and under wasm32's budget.
#[test]
fn a_million_position_context_is_refused_before_allocating() {
    use decoding_engine::budget::Budget;
    let header = [64i32, 1, 64, 32, 32, 3, 1_048_576];
    let c = decoding_engine::Config::from_header(header).unwrap();
    let size = c.expected_file_bytes().unwrap() as usize;
    assert!(size < 13_000_000, "{size}");
    let mut bytes = vec![0u8; size];
    for (i, h) in header.iter().enumerate() {
        bytes[i * 4..i * 4 + 4].copy_from_slice(&h.to_le_bytes());
    }
    let e = Checkpoint::from_bytes(&bytes).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the KV cache would need 32 GiB at seq_len 1,048,576; the limit is 16 GiB"
    );
    let e = Checkpoint::from_bytes_within(&bytes, Budget(3 << 29)).unwrap_err();
    assert!(e.to_string().ends_with("the limit is 1.50 GiB"), "{e}");
    // The same header with a short context loads within the budget.
    let mut small = header;
    small[6] = 64;
    let c = decoding_engine::Config::from_header(small).unwrap();
    let mut bytes = vec![0u8; c.expected_file_bytes().unwrap() as usize];
    for (i, h) in small.iter().enumerate() {
        bytes[i * 4..i * 4 + 4].copy_from_slice(&h.to_le_bytes());
    }
    Checkpoint::from_bytes_within(&bytes, Budget(3 << 29)).unwrap();
}

/// A minimal WordLevel tokenizer.json with the given extra token.
fn word_level_json(extra: &str) -> Vec<u8> {
    let vocab = serde_json::json!({ "<s>": 0, "</s>": 1, extra: 2 });
    serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": null, "pre_tokenizer": null, "post_processor": null, "decoder": null,
        "model": { "type": "WordLevel", "vocab": vocab, "unk_token": "<s>" }
    })
    .to_string()
    .into_bytes()
}

#[test]
fn tokenizer_json_bounds_its_size_and_its_tokens() {
    let ok = Tokenizer::from_bytes(&word_level_json("hello")).unwrap();
    assert_eq!(ok.vocab_size(), 3);
    let long = "x".repeat(2000);
    assert_eq!(
        Tokenizer::from_bytes(&word_level_json(&long)).unwrap_err(),
        TokenizerError::TokenTooLong { id: 2, len: 2000 }
    );
    // A file over the limit is refused before it is parsed.
    let mut huge = word_level_json("hello");
    huge.resize(decoding_engine::tokenizer::MAX_TOKENIZER_BYTES + 1, b' ');
    let e = Tokenizer::from_bytes(&huge).unwrap_err();
    assert!(matches!(e, TokenizerError::FileTooLarge { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("67,108,865 bytes; the limit is 64 MiB"),
        "{e}"
    );
}

/// The files' check, as `Model::load` runs it before reading the bulk: the checkpoint's
/// header against the budget and its length, the tokenizer's length against its limit. The
/// files here hold nothing past their headers (reading on fails), so each answer comes from
/// the header alone.
fn check(checkpoint: &[u8], len: u64, tokenizer_len: u64) -> Result<Option<u64>, String> {
    use decoding_engine::backend::testing::HeadOnly;
    use decoding_engine::budget::Budget;
    use decoding_engine::formats::source::{ModelFile, ModelSource};
    let tok = tok_bytes();
    let mut files = [
        ModelFile::new(
            "model.bin",
            Box::new(HeadOnly {
                head: checkpoint.to_vec(),
                len,
            }),
        ),
        ModelFile::new(
            "tok512.bin",
            Box::new(HeadOnly {
                head: tok[..4096].to_vec(),
                len: tokenizer_len,
            }),
        ),
    ];
    let page = Budget(3 << 29); // the page's 1.5 GiB
    let source = ModelSource::identify(&mut files).map_err(|e| e.to_string())?;
    let checked = source.check(&mut files, page).map_err(|e| e.to_string())?;
    Ok(checked.config.map(|c| c.dim as u64))
}

#[test]
fn files_are_checked_from_their_size_and_header_before_they_are_read() {
    let header = |h: [i32; 7]| -> Vec<u8> { h.iter().flat_map(|v| v.to_le_bytes()).collect() };
    // A hostile header (a million positions): a 32 GiB KV cache, refused with the figure.
    let e = check(&header([64, 1, 64, 32, 32, 3, 1 << 20]), 12_700_000, 6227).unwrap_err();
    assert!(
        e.contains("32 GiB") && e.contains("1,048,576") && e.contains("1.50 GiB"),
        "{e}"
    );
    // stories260K's header with a 3 GB file: the size does not match (nothing read).
    let h = header([64, 172, 5, 8, 4, 512, 512]);
    let e = check(&h, 3 << 30, 6227).unwrap_err();
    assert!(e.contains("3,221,225,472"), "{e}");
    assert_eq!(check(&h, 1_056_540, 6227), Ok(Some(64)));
    // A tokenizer file over its limit.
    let e = check(&h, 1_056_540, 5 << 30).unwrap_err();
    assert!(
        e.contains("5,368,709,120 bytes; the limit is 64 MiB"),
        "{e}"
    );
    // Fewer than 28 bytes.
    assert!(check(&h[..10], 10, 6227).is_err());
}
