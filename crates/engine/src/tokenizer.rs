//! Text ↔ token ids. A Hugging Face `tokenizer.json` encodes through the `tokenizers` crate,
//! as is. A llama2.c `tokenizer.bin` (pieces + scores; a GGUF file's SentencePiece vocabulary
//! is read into one) encodes with llama2.c's own algorithm (`encode` in `run.c`) over a sorted
//! index of its pieces, as run.c does: [`Spm`]. Converted into a `tokenizers` BPE model
//! ([`Llama2cVocab::to_hf_tokenizer`]) the same vocabulary took about 8 MB of maps for 32,000
//! pieces and 25 ms to build, more than the rest of the CLI's memory beside the weights
//! (issue 11's bound on peak memory); the index takes 128 KB. [`reference_encode`] keeps the
//! algorithm small and readable, as the specification; the tests hold the index-based encoder
//! to it and to the converted `tokenizers` model on the known answers and random text.
//!
//! Decoding follows llama2.c's `decode`: a piece right after BOS drops its leading space and
//! `<0xNN>` pieces become raw bytes; [`TextDecoder`] turns the byte stream into text without
//! ever panicking on invalid UTF-8.

use std::collections::HashMap;
use thiserror::Error;

/// SentencePiece's visible space, used by Hugging Face Llama tokenizers.
const SP_SPACE: char = '\u{2581}';

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
    #[error("the tokenizer file is {} bytes; the limit is {} ({} bytes)", crate::units::thousands(*bytes), crate::units::human_bytes(*limit as u64), crate::units::thousands(*limit as u64))]
    FileTooLarge { bytes: u64, limit: usize },
    #[error("tokenizer.json has {0} tokens; the limit is {max}", max = crate::sampling::settings::MAX_COUNT)]
    TooManyTokens(usize),
    #[error("tokenizer.json token {id} is {len} bytes, longer than {MAX_PIECE_BYTES}")]
    TokenTooLong { id: u32, len: usize },
    #[error("the tokenizer has no {0} token")]
    MissingSpecial(&'static str),
    #[error("encoding failed: {0}")]
    Encode(String),
    #[error("token id {id} is outside the vocabulary (size {vocab})")]
    UnknownId { id: u32, vocab: usize },
}

/// The longest piece a `tokenizer.bin` may declare (llama2.c's 32,000-token vocabulary has
/// 27; byte-fallback pieces are 6).
pub const MAX_PIECE_BYTES: usize = 1024;

/// The largest tokenizer file read (`tokenizer.json` of Llama 3 is 9 MB, of Gemma 3 about
/// 33 MB): checked before parsing.
pub const MAX_TOKENIZER_BYTES: usize = 64 << 20;

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
    fn parse(bytes: &[u8], mut each: impl FnMut(&str, f32)) -> Result<u32, TokenizerError> {
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

/// The tokenizer the engine uses: encoding by llama2.c's algorithm or through `tokenizers`
/// (see [`Encoder`]), decoding by piece.
#[derive(Clone)]
pub struct Tokenizer {
    encoder: Encoder,
    /// What each id prints as: spaces restored, `<0xNN>` as the raw byte. `None` for a
    /// llama2.c vocabulary, whose pieces print as written but for `<0xNN>` (one table of
    /// pieces fewer in memory; issue 11's peak).
    piece_bytes: Option<Table>,
    /// How each id is shown in a table: the piece as written in the vocabulary.
    display: Table,
    pub bos: u32,
    pub eos: u32,
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

/// Every id's bytes in one buffer, each id's end in another: two allocations for a whole
/// vocabulary where a `Vec` per piece made 32,000 (issue 11: the tokenizer's share of the
/// peak, and of the start-up).
#[derive(Clone, Default)]
struct Table {
    items: Vec<u8>,
    ends: Vec<u32>,
}

impl Table {
    fn push(&mut self, item: &[u8]) {
        self.items.extend_from_slice(item);
        self.ends.push(self.items.len() as u32);
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Some(&self.items[start..end])
    }
}

/// Byte b at index b: what a `<0xNN>` piece prints as, borrowed.
static EVERY_BYTE: [u8; 256] = {
    let mut all = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        all[b] = b as u8;
        b += 1;
    }
    all
};

/// The `<0xNN>` piece of byte b (upper-case hex, as SentencePiece writes it).
fn byte_piece(b: u8) -> [u8; 6] {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    [
        b'<',
        b'0',
        b'x',
        HEX[(b >> 4) as usize],
        HEX[(b & 15) as usize],
        b'>',
    ]
}

/// Parses a `<0xNN>` byte-fallback piece.
fn byte_fallback(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() == 2 {
        u8::from_str_radix(hex, 16).ok()
    } else {
        None
    }
}

/// How a piece's bytes are shown: as text where they are whole UTF-8 characters, and a
/// byte that is part of a character split across tokens (a byte-level BPE token holding
/// the first two bytes of "🙂") as `<0xF0>`, SentencePiece's spelling of a byte piece, not
/// as U+FFFD.
fn display_bytes(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("<0x{b:02X}>"));
        }
    }
    out
}

