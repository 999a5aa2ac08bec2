//! What a forward pass costs in multiply-adds, counted from the blueprint (lesson 10,
//! section 4): with the cache a decode step multiplies every weight matrix by one token and
//! attends over the n cached positions, O(n·d); without it, the whole n-token prefix runs
//! again, O(n²·d). The page's cache comparison and the CLI show these beside measured times.

use crate::config::Config;
use crate::forward::kv_cache::cache_bytes_formula;

/// Multiply-adds of the weight matrices for one token (Q, K, V, O and the three MLP
/// matrices in every layer), without the classifier.
///
/// All counts are u64 from the first product: in wasm `usize` is 32 bits, and Llama-2-7B's
/// 6.5 billion multiply-adds a token would wrap.
pub fn layer_matmul_macs(c: &Config) -> u64 {
    let [d, kv, h, l] = [c.dim, c.kv_dim(), c.hidden_dim, c.n_layers].map(|v| v as u64);
    l * (2 * d * d + 2 * kv * d + 3 * d * h)
}

/// Multiply-adds of the classifier for one token (vocab_size × dim).
pub fn classifier_macs(c: &Config) -> u64 {
    c.vocab_size as u64 * c.dim as u64
}

/// Multiply-adds of attention for a token that sees `positions` positions: q·k and the
/// weighted sum of v, for every head of every layer.
pub fn attention_macs(c: &Config, positions: u64) -> u64 {
    2 * positions * c.dim as u64 * c.n_layers as u64
}

/// The multiply-adds for the logits after n tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepMacs {
    /// With the cache: the n-th token only, attending over n positions.
    pub cached: u64,
    /// Without: all n tokens again (classifier for the last one only), token t attending
    /// over t positions.
    pub naive: u64,
}

impl StepMacs {
    pub fn at(c: &Config, n: u64) -> StepMacs {
        let (layers, cls) = (layer_matmul_macs(c), classifier_macs(c));
        StepMacs {
            cached: layers + cls + attention_macs(c, n),
            naive: n * layers + cls + (1..=n).map(|t| attention_macs(c, t)).sum::<u64>(),
        }
    }
}

/// What one forward pass over a batch does (lesson 10, sections 4–5: prefill is
/// compute-bound, decode memory-bound): floating-point operations (2 per multiply-add) and
/// the bytes it must move at least — every weight read once for all rows, each sequence's
/// K/V cache read once up to its last row (its rows share the read, as a tiled attention
/// does), every row's new K and V written.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PassCost {
    pub flops: u64,
    pub bytes: u64,
}

impl PassCost {
    /// A pass over sequences given as `(first position, rows)` spans (0-based; a decode
    /// row is `(n, 1)`, a prompt `(0, len)`), `logits` of the rows through the classifier,
    /// with `weight_bytes` of weights (at their precision); K/V are float32.
    pub fn of(c: &Config, spans: &[(u64, u64)], logits: u64, weight_bytes: u64) -> PassCost {
        PassCost::of_elem(c, spans, logits, weight_bytes, 4)
    }

    /// [`PassCost::of`] with K/V elements of `kv_elem_bytes` bytes (2 for an fp16 cache).
    pub fn of_elem(
        c: &Config,
        spans: &[(u64, u64)],
        logits: u64,
        weight_bytes: u64,
        kv_elem_bytes: u64,
    ) -> PassCost {
        let rows: u64 = spans.iter().map(|&(_, n)| n).sum();
        // Row at position p attends over p + 1 positions.
        let attention: u64 = spans
            .iter()
            .map(|&(p0, n)| {
                (p0 + 1..=p0 + n)
                    .map(|seen| attention_macs(c, seen))
                    .sum::<u64>()
            })
            .sum();
        let macs = rows * layer_matmul_macs(c) + logits * classifier_macs(c) + attention;
        let kv_row = cache_bytes_formula(1, c.n_layers as u64, c.kv_dim() as u64, kv_elem_bytes);
        let kv_read: u64 = spans.iter().map(|&(p0, n)| (p0 + n) * kv_row).sum();
        PassCost {
            flops: 2 * macs,
            bytes: weight_bytes + kv_read + rows * kv_row,
        }
    }

    /// FLOPs per byte.
    pub fn intensity(&self) -> f64 {
        self.flops as f64 / self.bytes.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stories260k_counts_by_hand() {
        // dim 64, hidden 172, 5 layers, 8 heads / 4 KV heads (kv_dim 32), vocab 512.
        let c = Config::from_header([64, 172, 5, 8, 4, 512, 512]).unwrap();
        // Per layer: 2·64·64 + 2·32·64 + 3·64·172 = 8192 + 4096 + 33024 = 45312.
        assert_eq!(layer_matmul_macs(&c), 5 * 45_312);
        assert_eq!(classifier_macs(&c), 32_768);
        // One token at n = 1: 226560 + 32768 + 2·1·64·5 = 259968; naive is the same there.
        assert_eq!(StepMacs::at(&c, 1).cached, 259_968);
        assert_eq!(StepMacs::at(&c, 1).naive, 259_968);
        // n = 3: naive = 3·226560 + 32768 + 640·(1 + 2 + 3).
        assert_eq!(StepMacs::at(&c, 3).naive, 3 * 226_560 + 32_768 + 640 * 6);
        assert_eq!(StepMacs::at(&c, 3).cached, 226_560 + 32_768 + 640 * 3);
    }

    /// A decode step of 4 sequences at position 9 against a prefill of one 10-token prompt,
    /// stories260K at f32 (1,040,128 weight bytes), by hand: per row 226,560 MACs of the
    /// layers, 32,768 of the classifier for a row with logits, 640 × (pos + 1) of attention;
    /// K/V is 2 × 5 × 32 × 4 = 1,280 bytes a position, each sequence's read once.
    #[test]
    fn pass_costs_by_hand() {
        let c = Config::from_header([64, 172, 5, 8, 4, 512, 512]).unwrap();
        let decode = PassCost::of(&c, &[(9, 1); 4], 4, 1_040_128);
        assert_eq!(decode.flops, 2 * (4 * 226_560 + 4 * 32_768 + 4 * 640 * 10));
        assert_eq!(decode.bytes, 1_040_128 + 4 * 10 * 1_280 + 4 * 1_280);
        let prefill = PassCost::of(&c, &[(0, 10)], 1, 1_040_128);
        assert_eq!(prefill.flops, 2 * (10 * 226_560 + 32_768 + 640 * 55));
        // The prompt's 10 positions read once (its rows share them) and written once.
        assert_eq!(prefill.bytes, 1_040_128 + 10 * 1_280 + 10 * 1_280);
        // Two sequences, one decoding at 4 and one prefilling 3 tokens from 0, in one pass.
        let mixed = PassCost::of(&c, &[(4, 1), (0, 3)], 2, 1_040_128);
        assert_eq!(
            mixed.flops,
            2 * (4 * 226_560 + 2 * 32_768 + 640 * (5 + 1 + 2 + 3))
        );
        assert_eq!(mixed.bytes, 1_040_128 + (5 + 3) * 1_280 + 4 * 1_280);
        // Ten rows a weight read against four: prefill does more arithmetic per byte.
        assert!(prefill.intensity() > decode.intensity());
    }
}
