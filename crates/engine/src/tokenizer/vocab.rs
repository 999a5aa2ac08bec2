//! A llama2.c vocabulary (`tokenizer.bin`, or a GGUF file's SentencePiece pieces): pieces
//! and scores, read strictly, and the readable reference of llama2.c's encoder
//! ([`reference_encode`]) that the fast one (`spm`) is held to.

use super::{TokenizerError, MAX_PIECE_BYTES, SP_SPACE};
use std::collections::HashMap;

/// A llama2.c vocabulary: the pieces (UTF-8, spaces as ' ') and their merge scores.
#[derive(Debug, Clone, PartialEq)]
pub struct Llama2cVocab {
    pub max_token_length: u32,
    pub pieces: Vec<String>,
    pub scores: Vec<f32>,
}

impl Llama2cVocab {
    /// Parses `tokenizer.bin`: i32 max_token_length, then per piece f32 score, i32 length,
    /// bytes. The file does not store the piece count, so it is read to its end; the caller
    /// compares the count with the model's vocab_size.
    pub fn from_bytes(bytes: &[u8]) -> Result<Llama2cVocab, TokenizerError> {
        let (mut pieces, mut scores) = (Vec::new(), Vec::new());
        let max_token_length = Llama2cVocab::parse(bytes, |piece, score| {
            pieces.push(piece.to_string());
            scores.push(score);
        })?;
        Ok(Llama2cVocab {
            max_token_length,
            pieces,
            scores,
        })
    }

    /// Checks `tokenizer.bin` and hands each piece and its score to `each`, in id order;
    /// returns max_token_length. Nothing is copied here: the tokenizer keeps its pieces in
    /// one table, not a `String` each.
    pub(super) fn parse(
        bytes: &[u8],
        mut each: impl FnMut(&str, f32),
    ) -> Result<u32, TokenizerError> {
        if bytes.is_empty() {
            return Err(TokenizerError::Empty);
        }
        let len = bytes.len();
        let read4 = |at: usize, id: usize, what: &'static str| -> Result<[u8; 4], TokenizerError> {
            bytes
                .get(at..at + 4)
                .map(|b| [b[0], b[1], b[2], b[3]])
                .ok_or(TokenizerError::Truncated { id, what, len })
        };
        // Cheap checks first: the header bounds every piece, so no piece can make the
        // conversion below (quadratic in a piece's length) run for minutes.
        let max_token_length = i32::from_le_bytes(read4(0, 0, "the header")?);
        if max_token_length < 1 || max_token_length as usize > MAX_PIECE_BYTES {
            return Err(TokenizerError::BadMaxTokenLength(max_token_length as i64));
        }
        let max = max_token_length as usize;
        let mut at = 4;
        // Pieces seen so far, as slices of `bytes`.
        let mut seen: HashMap<&str, usize> = HashMap::new();
        while at < len {
            let id = seen.len();
            let score = f32::from_le_bytes(read4(at, id, "the score")?);
            let n = i32::from_le_bytes(read4(at + 4, id, "the length")?);
            at += 8;
            if n <= 0 {
                return Err(TokenizerError::BadPieceLength { id, len: n as i64 });
            }
            if n as usize > max {
                return Err(TokenizerError::PieceTooLong {
                    id,
                    len: n as usize,
                    max,
                });
            }
            let raw = bytes
                .get(at..at + n as usize)
                .ok_or(TokenizerError::Truncated {
                    id,
                    what: "the bytes",
                    len,
                })?;
            at += n as usize;
            if !score.is_finite() {
                return Err(TokenizerError::NonFiniteScore { id, score });
            }
            let piece = std::str::from_utf8(raw).map_err(|_| TokenizerError::InvalidUtf8 {
                id,
                bytes: raw.to_vec(),
            })?;
            if let Some(&first) = seen.get(piece) {
                return Err(TokenizerError::DuplicatePiece {
                    id,
                    first,
                    piece: piece.to_string(),
                });
            }
            seen.insert(piece, id);
            each(piece, score);
        }
        Ok(max as u32)
    }

    /// Serialises to the `tokenizer.bin` format (used by tests to build malformed files).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = (self.max_token_length as i32).to_le_bytes().to_vec();
        for (p, s) in self.pieces.iter().zip(&self.scores) {
            out.extend_from_slice(&s.to_le_bytes());
            out.extend_from_slice(&(p.len() as i32).to_le_bytes());
            out.extend_from_slice(p.as_bytes());
        }
        out
    }

    /// Builds the equivalent Hugging Face tokenizer. llama2.c merges, at each step, the
    /// adjacent pair whose *concatenation* is a piece with the highest score; a BPE merge list
    /// that contains every (left, right) split of every piece, ranked by the merged piece's
    /// score, makes the `tokenizers` BPE model take the same decisions.
    pub fn to_hf_tokenizer(&self) -> Result<tokenizers::Tokenizer, TokenizerError> {
        use tokenizers::decoders::{
            byte_fallback::ByteFallback, fuse::Fuse, sequence::Sequence as DecSeq, strip::Strip,
            DecoderWrapper,
        };
        use tokenizers::models::bpe::BPE;
        use tokenizers::normalizers::{Prepend, Replace, Sequence as NormSeq};
        use tokenizers::NormalizerWrapper;

        let hf_piece = |p: &str| p.replace(' ', &SP_SPACE.to_string());
        let vocab: tokenizers::models::bpe::Vocab = self
            .pieces
            .iter()
            .enumerate()
            .map(|(i, p)| (hf_piece(p), i as u32))
            .collect();
        let mut merges: Vec<(f32, usize, String, String)> = Vec::new();
        for (id, piece) in self.pieces.iter().enumerate() {
            let hp = hf_piece(piece);
            for (split, _) in hp.char_indices().skip(1) {
                let (l, r) = hp.split_at(split);
                if vocab.contains_key(l) && vocab.contains_key(r) {
                    merges.push((self.scores[id], id, l.to_string(), r.to_string()));
                }
            }
        }
        // Highest score first; among pieces of equal score the lower id first.
        merges.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let merges = merges.into_iter().map(|(_, _, l, r)| (l, r)).collect();
        let mut builder = BPE::builder()
            .vocab_and_merges(vocab, merges)
            .byte_fallback(true);
        if self.pieces.iter().any(|p| p == "<unk>") {
            builder = builder.unk_token("<unk>".into());
        }
        let bpe = builder
            .build()
            .map_err(|e| TokenizerError::Encode(e.to_string()))?;
        let mut tk = tokenizers::Tokenizer::new(bpe);
        let replace = Replace::new(" ", SP_SPACE.to_string())
            .map_err(|e| TokenizerError::Encode(e.to_string()))?;
        tk.with_normalizer(Some(NormSeq::new(vec![
            NormalizerWrapper::Prepend(Prepend::new(SP_SPACE.to_string())),
            NormalizerWrapper::Replace(replace),
        ])))
        .map_err(|e| TokenizerError::Encode(e.to_string()))?;
        let dec_replace = tokenizers::decoders::DecoderWrapper::Replace(
            Replace::new(SP_SPACE.to_string(), " ")
                .map_err(|e| TokenizerError::Encode(e.to_string()))?,
        );
        tk.with_decoder(Some(DecSeq::new(vec![
            dec_replace,
            DecoderWrapper::ByteFallback(ByteFallback::new()),
            DecoderWrapper::Fuse(Fuse::new()),
            DecoderWrapper::Strip(Strip::new(' ', 1, 0)),
        ])));
        Ok(tk)
    }
}

