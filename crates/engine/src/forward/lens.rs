//! The raw logit lens (nostalgebraist, "interpreting GPT: the logit lens", 2020; the
//! `logit_lens` of TransformerLens / nnsight): each layer's residual stream from a probed
//! pass (`probe.rs`) through the final RMSNorm and the classifier ([`Transformer::head`]),
//! the top token per position and, at the newest position, each layer's KL to the final
//! distribution. The model was not trained for it: an approximation, labelled so.

use super::probe::ProbeRecord;
use super::Transformer;
use crate::kernels::logprob::argmax;
use crate::kernels::logprob::{kl, log_softmax};

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
                let logp = log_softmax(&self.head(r.residual(l, i)));
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
