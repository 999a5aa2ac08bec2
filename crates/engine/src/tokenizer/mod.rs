//! Text ↔ token ids. A Hugging Face `tokenizer.json` encodes through the `tokenizers` crate,
//! as is. A llama2.c `tokenizer.bin` (pieces + scores; a GGUF file's SentencePiece vocabulary
//! is read into one) encodes with llama2.c's own algorithm (`encode` in `run.c`) over a sorted
//! index of its pieces, as run.c does: [`Spm`]. Converted into a `tokenizers` BPE model
//! ([`Llama2cVocab::to_hf_tokenizer`]) the same vocabulary's maps took more memory than the
//! rest of the CLI's beside the weights, and time to build (BENCHMARKS.md, "Figures behind
//! the code"); the index takes 128 KB. [`reference_encode`] keeps the algorithm small and
//! readable, as the specification; the tests hold the index-based encoder to it and to the
//! converted `tokenizers` model on the known answers and random text.
//!
//! Decoding follows llama2.c's `decode`: a piece right after BOS drops its leading space (a
//! SentencePiece vocabulary's dummy prefix; a byte-level one keeps it) and
//! `<0xNN>` pieces become raw bytes; [`TextDecoder`] turns the byte stream into text without
//! ever panicking on invalid UTF-8.

mod bpe;
pub mod chat;
mod spm;
mod text;
pub use text::PieceText;
#[cfg(test)]
mod tests;
mod vocab;

use spm::{byte_fallback, byte_level_inverse, display_bytes, Spm, Table, EVERY_BYTE};

pub use bpe::{GgufBpe, PRE_TOKENIZERS};
use thiserror::Error;
pub use vocab::{reference_encode, Llama2cVocab};

/// A tokenizer file no larger than `MAX_TOKENIZER_BYTES`.
pub fn check_size(bytes: &[u8]) -> Result<(), TokenizerError> {
    match bytes.len() {
        n if n > MAX_TOKENIZER_BYTES => Err(TokenizerError::FileTooLarge {
            bytes: n as u64,
            limit: MAX_TOKENIZER_BYTES,
        }),
        _ => Ok(()),
    }
}

/// SentencePiece's visible space, used by Hugging Face Llama tokenizers.
pub(crate) const SP_SPACE: char = '\u{2581}';

#[derive(Debug, Error, Clone, PartialEq)]
pub enum TokenizerError {
    #[error("tokenizer file is empty")]
    Empty,
    #[error("tokenizer.bin is truncated: {what} of piece {id} runs past the end of the file ({len} bytes)")]
    Truncated {
        id: usize,
        what: &'static str,
        len: usize,
    },
    #[error("tokenizer.bin piece {id} has an invalid length {len}")]
    BadPieceLength { id: usize, len: i64 },
    #[error(
        "tokenizer.bin piece {id} is {len} bytes, longer than the file's max_token_length {max}"
    )]
    PieceTooLong { id: usize, len: usize, max: usize },
    #[error("tokenizer.bin max_token_length {0} is out of range (must be 1..={MAX_PIECE_BYTES})")]
    BadMaxTokenLength(i64),
    #[error("tokenizer.bin piece {id} is not valid UTF-8 (bytes {bytes:?})")]
    InvalidUtf8 { id: usize, bytes: Vec<u8> },
    #[error("tokenizer.bin piece {id} has a non-finite score {score}")]
    NonFiniteScore { id: usize, score: f32 },
    #[error("tokenizer.bin piece {id} {piece:?} repeats piece {first}")]
    DuplicatePiece {
        id: usize,
        first: usize,
        piece: String,
    },
    #[error("the tokenizer has {tokenizer} tokens but the model's vocabulary has {model}")]
    VocabMismatch { tokenizer: usize, model: usize },
    #[error("tokenizer.json could not be read: {0}")]
    Json(String),
    #[error("the tokenizer file is neither a tokenizer.json (it does not start with '{{') nor a llama2.c tokenizer.bin (a binary table); it starts with {0:?}")]
    NotATokenizer(String),
    #[error("the tokenizer file is {} bytes; the limit is {} ({} bytes)", crate::units::thousands(*bytes), crate::units::human_bytes(*limit as u64), crate::units::thousands(*limit as u64))]
    FileTooLarge { bytes: u64, limit: usize },
    #[error("tokenizer.json has {0} tokens; the limit is {max}", max = crate::config::MAX_COUNT)]
    TooManyTokens(usize),
    #[error("tokenizer.json token {id} is {len} bytes, longer than {MAX_PIECE_BYTES}")]
    TokenTooLong { id: u32, len: usize },
    #[error("the tokenizer has no {0} token")]
    MissingSpecial(&'static str),
    #[error("encoding failed: {0}")]
    Encode(String),
    #[error("tokenizer.ggml.pre is {0:?}, a pre-tokenizer this reader does not know (it reads {known})", known = bpe::PRE_TOKENIZERS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "))]
    UnknownPreTokenizer(String),
    #[error("tokenizer.ggml.merges entry {rank} ({merge:?}) is not two tokens of the vocabulary")]
    BadMerge { rank: usize, merge: String },
    #[error("the BPE vocabulary could not be built: {0}")]
    Bpe(String),
    #[error("token id {id} is outside the vocabulary (size {vocab})")]
    UnknownId { id: u32, vocab: usize },
}

