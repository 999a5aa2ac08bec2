//! The plan of a forward pass: `LAYER`, the one table of a layer's five dispatches (kernel,
//! bind group, parameter block, workgroups) that drives both the parameter writes and the
//! encoding; the parameter slots; and a batch cut into submissions of at most `MAX_ROWS`
//! rows, grouped by sequence.

use super::resources::{GpuSeq, Packing, SharedGroups};
use super::GpuBackend;
use crate::kernel::*;
use crate::ops::{attention, embed, matmul, mlp_in, qkv, rmsnorm};
use crate::pipelines::Kernels;
use decoding_engine::forward::batch::SeqId;
use decoding_engine::{Config, Row};

/// One dispatch of a layer: its kernel, bind group, parameter block for layer `l` (where
/// the packed matrices are: `Packing`) and workgroup counts for `rows` rows; `per_seq`
/// dispatches run once per sequence's run. `LAYER` lists them in order: adding a kernel to
/// the layer is one entry.
pub(super) struct LayerOp {
    /// What the kernel times call it.
    pub(super) name: &'static str,
    /// Its pipeline for a dispatch of `rows` batch rows.
    pub(super) kernel: fn(&Kernels, u32) -> &Kernel,
    /// The bind group of layer `l` (the packed matrices may span several buffers).
    pub(super) group:
        for<'a> fn(&'a SharedGroups, &'a GpuSeq, &Packing, usize) -> &'a wgpu::BindGroup,
    pub(super) params: fn(&Config, &Packing, u32) -> Vec<u8>,
    pub(super) groups: fn(&Config, u32) -> [u32; 3],
    pub(super) per_seq: bool,
}

/// A layer in five dispatches (RMSNorm folded into the products that consume it, RoPE and
/// the cache write into Q/K/V's, SwiGLU into W1/W3's, the residual adds into Wo's and W2's).
#[rustfmt::skip]
pub(super) const LAYER: [LayerOp; 5] = [
    // x̂ = RMSNorm(x); q, k, v = Wq·x̂, Wk·x̂, Wv·x̂; RoPE on q and k; k and v into the
    // sequence's cache at each row's position
    LayerOp { name: "qkv", kernel: |k, r| if r == 1 { &k.qkv_row } else { &k.qkv }, group: |_, s, p, l| &s.qkv[p.qkv.locate(l).0],
        params: |c, p, l| qkv::layer_params(c, &p.qkv, l), groups: qkv::groups, per_seq: true },
    // attention of each row against its sequence's cache
    LayerOp { name: "attention", kernel: |k, _| &k.attention, group: |_, s, _, _| &s.attention,
        params: |c, _, l| attention::layer_params(c, l),
        groups: |c, r| [c.n_heads as u32, r, 1], per_seq: true },
    // x += Wo·att
    LayerOp { name: "wo", kernel: |k, _| &k.matmul, group: |g, _, _, _| &g.wo, params: |c, _, l| matmul::wo_block(c, l),
        groups: |c, r| matmul::mm_groups(c.dim, r), per_seq: false },
    // x̂ = RMSNorm(x); gate = silu(W1·x̂) ⊙ (W3·x̂)
    LayerOp { name: "mlp_in", kernel: |k, r| if r == 1 { &k.mlp_in_row } else { &k.mlp_in }, group: |g, _, p, l| &g.mlp_in[p.mlp.locate(l).0],
        params: |c, p, l| mlp_in::layer_params(c, &p.mlp, l), groups: mlp_in::groups,
        per_seq: false },
    // x += W2·gate
    LayerOp { name: "w2", kernel: |k, _| &k.matmul, group: |g, _, _, _| &g.w2, params: |c, _, l| matmul::w2_block(c, l),
        groups: |c, r| matmul::mm_groups(c.dim, r), per_seq: false },
];

/// The embedding's name in the kernel times (the pass's first dispatch).
pub const EMBED: &str = "embed";
/// The final RMSNorm's name in the kernel times (before the classifier).
pub const FINAL_NORM: &str = "final norm";
/// The classifier's name in the kernel times (the pass's last dispatch).
pub const CLASSIFIER: &str = "classifier";

/// The kernels of a layer, in dispatch order, by their names in the kernel times.
pub const LAYER_KERNELS: [&str; LAYER.len()] = [
    LAYER[0].name,
    LAYER[1].name,
    LAYER[2].name,
    LAYER[3].name,
    LAYER[4].name,
];

/// Every kernel of a pass with logits, in dispatch order, by their names in the kernel
/// times: the embedding, the layer's, the final norm and the classifier.
pub const KERNEL_NAMES: [&str; LAYER.len() + 3] = [
    EMBED,
    LAYER_KERNELS[0],
    LAYER_KERNELS[1],
    LAYER_KERNELS[2],
    LAYER_KERNELS[3],
    LAYER_KERNELS[4],
    FINAL_NORM,
    CLASSIFIER,
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
                let block = (op.params)(c, &self.weights.packing, l as u32);
                write(layer_slot(l, i), &block);
            }
        }
        write(final_slot(c), &rmsnorm::final_params(c));
        write(final_slot(c) + 1, &matmul::classifier_block(c));
    }
}

#[cfg(test)]
mod tests {
    /// The names the kernel times, the CLI's `gpu_times` and the page's split show, in
    /// dispatch order, written out once: the tests that read the times compare against
    /// `KERNEL_NAMES`, so a renamed or reordered kernel must change this line too.
    #[test]
    fn the_plans_kernels_in_dispatch_order() {
        let want = [
            "embed",
            "qkv",
            "attention",
            "wo",
            "mlp_in",
            "w2",
            "final norm",
            "classifier",
        ];
        assert_eq!(super::KERNEL_NAMES, want);
        assert_eq!(super::LAYER_KERNELS, want[1..6]);
    }
}
