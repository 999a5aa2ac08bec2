//! A batch of rows, the one input of every forward pass: each row is one token of one
//! sequence at one position, and says whether its next-token logits are wanted. This is
//! llama.cpp's `llama_batch` (`token`, `pos`, `seq_id`, `logits` per token; llama.h), with
//! one sequence per row.
//!
//! - decode: one row (the new token of one sequence);
//! - prefill: the prompt's rows, logits for the last one only;
//! - speculative verification: γ+1 rows of one sequence, logits for all of them;
//! - batched decoding: one row per sequence.
//!
//! Every backend checks a batch with [`Batch::check`] before running it: tokens in the
//! vocabulary, each sequence's rows at consecutive positions starting where its cache ends,
//! and no sequence past the context.

use thiserror::Error;

/// One sequence's slot in a backend (its KV cache).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct SeqId(pub u32);

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ForwardError {
    #[error("the context is full: {len} of {seq_len} positions used, {adding} more requested")]
    ContextFull {
        len: usize,
        seq_len: usize,
        adding: usize,
    },
    #[error("token id {id} is outside the vocabulary (size {vocab})")]
    TokenOutOfRange { id: u32, vocab: usize },
    #[error("no tokens to process")]
    NoTokens,
    #[error("unknown sequence {0:?}")]
    UnknownSequence(SeqId),
    #[error("sequence {} has its next row at position {pos}, but its cache ends at {expected}", .seq.0)]
    RowOutOfOrder {
        seq: SeqId,
        pos: usize,
        expected: usize,
    },
}

/// One token of one sequence at one position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub seq: SeqId,
    pub pos: usize,
    pub token: u32,
    /// Whether the pass returns this row's next-token logits.
    pub logits: bool,
}

/// Which rows of a run of tokens get logits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logits {
    /// The last row only (decode, prefill).
    Last,
    /// Every row (speculative verification, scoring a continuation).
    All,
    /// None (a prefill chunk whose logits nobody reads).
    None,
}

/// Rows in the order the pass processes them; rows of different sequences may interleave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    rows: Vec<Row>,
}

/// What a checked batch adds to one sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeqSpan {
    pub seq: SeqId,
    /// Positions filled before the pass.
    pub start: usize,
    /// Rows the pass appends.
    pub rows: usize,
}

impl Batch {
    pub fn new() -> Batch {
        Batch::default()
    }

    /// `tokens` of `seq` at positions `pos0..`, logits as asked.
    pub fn tokens(seq: SeqId, pos0: usize, tokens: &[u32], logits: Logits) -> Batch {
        let mut b = Batch::new();
        b.extend(seq, pos0, tokens, logits);
        b
    }

    /// Appends `tokens` of `seq` at positions `pos0..`.
    pub fn extend(&mut self, seq: SeqId, pos0: usize, tokens: &[u32], logits: Logits) {
        let n = tokens.len();
        self.rows
            .extend(tokens.iter().enumerate().map(|(i, &token)| Row {
                seq,
                pos: pos0 + i,
                token,
                logits: match logits {
                    Logits::All => true,
                    Logits::Last => i + 1 == n,
                    Logits::None => false,
                },
            }));
    }

    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Rows whose logits the pass returns (the output has this many vocab-wide rows).
    pub fn logits_rows(&self) -> usize {
        self.rows.iter().filter(|r| r.logits).count()
    }

    /// Checks the batch against a model with `vocab` tokens and `seq_len` positions, where
    /// `len_of` gives each sequence's filled positions (or an error for an unknown one).
    /// Returns what the pass adds to each sequence, in order of first appearance.
    pub fn check<E: From<ForwardError>>(
        &self,
        vocab: usize,
        seq_len: usize,
        len_of: impl FnMut(SeqId) -> Result<usize, E>,
    ) -> Result<Vec<SeqSpan>, E> {
        let mut spans = Vec::new();
        self.check_into(vocab, seq_len, len_of, &mut spans)?;
        Ok(spans)
    }

    /// [`Batch::check`] into `spans` (cleared first; a decode step's reused buffer).
    pub fn check_into<E: From<ForwardError>>(
        &self,
        vocab: usize,
        seq_len: usize,
        mut len_of: impl FnMut(SeqId) -> Result<usize, E>,
        spans: &mut Vec<SeqSpan>,
    ) -> Result<(), E> {
        spans.clear();
        if self.rows.is_empty() {
            return Err(ForwardError::NoTokens.into());
        }
        if let Some(r) = self.rows.iter().find(|r| r.token as usize >= vocab) {
            return Err(ForwardError::TokenOutOfRange { id: r.token, vocab }.into());
        }
        for r in &self.rows {
            let span = match spans.iter_mut().position(|s| s.seq == r.seq) {
                Some(i) => &mut spans[i],
                None => {
                    let start = len_of(r.seq)?;
                    spans.push(SeqSpan {
                        seq: r.seq,
                        start,
                        rows: 0,
                    });
                    spans.last_mut().expect("just pushed")
                }
            };
            let expected = span.start + span.rows;
            if r.pos != expected {
                return Err(ForwardError::RowOutOfOrder {
                    seq: r.seq,
                    pos: r.pos,
                    expected,
                }
                .into());
            }
            span.rows += 1;
        }
        if let Some(s) = spans.iter().find(|s| s.start + s.rows > seq_len) {
            return Err(ForwardError::ContextFull {
                len: s.start,
                seq_len,
                adding: s.rows,
            }
            .into());
        }
        Ok(())
    }

    /// Empties the batch, keeping its room (a decode step's reused batch).
    pub fn clear(&mut self) {
        self.rows.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lens(seq: SeqId) -> Result<usize, ForwardError> {
        Ok([3, 0][seq.0 as usize])
    }

    #[test]
    fn interleaved_sequences_check_and_report_spans() {
        let mut b = Batch::tokens(SeqId(0), 3, &[5, 6], Logits::Last);
        b.extend(SeqId(1), 0, &[7], Logits::All);
        b.push(Row {
            seq: SeqId(0),
            pos: 5,
            token: 1,
            logits: true,
        });
        assert_eq!(b.logits_rows(), 3);
        let spans = b.check(10, 8, lens).unwrap();
        assert_eq!(
            spans,
            vec![
                SeqSpan {
                    seq: SeqId(0),
                    start: 3,
                    rows: 3
                },
                SeqSpan {
                    seq: SeqId(1),
                    start: 0,
                    rows: 1
                }
            ]
        );
    }

    #[test]
    fn bad_batches_are_named_errors() {
        assert_eq!(Batch::new().check(10, 8, lens), Err(ForwardError::NoTokens));
        let b = Batch::tokens(SeqId(1), 0, &[1, 12], Logits::Last);
        assert_eq!(
            b.check(10, 8, lens),
            Err(ForwardError::TokenOutOfRange { id: 12, vocab: 10 })
        );
        // A gap (position 4 while the cache ends at 3) would attend to unwritten keys.
        let b = Batch::tokens(SeqId(0), 4, &[1], Logits::Last);
        assert_eq!(
            b.check(10, 8, lens),
            Err(ForwardError::RowOutOfOrder {
                seq: SeqId(0),
                pos: 4,
                expected: 3
            })
        );
        let b = Batch::tokens(SeqId(0), 3, &[1; 6], Logits::Last);
        assert_eq!(
            b.check(10, 8, lens),
            Err(ForwardError::ContextFull {
                len: 3,
                seq_len: 8,
                adding: 6
            })
        );
    }
}
