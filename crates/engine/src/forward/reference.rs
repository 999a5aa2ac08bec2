//! The forward pass as llama2.c's `forward()` writes it, to be read top to bottom: one token
//! at one position, every step a plain function of this file or a plain loop of the
//! engine's own reference (`dot_portable`, the quantized rows' plain loops), no threads, no
//! batches, no SIMD, no tuning. It is the specification: the tuned pass
//! ([`Transformer::forward`], batched, threaded, with each machine's kernels and measured
//! row orders) is tested to give its logits bit for bit (`tests/reference.rs`), at every
//! precision, with GQA, Qwen2's biases and Llama 3's RoPE factors.

use crate::config::Config;
use crate::forward::Transformer;
use crate::kernels::{dot_portable, exp, sum};
use crate::quant::ggml::{self, GActs};
use crate::quant::{widen_portable, Activations, MatRef, QActs, ShiftedActs};
use crate::weights::TransformerWeights;

/// What one token's pass holds: the residual stream and its scratch (llama2.c's
/// `RunState`), and the KV cache of the one sequence.
pub struct Reference<'a> {
    config: Config,
    w: &'a TransformerWeights,
    /// (dim,) the residual stream, (dim,) scratch, (dim,) scratch
    x: Vec<f32>,
    xb: Vec<f32>,
    xb2: Vec<f32>,
    /// (hidden_dim,) ×2 the MLP's gate and up
    hb: Vec<f32>,
    hb2: Vec<f32>,
    /// (dim,) query, (kv_dim,) key and value of the token
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    /// (seq_len,) one head's attention weights
    att: Vec<f32>,
    /// (layer, seq_len, kv_dim) the cache
    key_cache: Vec<f32>,
    value_cache: Vec<f32>,
}

