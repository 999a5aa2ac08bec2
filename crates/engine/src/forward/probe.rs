//! Inside one step: what a forward pass records when it is asked to (lesson 10, section 4:
//! each decode step "computes Q, K, V only for the one new token, appends its K, V, and
//! attends against the cache"); the logit lens built from it is `lens.rs`.
//!
//! A probe is optional and off by default: a pass without one runs no probe code beyond one
//! `Option` test per layer (`BENCHMARKS.md` has the same-run comparison). With one, a pass
//! records
//! - the attention weights of its **last row**'s query (the token just processed) over every
//!   cached position, per layer and query head, after the causal mask and the softmax and
//!   before the value mix: the numbers the pass itself multiplied the values by;
//! - the residual stream after each layer for the batch's last `lens_rows` rows.
//!
//! The **logit lens** (nostalgebraist, "interpreting GPT: the logit lens", 2020; the
//! `logit_lens` of TransformerLens / nnsight) passes each layer's residual through the final
//! RMSNorm and the classifier ([`Transformer::head`], the same function the pass's own
//! logits and the `exit:K` early-exit draft of speculative decoding go through): the raw
//! lens, which the model was not trained for. At the last layer it is the model's own
//! distribution, bit for bit on the CPU.

use crate::config::Config;
use crate::forward::batch::{Batch, ForwardError, SeqId};

/// What a probed pass records besides its logits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeSpec {
    /// The residual streams of the batch's last `lens_rows` rows are recorded (at most the
    /// batch's rows); the attention is always the last row's.
    pub lens_rows: usize,
}

/// What one probed pass recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeRecord {
    pub layers: usize,
    pub n_heads: usize,
    /// Query heads per K/V head (grouped-query attention): head h reads K/V head h / kv_mul.
    pub kv_mul: usize,
    pub dim: usize,
    /// The sequence and position of the batch's last row, whose attention is recorded: its
    /// query attends to the pos + 1 positions 0..=pos of its sequence's cache.
    pub seq: SeqId,
    pub pos: usize,
    /// (layers, n_heads, pos + 1) the softmax weights of that row's query, per head.
    pub attention: Vec<f32>,
    /// The positions of the rows whose residual streams are recorded, in batch order.
    pub lens_positions: Vec<usize>,
    /// (layers, lens rows, dim) each recorded row's residual stream after each layer.
    pub residuals: Vec<f32>,
}

impl ProbeRecord {
    /// Room for what `spec` asks of a pass over `batch` (zeros, filled by the pass).
    pub fn new(c: &Config, batch: &Batch, spec: ProbeSpec) -> Result<ProbeRecord, ForwardError> {
        let rows = batch.rows();
        let last = rows.last().ok_or(ForwardError::NoTokens)?;
        let lens = spec.lens_rows.min(rows.len());
        Ok(ProbeRecord {
            layers: c.n_layers,
            n_heads: c.n_heads,
            kv_mul: c.kv_mul(),
            dim: c.dim,
            seq: last.seq,
            pos: last.pos,
            attention: vec![0.0; c.n_layers * c.n_heads * (last.pos + 1)],
            lens_positions: rows[rows.len() - lens..].iter().map(|r| r.pos).collect(),
            residuals: vec![0.0; c.n_layers * lens * c.dim],
        })
    }

    /// How many cached positions the recorded query attended to.
    pub fn positions(&self) -> usize {
        self.pos + 1
    }

    /// Index in the batch of the first recorded residual row.
    pub fn first_lens_row(&self, batch_rows: usize) -> usize {
        batch_rows - self.lens_positions.len()
    }

    /// Layer `l`, query head `h`: its weights over positions 0..=pos.
    pub fn weights(&self, l: usize, h: usize) -> &[f32] {
        let n = self.positions();
        &self.attention[(l * self.n_heads + h) * n..][..n]
    }

    /// Layer `l`'s weights, every head one after another (what a pass writes).
    pub fn layer_weights_mut(&mut self, l: usize) -> &mut [f32] {
        let n = self.n_heads * self.positions();
        &mut self.attention[l * n..][..n]
    }

    /// The K/V head query head `h` read.
    pub fn kv_head(&self, h: usize) -> usize {
        h / self.kv_mul.max(1)
    }

    /// Recorded row `i`'s residual stream after layer `l`.
    pub fn residual(&self, l: usize, i: usize) -> &[f32] {
        let rows = self.lens_positions.len();
        &self.residuals[(l * rows + i) * self.dim..][..self.dim]
    }

    pub fn residual_mut(&mut self, l: usize, i: usize) -> &mut [f32] {
        let rows = self.lens_positions.len();
        &mut self.residuals[(l * rows + i) * self.dim..][..self.dim]
    }

    /// Scales each head's row to sum to 1: a backend that records exp(score − max) (the
    /// GPU's attention kernel keeps the sum apart and divides the value mix by it) calls
    /// this once after the pass.
    pub fn normalise_attention(&mut self) {
        let n = self.positions();
        for row in self.attention.chunks_mut(n) {
            let total: f32 = row.iter().sum();
            if total > 0.0 {
                row.iter_mut().for_each(|w| *w /= total);
            }
        }
    }
}

/// A probed pass's logits and record.
#[derive(Debug, Clone, PartialEq)]
pub struct Probed {
    pub logits: Vec<f32>,
    pub record: ProbeRecord,
}