/// GPT-2's byte-level alphabet, inverted: the printable char that stands for each byte.
fn byte_level_inverse() -> HashMap<char, u8> {
    let mut bs: Vec<u32> = (b'!' as u32..=b'~' as u32)
        .chain(0xA1..=0xAC)
        .chain(0xAE..=0xFF)
        .collect();
    let mut cs = bs.clone();
    let mut n = 0;
    for b in 0..256u32 {
        if !bs.contains(&b) {
            bs.push(b);
            cs.push(256 + n);
            n += 1;
        }
    }
    bs.into_iter()
        .zip(cs)
        .filter_map(|(b, c)| Some((char::from_u32(c)?, b as u8)))
        .collect()
}

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

/// llama2.c's encoder (`encode` in `run.c`) over a vocabulary kept as one [`Table`] of
/// pieces: piece lookups by binary search in `sorted` (ids ordered by piece bytes, as run.c
/// sorts its `TokenIndex`), and the candidate merges in a heap, so that a merge looks up
/// only the two pairs it changed (run.c looks up every pair every round; llama.cpp's SPM
/// tokenizer keeps a queue of bigrams the same way). The decisions are
/// [`reference_encode`]'s: the pair whose concatenation is the highest-scoring piece, the
/// leftmost on a tie.
#[derive(Clone)]
struct Spm {
    scores: Vec<f32>,
    /// Every id once, ordered by piece bytes; of equal pieces (a GGUF vocabulary is not
    /// checked for them) only the highest id, which a map built in id order would keep.
    sorted: Vec<u32>,
}

impl Spm {
    fn new(pieces: &Table, scores: Vec<f32>) -> Spm {
        let piece = |id: u32| pieces.get(id as usize).unwrap_or_default();
        let mut sorted: Vec<u32> = (0..pieces.len() as u32).collect();
        sorted.sort_by(|&a, &b| piece(a).cmp(piece(b)).then(b.cmp(&a)));
        sorted.dedup_by(|later, kept| piece(*later) == piece(*kept));
        Spm { scores, sorted }
    }

    fn lookup(&self, pieces: &Table, bytes: &[u8]) -> Option<u32> {
        let piece = |id: u32| pieces.get(id as usize).unwrap_or_default();
        let at = self
            .sorted
            .binary_search_by(|&id| piece(id).cmp(bytes))
            .ok()?;
        Some(self.sorted[at])
    }

