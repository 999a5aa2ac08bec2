//! Inside one step: what a forward pass records when it is asked to (lesson 10, section 4:
//! each decode step "computes Q, K, V only for the one new token, appends its K, V, and
//! attends against the cache"), and the logit lens built from it.
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

use crate::batch::{Batch, ForwardError, SeqId};
use crate::checkpoint::Config;
use crate::forward::Transformer;
use crate::quality::{argmax, kl, log_probs};

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

/// One cell of the lens: the top token of a layer's lens at a position and its probability.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LensCell {
    pub token: u32,
    pub prob: f64,
}

/// The lens at the last recorded position, one layer.
#[derive(Debug, Clone, PartialEq)]
pub struct LensLayer {
    /// The most likely tokens, (id, probability), most likely first.
    pub top: Vec<(u32, f64)>,
    /// KL(p_final ‖ p_layer) in nats: how far this layer's lens is from what the model
    /// finally says (0 at the last layer).
    pub kl_to_final: f64,
}

/// The logit lens over a record's rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Lens {
    pub positions: Vec<usize>,
    /// (layers, positions) each layer's top token and probability at each position.
    pub cells: Vec<LensCell>,
    /// Each layer's distribution at the last position.
    pub last: Vec<LensLayer>,
}

impl Lens {
    pub fn cell(&self, l: usize, i: usize) -> LensCell {
        self.cells[l * self.positions.len() + i]
    }
}

impl Transformer {
    /// The raw logit lens of every recorded row at every layer: [`Transformer::head`] of
    /// each residual, softmax at T = 1; at the last row also the `top` most likely tokens
    /// of each layer and its KL to the final layer.
    pub fn lens(&self, r: &ProbeRecord, top: usize) -> Lens {
        let rows = r.lens_positions.len();
        let mut cells = Vec::with_capacity(r.layers * rows);
        let mut last_logp: Vec<Vec<f64>> = Vec::with_capacity(r.layers);
        for l in 0..r.layers {
            for i in 0..rows {
                let logp = log_probs(&self.head(r.residual(l, i)));
                let best = argmax(&logp);
                cells.push(LensCell {
                    token: best as u32,
                    prob: logp[best].exp(),
                });
                if i + 1 == rows {
                    last_logp.push(logp);
                }
            }
        }
        let last = match last_logp.last() {
            None => Vec::new(),
            Some(fin) => last_logp
                .iter()
                .map(|logp| LensLayer {
                    top: top_tokens(logp, top),
                    kl_to_final: kl(fin, logp),
                })
                .collect(),
        };
        Lens {
            positions: r.lens_positions.clone(),
            cells,
            last,
        }
    }
}

/// The `n` most likely tokens of a log-probability row (ties by id), as probabilities.
fn top_tokens(logp: &[f64], n: usize) -> Vec<(u32, f64)> {
    let mut idx: Vec<usize> = (0..logp.len()).collect();
    let n = n.min(idx.len());
    if n == 0 {
        return Vec::new();
    }
    idx.select_nth_unstable_by(n - 1, |&a, &b| logp[b].total_cmp(&logp[a]).then(a.cmp(&b)));
    idx.truncate(n);
    idx.sort_by(|&a, &b| logp[b].total_cmp(&logp[a]).then(a.cmp(&b)));
    idx.into_iter().map(|i| (i as u32, logp[i].exp())).collect()
}
