//! The CPU forward pass, the readable reference every faster path is tested against. It
//! mirrors `forward` in karpathy/llama2.c `run.c`: embedding → for each layer (RMSNorm →
//! Q/K/V → RoPE → attention against the KV cache → output projection → residual → RMSNorm →
//! SwiGLU MLP → residual) → final RMSNorm → classifier.
//!
//! One pass, [`Transformer::forward`], runs a [`Batch`] of rows (each a token of some
//! sequence at some position) through one layer function: every matmul reads each weight
//! row once for all rows (matrix-matrix), and attention runs each row against its own
//! sequence's cache up to its position. Decode is a batch of one row ([`Transformer::decode`]),
//! prefill a batch of the prompt's rows ([`Transformer::prefill`]).
//!
//! [`Transformer::forward_naive`] is the other way the lesson describes: no cache at all.
//! It re-runs the whole n-token prefix as one batch, its keys and values held only inside
//! the pass and dropped after it (O(n²·d) per generated token), written separately from the
//! cached pass so the equivalence tests compare genuinely different code.

pub mod batch;
pub mod kv_cache;
pub mod lens;
mod naive;
pub mod probe;
pub mod reference;

use crate::config::Config;
use crate::forward::batch::{Batch, Logits, Row, SeqId, SeqSpan};
use crate::forward::kv_cache::{Caches, KvCache};
use crate::forward::probe::{ProbeRecord, ProbeSpec, Probed};
use crate::kernels::{
    add_in_place, attend_head, attend_heads, matmul, rmsnorm, rope, swiglu, RopeTable,
};
use crate::par;
use crate::quant::{MatRef, Precision};
use crate::weights::Checkpoint;
use crate::weights::TransformerWeights;
use std::sync::Mutex;

use crate::forward::batch::ForwardError;

