//! llama2.c's encoder over a sorted index of the vocabulary's pieces (`Spm`, as run.c's
//! `TokenIndex`), each pair's merge kept between rounds, and the pieces' display text in one
//! flat `Table`; the byte pieces (`<0xNN>`) and GPT-2's byte-level alphabet.

use std::collections::HashMap;

/// Every id's bytes in one buffer, each id's end in another: two allocations for a whole
/// vocabulary where a `Vec` per piece made 32,000 (the tokenizer's share of the peak
/// memory, and of the start-up).
#[derive(Clone, Default)]
pub(super) struct Table {
    items: Vec<u8>,
    ends: Vec<u32>,
}

impl Table {
    pub(super) fn push(&mut self, item: &[u8]) {
        self.items.extend_from_slice(item);
        self.ends.push(self.items.len() as u32);
    }

    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(super) fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Some(&self.items[start..end])
    }
}

/// Byte b at index b: what a `<0xNN>` piece prints as, borrowed.
pub(super) static EVERY_BYTE: [u8; 256] = {
    let mut all = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        all[b] = b as u8;
        b += 1;
    }
    all
};

/// The `<0xNN>` piece of byte b (upper-case hex, as SentencePiece writes it).
pub(super) fn byte_piece(b: u8) -> [u8; 6] {
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
pub(super) fn byte_fallback(piece: &str) -> Option<u8> {
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
pub(super) fn display_bytes(bytes: &[u8]) -> String {
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
pub(super) fn byte_level_inverse() -> HashMap<char, u8> {
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

/// llama2.c's encoder (`encode` in `run.c`) over a vocabulary kept as one [`Table`] of
/// pieces: piece lookups by binary search in `sorted` (ids ordered by piece bytes, as run.c
/// sorts its `TokenIndex`), and the candidate merges in a heap, so that a merge looks up
/// only the two pairs it changed (run.c looks up every pair every round; llama.cpp's SPM
/// tokenizer keeps a queue of bigrams the same way). The decisions are
/// [`reference_encode`]'s: the pair whose concatenation is the highest-scoring piece, the
/// leftmost on a tie.
#[derive(Clone)]
pub(super) struct Spm {
    scores: Vec<f32>,
    /// Every id once, ordered by piece bytes; of equal pieces (a GGUF vocabulary is not
    /// checked for them) only the highest id, which a map built in id order would keep.
    sorted: Vec<u32>,
}

impl Spm {
    pub(super) fn new(pieces: &Table, scores: Vec<f32>) -> Spm {
        let piece = |id: u32| pieces.get(id as usize).unwrap_or_default();
        let mut sorted: Vec<u32> = (0..pieces.len() as u32).collect();
        sorted.sort_by(|&a, &b| piece(a).cmp(piece(b)).then(b.cmp(&a)));
        sorted.dedup_by(|later, kept| piece(*later) == piece(*kept));
        Spm { scores, sorted }
    }

    pub(super) fn lookup(&self, pieces: &Table, bytes: &[u8]) -> Option<u32> {
        let piece = |id: u32| pieces.get(id as usize).unwrap_or_default();
        let at = self
            .sorted
            .binary_search_by(|&id| piece(id).cmp(bytes))
            .ok()?;
        Some(self.sorted[at])
    }

    pub(super) fn encode(&self, pieces: &Table, text: &str, bos: Option<u32>) -> Vec<u32> {
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
