//! A submission: a chunk's tables written, its dispatches encoded (`timer::Recorder`: one
//! compute pass, cut for the probe's copies, or a timed pass a dispatch), one logits
//! read-back.

use super::plan::{final_slot, layer_slot, Chunk, LayerOp, CLASSIFIER, EMBED, FINAL_NORM, LAYER};
use super::probe::{Taps, ATTENTION_OP};
use super::resources::GpuSeq;
use super::timer::{Recorder, Stamps};
use super::GpuBackend;
use crate::kernel::*;
use crate::ops::matmul::mm_groups;
use decoding_engine::backend::{Backend, BackendError};
use decoding_engine::{Batch, ProbeRecord, ProbeSpec};

impl GpuBackend {
    /// Encodes the forward pass of a chunk (its tables already written) with logits for
    /// `logit_rows` rows. With `taps`, each layer's pass is cut after the attention (its
    /// weights copied out) and after the MLP (the residual rows copied out); without, the
    /// whole chunk is one compute pass.
    pub(super) fn encode(
        &self,
        rec: &mut Recorder,
        chunk: &Chunk,
        logit_rows: u32,
        layers: usize,
        taps: Option<&Taps>,
    ) -> Result<(), BackendError> {
        let c = &self.config;
        let (k, g) = (&self.kernels, &self.shared);
        let runs: Vec<(&GpuSeq, u32)> = chunk
            .runs
            .iter()
            .map(|&(seq, _, n)| self.seq(seq).map(|s| (s, n)))
            .collect::<Result<_, _>>()?;
        let n = chunk.rows.len() as u32;
        let groups = [(c.dim as u32).div_ceil(WORKGROUP), n, 1];
        rec.dispatch(EMBED, &k.embed, &g.embed, (0, 0), groups);
        for l in 0..layers.min(c.n_layers) {
            for (i, op) in LAYER.iter().enumerate() {
                self.dispatch_op(rec, op, (l, layer_slot(l, i)), &runs, n);
                if let Some(t) = taps {
                    self.tap(rec, t, l, i);
                }
            }
        }
        if logit_rows > 0 {
            let (m, slot) = (logit_rows, final_slot(c));
            rec.dispatch(FINAL_NORM, &k.rmsnorm, &g.rms_final, (slot, 0), [m, 1, 1]);
            let groups = mm_groups(c.vocab_size, m);
            rec.dispatch(CLASSIFIER, &k.matmul, &g.cls, (slot + 1, 0), groups);
        }
        Ok(())
    }

    /// Dispatches `encode` makes for `chunk` through `layers` layers.
    fn dispatches(&self, chunk: &Chunk, layers: usize, logit_rows: usize) -> usize {
        let per_layer: usize = LAYER
            .iter()
            .map(|op| if op.per_seq { chunk.runs.len() } else { 1 })
            .sum();
        1 + per_layer * layers.min(self.config.n_layers) + if logit_rows > 0 { 2 } else { 0 }
    }

    /// One op of layer `l` (its parameter block at `slot`): once over all `n` rows, or once
    /// per sequence's run when `per_seq`.
    fn dispatch_op(
        &self,
        rec: &mut Recorder,
        op: &LayerOp,
        (l, slot): (usize, u64),
        runs: &[(&GpuSeq, u32)],
        n: u32,
    ) {
        let (c, g) = (&self.config, &self.shared);
        if op.per_seq {
            for (r, &(s, rows)) in runs.iter().enumerate() {
                let groups = (op.groups)(c, rows);
                let bg = (op.group)(g, s, &self.weights.packing, l);
                let kernel = (op.kernel)(&self.kernels, rows);
                rec.dispatch(op.name, kernel, bg, (slot, 1 + r as u64), groups);
            }
        } else {
            let bg = (op.group)(g, runs[0].0, &self.weights.packing, l);
            let kernel = (op.kernel)(&self.kernels, n);
            let groups = (op.groups)(c, n);
            rec.dispatch(op.name, kernel, bg, (slot, 0), groups);
        }
    }