    fn encode(&self, pieces: &Table, text: &str, bos: Option<u32>) -> Vec<u32> {
        let mut tokens: Vec<u32> = bos.into_iter().collect();
        let start = tokens.len();
        let push = |s: &[u8], tokens: &mut Vec<u32>| match self.lookup(pieces, s) {
            Some(id) => tokens.push(id),
            // Byte fallback: each byte as its <0xNN> piece (a byte without one is dropped,
            // as in run.c).
            None => tokens.extend(
                s.iter()
                    .filter_map(|&b| self.lookup(pieces, &byte_piece(b))),
            ),
        };
        if !text.is_empty() {
            push(b" ", &mut tokens);
        }
        let mut buf = [0u8; 4];
        for c in text.chars() {
            push(c.encode_utf8(&mut buf).as_bytes(), &mut tokens);
        }
        // Symbols in a linked list (a merge joins a symbol with the next and unlinks it);
        // candidate merges in a heap, best first: highest score, then leftmost (a symbol's
        // original index orders symbols as the sequence does). A candidate whose symbols
        // have changed since it was pushed is skipped when it comes up: a symbol's piece
        // only grows, so (left, its token, right, its token) never recurs. O(n log n) where
        // scanning every pair each round (run.c, `reference_encode`) is O(n²): a megabyte
        // of pasted text is encoded before the prompt's length is checked.
        let syms = &mut tokens[start..];
        let n = syms.len();
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut alive = vec![true; n];
        let mut joined = Vec::new();
        let mut heap = std::collections::BinaryHeap::new();
        let mut push_pair = |heap: &mut std::collections::BinaryHeap<Candidate>,
                             syms: &[u32],
                             left: usize,
                             right: usize| {
            let (a, b) = (syms[left], syms[right]);
            joined.clear();
            joined.extend_from_slice(pieces.get(a as usize).unwrap_or_default());
            joined.extend_from_slice(pieces.get(b as usize).unwrap_or_default());
            if let Some(id) = self.lookup(pieces, &joined) {
                heap.push(Candidate {
                    score: self.scores[id as usize],
                    left,
                    right,
                    tokens: (a, b),
                    merged: id,
                });
            }
        };
        for i in 1..n {
            push_pair(&mut heap, syms, i - 1, i);
        }
        while let Some(c) = heap.pop() {
            let (l, r) = (c.left, c.right);
            if !alive[l] || !alive[r] || next[l] != r || (syms[l], syms[r]) != c.tokens {
                continue;
            }
            syms[l] = c.merged;
            alive[r] = false;
            next[l] = next[r];
            if next[r] < n {
                prev[next[r]] = l;
            }
            if prev[l] < n {
                push_pair(&mut heap, syms, prev[l], l);
            }
            if next[l] < n {
                push_pair(&mut heap, syms, l, next[l]);
            }
        }
        let mut k = 0;
        for i in 0..n {
            if alive[i] {
                syms[k] = syms[i];
                k += 1;
            }
        }
        tokens.truncate(start + k);
        tokens
    }
}

/// A merge waiting in [`Spm::encode`]'s heap: symbols `left` and `right` (adjacent when
/// pushed, holding `tokens`) would become `merged`, of `score`.
struct Candidate {
    score: f32,
    left: usize,
    right: usize,
    tokens: (u32, u32),
    merged: u32,
}

impl Ord for Candidate {
    /// The heap's greatest first: the higher score, then the lower (leftmost) position.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.score
            .total_cmp(&other.score)
            .then(other.left.cmp(&self.left))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for Candidate {}

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
        let n = hf.get_vocab_size(true);
        if n > crate::sampling::settings::MAX_COUNT {
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
        let find = |names: &[&str]| names.iter().find_map(|n| hf.token_to_id(n));
        // "\n<s>\n" and "\n</s>\n" are llama2.c's spellings (a converted tokenizer.bin).
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
        Ok(Tokenizer {
            encoder: Encoder::Hf(Box::new(hf)),
            piece_bytes: Some(piece_bytes),
            display,
            bos,
            eos,
        })
    }

    /// Detects the format: JSON if the bytes start with `{`, llama2.c otherwise.
    pub fn from_bytes(bytes: &[u8]) -> Result<Tokenizer, TokenizerError> {
        check_size(bytes)?;
        match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => Tokenizer::from_hf_json(bytes),
            _ => Tokenizer::from_llama2c_bytes(bytes),
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

    /// Encodes text, with BOS first when `bos` is true.
    pub fn encode(&self, text: &str, bos: bool) -> Result<Vec<u32>, TokenizerError> {
        let bos = bos.then_some(self.bos);
        match &self.encoder {
            Encoder::Spm(spm) => Ok(spm.encode(&self.display, text, bos)),
            Encoder::Hf(hf) => {
                let enc = hf
                    .encode(text, false)
                    .map_err(|e| TokenizerError::Encode(e.to_string()))?;
                let mut ids = Vec::with_capacity(enc.len() + 1);
                ids.extend(bos);
                ids.extend_from_slice(enc.get_ids());
                Ok(ids)
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
        if prev == Some(self.bos) && bytes.first() == Some(&b' ') {
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

#[cfg(test)]
mod tests {
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

    /// The hardening issue's file: one 1 MB piece. Refused from the header's bound before
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
}
