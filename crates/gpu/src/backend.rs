//! The WebGPU backend: the whole forward pass of `decoding_engine::forward` as compute
//! dispatches. Weights are uploaded once; each sequence's KV cache lives on the GPU
//! (preallocated for the whole context, written at the position); pipelines, bind groups and
//! buffers are created once and reused. A decode step is one command buffer (one submission)
//! and one read-back of the logits; its dispatch count does not grow with the sequence.

use crate::context::{GpuContext, GpuError};
use crate::kernels::*;
use decoding_engine::backend::{Backend, BackendError, BackendKind, LocalFuture, SeqId, SeqSlots};
use decoding_engine::cpu::RopeTable;
use decoding_engine::kv_cache::CacheBytes;
use decoding_engine::{Batch, Config, Transformer};
use std::rc::Rc;
use wgpu::util::DeviceExt;

/// Tokens run in one submission during prefill (longer prompts go in several).
pub const PREFILL_CHUNK: usize = 64;

impl From<GpuError> for BackendError {
    fn from(e: GpuError) -> BackendError {
        match e {
            GpuError::Lost(m) => BackendError::DeviceLost(m),
            other => BackendError::Gpu(other.to_string()),
        }
    }
}

/// The learned parameters on the GPU, one buffer per tensor (all layers).
struct Weights {
    token_embedding: wgpu::Buffer,
    rms_att: wgpu::Buffer,
    wq: wgpu::Buffer,
    wk: wgpu::Buffer,
    wv: wgpu::Buffer,
    wo: wgpu::Buffer,
    rms_ffn: wgpu::Buffer,
    w1: wgpu::Buffer,
    w2: wgpu::Buffer,
    w3: wgpu::Buffer,
    rms_final: wgpu::Buffer,
    /// None when the classifier shares the embedding.
    wcls: Option<wgpu::Buffer>,
    /// RoPE cos/sin, interleaved (seq_len, head_size/2, 2): the CPU's table.
    rope: wgpu::Buffer,
}

/// Activations for up to PREFILL_CHUNK tokens, shared by all sequences.
struct Activations {
    tokens: wgpu::Buffer,
    step: wgpu::Buffer,
    x: wgpu::Buffer,
    xb: wgpu::Buffer,
    q: wgpu::Buffer,
    hb: wgpu::Buffer,
    att: wgpu::Buffer,
    logits: wgpu::Buffer,
    staging: wgpu::Buffer,
}

/// Bind groups that do not depend on the sequence.
struct SharedGroups {
    embed: wgpu::BindGroup,
    rms_att: wgpu::BindGroup,
    rms_ffn: wgpu::BindGroup,
    rms_final: wgpu::BindGroup,
    wq: wgpu::BindGroup,
    wo: wgpu::BindGroup,
    w1: wgpu::BindGroup,
    w3: wgpu::BindGroup,
    w2: wgpu::BindGroup,
    cls: wgpu::BindGroup,
    swiglu: wgpu::BindGroup,
}

/// A sequence: its KV cache on the GPU and the bind groups that reach it.
struct GpuSeq {
    key: wgpu::Buffer,
    value: wgpu::Buffer,
    len: usize,
    wk: wgpu::BindGroup,
    wv: wgpu::BindGroup,
    rope: wgpu::BindGroup,
    attention: wgpu::BindGroup,
}

/// Parameter-slot indices in the shared uniform buffer.
struct Slots {
    layers: usize,
}

impl Slots {
    const PER_LAYER: usize = 12;
    fn embed(&self) -> u64 {
        0
    }
    fn layer(&self, l: usize, k: usize) -> u64 {
        (1 + l * Self::PER_LAYER + k) as u64
    }
    fn final_norm(&self) -> u64 {
        (1 + self.layers * Self::PER_LAYER) as u64
    }
    /// Rewritten at every call (its input row depends on how many tokens ran).
    fn classifier(&self) -> u64 {
        self.final_norm() + 1
    }
    fn count(&self) -> u64 {
        self.classifier() + 1
    }
}

