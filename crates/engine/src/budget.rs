//! The memory a model will need, worked out from its header with checked u64 arithmetic
//! before anything is allocated, against a budget: the weights, the KV cache of each sequence
//! (2 × seq_len × n_layers × kv_dim × 4 bytes) and the run state. A header whose figures do
//! not fit (a hostile one) is a typed error naming the figure, never a wrapped `usize`
//! (wasm32's is 32 bits) or a multi-gigabyte allocation that aborts the process.

use crate::config::Config;
use crate::forward::kv_cache::{cache_bytes_checked, BYTES_PER_ELEM};
use crate::units::{human_bytes, thousands};
use thiserror::Error;

const GIB: u64 = 1 << 30;

/// The most memory a loaded model may take: weights, one sequence's cache and the run
/// state, and every further sequence's cache as it is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget(pub u64);

impl Default for Budget {
    /// 1.5 GiB in wasm32 (a tab's memory is at most 4 GiB, and the page holds the file's
    /// bytes too); 16 GiB natively, which `--memory-limit` changes.
    fn default() -> Budget {
        if cfg!(target_arch = "wasm32") {
            Budget(3 * GIB / 2)
        } else {
            Budget(16 * GIB)
        }
    }
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum BudgetError {
    #[error("{what} would need {} at seq_len {}; the limit is {}",
        human_bytes(*.bytes), thousands(*.seq_len as u64), human_bytes(*.limit))]
    OverBudget {
        what: &'static str,
        bytes: u64,
        seq_len: usize,
        limit: u64,
    },
    #[error("{what} of this header does not fit in 64 bits")]
    Overflow { what: &'static str },
}

/// Bytes a model takes, by part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// The learned parameters as float32 (the file's tensors, RoPE tables included).
    pub weights: u64,
    /// One sequence's K and V for the whole context.
    pub kv_per_sequence: u64,
    /// Activations of a prefill (a chunk of `forward::PREFILL_CHUNK` rows at most), the
    /// RoPE table and the logits.
    pub run_state: u64,
}

fn mul(parts: &[u64], what: &'static str) -> Result<u64, BudgetError> {
    parts
        .iter()
        .try_fold(1u64, |a, &b| a.checked_mul(b))
        .ok_or(BudgetError::Overflow { what })
}

impl Footprint {
    pub fn of(c: &Config) -> Result<Footprint, BudgetError> {
        let (l, s) = (c.n_layers as u64, c.seq_len as u64);
        let (kv, v, e) = (
            c.kv_dim() as u64,
            c.vocab_size as u64,
            BYTES_PER_ELEM as u64,
        );
        let weights =
            c.file_floats()
                .and_then(|f| f.checked_mul(e))
                .ok_or(BudgetError::Overflow {
                    what: "the weights",
                })?;
        let kv_per_sequence = cache_bytes_checked(s, l, kv, e).ok_or(BudgetError::Overflow {
            what: "the KV cache",
        })?;
        // Per row: the run state's buffers (x, xb, xb2, qkv, hb); the RoPE table
        // (seq_len × head_size); the logits of one row.
        let row = c.activation_widths().iter().sum::<usize>() as u64;
        // a prefill runs in chunks of rows (`forward::PREFILL_CHUNK`)
        let chunk = s.min(crate::forward::PREFILL_CHUNK as u64);
        let run_state = mul(&[chunk, row, e], "the run state")?
            .checked_add(mul(&[s, c.head_size() as u64, e], "the RoPE table")?)
            .and_then(|b| b.checked_add(v * e))
            .ok_or(BudgetError::Overflow {
                what: "the run state",
            })?;
        Ok(Footprint {
            weights,
            kv_per_sequence,
            run_state,
        })
    }

    /// Weights, run state and `sequences` caches.
    pub fn with_sequences(&self, sequences: u64) -> Option<u64> {
        self.kv_per_sequence
            .checked_mul(sequences)?
            .checked_add(self.weights)?
            .checked_add(self.run_state)
    }

    /// Checks the model with one sequence against `budget`; each part is named when it
    /// alone is too large.
    pub fn check(&self, c: &Config, budget: Budget) -> Result<(), BudgetError> {
        let over = |what, bytes| BudgetError::OverBudget {
            what,
            bytes,
            seq_len: c.seq_len,
            limit: budget.0,
        };
        for (what, bytes) in [
            ("the weights", self.weights),
            ("the KV cache", self.kv_per_sequence),
            ("the run state", self.run_state),
        ] {
            if bytes > budget.0 {
                return Err(over(what, bytes));
            }
        }
        match self.with_sequences(1) {
            Some(total) if total <= budget.0 => Ok(()),
            Some(total) => Err(over("the model with one sequence", total)),
            None => Err(BudgetError::Overflow {
                what: "the model with one sequence",
            }),
        }
    }

    /// Checks that one more sequence (a fork, a beam) fits beside `open` others.
    pub fn check_sequences(
        &self,
        c: &Config,
        open: u64,
        budget: Budget,
    ) -> Result<(), BudgetError> {
        match self.with_sequences(open + 1) {
            Some(total) if total <= budget.0 => Ok(()),
            total => Err(BudgetError::OverBudget {
                what: "another sequence's KV cache",
                bytes: total.unwrap_or(u64::MAX),
                seq_len: c.seq_len,
                limit: budget.0,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_million_positions_of_tiny_dims_is_refused_with_the_figure() {
        // A hostile header: 12.7 MB of weights, 32 GiB of cache.
        let c = Config::from_header([64, 1, 64, 32, 32, 3, 1_048_576]).unwrap();
        let f = Footprint::of(&c).unwrap();
        // 2 × 1,048,576 × 64 layers × 64 (kv_dim) × 4 bytes = 32 GiB.
        assert_eq!(f.kv_per_sequence, 32 << 30);
        let e = f.check(&c, Budget(3 << 29)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the KV cache would need 32 GiB at seq_len 1,048,576; the limit is 1.50 GiB"
        );
        assert!(f.check(&c, Budget(16 << 30)).is_err());
    }

    #[test]
    fn stories260k_fits_and_sequences_are_counted() {
        let c = Config::from_header([64, 172, 5, 8, 4, 512, 512]).unwrap();
        let f = Footprint::of(&c).unwrap();
        assert_eq!(f.kv_per_sequence, 655_360);
        assert_eq!(f.weights, c.file_floats().unwrap() * 4);
        f.check(&c, Budget::default()).unwrap();
        let room = f.with_sequences(1).unwrap() + 2 * 655_360;
        let b = Budget(room);
        assert!(f.check_sequences(&c, 2, b).is_ok());
        assert!(f.check_sequences(&c, 3, b).is_err());
    }
}