/// llama2.c's encoder (`encode` in `run.c`), kept as the readable specification:
/// BOS, then (for non-empty text) the dummy-prefix " ", each UTF-8 character looked up (its
/// bytes as `<0xNN>` fallback pieces when absent), then repeatedly merge the adjacent pair
/// whose concatenation is the highest-scoring piece (the leftmost on a tie) until none is left.
pub fn reference_encode(vocab: &Llama2cVocab, text: &str, bos: Option<u32>) -> Vec<u32> {
    let lookup: HashMap<&str, u32> = vocab
        .pieces
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i as u32))
        .collect();
    let byte_piece = |b: u8| lookup.get(format!("<0x{b:02X}>").as_str()).copied();
    let mut tokens: Vec<u32> = bos.into_iter().collect();
    let push_str = |s: &str, tokens: &mut Vec<u32>| match lookup.get(s) {
        Some(&id) => tokens.push(id),
        None => tokens.extend(s.bytes().filter_map(byte_piece)),
    };
    let start = tokens.len();
    if !text.is_empty() {
        push_str(" ", &mut tokens);
    }
    let mut buf = [0u8; 4];
    for c in text.chars() {
        push_str(c.encode_utf8(&mut buf), &mut tokens);
    }
    let mut merged = String::new();
    loop {
        let mut best: Option<(f32, usize, u32)> = None;
        for i in start..tokens.len().saturating_sub(1) {
            merged.clear();
            merged.push_str(&vocab.pieces[tokens[i] as usize]);
            merged.push_str(&vocab.pieces[tokens[i + 1] as usize]);
            if let Some(&id) = lookup.get(merged.as_str()) {
                let score = vocab.scores[id as usize];
                if best.is_none_or(|(s, _, _)| score > s) {
                    best = Some((score, i, id));
                }
            }
        }
        let Some((_, i, id)) = best else { break };
        tokens[i] = id;
        tokens.remove(i + 1);
    }
    tokens
}
