//! The probe on the GPU: a probed pass's compute pass is cut after each layer's attention
//! and MLP, and the attention scratch row and the residual rows are copied into a read-back
//! buffer (`Taps`), then scaled into the engine's `ProbeRecord`.

use super::plan::Chunk;
use super::resources::buffer;
use decoding_engine::{Config, ProbeRecord};

/// The LAYER entry after which the attention scratch holds the layer's weights.
pub(super) const ATTENTION_OP: usize = 1;

/// What one chunk copies out for the probe, into a read-back buffer laid out as: for each
/// layer the attention row's scratch (n_heads × seq_len: exp(score − max), the kernel keeps
/// the sum apart), then for each layer the recorded rows' residual streams (dim each).
pub(super) struct Taps {
    /// The chunk's (grouped) index of the batch's last row, if it is in this chunk.
    pub(super) attention_row: Option<u32>,
    /// (grouped index in the chunk, row of the record) of the recorded rows in this chunk.
    pub(super) lens: Vec<(u32, usize)>,
    pub(super) layers: usize,
    pub(super) buffer: wgpu::Buffer,
    pub(super) bytes: u64,
}

impl Taps {
    pub(super) fn plan(
        d: &wgpu::Device,
        c: &Config,
        chunk: &Chunk,
        r: &ProbeRecord,
        batch_rows: usize,
    ) -> Option<Taps> {
        let first = r.first_lens_row(batch_rows);
        let mut attention_row = None;
        let mut lens = Vec::new();
        for (g, &(i, _)) in chunk.rows.iter().enumerate() {
            if i + 1 == batch_rows {
                attention_row = Some(g as u32);
            }
            if i >= first {
                lens.push((g as u32, i - first));
            }
        }
        if attention_row.is_none() && lens.is_empty() {
            return None;
        }
        let att = attention_row.map_or(0, |_| c.n_heads * c.seq_len);
        let floats = c.n_layers * (att + lens.len() * c.dim);
        let bytes = (floats * 4) as u64;
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        Some(Taps {
            attention_row,
            lens,
            layers: c.n_layers,
            buffer: buffer(d, "probe read-back", bytes, usage),
            bytes,
        })
    }

    pub(super) fn att_floats(&self, c: &Config) -> usize {
        self.attention_row.map_or(0, |_| c.n_heads * c.seq_len)
    }

    /// (from, to, bytes) copying layer `l`'s attention row out of the scratch.
    pub(super) fn attention_copy(&self, c: &Config, l: usize) -> Vec<(u64, u64, u64)> {
        let n = self.att_floats(c);
        self.attention_row
            .map(|g| {
                (
                    (g as usize * n * 4) as u64,
                    (l * n * 4) as u64,
                    (n * 4) as u64,
                )
            })
            .into_iter()
            .collect()
    }

    /// (from, to, bytes) copying layer `l`'s recorded residual rows out of x.
    pub(super) fn residual_copies(&self, c: &Config, l: usize) -> Vec<(u64, u64, u64)> {
        let base = self.layers * self.att_floats(c) + l * self.lens.len() * c.dim;
        let row = (c.dim * 4) as u64;
        (self.lens.iter().enumerate())
            .map(|(j, &(g, _))| (g as u64 * row, ((base + j * c.dim) * 4) as u64, row))
            .collect()
    }

    /// Writes what came back into the record (attention still unnormalised).
    pub(super) fn fill(&self, c: &Config, tapped: &[f32], r: &mut ProbeRecord) {
        let (n, positions) = (self.att_floats(c), r.positions());
        for l in 0..self.layers {
            if self.attention_row.is_some() {
                let layer = &tapped[l * n..][..n];
                let out = r.layer_weights_mut(l);
                for h in 0..c.n_heads {
                    let from = &layer[h * c.seq_len..][..positions];
                    out[h * positions..][..positions].copy_from_slice(from);
                }
            }
            let base = self.layers * n + l * self.lens.len() * c.dim;
            for (j, &(_, row)) in self.lens.iter().enumerate() {
                let from = &tapped[base + j * c.dim..][..c.dim];
                r.residual_mut(l, row).copy_from_slice(from);
            }
        }
    }
}