/// The longest piece a `tokenizer.bin` may declare (llama2.c's 32,000-token vocabulary has
/// 27; byte-fallback pieces are 6).
pub const MAX_PIECE_BYTES: usize = 1024;

/// The largest tokenizer file read (`tokenizer.json` of Llama 3 is 9 MB, of Gemma 3 about
/// 33 MB): checked before parsing.
pub const MAX_TOKENIZER_BYTES: usize = 64 << 20;

/// The tokenizer the engine uses: encoding by llama2.c's algorithm or through `tokenizers`
/// (see [`Encoder`]), decoding by piece.
#[derive(Clone)]
pub struct Tokenizer {
    encoder: Encoder,
    /// What each id prints as: spaces restored, `<0xNN>` as the raw byte. `None` for a
    /// llama2.c vocabulary, whose pieces print as written but for `<0xNN>` (one table of
    /// pieces fewer in memory at the peak).
    piece_bytes: Option<Table>,
    /// How each id is shown in a table: the piece as written in the vocabulary.
    display: Table,
    pub bos: u32,
    pub eos: u32,
    /// Whether a prompt starts with BOS: always for llama2.c, SentencePiece and
    /// `tokenizer.json` vocabularies; for a GGUF BPE vocabulary as its
    /// `tokenizer.ggml.add_bos_token` says (false for Qwen2, true for Llama 3).
    pub add_bos: bool,
    /// GPT-2's byte-level alphabet: no dummy-prefix space to drop after BOS.
    byte_level: bool,
    /// What kind of vocabulary, where the model card says (a GGUF BPE vocabulary: its
    /// split's name).
    pub kind: Option<String>,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("vocab_size", &self.vocab_size())
            .field("bos", &self.bos)
            .field("eos", &self.eos)
            .finish()
    }
}

/// How a [`Tokenizer`] turns text into ids.
#[derive(Clone)]
enum Encoder {
    /// A `tokenizer.json`, through the `tokenizers` crate.
    Hf(Box<tokenizers::Tokenizer>),
    /// A llama2.c vocabulary (its pieces are the tokenizer's `display` table).
    Spm(Spm),
}

impl Tokenizer {
    /// From a llama2.c `tokenizer.bin`. BOS = 1 and EOS = 2 as in llama2.c.
    pub fn from_llama2c_bytes(bytes: &[u8]) -> Result<Tokenizer, TokenizerError> {
        let (mut pieces, mut scores) = (Table::default(), Vec::new());
        Llama2cVocab::parse(bytes, |piece, score| {
            pieces.push(piece.as_bytes());
            scores.push(score);
        })?;
        Tokenizer::from_llama2c_pieces(pieces, scores, 1, 2)
    }

    /// From a llama2.c-style vocabulary (a GGUF file's SentencePiece pieces are read into
    /// one) with its BOS and EOS ids.
    pub fn from_llama2c_vocab(
        vocab: Llama2cVocab,
        bos: u32,
        eos: u32,
    ) -> Result<Tokenizer, TokenizerError> {
        let mut pieces = Table::default();
        for p in &vocab.pieces {
            pieces.push(p.as_bytes());
        }
        Tokenizer::from_llama2c_pieces(pieces, vocab.scores, bos, eos)
    }