    /// The probe's taps after op `i` of layer `l`: after the attention (its weights) and
    /// after the MLP (the residual rows), the pass is cut and the rows copied out; after
    /// any other op, the pass goes on.
    fn tap(&self, rec: &mut Recorder, t: &Taps, l: usize, i: usize) {
        let c = &self.config;
        let copy = if i == ATTENTION_OP {
            t.attention_copy(c, l)
        } else if i + 1 == LAYER.len() {
            t.residual_copies(c, l)
        } else {
            Vec::new()
        };
        let src = if i == ATTENTION_OP {
            &self.act.att
        } else {
            &self.act.x
        };
        for (from, to, bytes) in copy {
            rec.encoder()
                .copy_buffer_to_buffer(src, from, &t.buffer, to, bytes);
        }
    }

    /// Writes a chunk's tokens, batch table and step blocks.
    pub(super) fn write_tables(&self, chunk: &Chunk, logit_rows: &[u32]) {
        let q = &self.ctx.queue;
        let tokens: Vec<u32> = chunk.rows.iter().map(|(_, r)| r.token).collect();
        let positions: Vec<u32> = chunk.rows.iter().map(|(_, r)| r.pos as u32).collect();
        q.write_buffer(&self.act.tokens, 0, bytemuck::cast_slice(&tokens));
        q.write_buffer(&self.act.table, 0, bytemuck::cast_slice(&positions));
        q.write_buffer(
            &self.act.table,
            (MAX_ROWS * 4) as u64,
            bytemuck::cast_slice(logit_rows),
        );
        let all = (0, chunk.rows.len() as u32);
        let runs = chunk.runs.iter().map(|&(_, first, n)| (first, n));
        for (i, (row0, n_rows)) in std::iter::once(all).chain(runs).enumerate() {
            let step = StepParams {
                row0,
                n_rows,
                _pad: [0; 2],
            };
            q.write_buffer(
                &self.act.step,
                i as u64 * PARAM_SLOT,
                bytemuck::bytes_of(&step),
            );
        }
    }

