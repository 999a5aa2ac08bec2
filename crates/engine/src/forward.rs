//! The CPU forward pass, the readable reference every faster path is tested against. It
//! mirrors `forward` in karpathy/llama2.c `run.c`: embedding → for each layer (RMSNorm →
//! Q/K/V → RoPE → attention against the KV cache → output projection → residual → RMSNorm →
//! SwiGLU MLP → residual) → final RMSNorm → classifier.
//!
//! Three ways to run it, with the same logits (tested):
//! - [`Transformer::forward`]: one token at the cache's next position (decode);
//! - [`Transformer::prefill`]: a batch of tokens at once, matrix-matrix (the prompt);
//! - [`Transformer::forward_naive`]: no cache kept, the whole prefix re-run each step
//!   (O(n²·d) per token, for the page's cache comparison).

use crate::checkpoint::{Checkpoint, Config, TransformerWeights};
use crate::cpu::{
    add_in_place, attend_head, matmul, matmul_batch, matmul_stacked, rmsnorm, rope, swiglu,
    RopeTable,
};
use crate::kv_cache::KvCache;
use crate::par;
use thiserror::Error;

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
}

/// Activations of one decode step (llama2.c's `RunState`, minus the cache, which is per
/// sequence). Allocated once per model, reused for every token.
#[derive(Debug, Clone)]
pub struct RunState {
    /// (dim,) the residual stream
    x: Vec<f32>,
    /// (dim,) scratch after a norm / attention output
    xb: Vec<f32>,
    /// (dim,) scratch after the output projection / MLP
    xb2: Vec<f32>,
    /// (2, hidden_dim) MLP gate (w1·x) then up (w3·x)
    hb: Vec<f32>,
    /// (dim + 2·kv_dim,) query, key and value of the new token
    qkv: Vec<f32>,
    /// (n_heads, seq_len) attention scores
    att: Vec<f32>,
}

impl RunState {
    pub fn new(c: &Config) -> RunState {
        RunState {
            x: vec![0.0; c.dim],
            xb: vec![0.0; c.dim],
            xb2: vec![0.0; c.dim],
            hb: vec![0.0; 2 * c.hidden_dim],
            qkv: vec![0.0; c.dim + 2 * c.kv_dim()],
            att: vec![0.0; c.n_heads * c.seq_len],
        }
    }
}

/// A loaded model ready to run on the CPU: blueprint, parameters and the RoPE table.
#[derive(Debug, Clone)]
pub struct Transformer {
    pub config: Config,
    pub weights: TransformerWeights,
    rope: RopeTable,
}

impl Transformer {
    pub fn new(checkpoint: Checkpoint) -> Transformer {
        let c = checkpoint.config;
        Transformer {
            rope: RopeTable::new(c.head_size(), c.seq_len),
            config: c,
            weights: checkpoint.weights,
        }
    }

    fn check(&self, cache: &KvCache, tokens: &[u32]) -> Result<(), ForwardError> {
        if tokens.is_empty() {
            return Err(ForwardError::NoTokens);
        }
        let c = &self.config;
        if let Some(&id) = tokens.iter().find(|&&t| t as usize >= c.vocab_size) {
            return Err(ForwardError::TokenOutOfRange {
                id,
                vocab: c.vocab_size,
            });
        }
        if cache.len() + tokens.len() > c.seq_len {
            return Err(ForwardError::ContextFull {
                len: cache.len(),
                seq_len: c.seq_len,
                adding: tokens.len(),
            });
        }
        Ok(())
    }