thread_local! {
    /// Attention scores of one (row, head), reused by each thread from pass to pass (a
    /// decode step of a small model would otherwise spend a measurable share of its time
    /// allocating them).
    static SCORES: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Query heads of one row that attend together (`kernels::attend_heads`: their weighted sums of
/// the values advance side by side).
const HEADS_AT_ONCE: usize = 8;

/// The most rows a forward pass runs at once: a longer batch (a long prompt's prefill) runs
/// in chunks of this many, so the run state holds a chunk's activations, not the whole
/// context's (the budget counts it so: `budget::Footprint`).
pub const PREFILL_CHUNK: usize = 512;

/// Activations of one pass over `rows` rows (llama2.c's `RunState`, minus the cache, which is
/// per sequence). Reused from pass to pass; grown when a batch has more rows than before.
#[derive(Debug, Clone, Default)]
pub struct RunState {
    rows: usize,
    /// (rows, dim) the residual streams
    x: Vec<f32>,
    /// (rows, dim) scratch after a norm / attention output
    xb: Vec<f32>,
    /// (rows, dim) scratch after the output projection / MLP
    xb2: Vec<f32>,
    /// (rows, dim) queries, then (rows, kv_dim) keys, then (rows, kv_dim) values
    qkv: Vec<f32>,
    /// (rows, hidden_dim) MLP gates (w1·x), then (rows, hidden_dim) ups (w3·x)
    hb: Vec<f32>,
    /// A decode step's own batch, what it adds to its sequence, the head's input rows, their
    /// norms and the logits: kept from step to step, so that a step allocates nothing
    /// (`tests/decode_allocations.rs`).
    batch: Batch,
    spans: Vec<SeqSpan>,
    head_x: Vec<f32>,
    normed: Vec<f32>,
    logits: Vec<f32>,
}

impl RunState {
    /// Room for one row (decode); `fit` grows it.
    pub fn new(c: &Config) -> RunState {
        let mut s = RunState::default();
        s.fit(c, 1);
        s
    }

    fn fit(&mut self, c: &Config, rows: usize) {
        if rows != self.rows {
            let [x, xb, xb2, qkv, hb] = c.activation_widths();
            let size = |v: &mut Vec<f32>, w: usize| v.resize(rows * w, 0.0);
            size(&mut self.x, x);
            size(&mut self.xb, xb);
            size(&mut self.xb2, xb2);
            size(&mut self.qkv, qkv);
            size(&mut self.hb, hb);
            self.rows = rows;
        }
    }
}

/// One layer's parameters, cut out of the all-layer tensors.
struct Layer<'a> {
    /// (dim,) ×2 the norms before attention and before the MLP
    rms_att: &'a [f32],
    rms_ffn: &'a [f32],
    /// (dim, dim), (kv_dim, dim), (kv_dim, dim), (dim, dim)
    wq: MatRef<'a>,
    wk: MatRef<'a>,
    wv: MatRef<'a>,
    wo: MatRef<'a>,
    /// (hidden, dim), (dim, hidden), (hidden, dim)
    w1: MatRef<'a>,
    w2: MatRef<'a>,
    w3: MatRef<'a>,
    /// [bq; bk; bv] (dim + 2·kv_dim), where the model has them.
    qkv_bias: Option<&'a [f32]>,
}

impl<'a> Layer<'a> {
    fn of(w: &'a TransformerWeights, c: &Config, l: usize) -> Layer<'a> {
        let (dim, layers) = (c.dim, c.n_layers);
        // Layer l's norm out of a tensor holding every layer's (dim,) in turn; its matrix out
        // of a tensor of `layers` matrices (quantized ones each with their own groups).
        let cut = |t: &'a [f32]| &t[l * dim..(l + 1) * dim];
        Layer {
            rms_att: cut(&w.rms_att),
            rms_ffn: cut(&w.rms_ffn),
            wq: w.wq.block(l, layers),
            wk: w.wk.block(l, layers),
            wv: w.wv.block(l, layers),
            wo: w.wo.block(l, layers),
            w1: w.w1.block(l, layers),
            w2: w.w2.block(l, layers),
            w3: w.w3.block(l, layers),
            qkv_bias: w.qkv_bias.as_deref().map(|b| {
                let n = dim + 2 * c.kv_dim();
                &b[l * n..(l + 1) * n]
            }),
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
            rope: RopeTable::with_factors(
                c.head_size(),
                c.seq_len,
                c.rope_theta,
                checkpoint.weights.rope_factors.as_deref(),
            ),
            config: c,
            weights: checkpoint.weights,
        }
    }

    /// The same model with its matrices at `precision` (the norms and the RoPE table
    /// unchanged): quantized from the float32 weights, or from the dequantized ones.
    pub fn at(&self, precision: Precision) -> Transformer {
        Transformer {
            config: self.config,
            weights: self.weights.at(&self.config, precision),
            rope: self.rope.clone(),
        }
    }

    /// The same weights with the CPU multiplying its quantized matrices by `activations`
    /// (int8 by default; float32 is the GPU's product and its tests' CPU twin).
    pub fn with_activations(&self, activations: crate::quant::Activations) -> Transformer {
        let mut t = self.clone();
        t.weights.set_activations(activations);
        t
    }

    /// The forward pass over a batch: runs every row at its position in its sequence,
    /// appends the rows' K/V to their caches and returns the next-token logits of the rows
    /// that ask for them ((rows with logits, vocab_size), in row order).
    pub fn forward(
        &self,
        s: &mut RunState,
        caches: &mut impl Caches,
        batch: &Batch,
    ) -> Result<Vec<f32>, ForwardError> {
        self.forward_layers(s, caches, batch, self.config.n_layers)
    }

    /// [`Transformer::forward`] through the first `layers` layers only, then the final norm
    /// and the classifier: an early-exit draft (speculative decoding's `exit:K`). Its first
    /// layers are this model's, so it writes their K/V into the same caches; the deeper
    /// layers' entries at those positions stay stale until a full pass rewrites them.
    pub fn forward_layers(
        &self,
        s: &mut RunState,
        caches: &mut impl Caches,
        batch: &Batch,
        layers: usize,
    ) -> Result<Vec<f32>, ForwardError> {
        self.run(s, caches, batch, layers, None)
    }

    /// [`Transformer::forward`] with the probe ([`crate::forward::probe`]): the last row's
    /// attention weights per layer and head, and the residual streams of the last `spec.lens_rows`
    /// rows after each layer, recorded as the pass computes them.
    pub fn forward_probed(
        &self,
        s: &mut RunState,
        caches: &mut impl Caches,
        batch: &Batch,
        spec: ProbeSpec,
    ) -> Result<Probed, ForwardError> {
        let mut record = ProbeRecord::new(&self.config, batch, spec)?;
        let logits = self.run(s, caches, batch, self.config.n_layers, Some(&mut record))?;
        Ok(Probed { logits, record })
    }

    fn run(
        &self,
        s: &mut RunState,
        caches: &mut impl Caches,
        batch: &Batch,
        layers: usize,
        probe: Option<&mut ProbeRecord>,
    ) -> Result<Vec<f32>, ForwardError> {
        self.run_into(s, caches, batch, layers, probe)?;
        Ok(std::mem::take(&mut s.logits))
    }

    /// The pass, its logits left in `s.logits`.
    fn run_into(
        &self,
        s: &mut RunState,
        caches: &mut impl Caches,
        batch: &Batch,
        layers: usize,
        mut probe: Option<&mut ProbeRecord>,
    ) -> Result<(), ForwardError> {
        let c = &self.config;
        if probe.is_none() && batch.rows().len() > PREFILL_CHUNK {
            // A long prefill in chunks of rows, one after another: each chunk's K/V are in
            // the cache before the next attends to them, and every row's bits are its own
            // (a row gives the same bits in any batch), so only the run state shrinks.
            let mut logits = Vec::new();
            for rows in batch.rows().chunks(PREFILL_CHUNK) {
                let mut part = Batch::new();
                rows.iter().for_each(|&r| part.push(r));
                self.run_into(s, caches, &part, layers, None)?;
                logits.extend_from_slice(&s.logits);
            }
            s.logits = logits;
            return Ok(());
        }
        let mut spans = std::mem::take(&mut s.spans);
        let checked = batch.check_into(
            c.vocab_size,
            c.seq_len,
            |seq| {
                caches
                    .cache(seq)
                    .map(KvCache::len)
                    .ok_or(ForwardError::UnknownSequence(seq))
            },
            &mut spans,
        );
        if let Err(e) = checked {
            s.spans = spans;
            return Err(e);
        }
        let rows = batch.rows();
        s.fit(c, rows.len());

        // Each row's token embedding starts its residual stream.
        let dim = c.dim;
        let table = self.weights.token_embedding.block(0, 1);
        for (x, r) in s.x.chunks_mut(dim).zip(rows) {
            table.row_into(r.token as usize, x);
        }
        for l in 0..layers.min(c.n_layers) {
            let layer = Layer::of(&self.weights, c, l);
            let att = probe.as_deref_mut().map(|p| p.layer_weights_mut(l));
            self.attention_block(l, &layer, s, caches, rows, att);
            self.mlp_block(&layer, s);
            if let Some(p) = probe.as_deref_mut() {
                let first = p.first_lens_row(rows.len());
                for i in 0..p.lens_positions.len() {
                    let x = &s.x[(first + i) * dim..][..dim];
                    p.residual_mut(l, i).copy_from_slice(x);
                }
            }
        }
        for span in &spans {
            if let Some(cache) = caches.cache_mut(span.seq) {
                cache.advance(span.rows);
            }
        }
        s.spans = spans;
        self.classify(s, rows);
        Ok(())
    }

    /// x += Wo · attention(RoPE(Wq·x̂), cache + RoPE(Wk·x̂), cache + Wv·x̂), x̂ = RMSNorm(x).
    fn attention_block(
        &self,
        l: usize,
        w: &Layer,
        s: &mut RunState,
        caches: &mut impl Caches,
        rows: &[Row],
        probe: Option<&mut [f32]>,
    ) {
        let c = &self.config;
        let (dim, hs, kv_dim, n) = (c.dim, c.head_size(), c.kv_dim(), rows.len());
        for (o, x) in s.xb.chunks_mut(dim).zip(s.x.chunks(dim)) {
            rmsnorm(o, x, w.rms_att, c.rms_eps);
        }
        // Q (rows, dim), K and V (rows, kv_dim) of every row in one pass over wq, wk, wv.
        matmul(&mut s.qkv, &s.xb, dim, &[w.wq, w.wk, w.wv]);
        let (q, kv) = s.qkv.split_at_mut(n * dim);
        let (k, v) = kv.split_at_mut(n * kv_dim);
        if let Some(b) = w.qkv_bias {
            add_qkv_bias(b, dim, q, k, v);
        }
        // RoPE at each row's position, then its K and V into its sequence's cache.
        for (i, r) in rows.iter().enumerate() {
            let (cos, sin) = self.rope.at(r.pos);
            rope(&mut q[i * dim..(i + 1) * dim], hs, cos, sin);
            let k_i = &mut k[i * kv_dim..(i + 1) * kv_dim];
            rope(k_i, hs, cos, sin);
            if let Some(cache) = caches.cache_mut(r.seq) {
                let (k_row, v_row) = cache.rows_mut(l, r.pos, 1);
                k_row.copy_from_slice(k_i);
                v_row.copy_from_slice(&v[i * kv_dim..(i + 1) * kv_dim]);
            }
        }

        self.attend_rows(l, &mut s.xb, q, &*caches, rows, probe);

        // Output projection and residual.
        matmul(&mut s.xb2, &s.xb, dim, &[w.wo]);
        add_in_place(&mut s.x, &s.xb2);
    }

    /// Multi-head attention of every row: `xb` (rows, dim) gets each row's heads' weighted
    /// values; the queries `q` are RoPE'd, the rows' keys and values already in the cache.
    fn attend_rows(
        &self,
        l: usize,
        xb: &mut [f32],
        q: &[f32],
        caches: &impl Caches,
        rows: &[Row],
        probe: Option<&mut [f32]>,
    ) {
        if probe.is_none()
            && rows.len() >= prefill::ROWS
            && rows.iter().all(|r| r.seq == rows[0].seq)
        {
            if let Some(cache) = caches.cache(rows[0].seq) {
                return self.attend_prefill(l, xb, q, cache, rows);
            }
        }
        let c = &self.config;
        let (dim, hs, kv_dim, n) = (c.dim, c.head_size(), c.kv_dim(), rows.len());
        // Multi-head attention: each (row, head) against its sequence's cache, positions
        // 0..=row.pos (the causal mask); query head h reads K/V head h / kv_mul (GQA). A
        // probe takes the last row's weights (n_heads × (pos + 1)) as each head leaves them.
        let (n_heads, kv_mul, seq_len) = (c.n_heads, c.kv_mul(), c.seq_len);
        let ctx = rows.iter().map(|r| r.pos + 1).max().unwrap_or(1);
        let probe = probe.map(Mutex::new);
        let probe = probe.as_ref();
        par::chunks(xb, hs, 2 * ctx * hs, |first, out| {
            SCORES.with_borrow_mut(|att| {
                // Room for the whole context at once, so a step further on needs no more
                // (up to 2 MiB a thread; a longer context grows it by doubling).
                let room = if seq_len <= 1 << 16 {
                    seq_len
                } else {
                    ctx.next_power_of_two()
                };
                att.resize((HEADS_AT_ONCE * room).max(att.len()), 0.0);
                let units = out.len() / hs;
                let mut u = 0;
                while u < units {
                    // The next heads of row i in this chunk, up to eight at once.
                    let (i, h) = ((first + u) / n_heads, (first + u) % n_heads);
                    let left = (units - u).min(n_heads - h);
                    let g = [HEADS_AT_ONCE, 4, 2]
                        .into_iter()
                        .find(|&g| g <= left)
                        .unwrap_or(1);
                    let Some(cache) = caches.cache(rows[i].seq) else {
                        u += g;
                        continue;
                    };
                    let (keys, values) = cache.layer(l);
                    let pos = rows[i].pos;
                    let q_g = &q[i * dim + h * hs..i * dim + (h + g) * hs];
                    let out_g = &mut out[u * hs..(u + g) * hs];
                    let offset = |j: usize| ((h + j) / kv_mul) * hs;
                    macro_rules! heads {
                        ($g:literal) => {
                            attend_heads::<$g>(
                                out_g,
                                q_g,
                                keys,
                                values,
                                kv_dim,
                                std::array::from_fn(offset),
                                pos,
                                att,
                            )
                        };
                    }
                    match g {
                        HEADS_AT_ONCE => heads!(8),
                        4 => heads!(4),
                        2 => heads!(2),
                        _ => heads!(1),
                    }
                    if let (Some(p), true) = (probe, i + 1 == n) {
                        if let Ok(mut w) = p.lock() {
                            for j in 0..g {
                                w[(h + j) * (pos + 1)..][..=pos]
                                    .copy_from_slice(&att[j * (pos + 1)..][..=pos]);
                            }
                        }
                    }
                    u += g;
                }
            })
        });
    }

    /// x += W2 · (silu(W1·x̂) ⊙ W3·x̂), x̂ = RMSNorm(x); W1 and W3 in one pass.
    fn mlp_block(&self, w: &Layer, s: &mut RunState) {
        let (dim, hidden) = (self.config.dim, self.config.hidden_dim);
        for (o, x) in s.xb.chunks_mut(dim).zip(s.x.chunks(dim)) {
            rmsnorm(o, x, w.rms_ffn, self.config.rms_eps);
        }
        // gate = W1·x̂ (rows, hidden), then up = W3·x̂ (rows, hidden).
        matmul(&mut s.hb, &s.xb, dim, &[w.w1, w.w3]);
        let (gate, up) = s.hb.split_at_mut(s.rows * hidden);
        swiglu(gate, up);
        matmul(&mut s.xb, gate, hidden, &[w.w2]);
        add_in_place(&mut s.x, &s.xb);
    }

    /// Final norm and the classifier for the rows that want logits.
    fn classify(&self, s: &mut RunState, rows: &[Row]) {
        let dim = self.config.dim;
        let mut x = std::mem::take(&mut s.head_x);
        x.clear();
        for (i, _) in rows.iter().enumerate().filter(|(_, r)| r.logits) {
            x.extend_from_slice(&s.x[i * dim..(i + 1) * dim]);
        }
        self.head_into(&x, &mut s.normed, &mut s.logits);
        s.head_x = x;
    }

    /// The model's head: the final RMSNorm and the classifier of residual streams x
    /// (rows, dim) → logits (rows, vocab_size). The pass's own logits, the `exit:K` draft's
    /// (after K layers) and the logit lens's (after any layer) all come from here.
    pub fn head(&self, x: &[f32]) -> Vec<f32> {
        let mut logits = Vec::new();
        self.head_into(x, &mut Vec::new(), &mut logits);
        logits
    }

    /// [`Transformer::head`] into `logits`, `normed` its scratch (both resized, their
    /// room kept).
    fn head_into(&self, x: &[f32], normed: &mut Vec<f32>, logits: &mut Vec<f32>) {
        let c = &self.config;
        let dim = c.dim;
        let rows = x.len() / dim;
        normed.clear();
        normed.resize(rows * dim, 0.0);
        for (o, x) in normed.chunks_mut(dim).zip(x.chunks(dim)) {
            rmsnorm(o, x, &self.weights.rms_final, c.rms_eps);
        }
        logits.clear();
        logits.resize(rows * c.vocab_size, 0.0);
        if rows > 0 {
            matmul(logits, normed, dim, &[self.weights.classifier()]);
        }
    }

    /// Decode: runs `token` at position `cache.len()` (a batch of one row), appends its K/V
    /// and writes the next-token logits (vocab_size,) into `logits`.
    pub fn decode(
        &self,
        s: &mut RunState,
        cache: &mut KvCache,
        token: u32,
        logits: &mut [f32],
    ) -> Result<(), ForwardError> {
        // The step's batch, spans, head and logits are the run state's, kept from step to
        // step: a step allocates nothing.
        let mut batch = std::mem::take(&mut s.batch);
        batch.clear();
        batch.extend(SeqId(0), cache.len(), &[token], Logits::Last);
        let ran = self.run_into(s, cache, &batch, self.config.n_layers, None);
        s.batch = batch;
        ran?;
        logits.copy_from_slice(&s.logits);
        Ok(())
    }

    /// Prefill: runs `tokens` at positions `cache.len()..` as one batch, appending their
    /// K/V. Returns the logits of the last token (vocab_size,), or of every token
    /// (tokens, vocab_size) with `all_logits`.
    pub fn prefill(
        &self,
        cache: &mut KvCache,
        tokens: &[u32],
        all_logits: bool,
    ) -> Result<Vec<f32>, ForwardError> {
        let logits = if all_logits {
            Logits::All
        } else {
            Logits::Last
        };
        let batch = Batch::tokens(SeqId(0), cache.len(), tokens, logits);
        self.forward(&mut RunState::default(), cache, &batch)
    }
}

mod prefill;
#[cfg(test)]
mod tests;

/// Adds a layer's biases [bq; bk; bv] to every row of q (rows, dim), k and v (rows, kv_dim),
/// before RoPE (Qwen2's `q_proj(x) + b`).
fn add_qkv_bias(bias: &[f32], dim: usize, q: &mut [f32], k: &mut [f32], v: &mut [f32]) {
    let (bq, bkv) = bias.split_at(dim);
    let (bk, bv) = bkv.split_at(bkv.len() / 2);
    for (m, b) in [(q, bq), (k, bk), (v, bv)] {
        for row in m.chunks_exact_mut(b.len()) {
            add_in_place(row, b);
        }
    }
}