    /// Runs one chunk; returns (batch index, logits) for its rows that want logits, and
    /// with `record`, fills in what the chunk's rows hold of it.
    pub(super) async fn run_chunk(
        &mut self,
        chunk: &Chunk,
        layers: usize,
        record: Option<&mut ProbeRecord>,
        batch_rows: usize,
    ) -> Result<Vec<(usize, Vec<f32>)>, BackendError> {
        let vocab = self.config.vocab_size;
        let logit_rows = chunk.logit_rows();
        self.write_tables(chunk, &logit_rows);
        let taps = record
            .as_deref()
            .and_then(|r| Taps::plan(&self.ctx.device, &self.config, chunk, r, batch_rows));
        let mut encoder = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("step"),
            });
        let stamps = self.timing.as_ref().and_then(|_| {
            let n = self.dispatches(chunk, layers, logit_rows.len());
            Stamps::new(&self.ctx.device, n)
        });
        let mut rec = Recorder::new(&mut encoder, stamps);
        let m = logit_rows.len() as u32;
        self.encode(&mut rec, chunk, m, layers, taps.as_ref())?;
        let stamps = rec.finish();
        let bytes = (logit_rows.len() * vocab * 4) as u64;
        if bytes > 0 {
            encoder.copy_buffer_to_buffer(&self.act.logits, 0, &self.act.staging, 0, bytes);
        }
        self.ctx.queue.submit([encoder.finish()]);
        for &(seq, _, n) in &chunk.runs {
            if let Ok(s) = self.seqs.get_mut(seq) {
                s.len += n as usize;
            }
        }
        if let (Some(t), Some(r)) = (&taps, record) {
            let tapped = self.read_back(&t.buffer, t.bytes).await?;
            t.buffer.destroy();
            t.fill(&self.config, &tapped, r);
        }
        self.read_times(stamps).await?;
        if bytes == 0 {
            return self.check_error().map(|_| Vec::new());
        }
        let logits = self.read_back(&self.act.staging, bytes).await?;
        let index = logit_rows.iter().map(|&i| chunk.rows[i as usize].0);
        Ok(index
            .zip(logits.chunks(vocab).map(<[f32]>::to_vec))
            .collect())
    }

    /// When timing, adds a submission's kernel times (or counts it untimed: no `stamps`).
    async fn read_times(&mut self, stamps: Option<Stamps>) -> Result<(), BackendError> {
        if self.timing.is_none() {
            return Ok(());
        }
        let ticks: Vec<u64> = match &stamps {
            Some(s) => bytemuck::pod_collect_to_vec(&self.read_bytes(&s.read, s.bytes()).await?),
            None => Vec::new(),
        };
        let period = self.ctx.queue.get_timestamp_period();
        if let Some(t) = self.timing.as_mut() {
            match &stamps {
                Some(s) => s.add_to(&ticks, period, t),
                None => t.untimed_passes += 1,
            }
        }
        Ok(())
    }

    /// Maps a read-back buffer and copies `bytes` of f32 out.
    pub(super) async fn read_back(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<Vec<f32>, BackendError> {
        Ok(bytemuck::pod_collect_to_vec(
            &self.read_bytes(buffer, bytes).await?,
        ))
    }

    /// Maps a read-back buffer and copies `bytes` out.
    async fn read_bytes(&self, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>, BackendError> {
        let slice = buffer.slice(0..bytes);
        let (tx, rx) = futures_channel::oneshot::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        #[cfg(not(target_arch = "wasm32"))]
        {
            if let Err(e) = self.ctx.device.poll(wgpu::PollType::wait_indefinitely()) {
                self.check_error()?;
                return Err(BackendError::DeviceLost(e.to_string()));
            }
        }
        let mapped = rx
            .await
            .map_err(|_| BackendError::DeviceLost("the read-back was cancelled".into()))?;
        if let Err(e) = mapped {
            self.check_error()?;
            return Err(BackendError::DeviceLost(e.to_string()));
        }
        self.check_error()?;
        let out = {
            let view = slice
                .get_mapped_range()
                .map_err(|e| BackendError::Gpu(e.to_string()))?;
            view.to_vec()
        };
        buffer.unmap();
        Ok(out)
    }

    /// Runs a checked batch chunk by chunk through the first `layers` layers (all of them but
    /// for an early-exit draft); the rows' logits come back in batch order, with `probe`
    /// also what the pass recorded. If a submission fails, every sequence is rewound to where
    /// it was (its positions are not in the cache).
    pub(super) async fn forward_impl(
        &mut self,
        batch: Batch,
        layers: usize,
        probe: Option<ProbeSpec>,
    ) -> Result<(Vec<f32>, Option<ProbeRecord>), BackendError> {
        let c = self.config;
        let spans = batch.check(c.vocab_size, c.seq_len, |seq| self.seq_len(seq))?;
        if self.ctx.is_lost() {
            self.check_error()?;
        }
        let mut record = match probe {
            Some(spec) => Some(ProbeRecord::new(&c, &batch, spec)?),
            None => None,
        };
        let mut out: Vec<(usize, Vec<f32>)> = Vec::with_capacity(batch.logits_rows());
        for chunk in Chunk::plan(batch.rows()) {
            let rows = batch.rows().len();
            match self.run_chunk(&chunk, layers, record.as_mut(), rows).await {
                Ok(rows) => out.extend(rows),
                Err(e) => {
                    for s in &spans {
                        let _ = self.truncate(s.seq, s.start);
                    }
                    return Err(e);
                }
            }
        }
        out.sort_by_key(|(i, _)| *i);
        if let Some(r) = record.as_mut() {
            r.normalise_attention();
        }
        Ok((out.into_iter().flat_map(|(_, l)| l).collect(), record))
    }
}