    /// Decode: runs `token` at position `cache.len()`, appends its K/V to the cache and writes
    /// the next-token logits (vocab_size,) into `logits`.
    pub fn forward(
        &self,
        s: &mut RunState,
        cache: &mut KvCache,
        token: u32,
        logits: &mut [f32],
    ) -> Result<(), ForwardError> {
        self.check(cache, &[token])?;
        let c = &self.config;
        let w = &self.weights;
        let (dim, hidden, hs, kv_dim) = (c.dim, c.hidden_dim, c.head_size(), c.kv_dim());
        let pos = cache.len();
        let (cos, sin) = self.rope.at(pos);

        // The token's embedding starts the residual stream.
        let t = token as usize;
        s.x.copy_from_slice(&w.token_embedding[t * dim..(t + 1) * dim]);

        for l in 0..c.n_layers {
            // Attention RMSNorm.
            rmsnorm(&mut s.xb, &s.x, &w.rms_att[l * dim..(l + 1) * dim]);

            // Q, K and V for this token (one pass over wq, wk, wv), RoPE on q and k, then K and
            // V appended to the cache at `pos`.
            let (lq, lkv) = (l * dim * dim, l * kv_dim * dim);
            let wqkv = [
                &w.wq[lq..lq + dim * dim],
                &w.wk[lkv..lkv + kv_dim * dim],
                &w.wv[lkv..lkv + kv_dim * dim],
            ];
            matmul_stacked(&mut s.qkv, &s.xb, &wqkv);
            let (q, kv) = s.qkv.split_at_mut(dim);
            let (k, v) = kv.split_at_mut(kv_dim);
            rope(q, hs, cos, sin);
            rope(k, hs, cos, sin);
            let (k_row, v_row) = cache.rows_mut(l, pos, 1);
            k_row.copy_from_slice(k);
            v_row.copy_from_slice(v);

            // Multi-head attention over positions 0..=pos; query head h reads K/V head
            // h / kv_mul (grouped-query attention).
            let (keys, values) = cache.layer(l);
            let kv_mul = c.kv_mul();
            let q = &*q;
            let work_per_head = 2 * (pos + 1) * hs;
            par::zip_units(
                &mut s.xb,
                hs,
                &mut s.att,
                c.seq_len,
                work_per_head,
                |h, out, att| {
                    let qh = &q[h * hs..(h + 1) * hs];
                    let offset = (h / kv_mul) * hs;
                    attend_head(out, qh, keys, values, kv_dim, offset, pos, att);
                },
            );

            // Output projection and residual.
            matmul(&mut s.xb2, &s.xb, &w.wo[lq..lq + dim * dim]);
            add_in_place(&mut s.x, &s.xb2);

            // MLP RMSNorm, then SwiGLU: w2 · (silu(w1·x) ⊙ w3·x), w1 and w3 in one pass.
            rmsnorm(&mut s.xb, &s.x, &w.rms_ffn[l * dim..(l + 1) * dim]);
            let lh = l * hidden * dim;
            let w13 = [&w.w1[lh..lh + hidden * dim], &w.w3[lh..lh + hidden * dim]];
            matmul_stacked(&mut s.hb, &s.xb, &w13);
            let (gate, up) = s.hb.split_at_mut(hidden);
            swiglu(gate, up);
            matmul(&mut s.xb, gate, &w.w2[lh..lh + dim * hidden]);
            add_in_place(&mut s.x, &s.xb);
        }

        // Final norm and the classifier into logits.
        rmsnorm(&mut s.xb, &s.x, &w.rms_final);
        matmul(logits, &s.xb, w.classifier());
        cache.advance(1);
        Ok(())
    }