    /// A llama2.c vocabulary's pieces (UTF-8, one table) and scores.
    fn from_llama2c_pieces(
        display: Table,
        scores: Vec<f32>,
        bos: u32,
        eos: u32,
    ) -> Result<Tokenizer, TokenizerError> {
        if display.len() < 3 {
            return Err(TokenizerError::MissingSpecial("BOS/EOS (ids 1 and 2)"));
        }
        // The encoder orders merges by score: a NaN has no place in that order (a GGUF
        // file's scores come here unchecked; a tokenizer.bin's were checked as parsed).
        if let Some((id, &score)) = scores.iter().enumerate().find(|(_, s)| !s.is_finite()) {
            return Err(TokenizerError::NonFiniteScore { id, score });
        }
        let spm = Spm::new(&display, scores);
        Ok(Tokenizer {
            encoder: Encoder::Spm(spm),
            piece_bytes: None,
            display,
            bos,
            eos,
            add_bos: true,
            byte_level: false,
            kind: None,
        })
    }

    /// From a Hugging Face `tokenizer.json`. BOS/EOS are found by their usual names. The
    /// file's size is checked before it is parsed; its token count and each token's length
    /// before anything is built from them.
    pub fn from_hf_json(bytes: &[u8]) -> Result<Tokenizer, TokenizerError> {
        check_size(bytes)?;
        // Read as a JSON value first, then build the tokenizer from the value: tokenizers
        // 0.23 panics (`expect("Helper")` in its decoder's Deserialize) when the text at the
        // decoder is not valid JSON (a syntax error, a lone surrogate \ud800; found by
        // fuzzing), and a panic kills the page's worker. From a value it can only fail.
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| TokenizerError::Json(e.to_string()))?;
        let byte_level = value
            .get("decoder")
            .is_some_and(|dec| dec.to_string().contains("\"ByteLevel\""));
        let hf: tokenizers::Tokenizer =
            serde_json::from_value(value).map_err(|e| TokenizerError::Json(e.to_string()))?;
        Tokenizer::from_hf(hf, byte_level, None)
    }

    /// Around a built `tokenizers` tokenizer: its token count and each token's length
    /// checked, each id's bytes (byte-level pieces mapped back to their bytes, SentencePiece's
    /// "▁" to a space) and display. BOS/EOS are `specials` (a GGUF file names them) or found
    /// by their usual names.
    fn from_hf(
        hf: tokenizers::Tokenizer,
        byte_level: bool,
        specials: Option<(u32, u32)>,
    ) -> Result<Tokenizer, TokenizerError> {
        let n = hf.get_vocab_size(true);
        if n > crate::config::MAX_COUNT {
            return Err(TokenizerError::TooManyTokens(n));
        }
        for id in 0..n as u32 {
            let len = hf.id_to_token(id).map_or(0, |t| t.len());
            if len > MAX_PIECE_BYTES {
                return Err(TokenizerError::TokenTooLong { id, len });
            }
        }
        let inverse = byte_level_inverse();
        let mut piece_bytes = Table::default();
        let mut display = Table::default();
        for id in 0..n as u32 {
            let piece = hf.id_to_token(id).unwrap_or_default();
            let bytes = if let Some(b) = byte_fallback(&piece) {
                vec![b]
            } else if byte_level {
                piece
                    .chars()
                    .filter_map(|c| inverse.get(&c).copied())
                    .collect()
            } else {
                piece.replace(SP_SPACE, " ").into_bytes()
            };
            display.push(display_bytes(&bytes).as_bytes());
            piece_bytes.push(&bytes);
        }
        let (bos, eos) = match specials {
            Some(ids) => ids,
            None => hf_specials(&hf)?,
        };
        Ok(Tokenizer {
            encoder: Encoder::Hf(Box::new(hf)),
            piece_bytes: Some(piece_bytes),
            display,
            bos,
            eos,
            add_bos: true,
            byte_level,
            kind: None,
        })
    }

    /// Detects the format by content, whatever the file is called: JSON if the bytes start
    /// with `{`, llama2.c otherwise. Text that is neither is refused as such, with its
    /// first characters.
    pub fn from_bytes(bytes: &[u8]) -> Result<Tokenizer, TokenizerError> {
        check_size(bytes)?;
        match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => Tokenizer::from_hf_json(bytes),
            _ => Tokenizer::from_llama2c_bytes(bytes).map_err(|e| {
                let head = &bytes[..bytes.len().min(32)];
                // a llama2.c table starts with a small little-endian u32: zero bytes
                let text = !head.is_empty()
                    && head
                        .iter()
                        .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace());
                match text {
                    true => TokenizerError::NotATokenizer(String::from_utf8_lossy(head).into()),
                    false => e,
                }
            }),
        }
    }

    /// Fails unless the tokenizer's vocabulary matches the model's.
    pub fn check_vocab(&self, model_vocab: usize) -> Result<(), TokenizerError> {
        if self.vocab_size() != model_vocab {
            return Err(TokenizerError::VocabMismatch {
                tokenizer: self.vocab_size(),
                model: model_vocab,
            });
        }
        Ok(())
    }

    pub fn vocab_size(&self) -> usize {
        self.display.len()
    }

    /// The Hugging Face tokenizer doing the encoding, for a `tokenizer.json` (a llama2.c
    /// vocabulary encodes with llama2.c's algorithm instead).
    pub fn hf(&self) -> Option<&tokenizers::Tokenizer> {
        match &self.encoder {
            Encoder::Hf(hf) => Some(hf),
            Encoder::Spm(_) => None,
        }
    }

    /// Encodes text, with BOS first when `bos` is true, the vocabulary adds one
    /// ([`Tokenizer::add_bos`]) and the text does not start with it.
    pub fn encode(&self, text: &str, bos: bool) -> Result<Vec<u32>, TokenizerError> {
        let bos = (bos && self.add_bos).then_some(self.bos);
        match &self.encoder {
            Encoder::Spm(spm) => Ok(spm.encode(&self.display, text, bos)),
            Encoder::Hf(hf) => {
                let enc = hf
                    .encode(text, false)
                    .map_err(|e| TokenizerError::Encode(e.to_string()))?;
                let mut ids = Vec::with_capacity(enc.len() + 1);
                // A text that starts with the BOS token itself (a rendered chat template's
                // "<|begin_of_text|>") gets no second.
                ids.extend(bos.filter(|b| enc.get_ids().first() != Some(b)));
                ids.extend_from_slice(enc.get_ids());
                Ok(ids)
            }
        }
    }

    /// A rendered chat template's tokens: with a SentencePiece vocabulary the BOS and EOS
    /// the template writes (`{{ bos_token }}` → "<s>", "</s>") are those tokens, not their
    /// letters, and each text between them is encoded on its own with its leading space,
    /// as llama.cpp tokenizes with `parse_special` (`llama_tokenize_impl`: a raw fragment
    /// after a special token gets the space prefix); BOS is added unless the text starts
    /// with it. A Hugging Face tokenizer reads its own special tokens already (`encode`).
    pub fn encode_chat(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        let Encoder::Spm(spm) = &self.encoder else {
            return self.encode(text, true);
        };
        let specials = [
            (self.bos, self.piece(self.bos)?),
            (self.eos, self.piece(self.eos)?),
        ];
        let first_is_bos = !specials[0].1.is_empty() && text.starts_with(specials[0].1);
        let mut ids: Vec<u32> = (self.add_bos && !first_is_bos)
            .then_some(self.bos)
            .into_iter()
            .collect();
        let mut rest = text;
        loop {
            let hit = specials
                .iter()
                .filter(|(_, p)| !p.is_empty())
                .filter_map(|&(id, p)| rest.find(p).map(|i| (i, id, p.len())))
                .min_by_key(|&(i, _, _)| i);
            let (text, special) = match hit {
                Some((i, id, len)) => (&rest[..i], Some((id, i + len))),
                None => (rest, None),
            };
            if !text.is_empty() {
                ids.extend(spm.encode(&self.display, text, None));
            }
            match special {
                Some((id, end)) => {
                    ids.push(id);
                    rest = &rest[end..];
                }
                None => return Ok(ids),
            }
        }
    }

    /// The piece as shown in tables (e.g. `" Once"`, `"<0x0A>"`).
    pub fn piece(&self, id: u32) -> Result<&str, TokenizerError> {
        self.display
            .get(id as usize)
            // Every display entry was pushed from a `&str`: whole UTF-8.
            .and_then(|b| std::str::from_utf8(b).ok())
            .ok_or(TokenizerError::UnknownId {
                id,
                vocab: self.vocab_size(),
            })
    }

    /// The bytes `id` prints as after `prev` (llama2.c `decode`: the leading space of the
    /// first piece after BOS is dropped; `<0xNN>` is the raw byte).
    pub fn decode_piece(&self, prev: Option<u32>, id: u32) -> Result<&[u8], TokenizerError> {
        let unknown = TokenizerError::UnknownId {
            id,
            vocab: self.vocab_size(),
        };
        let bytes = match &self.piece_bytes {
            Some(table) => table.get(id as usize).ok_or(unknown)?,
            None => {
                let piece = self.display.get(id as usize).ok_or(unknown)?;
                match std::str::from_utf8(piece).ok().and_then(byte_fallback) {
                    Some(b) => std::slice::from_ref(&EVERY_BYTE[b as usize]),
                    None => piece,
                }
            }
        };
        // (SentencePiece's dummy prefix: a byte-level vocabulary adds none, so its space is
        // the text's own.)
        if prev == Some(self.bos) && !self.byte_level && bytes.first() == Some(&b' ') {
            Ok(&bytes[1..])
        } else {
            Ok(bytes)
        }
    }

    /// Decodes a whole sequence to text (invalid UTF-8 becomes U+FFFD).
    pub fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        let mut dec = TextDecoder::default();
        let mut out = String::new();
        let mut prev = None;
        for &id in ids {
            if id == self.bos || id == self.eos {
                prev = Some(id);
                continue;
            }
            out.push_str(&dec.push(self.decode_piece(prev, id)?));
            prev = Some(id);
        }
        out.push_str(&dec.finish());
        Ok(out)
    }
}

