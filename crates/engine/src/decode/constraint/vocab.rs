//! The vocabulary as the constraint's matcher reads it: each token's bytes in a `toktrie`,
//! built once per model. A token's bytes are what it prints as in the middle of a text
//! (`Tokenizer::decode_piece` after a non-BOS token: SentencePiece's `▁` a space, `<0xNN>` its
//! byte, GPT-2's byte alphabet undone), as llama.cpp's grammar sampler reads
//! `token_to_piece`. BOS, EOS, `<unk>` and the tokenizer's special (control) tokens get
//! toktrie's special marker (`\xFF<name>`), which no grammar's text can match (a grammar
//! may name one, `<|im_end|>`): llama.cpp refuses a control token's empty piece likewise. The
//! end tokens (EOS and the model's others) are allowed where the text may end.

use crate::tokenizer::Tokenizer;
use llguidance::ParserFactory;
use std::sync::Arc;
use toktrie::{ApproximateTokEnv, TokRxInfo, TokTrie};

/// The vocabulary for constraints; cheap to clone (shared).
#[derive(Clone)]
pub struct ConstraintVocab(Arc<Inner>);

struct Inner {
    factory: ParserFactory,
    /// Each token's bytes (empty for a special token).
    bytes: Vec<Vec<u8>>,
    /// Each token's first byte (256 for none), read for every allowed token at each step.
    first: Vec<u16>,
    /// How each token is shown.
    pieces: Vec<String>,
    eos: u32,
    end_tokens: Vec<u32>,
    /// The model's logits' length (at least the tokenizer's).
    model_vocab: usize,
    clock: fn() -> f64,
}

impl ConstraintVocab {
    /// From the model's tokenizer; `model_vocab` is the logits' length, `end_tokens` the
    /// tokens that end a text (EOS first), `clock` milliseconds for the mask's time.
    pub fn new(
        tokenizer: &Tokenizer,
        model_vocab: usize,
        end_tokens: &[u32],
        clock: fn() -> f64,
    ) -> Result<ConstraintVocab, String> {
        let n = tokenizer.vocab_size();
        let special: std::collections::HashSet<u32> = tokenizer
            .hf()
            .map(|hf| {
                hf.get_added_tokens_decoder()
                    .into_iter()
                    .filter(|(_, t)| t.special)
                    .map(|(id, _)| id)
                    .collect()
            })
            .unwrap_or_default();
        let mut bytes = Vec::with_capacity(n);
        let mut pieces = Vec::with_capacity(n);
        for id in 0..n as u32 {
            let piece = tokenizer.piece(id).unwrap_or("?").to_string();
            let b = tokenizer
                .decode_piece(None, id)
                .map(<[u8]>::to_vec)
                .unwrap_or_default();
            let is_special = id == tokenizer.bos
                || id == tokenizer.eos
                || end_tokens.contains(&id)
                || special.contains(&id)
                || piece == "<unk>"
                || b.is_empty();
            bytes.push(if is_special { Vec::new() } else { b });
            pieces.push(piece);
        }
        Self::from_parts(bytes, pieces, tokenizer.eos, model_vocab, end_tokens, clock)
    }

    /// From each token's bytes (empty: a special token) and how it is shown.
    pub fn from_parts(
        bytes: Vec<Vec<u8>>,
        pieces: Vec<String>,
        eos: u32,
        model_vocab: usize,
        end_tokens: &[u32],
        clock: fn() -> f64,
    ) -> Result<ConstraintVocab, String> {
        let n = bytes.len();
        if n == 0 || eos as usize >= n {
            return Err(format!("EOS {eos} is outside the {n}-token vocabulary"));
        }
        let words: Vec<Vec<u8>> = bytes
            .iter()
            .zip(&pieces)
            .map(|(b, p)| {
                if b.is_empty() {
                    // llguidance names a special token by its text after the marker
                    // (`\xFF</s>`, `\xFF<|im_end|>`), which a grammar's `<|im_end|>` refers to.
                    let name = p.trim();
                    let name = if name.starts_with('<') && name.ends_with('>') {
                        name.to_string()
                    } else {
                        format!("<{name}>")
                    };
                    let mut w = vec![TokTrie::SPECIAL_TOKEN_MARKER];
                    w.extend_from_slice(name.as_bytes());
                    w
                } else {
                    b.clone()
                }
            })
            .collect();
        let info = TokRxInfo::new(n as u32, eos);
        let env: toktrie::TokEnv = Arc::new(ApproximateTokEnv::new(TokTrie::from(&info, &words)));
        let mut factory = ParserFactory::new_simple(&env).map_err(|e| e.to_string())?;
        factory.quiet();
        factory.limits_mut().max_grammar_size = super::MAX_GRAMMAR_SYMBOLS;
        let mut end: Vec<u32> = vec![eos];
        end.extend(end_tokens.iter().copied().filter(|&t| t != eos));
        let first = bytes
            .iter()
            .map(|b| b.first().map_or(256, |&c| u16::from(c)))
            .collect();
        Ok(ConstraintVocab(Arc::new(Inner {
            factory,
            bytes,
            first,
            pieces,
            eos,
            end_tokens: end,
            model_vocab: model_vocab.max(n),
            clock,
        })))
    }

    pub(super) fn factory(&self) -> &ParserFactory {
        &self.0.factory
    }

    pub fn eos(&self) -> u32 {
        self.0.eos
    }

    /// EOS and the model's other end tokens.
    pub fn end_tokens(&self) -> &[u32] {
        &self.0.end_tokens
    }

    pub fn model_vocab(&self) -> usize {
        self.0.model_vocab
    }

    /// The tokenizer's size (the model's logits may be longer).
    pub fn tokenizer_vocab(&self) -> usize {
        self.0.bytes.len()
    }

    /// A token's bytes (empty for a special token or an id past the tokenizer's).
    pub fn bytes(&self, id: u32) -> &[u8] {
        self.0.bytes.get(id as usize).map_or(&[], Vec::as_slice)
    }

    /// The token's first byte; `None` for a special token or an id past the vocabulary.
    pub(super) fn first_byte(&self, id: usize) -> Option<u8> {
        self.0.first.get(id).and_then(|&b| u8::try_from(b).ok())
    }

    pub(super) fn piece_text(&self, id: u32) -> String {
        self.0.pieces.get(id as usize).cloned().unwrap_or_default()
    }

    pub(super) fn now(&self) -> f64 {
        (self.0.clock)()
    }
}

/// Milliseconds since the first call, for the mask's time (natively).
#[cfg(not(target_arch = "wasm32"))]
pub fn native_clock() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
        * 1000.0
}