impl<'a> Reference<'a> {
    pub fn new(t: &'a Transformer) -> Reference<'a> {
        let c = t.config;
        let kv = c.n_layers * c.seq_len * c.kv_dim();
        Reference {
            config: c,
            w: &t.weights,
            x: vec![0.0; c.dim],
            xb: vec![0.0; c.dim],
            xb2: vec![0.0; c.dim],
            hb: vec![0.0; c.hidden_dim],
            hb2: vec![0.0; c.hidden_dim],
            q: vec![0.0; c.dim],
            k: vec![0.0; c.kv_dim()],
            v: vec![0.0; c.kv_dim()],
            att: vec![0.0; c.seq_len],
            key_cache: vec![0.0; kv],
            value_cache: vec![0.0; kv],
        }
    }

    /// The logits (vocab_size,) of the token after `token` at position `pos` (every
    /// position before it already run).
    pub fn forward(&mut self, token: u32, pos: usize) -> Vec<f32> {
        let c = self.config;
        let (dim, kv_dim, hs, layers) = (c.dim, c.kv_dim(), c.head_size(), c.n_layers);
        let w = self.w;
        // The token's embedding starts the residual stream.
        row(w.token_embedding.block(0, 1), token as usize, &mut self.x);
        for l in 0..layers {
            // Attention: x̂ = rmsnorm(x); q, k, v = Wq·x̂, Wk·x̂, Wv·x̂ (+ biases).
            rmsnorm(
                &mut self.xb,
                &self.x,
                &w.rms_att[l * dim..(l + 1) * dim],
                c.rms_eps,
            );
            matvec(&mut self.q, &self.xb, w.wq.block(l, layers));
            matvec(&mut self.k, &self.xb, w.wk.block(l, layers));
            matvec(&mut self.v, &self.xb, w.wv.block(l, layers));
            if let Some(b) = &w.qkv_bias {
                let b = &b[l * (dim + 2 * kv_dim)..(l + 1) * (dim + 2 * kv_dim)];
                add(&mut self.q, &b[..dim]);
                add(&mut self.k, &b[dim..dim + kv_dim]);
                add(&mut self.v, &b[dim + kv_dim..]);
            }
            // RoPE on q and k, then k and v into the cache at `pos`.
            rope(&mut self.q, hs, pos, &c, w.rope_factors.as_deref());
            rope(&mut self.k, hs, pos, &c, w.rope_factors.as_deref());
            let at = (l * c.seq_len + pos) * kv_dim;
            self.key_cache[at..at + kv_dim].copy_from_slice(&self.k);
            self.value_cache[at..at + kv_dim].copy_from_slice(&self.v);
            // Each query head against the cached keys and values of positions 0..=pos;
            // head h reads K/V head h / kv_mul (grouped-query attention).
            for h in 0..c.n_heads {
                let kv_head = h / c.kv_mul();
                let layer = l * c.seq_len * kv_dim;
                let q = &self.q[h * hs..(h + 1) * hs];
                let att = &mut self.att[..=pos];
                for (t, a) in att.iter_mut().enumerate() {
                    let k = &self.key_cache[layer + t * kv_dim + kv_head * hs..][..hs];
                    *a = dot_portable(q, k) * (1.0 / (hs as f32).sqrt());
                }
                softmax(att);
                let out = &mut self.xb[h * hs..(h + 1) * hs];
                out.fill(0.0);
                for (t, &a) in att.iter().enumerate() {
                    let v = &self.value_cache[layer + t * kv_dim + kv_head * hs..][..hs];
                    for (o, &v) in out.iter_mut().zip(v) {
                        *o += a * v;
                    }
                }
            }
            // x += Wo · attention.
            matvec(&mut self.xb2, &self.xb, w.wo.block(l, layers));
            add(&mut self.x, &self.xb2);
            // MLP: x += W2 · (silu(W1·x̂) ⊙ W3·x̂), x̂ = rmsnorm(x).
            rmsnorm(
                &mut self.xb,
                &self.x,
                &w.rms_ffn[l * dim..(l + 1) * dim],
                c.rms_eps,
            );
            matvec(&mut self.hb, &self.xb, w.w1.block(l, layers));
            matvec(&mut self.hb2, &self.xb, w.w3.block(l, layers));
            for (h, &g) in self.hb.iter_mut().zip(&self.hb2) {
                *h = *h * (1.0 / (1.0 + exp(-*h))) * g;
            }
            matvec(&mut self.xb, &self.hb, w.w2.block(l, layers));
            add(&mut self.x, &self.xb);
        }
        // The final norm and the classifier.
        rmsnorm(&mut self.xb, &self.x, &w.rms_final, c.rms_eps);
        let mut logits = vec![0.0f32; c.vocab_size];
        matvec(&mut logits, &self.xb, w.classifier());
        logits
    }
}

/// o = w ⊙ x / sqrt(mean(x²) + ε).
fn rmsnorm(o: &mut [f32], x: &[f32], weight: &[f32], eps: f32) {
    let ss = dot_portable(x, x) / x.len() as f32 + eps;
    let inv = 1.0 / ss.sqrt();
    for ((o, &x), &w) in o.iter_mut().zip(x).zip(weight) {
        *o = w * (inv * x);
    }
}

/// In place: e^(x − max) / Σ, the sum in 8 interleaved lanes (`kernels::sum`).
fn softmax(x: &mut [f32]) {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for v in x.iter_mut() {
        *v = exp(*v - max);
    }
    let total = sum(x);
    for v in x.iter_mut() {
        *v /= total;
    }
}

/// Rotates each pair (v[2j], v[2j+1]) of every head by pos·θ_j, θ_j = base^(−2j/head_size)
/// (divided by Llama 3's factor_j where the model has them), as llama2.c computes it.
fn rope(v: &mut [f32], hs: usize, pos: usize, c: &Config, factors: Option<&[f32]>) {
    for head in v.chunks_exact_mut(hs) {
        for (j, pair) in head.chunks_exact_mut(2).enumerate() {
            let factor = factors.and_then(|f| f.get(j)).copied().unwrap_or(1.0);
            let freq = 1.0 / libm::powf(c.rope_theta, (2 * j) as f32 / hs as f32) / factor;
            let val = pos as f32 * freq;
            let (cos, sin) = (libm::cosf(val), libm::sinf(val));
            let (v0, v1) = (pair[0], pair[1]);
            pair[0] = v0 * cos - v1 * sin;
            pair[1] = v0 * sin + v1 * cos;
        }
    }
}

/// x += y.
fn add(x: &mut [f32], y: &[f32]) {
    for (a, &b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

/// Row `r` of a matrix (its width `out.len()`), as float32.
fn row(w: MatRef, r: usize, out: &mut [f32]) {
    let n = out.len();
    match w {
        MatRef::F32(v) => out.copy_from_slice(&v[r * n..(r + 1) * n]),
        MatRef::F16(v) => widen_portable(&v[r * n..(r + 1) * n], out),
        MatRef::Quant(q) => q.dequantize_into(r * n, out),
        MatRef::Ggml(g) => g.row_into(r, out),
    }
}

/// out = W · x, one row of W at a time: float32 rows by `dot_portable`; float16 rows
/// widened first; quantized rows by their plain loops, with float32 activations
/// (`QRef::dot_lanes`) or with x quantized to int8 (per group, or per row for rows that
/// are not whole groups: `QActs`, `ShiftedActs`).
fn matvec(out: &mut [f32], x: &[f32], w: MatRef) {
    let n = x.len();
    match w {
        MatRef::F32(v) => {
            for (o, r) in out.iter_mut().zip(v.chunks_exact(n)) {
                *o = dot_portable(r, x);
            }
        }
        MatRef::F16(v) => {
            let mut wide = vec![0.0f32; n];
            for (o, r) in out.iter_mut().zip(v.chunks_exact(n)) {
                widen_portable(r, &mut wide);
                *o = dot_portable(&wide, x);
            }
        }
        MatRef::Quant(q) if q.activations == Activations::Int8 && q.int8_ready(n) => {
            let acts = QActs::quantize(x, n, q.group);
            for (i, o) in out.iter_mut().enumerate() {
                *o = q.dot_int8_portable(i * n, acts.row(0));
            }
        }
        MatRef::Quant(q) if q.activations == Activations::Int8 && q.int8_shifted_ready(n) => {
            let acts = ShiftedActs::quantize(x, n, q.group, out.len());
            for (i, o) in out.iter_mut().enumerate() {
                let (start, x) = acts.row(i, 0);
                *o = q.dot_int8_portable(start, x);
            }
        }
        MatRef::Quant(q) => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = q.dot_lanes(i * n, x);
            }
        }
        MatRef::Ggml(g) if g.int8() => {
            let acts = GActs::quantize(x, n, g.kind.family());
            let rb = ggml::row_bytes(g.kind, n);
            for (o, r) in out.iter_mut().zip(g.bytes.chunks_exact(rb)) {
                *o = ggml::row_dot_portable(g.kind, r, &acts.row(0));
            }
        }
        MatRef::Ggml(g) => {
            let mut wide = vec![0.0f32; n];
            for (i, o) in out.iter_mut().enumerate() {
                g.row_into(i, &mut wide);
                *o = dot_portable(&wide, x);
            }
        }
    }
}
