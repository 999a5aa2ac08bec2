//! The WebGPU backend: the whole forward pass of `decoding_engine::forward` as compute
//! dispatches over a batch of rows. Weights are uploaded once; each sequence's KV cache
//! lives on the GPU (preallocated for the whole context, written at each row's position);
//! pipelines, bind groups, buffers and every parameter block are created once and reused.
//!
//! A submission runs up to `MAX_ROWS` rows. Its rows are grouped by sequence (a stable
//! reordering: a sequence's rows keep their order) into runs; the batch table gives each
//! row's position and the rows that want logits. The products that do not touch a cache
//! (O, the MLP, the classifier) run once over all rows, so each weight is read once per
//! submission; Q/K/V (with RoPE and the cache write) and attention run once per sequence's
//! run, against that sequence's cache. A layer is five dispatches (`plan::LAYER`), a token
//! three more. A decode step is one submission and one logits read-back; its dispatch count
//! does not grow with the sequence.

mod plan;
pub use plan::{CLASSIFIER, EMBED, FINAL_NORM, KERNEL_NAMES, LAYER_KERNELS};
mod probe;
mod resources;
mod submit;
mod timer;

use crate::context::{GpuContext, GpuError};
use crate::kernel::*;
use crate::pipelines::Kernels;
use decoding_engine::backend::timing::KernelTimes;
use decoding_engine::backend::{
    Backend, BackendError, BackendKind, LocalFuture, LogitsFuture, SeqSlots,
};
use decoding_engine::forward::kv_cache::CacheBytes;
use decoding_engine::{Batch, Config, ProbeSpec, Probed, SeqId, Transformer};
use plan::{final_slot, LAYER};
use resources::{bind_limit, buffer, check_limits, Activations, GpuSeq, SharedGroups, Weights};
use std::rc::Rc;

/// Rows run in one submission (longer batches go in several).
pub const PREFILL_CHUNK: usize = MAX_ROWS;

impl From<GpuError> for BackendError {
    fn from(e: GpuError) -> BackendError {
        match e {
            GpuError::Lost(m) => BackendError::DeviceLost(m),
            other => BackendError::Gpu(other.to_string()),
        }
    }
}

pub struct GpuBackend {
    ctx: Rc<GpuContext>,
    config: Config,
    kernels: Kernels,
    weights: Weights,
    act: Activations,
    params: wgpu::Buffer,
    shared: SharedGroups,
    seqs: SeqSlots<GpuSeq>,
    /// Kernel times since the last take, while timing is on.
    timing: Option<KernelTimes>,
}

impl GpuBackend {
    /// Uploads the model. Tensors larger than the device can bind are refused with a
    /// message naming the tensor, before anything is allocated.
    pub fn new(ctx: Rc<GpuContext>, model: &Transformer) -> Result<GpuBackend, GpuError> {
        let limit = bind_limit(&ctx);
        GpuBackend::with_bind_limit(ctx, model, limit)
    }

    /// As `new`, on a device taken to bind at most `limit` bytes at once (at most its own
    /// limit): a smaller device's splits, on this one (the tests run a model that way).
    pub fn with_bind_limit(
        ctx: Rc<GpuContext>,
        model: &Transformer,
        limit: u64,
    ) -> Result<GpuBackend, GpuError> {
        let limit = limit.min(bind_limit(&ctx));
        // The kernels take one format for every matrix: a GGUF file's own blocks (k-quants)
        // or a mix (a Q8_0 file's float32 w2) go up as q8 (no WGSL for ggml blocks yet).
        let converted;
        let model = if model.weights.uniform(&model.config) {
            model
        } else {
            converted = model.at(decoding_engine::Precision::Q8);
            &converted
        };
        check_limits(model, limit)?;
        let c = model.config;
        let d = &ctx.device;
        let weights = Weights::upload(d, model, limit)?;
        let act = Activations::new(d, &c);
        let w = &model.weights;
        let kernels = Kernels::for_weights(d, w.precision(), group_of(&w.wq), &c);
        let params = buffer(
            d,
            "kernel parameters",
            (final_slot(&c) + 2) * PARAM_SLOT,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        let shared = Self::shared_groups(d, &kernels, &weights, &act, &params);
        let backend = GpuBackend {
            config: c,
            kernels,
            weights,
            act,
            params,
            shared,
            seqs: SeqSlots::default(),
            timing: None,
            ctx,
        };
        backend.write_params();
        if let Some(e) = backend.ctx.take_error() {
            return Err(e);
        }
        Ok(backend)
    }

    /// Bytes of the weight matrices on the GPU (at the model's precision).
    pub fn weight_bytes(&self) -> u64 {
        self.weights.matrix_bytes
    }

    pub fn context(&self) -> &Rc<GpuContext> {
        &self.ctx
    }

    /// Compute dispatches in one decode step: embedding, LAYER per layer, final norm,
    /// classifier.
    pub fn dispatches_per_token(&self) -> usize {
        1 + LAYER.len() * self.config.n_layers + 2
    }

    /// Whether the device writes GPU timestamps (per-kernel times).
    pub fn timestamps(&self) -> bool {
        (self.ctx.device.features()).contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    fn seq(&self, seq: SeqId) -> Result<&GpuSeq, BackendError> {
        self.seqs.get(seq)
    }

    fn check_error(&self) -> Result<(), BackendError> {
        match self.ctx.take_error() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }
}

impl Backend for GpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Gpu
    }