    /// Prefill: runs `tokens` at positions `cache.len()..`, batched (matrix-matrix), appending
    /// their K/V. Returns the logits of the last token (vocab_size,), or of every token
    /// (tokens, vocab_size) with `all_logits`. Same arithmetic as `forward`, token by token.
    pub fn prefill(
        &self,
        cache: &mut KvCache,
        tokens: &[u32],
        all_logits: bool,
    ) -> Result<Vec<f32>, ForwardError> {
        self.check(cache, tokens)?;
        let c = &self.config;
        let w = &self.weights;
        let (dim, hidden, hs, kv_dim) = (c.dim, c.hidden_dim, c.head_size(), c.kv_dim());
        let (n, pos0) = (tokens.len(), cache.len());
        let kv_mul = c.kv_mul();

        // (n, dim) residual streams, one row per token.
        let mut x = Vec::with_capacity(n * dim);
        for &t in tokens {
            let t = t as usize;
            x.extend_from_slice(&w.token_embedding[t * dim..(t + 1) * dim]);
        }
        let mut xb = vec![0.0f32; n * dim];
        let mut xb2 = vec![0.0f32; n * dim];
        let mut q = vec![0.0f32; n * dim];
        let mut hb = vec![0.0f32; n * hidden];
        let mut hb2 = vec![0.0f32; n * hidden];

        for l in 0..c.n_layers {
            for (o, row) in xb.chunks_mut(dim).zip(x.chunks(dim)) {
                rmsnorm(o, row, &w.rms_att[l * dim..(l + 1) * dim]);
            }
            matmul_batch(
                &mut q,
                &xb,
                &w.wq[l * dim * dim..(l + 1) * dim * dim],
                dim,
                dim,
            );
            {
                let (k, v) = cache.rows_mut(l, pos0, n);
                matmul_batch(
                    k,
                    &xb,
                    &w.wk[l * kv_dim * dim..(l + 1) * kv_dim * dim],
                    dim,
                    kv_dim,
                );
                matmul_batch(
                    v,
                    &xb,
                    &w.wv[l * kv_dim * dim..(l + 1) * kv_dim * dim],
                    dim,
                    kv_dim,
                );
                for (i, krow) in k.chunks_mut(kv_dim).enumerate() {
                    let (cos, sin) = self.rope.at(pos0 + i);
                    rope(krow, hs, cos, sin);
                }
            }
            for (i, qrow) in q.chunks_mut(dim).enumerate() {
                let (cos, sin) = self.rope.at(pos0 + i);
                rope(qrow, hs, cos, sin);
            }

            // Causal attention: token i sees positions 0..=pos0+i. Tokens run in parallel.
            let (keys, values) = cache.layer(l);
            let ctx = pos0 + n;
            let qr = &q;
            par::chunks(&mut xb, dim, 2 * ctx * dim, |first, rows| {
                let mut att = vec![0.0f32; ctx];
                for (r, out) in rows.chunks_mut(dim).enumerate() {
                    let i = first + r;
                    let qrow = &qr[i * dim..(i + 1) * dim];
                    for (h, oh) in out.chunks_mut(hs).enumerate() {
                        let offset = (h / kv_mul) * hs;
                        let qh = &qrow[h * hs..(h + 1) * hs];
                        attend_head(oh, qh, keys, values, kv_dim, offset, pos0 + i, &mut att);
                    }
                }
            });

            matmul_batch(
                &mut xb2,
                &xb,
                &w.wo[l * dim * dim..(l + 1) * dim * dim],
                dim,
                dim,
            );
            add_in_place(&mut x, &xb2);

            for (o, row) in xb.chunks_mut(dim).zip(x.chunks(dim)) {
                rmsnorm(o, row, &w.rms_ffn[l * dim..(l + 1) * dim]);
            }
            matmul_batch(
                &mut hb,
                &xb,
                &w.w1[l * hidden * dim..(l + 1) * hidden * dim],
                dim,
                hidden,
            );
            matmul_batch(
                &mut hb2,
                &xb,
                &w.w3[l * hidden * dim..(l + 1) * hidden * dim],
                dim,
                hidden,
            );
            swiglu(&mut hb, &hb2);
            matmul_batch(
                &mut xb,
                &hb,
                &w.w2[l * dim * hidden..(l + 1) * dim * hidden],
                hidden,
                dim,
            );
            add_in_place(&mut x, &xb);
        }

        // Final norm and classifier, for the last token or all of them.
        let rows = if all_logits { 0..n } else { n - 1..n };
        let m = rows.len();
        let mut normed = vec![0.0f32; m * dim];
        for (o, i) in normed.chunks_mut(dim).zip(rows) {
            rmsnorm(o, &x[i * dim..(i + 1) * dim], &w.rms_final);
        }
        let mut logits = vec![0.0f32; m * c.vocab_size];
        matmul_batch(&mut logits, &normed, w.classifier(), dim, c.vocab_size);
        cache.advance(n);
        Ok(logits)
    }

