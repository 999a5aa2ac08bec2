//! The cache-less forward pass of the lesson (section 4), written apart from `forward` so
//! that comparing the two tests the cache: every position's Q, K and V recomputed from the
//! embeddings at every step, nothing kept between calls.

use super::*;

impl Transformer {
    /// The cache-less way (lesson 10, section 4): the logits after `tokens`, computed by
    /// re-running the whole prefix from its embeddings, every position's Q, K and V
    /// recomputed. Keys and values live only in this call's (n, kv_dim) matrices and are
    /// dropped with it: nothing survives from one step to the next. O(n²·d) per generated
    /// token. Row by row with matrix-vector products, no `KvCache`, no `Batch`: a separate
    /// path from `forward`, so comparing the two tests the cache.
    pub fn forward_naive(&self, tokens: &[u32]) -> Result<Vec<f32>, ForwardError> {
        let c = &self.config;
        Batch::tokens(SeqId(0), 0, tokens, Logits::Last)
            .check(c.vocab_size, c.seq_len, |_| Ok::<_, ForwardError>(0))?;
        let dim = c.dim;
        let table = self.weights.token_embedding.block(0, 1);
        let mut x: Vec<Vec<f32>> = tokens
            .iter()
            .map(|&t| {
                let mut row = vec![0.0f32; dim];
                table.row_into(t as usize, &mut row);
                row
            })
            .collect();
        for l in 0..c.n_layers {
            self.naive_layer(&Layer::of(&self.weights, c, l), &mut x);
        }
        let last = x.last().ok_or(ForwardError::NoTokens)?;
        let mut normed = vec![0.0f32; dim];
        rmsnorm(&mut normed, last, &self.weights.rms_final, c.rms_eps);
        let mut logits = vec![0.0f32; c.vocab_size];
        matmul(&mut logits, &normed, dim, &[self.weights.classifier()]);
        Ok(logits)
    }

    /// One layer over the whole prefix `x` (one residual vector per position), attention
    /// against the K/V of this prefix only.
    fn naive_layer(&self, w: &Layer, x: &mut [Vec<f32>]) {
        let c = &self.config;
        let (dim, hidden, hs, kv_dim) = (c.dim, c.hidden_dim, c.head_size(), c.kv_dim());
        let n = x.len();
        let mut xb = vec![0.0f32; dim];
        let (mut q, mut k, mut v) = (
            vec![0.0f32; n * dim],
            vec![0.0f32; n * kv_dim],
            vec![0.0f32; n * kv_dim],
        );
        for (i, xi) in x.iter().enumerate() {
            rmsnorm(&mut xb, xi, w.rms_att, c.rms_eps);
            let (qi, ki) = (&mut q[i * dim..][..dim], &mut k[i * kv_dim..][..kv_dim]);
            matmul(qi, &xb, dim, &[w.wq]);
            matmul(ki, &xb, dim, &[w.wk]);
            matmul(&mut v[i * kv_dim..][..kv_dim], &xb, dim, &[w.wv]);
            if let Some(b) = w.qkv_bias {
                let vi = &mut v[i * kv_dim..][..kv_dim];
                add_qkv_bias(b, dim, qi, ki, vi);
            }
            let (cos, sin) = self.rope.at(i);
            rope(qi, hs, cos, sin);
            rope(ki, hs, cos, sin);
        }
        let (mut att, mut out) = (vec![0.0f32; n], vec![0.0f32; dim]);
        let (mut proj, mut gate, mut up) = (vec![0.0; dim], vec![0.0; hidden], vec![0.0; hidden]);
        for (i, xi) in x.iter_mut().enumerate() {
            // Position i attends to positions 0..=i of this prefix (the causal mask).
            for h in 0..c.n_heads {
                let q_h = &q[i * dim + h * hs..][..hs];
                let offset = (h / c.kv_mul()) * hs;
                attend_head(
                    &mut out[h * hs..][..hs],
                    q_h,
                    &k,
                    &v,
                    kv_dim,
                    offset,
                    i,
                    &mut att,
                );
            }
            matmul(&mut proj, &out, dim, &[w.wo]);
            add_in_place(xi, &proj);
            rmsnorm(&mut xb, xi, w.rms_ffn, c.rms_eps);
            matmul(&mut gate, &xb, dim, &[w.w1]);
            matmul(&mut up, &xb, dim, &[w.w3]);
            swiglu(&mut gate, &up);
            matmul(&mut proj, &gate, hidden, &[w.w2]);
            add_in_place(xi, &proj);
        }
    }
}