    fn config(&self) -> &Config {
        &self.config
    }

    fn new_sequence(&mut self) -> Result<SeqId, BackendError> {
        let s = self.new_seq();
        self.check_error()?;
        Ok(self.seqs.insert(s))
    }

    /// Copies the filled part of each layer's K and V on the GPU (the cache never comes
    /// back to the host).
    fn fork(&mut self, seq: SeqId) -> Result<SeqId, BackendError> {
        let c = self.config;
        let mut new = self.new_seq();
        let src = self.seq(seq)?;
        let mut encoder = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("fork"),
            });
        let layer_bytes = (c.seq_len * c.kv_dim() * 4) as u64;
        let used = (src.len * c.kv_dim() * 4) as u64;
        if used > 0 {
            for l in 0..c.n_layers as u64 {
                let at = l * layer_bytes;
                encoder.copy_buffer_to_buffer(&src.key, at, &new.key, at, used);
                encoder.copy_buffer_to_buffer(&src.value, at, &new.value, at, used);
            }
        }
        new.len = src.len;
        self.ctx.queue.submit([encoder.finish()]);
        self.check_error()?;
        Ok(self.seqs.insert(new))
    }

    fn release(&mut self, seq: SeqId) {
        if let Some(s) = self.seqs.remove(seq) {
            s.key.destroy();
            s.value.destroy();
        }
    }

    fn seq_len(&self, seq: SeqId) -> Result<usize, BackendError> {
        Ok(self.seq(seq)?.len)
    }

    fn truncate(&mut self, seq: SeqId, len: usize) -> Result<(), BackendError> {
        let s = self.seqs.get_mut(seq)?;
        s.len = s.len.min(len);
        Ok(())
    }

    fn cache_bytes(&self, seq: SeqId) -> Result<CacheBytes, BackendError> {
        Ok(CacheBytes::of(&self.config, self.seq(seq)?.len))
    }

    /// Timed passes need the device's `timestamp-query` (requested in `context.rs` where
    /// the adapter offers it).
    fn set_kernel_timing(&mut self, on: bool) -> Result<(), BackendError> {
        if on && !self.timestamps() {
            return Err(BackendError::Unsupported(format!(
                "{} offers no GPU timestamps (timestamp-query)",
                self.ctx.describe()
            )));
        }
        self.timing = on.then(KernelTimes::default);
        Ok(())
    }

    fn take_kernel_times(&mut self) -> Option<KernelTimes> {
        self.timing.as_mut().map(std::mem::take)
    }

    fn forward_batch(&mut self, batch: Batch) -> LogitsFuture<'_> {
        let layers = self.config.n_layers;
        Box::pin(async move { Ok(self.forward_impl(batch, layers, None).await?.0) })
    }

    /// The probe on the GPU: the pass's attention scratch and residual rows copied into a
    /// read-back buffer between its dispatches, mapped only for a probed pass.
    fn forward_probe<'a>(
        &'a mut self,
        batch: Batch,
        spec: ProbeSpec,
    ) -> LocalFuture<'a, Result<Probed, BackendError>> {
        let layers = self.config.n_layers;
        Box::pin(async move {
            match self.forward_impl(batch, layers, Some(spec)).await? {
                (logits, Some(record)) => Ok(Probed { logits, record }),
                (_, None) => Err(BackendError::Gpu("the probe recorded nothing".into())),
            }
        })
    }

    /// The early-exit draft on the GPU: the same dispatches for the first `layers` layers
    /// (their K/V into the sequence's cache), then the final norm and the classifier.
    fn forward_exit(&mut self, seq: SeqId, tokens: &[u32], layers: usize) -> LogitsFuture<'_> {
        match self.seq_len(seq) {
            Ok(pos0) => {
                let batch = Batch::tokens(seq, pos0, tokens, decoding_engine::Logits::Last);
                Box::pin(async move { Ok(self.forward_impl(batch, layers, None).await?.0) })
            }
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
}
