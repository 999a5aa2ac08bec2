//! The vocabulary's text as the sampling stages read it (a stage's strings): from a
//! [`Tokenizer`], or from the pieces alone where no tokenizer is at hand (the page).

use super::spm::byte_fallback;
use super::Tokenizer;
use crate::decode::sampling::TokenText;

/// The vocabulary's text for the sampling stages (a stage may read token text).
impl TokenText for Tokenizer {
    fn vocab_size(&self) -> usize {
        Tokenizer::vocab_size(self)
    }

    /// As llama.cpp's `detokenize({id}, true)`: SentencePiece's dummy-prefix space of the
    /// first piece removed, a byte token as its byte.
    fn text(&self, id: u32) -> Vec<u8> {
        self.decode_piece(Some(self.bos), id)
            .map(<[u8]>::to_vec)
            .unwrap_or_default()
    }

    fn tokenize(&self, text: &str) -> Vec<u32> {
        self.encode(text, false).unwrap_or_default()
    }

    fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // Every 16th piece: a few microseconds a step, and two vocabularies of one size
        // that share all of them are not met in practice.
        self.display.len().hash(&mut h);
        for i in (0..self.display.len()).step_by(16) {
            self.display.get(i).hash(&mut h);
        }
        h.finish()
    }
}

/// The vocabulary's text from its pieces alone (what the page holds: `ModelInfo::pieces`),
/// for the stages that read token text where no [`Tokenizer`] is at hand. A `<0xNN>` piece
/// is its byte; with `spm`, a leading space (SentencePiece's dummy prefix) is dropped as
/// llama.cpp's single-token detokenize drops it. Text is tokenized by longest match over
/// the pieces, which is SentencePiece's and BPE's answer for the short tails it is asked
/// (a stage's short strings) but not in general.
#[derive(Debug, Clone, Default)]
pub struct PieceText {
    /// SentencePiece: text to tokenize gets its dummy-prefix space, as `encode` gives it.
    spm: bool,
    texts: Vec<Vec<u8>>,
    by_text: std::collections::HashMap<Vec<u8>, u32>,
    longest: usize,
    fingerprint: u64,
}

impl PieceText {
    pub fn new(pieces: &[String], spm: bool) -> PieceText {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        pieces.hash(&mut h);
        let texts: Vec<Vec<u8>> = pieces
            .iter()
            .map(|p| match byte_fallback(p) {
                Some(b) => vec![b],
                None if spm && p.starts_with(' ') => p.as_bytes()[1..].to_vec(),
                None => p.as_bytes().to_vec(),
            })
            .collect();
        let mut by_text = std::collections::HashMap::new();
        for (i, p) in pieces.iter().enumerate() {
            by_text.entry(p.as_bytes().to_vec()).or_insert(i as u32);
        }
        PieceText {
            spm,
            longest: pieces.iter().map(String::len).max().unwrap_or(0),
            texts,
            by_text,
            fingerprint: h.finish(),
        }
    }
}

impl TokenText for PieceText {
    fn vocab_size(&self) -> usize {
        self.texts.len()
    }

    fn text(&self, id: u32) -> Vec<u8> {
        self.texts.get(id as usize).cloned().unwrap_or_default()
    }

    fn tokenize(&self, text: &str) -> Vec<u32> {
        let prefixed = format!(" {text}");
        let b = if self.spm && !text.is_empty() {
            prefixed.as_bytes()
        } else {
            text.as_bytes()
        };
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let found = (1..=self.longest.min(b.len() - i))
                .rev()
                .find_map(|n| self.by_text.get(&b[i..i + n]).map(|&id| (id, n)));
            match found {
                Some((id, n)) => {
                    out.push(id);
                    i += n;
                }
                None => {
                    let piece = format!("<0x{:02X}>", b[i]);
                    if let Some(&id) = self.by_text.get(piece.as_bytes()) {
                        out.push(id);
                    }
                    i += 1;
                }
            }
        }
        out
    }

    fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}
