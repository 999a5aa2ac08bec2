//! The plan of a forward pass: `LAYER`, the one table of a layer's dispatches (kernel, bind
//! group, parameter block, workgroups) that drives both the parameter writes and the
//! encoding; the parameter slots; and a batch cut into submissions of at most `MAX_ROWS`
//! rows, grouped by sequence.

use super::resources::{GpuSeq, SharedGroups};
use super::GpuBackend;
use crate::kernel::*;
use crate::ops::{attention, embed, matmul, rmsnorm, rope, swiglu};
use crate::pipelines::Kernels;
use decoding_engine::backend::SeqId;
use decoding_engine::{Config, Row};

/// One dispatch of a layer: its kernel, bind group, parameter block for layer `l` and
/// workgroup counts for `rows` rows; `per_seq` dispatches run once per sequence's run.
/// `LAYER` lists them in order: adding a kernel to the layer is one entry.
pub(super) struct LayerOp {
    pub(super) kernel: fn(&Kernels) -> &Kernel,
    pub(super) group: for<'a> fn(&'a SharedGroups, &'a GpuSeq) -> &'a wgpu::BindGroup,
    pub(super) params: fn(&Config, u32) -> Vec<u8>,
    pub(super) groups: fn(&Config, u32) -> [u32; 3],
    pub(super) per_seq: bool,
}

#[rustfmt::skip]
pub(super) const LAYER: [LayerOp; 12] = [
    // x̂ = RMSNorm(x)
    LayerOp { kernel: |k| &k.rmsnorm, group: |g, _| &g.rms_att, params: rmsnorm::layer_params,
        groups: |_, r| [r, 1, 1], per_seq: false },
    // q = Wq·x̂
    LayerOp { kernel: |k| &k.matmul, group: |g, _| &g.wq, params: matmul::wq_block,
        groups: |c, r| matmul::mm_groups(c.dim, r), per_seq: false },
    // K = Wk·x̂ and V = Wv·x̂, written into the sequence's cache at each row's position
    LayerOp { kernel: |k| &k.matmul, group: |_, s| &s.wk, params: matmul::kv_write,
        groups: |c, r| matmul::mm_groups(c.kv_dim(), r), per_seq: true },
    LayerOp { kernel: |k| &k.matmul, group: |_, s| &s.wv, params: matmul::kv_write,
        groups: |c, r| matmul::mm_groups(c.kv_dim(), r), per_seq: true },
    // RoPE on q and on the new keys
    LayerOp { kernel: |k| &k.rope, group: |_, s| &s.rope, params: rope::layer_params,
        groups: |c, r| [((c.dim + c.kv_dim()) as u32 / 2).div_ceil(WORKGROUP), r, 1],
        per_seq: true },
    // attention of each row against its sequence's cache
    LayerOp { kernel: |k| &k.attention, group: |_, s| &s.attention,
        params: attention::layer_params,
        groups: |c, r| [c.n_heads as u32, r, 1], per_seq: true },
    // x += Wo·att
    LayerOp { kernel: |k| &k.matmul, group: |g, _| &g.wo, params: matmul::wo_block,
        groups: |c, r| matmul::mm_groups(c.dim, r), per_seq: false },
    // x̂ = RMSNorm(x)
    LayerOp { kernel: |k| &k.rmsnorm, group: |g, _| &g.rms_ffn, params: rmsnorm::layer_params,
        groups: |_, r| [r, 1, 1], per_seq: false },
    // gate = W1·x̂, up = W3·x̂ (side by side in hb)
    LayerOp { kernel: |k| &k.matmul, group: |g, _| &g.w1,
        params: |c, l| matmul::mlp_in_block(c, l, 0),
        groups: |c, r| matmul::mm_groups(c.hidden_dim, r), per_seq: false },
    LayerOp { kernel: |k| &k.matmul, group: |g, _| &g.w3,
        params: |c, l| matmul::mlp_in_block(c, l, c.hidden_dim),
        groups: |c, r| matmul::mm_groups(c.hidden_dim, r), per_seq: false },
    // gate = silu(gate) ⊙ up
    LayerOp { kernel: |k| &k.swiglu, group: |g, _| &g.swiglu, params: swiglu::layer_params,
        groups: |c, r| [(c.hidden_dim as u32).div_ceil(WORKGROUP), r, 1], per_seq: false },
    // x += W2·gate
    LayerOp { kernel: |k| &k.matmul, group: |g, _| &g.w2, params: matmul::w2_block,
        groups: |c, r| matmul::mm_groups(c.dim, r), per_seq: false },
];

/// Parameter-slot indices in the shared uniform buffer: the embedding, LAYER for each
/// layer, the final norm and the classifier.
pub(super) fn layer_slot(l: usize, op: usize) -> u64 {
    (1 + l * LAYER.len() + op) as u64
}

pub(super) fn final_slot(c: &Config) -> u64 {
    layer_slot(c.n_layers, 0)
}

/// One submission's rows, grouped by sequence into runs (each run's rows in batch order).
pub(super) struct Chunk {
    /// (index in the batch, row), grouped
    pub(super) rows: Vec<(usize, Row)>,
    /// (sequence, first row, rows)
    pub(super) runs: Vec<(SeqId, u32, u32)>,
}

impl Chunk {
    /// Cuts the batch into submissions of at most MAX_ROWS rows, each grouped by sequence.
    /// Within a submission every K/V is written before any attention reads it, so grouping
    /// keeps each row's view of its sequence.
    pub(super) fn plan(rows: &[Row]) -> Vec<Chunk> {
        let indexed: Vec<(usize, Row)> = rows.iter().copied().enumerate().collect();
        indexed
            .chunks(MAX_ROWS)
            .map(|part| {
                let mut seqs: Vec<SeqId> = Vec::new();
                for (_, r) in part {
                    if !seqs.contains(&r.seq) {
                        seqs.push(r.seq);
                    }
                }
                let mut chunk = Chunk {
                    rows: Vec::with_capacity(part.len()),
                    runs: Vec::new(),
                };
                for seq in seqs {
                    let first = chunk.rows.len() as u32;
                    chunk.rows.extend(part.iter().filter(|(_, r)| r.seq == seq));
                    chunk
                        .runs
                        .push((seq, first, chunk.rows.len() as u32 - first));
                }
                chunk
            })
            .collect()
    }

    /// Grouped indices of the rows that want logits.
    pub(super) fn logit_rows(&self) -> Vec<u32> {
        (0..self.rows.len() as u32)
            .filter(|&i| self.rows[i as usize].1.logits)
            .collect()
    }
}

impl GpuBackend {
    /// Every parameter block, written once: they depend on the layer, never on the call
    /// (which rows a dispatch covers is the step block's job).
    pub(super) fn write_params(&self) {
        let c = &self.config;
        let write = |slot: u64, bytes: &[u8]| {
            self.ctx
                .queue
                .write_buffer(&self.params, slot * PARAM_SLOT, bytes);
        };
        write(0, &embed::params(c));
        for l in 0..c.n_layers {
            for (i, op) in LAYER.iter().enumerate() {
                write(layer_slot(l, i), &(op.params)(c, l as u32));
            }
        }
        write(final_slot(c), &rmsnorm::final_params(c));
        write(final_slot(c) + 1, &matmul::classifier_block(c));
    }
}