impl Tokenizer {
    /// The text of `ids` following the token `prev` (each piece decoded in its context,
    /// streamed through a `TextDecoder`), leaving out the `skip` tokens (end tokens); with
    /// `flush`, an incomplete character at the end is written as U+FFFD instead of held back.
    pub fn text_after(&self, prev: Option<u32>, ids: &[u32], skip: &[u32], flush: bool) -> String {
        let mut dec = TextDecoder::default();
        let mut out = String::new();
        let mut prev = prev;
        for &t in ids {
            if !skip.contains(&t) {
                if let Ok(b) = self.decode_piece(prev, t) {
                    out.push_str(&dec.push(b));
                }
            }
            prev = Some(t);
        }
        if flush {
            out.push_str(&dec.finish());
        }
        out
    }
}

/// BOS and EOS of a `tokenizer.json`, by their usual names ("\n<s>\n" and "\n</s>\n" are
/// llama2.c's spellings, in a converted tokenizer.bin).
fn hf_specials(hf: &tokenizers::Tokenizer) -> Result<(u32, u32), TokenizerError> {
    let find = |names: &[&str]| names.iter().find_map(|n| hf.token_to_id(n));
    let bos = find(&[
        "<s>",
        "\n<s>\n",
        "<|begin_of_text|>",
        "<|endoftext|>",
        "<bos>",
    ])
    .ok_or(TokenizerError::MissingSpecial("BOS"))?;
    let eos = find(&[
        "</s>",
        "\n</s>\n",
        "<|end_of_text|>",
        "<|endoftext|>",
        "<eos>",
    ])
    .ok_or(TokenizerError::MissingSpecial("EOS"))?;
    Ok((bos, eos))
}

/// Streaming UTF-8 decoding of token bytes: holds back an incomplete character until the
/// next piece completes it, and replaces invalid bytes by U+FFFD. Never panics.
#[derive(Debug, Default, Clone)]
pub struct TextDecoder {
    pending: Vec<u8>,
}

impl TextDecoder {
    /// Adds bytes; returns the text that is now complete.
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    // The prefix was just validated.
                    out.push_str(std::str::from_utf8(good).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &bad[n..];
                        }
                        None => {
                            rest = bad;
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        out
    }

    /// Flushes what is left: an incomplete character becomes U+FFFD.
    pub fn finish(&mut self) -> String {
        let out = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        out
    }
}