    /// The cache-less way: the logits after `tokens`, computed by re-running the whole prefix
    /// from scratch (every position's K/V recomputed). O(n²·d) per generated token.
    pub fn forward_naive(&self, tokens: &[u32]) -> Result<Vec<f32>, ForwardError> {
        let mut scratch = KvCache::new(&self.config);
        self.prefill(&mut scratch, tokens, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Transformer {
        let config = Config {
            dim: 16,
            hidden_dim: 24,
            n_layers: 2,
            n_heads: 4,
            n_kv_heads: 2,
            vocab_size: 20,
            seq_len: 12,
            shared_classifier: false,
        };
        Transformer::new(Checkpoint::random(config, 9).unwrap())
    }

    #[test]
    fn decode_prefill_and_naive_agree() {
        let m = tiny();
        let tokens = [1u32, 5, 7, 3, 19, 0, 2];
        let mut s = RunState::new(&m.config);
        let mut cache = KvCache::new(&m.config);
        let mut logits = vec![0.0; 20];
        let mut per_token = Vec::new();
        for &t in &tokens {
            m.forward(&mut s, &mut cache, t, &mut logits).unwrap();
            per_token.extend_from_slice(&logits);
        }
        let mut cache2 = KvCache::new(&m.config);
        let batched = m.prefill(&mut cache2, &tokens, true).unwrap();
        assert_eq!(per_token, batched);
        assert_eq!(cache.len(), cache2.len());
        let naive = m.forward_naive(&tokens).unwrap();
        assert_eq!(&per_token[per_token.len() - 20..], &naive[..]);
    }

    #[test]
    fn prefill_in_two_parts_equals_one() {
        let m = tiny();
        let tokens = [1u32, 5, 7, 3, 19, 0, 2];
        let mut a = KvCache::new(&m.config);
        let one = m.prefill(&mut a, &tokens, false).unwrap();
        let mut b = KvCache::new(&m.config);
        m.prefill(&mut b, &tokens[..3], false).unwrap();
        let two = m.prefill(&mut b, &tokens[3..], false).unwrap();
        assert_eq!(one, two);
    }

    #[test]
    fn rewind_then_redo_gives_same_logits() {
        let m = tiny();
        let mut s = RunState::new(&m.config);
        let mut cache = KvCache::new(&m.config);
        let mut l1 = vec![0.0; 20];
        let mut l2 = vec![0.0; 20];
        m.prefill(&mut cache, &[1, 4, 6], false).unwrap();
        m.forward(&mut s, &mut cache, 8, &mut l1).unwrap();
        m.forward(&mut s, &mut cache, 9, &mut l2).unwrap();
        cache.truncate(3);
        m.forward(&mut s, &mut cache, 8, &mut l2).unwrap();
        assert_eq!(l1, l2);
    }

    #[test]
    fn bad_tokens_and_full_context_are_errors() {
        let m = tiny();
        let mut cache = KvCache::new(&m.config);
        assert_eq!(
            m.prefill(&mut cache, &[25], false).unwrap_err(),
            ForwardError::TokenOutOfRange { id: 25, vocab: 20 }
        );
        assert_eq!(
            m.prefill(&mut cache, &[], false).unwrap_err(),
            ForwardError::NoTokens
        );
        assert!(matches!(
            m.prefill(&mut cache, &[1; 13], false).unwrap_err(),
            ForwardError::ContextFull { .. }
        ));
        m.prefill(&mut cache, &[1; 12], false).unwrap();
        let mut s = RunState::new(&m.config);
        let mut logits = vec![0.0; 20];
        assert!(matches!(
            m.forward(&mut s, &mut cache, 1, &mut logits).unwrap_err(),
            ForwardError::ContextFull {
                len: 12,
                seq_len: 12,
                adding: 1
            }
        ));
    }
}