// Per-layer slot order.
const S_RMS_ATT: usize = 0;
const S_WQ: usize = 1;
const S_WK: usize = 2;
const S_WV: usize = 3;
const S_ROPE: usize = 4;
const S_ATTN: usize = 5;
const S_WO: usize = 6;
const S_RMS_FFN: usize = 7;
const S_W1: usize = 8;
const S_W3: usize = 9;
const S_SWIGLU: usize = 10;
const S_W2: usize = 11;

pub struct GpuBackend {
    ctx: Rc<GpuContext>,
    config: Config,
    kernels: Kernels,
    weights: Weights,
    act: Activations,
    params: wgpu::Buffer,
    slots: Slots,
    shared: SharedGroups,
    seqs: SeqSlots<GpuSeq>,
}

fn storage(device: &wgpu::Device, label: &str, floats: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: (floats.max(1) * 4) as u64,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

impl GpuBackend {
    /// Uploads the model. Tensors larger than the device can bind are refused with a
    /// message naming the tensor, before anything is allocated.
    pub fn new(ctx: Rc<GpuContext>, model: &Transformer) -> Result<GpuBackend, GpuError> {
        let c = model.config;
        let w = &model.weights;
        let limit = ctx
            .limits
            .max_storage_buffer_binding_size
            .min(ctx.limits.max_buffer_size);
        for (name, t) in w.tensors() {
            let bytes = (t.len() * 4) as u64;
            if bytes > limit {
                return Err(GpuError::TensorTooLarge {
                    tensor: name.to_string(),
                    bytes,
                    limit,
                });
            }
        }
        let cache_bytes = (c.n_layers * c.seq_len * c.kv_dim() * 4) as u64;
        if cache_bytes > limit {
            return Err(GpuError::TensorTooLarge {
                tensor: "KV cache (one of K, V)".into(),
                bytes: cache_bytes,
                limit,
            });
        }
        let d = &ctx.device;
        let upload = |label: &str, data: &[f32]| {
            d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(data),
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let table = RopeTable::new(c.head_size(), c.seq_len);
        let mut rope = Vec::with_capacity(c.seq_len * c.head_size());
        for pos in 0..c.seq_len {
            let (cos, sin) = table.at(pos);
            for j in 0..cos.len() {
                rope.push(cos[j]);
                rope.push(sin[j]);
            }
        }
        let weights = Weights {
            token_embedding: upload("token_embedding", &w.token_embedding),
            rms_att: upload("rms_att", &w.rms_att),
            wq: upload("wq", &w.wq),
            wk: upload("wk", &w.wk),
            wv: upload("wv", &w.wv),
            wo: upload("wo", &w.wo),
            rms_ffn: upload("rms_ffn", &w.rms_ffn),
            w1: upload("w1", &w.w1),
            w2: upload("w2", &w.w2),
            w3: upload("w3", &w.w3),
            rms_final: upload("rms_final", &w.rms_final),
            wcls: w.wcls.as_ref().map(|t| upload("wcls", t)),
            rope: upload("rope table", &rope),
        };
        let n = PREFILL_CHUNK;
        let act = Activations {
            tokens: d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("tokens"),
                size: (n * 4) as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            step: d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("step"),
                size: std::mem::size_of::<StepParams>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            x: storage(d, "x", n * c.dim),
            xb: storage(d, "xb", n * c.dim),
            q: storage(d, "q", n * c.dim),
            hb: storage(d, "hb", n * 2 * c.hidden_dim),
            att: storage(d, "att", n * c.n_heads * c.seq_len),
            logits: storage(d, "logits", n * c.vocab_size),
            staging: d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("logits read-back"),
                size: (n * c.vocab_size * 4) as u64,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        };
        let slots = Slots { layers: c.n_layers };
        let params = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("kernel parameters"),
            size: slots.count() * PARAM_SLOT,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let kernels = Kernels::new(d);
        let shared = Self::shared_groups(d, &kernels, &weights, &act, &params);
        let backend = GpuBackend {
            config: c,
            kernels,
            weights,
            act,
            params,
            slots,
            shared,
            seqs: SeqSlots::default(),
            ctx,
        };
        backend.write_static_params();
        if let Some(e) = backend.ctx.take_error() {
            return Err(e);
        }
        Ok(backend)
    }

    fn shared_groups(
        d: &wgpu::Device,
        k: &Kernels,
        w: &Weights,
        a: &Activations,
        params: &wgpu::Buffer,
    ) -> SharedGroups {
        use Slot::*;
        let mm = |wb: &wgpu::Buffer, x: &wgpu::Buffer, out: &wgpu::Buffer| {
            k.matmul.bind(
                d,
                &[
                    (wb, Read),
                    (x, Read),
                    (out, ReadWrite),
                    (params, Params),
                    (&a.step, Step),
                ],
            )
        };
        let rms = |wb: &wgpu::Buffer| {
            k.rmsnorm.bind(
                d,
                &[
                    (&a.x, Read),
                    (wb, Read),
                    (&a.xb, ReadWrite),
                    (params, Params),
                ],
            )
        };
        SharedGroups {
            embed: k.embed.bind(
                d,
                &[
                    (&w.token_embedding, Read),
                    (&a.tokens, Read),
                    (&a.x, ReadWrite),
                    (params, Params),
                ],
            ),
            rms_att: rms(&w.rms_att),
            rms_ffn: rms(&w.rms_ffn),
            rms_final: rms(&w.rms_final),
            wq: mm(&w.wq, &a.xb, &a.q),
            wo: mm(&w.wo, &a.xb, &a.x),
            w1: mm(&w.w1, &a.xb, &a.hb),
            w3: mm(&w.w3, &a.xb, &a.hb),
            w2: mm(&w.w2, &a.hb, &a.x),
            cls: mm(
                w.wcls.as_ref().unwrap_or(&w.token_embedding),
                &a.xb,
                &a.logits,
            ),
            swiglu: k.swiglu.bind(d, &[(&a.hb, ReadWrite), (params, Params)]),
        }
    }

    fn write_slot<T: bytemuck::Pod>(&self, slot: u64, value: &T) {
        self.ctx
            .queue
            .write_buffer(&self.params, slot * PARAM_SLOT, bytemuck::bytes_of(value));
    }

    /// Parameter blocks that never change: weight offsets per layer, shapes.
    fn write_static_params(&self) {
        let c = &self.config;
        let (dim, hidden, kv, hs) = (
            c.dim as u32,
            c.hidden_dim as u32,
            c.kv_dim() as u32,
            c.head_size() as u32,
        );
        let s = &self.slots;
        self.write_slot(
            s.embed(),
            &EmbedParams {
                dim,
                ..Default::default()
            },
        );
        let mm = |n: u32,
                  rows: u32,
                  w_offset: u32,
                  x_stride: u32,
                  out_offset: u32,
                  out_stride: u32,
                  flags: u32| MatmulParams {
            n,
            rows,
            w_offset,
            x_offset: 0,
            x_stride,
            out_offset,
            out_stride,
            flags,
        };
        for l in 0..c.n_layers as u32 {
            let lu = l as usize;
            let layer_cache = l * c.seq_len as u32 * kv;
            // Both norms of a layer read their weights at the layer's offset.
            let norm = RmsNormParams {
                dim,
                w_offset: l * dim,
                _pad: [0; 2],
            };
            self.write_slot(s.layer(lu, S_RMS_ATT), &norm);
            self.write_slot(
                s.layer(lu, S_WQ),
                &mm(dim, dim, l * dim * dim, dim, 0, dim, 0),
            );
            // K and V: the same shape, written into their caches at the position.
            let kv_write = mm(
                dim,
                kv,
                l * kv * dim,
                dim,
                layer_cache,
                kv,
                MATMUL_AT_POSITION,
            );
            self.write_slot(s.layer(lu, S_WK), &kv_write);
            self.write_slot(s.layer(lu, S_WV), &kv_write);
            self.write_slot(
                s.layer(lu, S_ROPE),
                &RopeParams {
                    q_pairs: dim / 2,
                    k_pairs: kv / 2,
                    half_head: hs / 2,
                    q_stride: dim,
                    k_offset: layer_cache,
                    k_stride: kv,
                    _pad: [0; 2],
                },
            );
            self.write_slot(
                s.layer(lu, S_ATTN),
                &AttentionParams {
                    n_heads: c.n_heads as u32,
                    head_size: hs,
                    kv_dim: kv,
                    kv_mul: c.kv_mul() as u32,
                    seq_len: c.seq_len as u32,
                    layer_offset: layer_cache,
                    q_stride: dim,
                    _pad: 0,
                },
            );
            self.write_slot(
                s.layer(lu, S_WO),
                &mm(dim, dim, l * dim * dim, dim, 0, dim, MATMUL_ACCUMULATE),
            );
            self.write_slot(s.layer(lu, S_RMS_FFN), &norm);
            self.write_slot(
                s.layer(lu, S_W1),
                &mm(dim, hidden, l * hidden * dim, dim, 0, 2 * hidden, 0),
            );
            self.write_slot(
                s.layer(lu, S_W3),
                &mm(dim, hidden, l * hidden * dim, dim, hidden, 2 * hidden, 0),
            );
            self.write_slot(
                s.layer(lu, S_SWIGLU),
                &SwigluParams {
                    hidden,
                    ..Default::default()
                },
            );
            self.write_slot(
                s.layer(lu, S_W2),
                &mm(
                    hidden,
                    dim,
                    l * dim * hidden,
                    2 * hidden,
                    0,
                    dim,
                    MATMUL_ACCUMULATE,
                ),
            );
        }
        self.write_slot(
            s.final_norm(),
            &RmsNormParams {
                dim,
                w_offset: 0,
                _pad: [0; 2],
            },
        );
    }

    fn new_seq(&self) -> GpuSeq {
        use Slot::*;
        let c = &self.config;
        let d = &self.ctx.device;
        let floats = c.n_layers * c.seq_len * c.kv_dim();
        let key = storage(d, "key cache", floats);
        let value = storage(d, "value cache", floats);
        let k = &self.kernels;
        let a = &self.act;
        let w = &self.weights;
        let p = &self.params;
        let mm = |wb: &wgpu::Buffer, out: &wgpu::Buffer| {
            k.matmul.bind(
                d,
                &[
                    (wb, Read),
                    (&a.xb, Read),
                    (out, ReadWrite),
                    (p, Params),
                    (&a.step, Step),
                ],
            )
        };
        GpuSeq {
            wk: mm(&w.wk, &key),
            wv: mm(&w.wv, &value),
            rope: k.rope.bind(
                d,
                &[
                    (&a.q, ReadWrite),
                    (&key, ReadWrite),
                    (&w.rope, Read),
                    (p, Params),
                    (&a.step, Step),
                ],
            ),
            attention: k.attention.bind(
                d,
                &[
                    (&a.q, Read),
                    (&key, Read),
                    (&value, Read),
                    (&a.att, ReadWrite),
                    (&a.xb, ReadWrite),
                    (p, Params),
                    (&a.step, Step),
                ],
            ),
            key,
            value,
            len: 0,
        }
    }

    pub fn context(&self) -> &Rc<GpuContext> {
        &self.ctx
    }

    /// Compute dispatches in one decode step: embedding, 12 per layer, final norm, classifier.
    pub fn dispatches_per_token(&self) -> usize {
        1 + Slots::PER_LAYER * self.config.n_layers + 2
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

    /// Encodes the forward pass of `n` tokens at `pos0` of `seq` (their ids and the step
    /// block already written). `logits_rows`: how many of the last rows get logits.
    fn encode(&self, encoder: &mut wgpu::CommandEncoder, s: &GpuSeq, n: u32, logits_rows: u32) {
        let c = &self.config;
        let k = &self.kernels;
        let g = &self.shared;
        let slots = &self.slots;
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("forward"),
            timestamp_writes: None,
        });
        let off = |slot: u64| [(slot * PARAM_SLOT) as u32];
        let groups = |d: usize| (d as u32).div_ceil(WORKGROUP);
        let matmul = |pass: &mut wgpu::ComputePass,
                      bg: &wgpu::BindGroup,
                      slot: u64,
                      rows: usize,
                      tokens: u32| {
            pass.set_pipeline(&k.matmul.pipeline);
            pass.set_bind_group(0, bg, &off(slot));
            let (x, y) = row_groups(rows as u32);
            pass.dispatch_workgroups(x, y, tokens);
        };

        pass.set_pipeline(&k.embed.pipeline);
        pass.set_bind_group(0, &g.embed, &off(slots.embed()));
        pass.dispatch_workgroups(groups(c.dim), n, 1);
        for l in 0..c.n_layers {
            pass.set_pipeline(&k.rmsnorm.pipeline);
            pass.set_bind_group(0, &g.rms_att, &off(slots.layer(l, S_RMS_ATT)));
            pass.dispatch_workgroups(n, 1, 1);
            matmul(&mut pass, &g.wq, slots.layer(l, S_WQ), c.dim, n);
            matmul(&mut pass, &s.wk, slots.layer(l, S_WK), c.kv_dim(), n);
            matmul(&mut pass, &s.wv, slots.layer(l, S_WV), c.kv_dim(), n);
            pass.set_pipeline(&k.rope.pipeline);
            pass.set_bind_group(0, &s.rope, &off(slots.layer(l, S_ROPE)));
            pass.dispatch_workgroups(groups((c.dim + c.kv_dim()) / 2), n, 1);
            pass.set_pipeline(&k.attention.pipeline);
            pass.set_bind_group(0, &s.attention, &off(slots.layer(l, S_ATTN)));
            pass.dispatch_workgroups(c.n_heads as u32, n, 1);
            matmul(&mut pass, &g.wo, slots.layer(l, S_WO), c.dim, n);
            pass.set_pipeline(&k.rmsnorm.pipeline);
            pass.set_bind_group(0, &g.rms_ffn, &off(slots.layer(l, S_RMS_FFN)));
            pass.dispatch_workgroups(n, 1, 1);
            matmul(&mut pass, &g.w1, slots.layer(l, S_W1), c.hidden_dim, n);
            matmul(&mut pass, &g.w3, slots.layer(l, S_W3), c.hidden_dim, n);
            pass.set_pipeline(&k.swiglu.pipeline);
            pass.set_bind_group(0, &g.swiglu, &off(slots.layer(l, S_SWIGLU)));
            pass.dispatch_workgroups(groups(c.hidden_dim), n, 1);
            matmul(&mut pass, &g.w2, slots.layer(l, S_W2), c.dim, n);
        }
        if logits_rows > 0 {
            pass.set_pipeline(&k.rmsnorm.pipeline);
            pass.set_bind_group(0, &g.rms_final, &off(slots.final_norm()));
            pass.dispatch_workgroups(n, 1, 1);
            matmul(
                &mut pass,
                &g.cls,
                slots.classifier(),
                c.vocab_size,
                logits_rows,
            );
        }
    }

    /// Runs one chunk (≤ PREFILL_CHUNK tokens); returns logits of its last `logits_rows`.
    async fn run_chunk(
        &mut self,
        seq: SeqId,
        tokens: &[u32],
        logits_rows: usize,
    ) -> Result<Vec<f32>, BackendError> {
        let c = self.config;
        let n = tokens.len();
        let pos0 = self.seq(seq)?.len;
        let q = &self.ctx.queue;
        q.write_buffer(&self.act.tokens, 0, bytemuck::cast_slice(tokens));
        q.write_buffer(
            &self.act.step,
            0,
            bytemuck::bytes_of(&StepParams {
                pos0: pos0 as u32,
                n_tokens: n as u32,
                _pad: [0; 2],
            }),
        );
        if logits_rows > 0 {
            let first = (n - logits_rows) as u32;
            self.write_slot(
                self.slots.classifier(),
                &MatmulParams {
                    n: c.dim as u32,
                    rows: c.vocab_size as u32,
                    w_offset: 0,
                    x_offset: first * c.dim as u32,
                    x_stride: c.dim as u32,
                    out_offset: 0,
                    out_stride: c.vocab_size as u32,
                    flags: 0,
                },
            );
        }
        let mut encoder = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("step"),
            });
        self.encode(&mut encoder, self.seq(seq)?, n as u32, logits_rows as u32);
        let bytes = (logits_rows * c.vocab_size * 4) as u64;
        if bytes > 0 {
            encoder.copy_buffer_to_buffer(&self.act.logits, 0, &self.act.staging, 0, bytes);
        }
        q.submit([encoder.finish()]);
        if let Ok(s) = self.seqs.get_mut(seq) {
            s.len += n;
        }
        if bytes == 0 {
            return self.check_error().map(|_| Vec::new());
        }
        let logits = self.read_back(bytes).await;
        if logits.is_err() {
            // The step did not complete: its positions are not in the cache.
            if let Ok(s) = self.seqs.get_mut(seq) {
                s.len = pos0;
            }
        }
        logits
    }

    /// Maps the staging buffer and copies `bytes` of logits out.
    async fn read_back(&self, bytes: u64) -> Result<Vec<f32>, BackendError> {
        let slice = self.act.staging.slice(0..bytes);
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
            bytemuck::cast_slice::<u8, f32>(&view).to_vec()
        };
        self.act.staging.unmap();
        Ok(out)
    }

    /// Runs a checked batch as runs of consecutive rows of one sequence, each in chunks of
    /// at most PREFILL_CHUNK rows (one submission each). A chunk computes logits from its
    /// first row that wants them to its end (the classifier kernel takes a contiguous tail);
    /// rows that did not ask are dropped from the answer.
    async fn forward_impl(&mut self, batch: Batch) -> Result<Vec<f32>, BackendError> {
        let c = self.config;
        batch.check(c.vocab_size, c.seq_len, |seq| self.seq_len(seq))?;
        if self.ctx.is_lost() {
            self.check_error()?;
        }
        let rows = batch.rows();
        let mut out = Vec::with_capacity(batch.logits_rows() * c.vocab_size);
        let mut start = 0;
        while start < rows.len() {
            let seq = rows[start].seq;
            let run = rows[start..].iter().take_while(|r| r.seq == seq).count();
            for chunk in rows[start..start + run].chunks(PREFILL_CHUNK) {
                let first = chunk.iter().position(|r| r.logits).unwrap_or(chunk.len());
                let tokens: Vec<u32> = chunk.iter().map(|r| r.token).collect();
                let logits = self.run_chunk(seq, &tokens, chunk.len() - first).await?;
                let wanted = chunk[first..].iter().map(|r| r.logits);
                for (row, keep) in logits.chunks(c.vocab_size).zip(wanted) {
                    if keep {
                        out.extend_from_slice(row);
                    }
                }
            }
            start += run;
        }
        Ok(out)
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

    fn forward_batch<'a>(
        &'a mut self,
        batch: Batch,
    ) -> LocalFuture<'a, Result<Vec<f32>, BackendError>> {
        Box::pin(self.forward_impl(batch))
    }
}
