//! What the backend allocates on the device: the weights (uploaded once, at the model's
//! precision), the activations of a submission (`MAX_ROWS` rows), the bind groups every
//! sequence shares, and each sequence's KV cache with its own bind groups.

use super::GpuBackend;
use crate::context::{GpuContext, GpuError};
use crate::kernel::*;
use crate::pipelines::Kernels;
use decoding_engine::cpu::RopeTable;
use decoding_engine::kv_cache::CacheBytes;
use decoding_engine::quant::Tensor;
use decoding_engine::{Config, Transformer};
use wgpu::util::DeviceExt;

/// The learned parameters on the GPU, one buffer per tensor (all layers).
pub(super) struct Weights {
    pub(super) token_embedding: wgpu::Buffer,
    pub(super) rms_att: wgpu::Buffer,
    pub(super) wq: wgpu::Buffer,
    pub(super) wk: wgpu::Buffer,
    pub(super) wv: wgpu::Buffer,
    pub(super) wo: wgpu::Buffer,
    pub(super) rms_ffn: wgpu::Buffer,
    pub(super) w1: wgpu::Buffer,
    pub(super) w2: wgpu::Buffer,
    pub(super) w3: wgpu::Buffer,
    pub(super) rms_final: wgpu::Buffer,
    /// None when the classifier shares the embedding.
    pub(super) wcls: Option<wgpu::Buffer>,
    /// RoPE cos/sin, interleaved (seq_len, head_size/2, 2): the CPU's table.
    pub(super) rope: wgpu::Buffer,
    /// Bytes of the matrices' buffers (quantized ones stay quantized).
    pub(super) matrix_bytes: u64,
}

/// Activations for up to MAX_ROWS rows, shared by all sequences.
pub(super) struct Activations {
    /// (rows,) token ids
    pub(super) tokens: wgpu::Buffer,
    /// the batch table: (MAX_ROWS,) positions, then (MAX_ROWS,) rows that want logits
    pub(super) table: wgpu::Buffer,
    /// step blocks, one per PARAM_SLOT: all rows, then each sequence's run
    pub(super) step: wgpu::Buffer,
    pub(super) x: wgpu::Buffer,
    pub(super) xb: wgpu::Buffer,
    pub(super) q: wgpu::Buffer,
    pub(super) hb: wgpu::Buffer,
    pub(super) att: wgpu::Buffer,
    pub(super) logits: wgpu::Buffer,
    pub(super) staging: wgpu::Buffer,
}

/// Bind groups that do not depend on the sequence.
pub(super) struct SharedGroups {
    pub(super) embed: wgpu::BindGroup,
    pub(super) rms_att: wgpu::BindGroup,
    pub(super) rms_ffn: wgpu::BindGroup,
    pub(super) rms_final: wgpu::BindGroup,
    pub(super) wq: wgpu::BindGroup,
    pub(super) wo: wgpu::BindGroup,
    pub(super) w1: wgpu::BindGroup,
    pub(super) w3: wgpu::BindGroup,
    pub(super) w2: wgpu::BindGroup,
    pub(super) cls: wgpu::BindGroup,
    pub(super) swiglu: wgpu::BindGroup,
}

/// A sequence: its KV cache on the GPU and the bind groups that reach it.
pub(super) struct GpuSeq {
    pub(super) key: wgpu::Buffer,
    pub(super) value: wgpu::Buffer,
    pub(super) len: usize,
    pub(super) wk: wgpu::BindGroup,
    pub(super) wv: wgpu::BindGroup,
    pub(super) rope: wgpu::BindGroup,
    pub(super) attention: wgpu::BindGroup,
}

pub(super) fn storage(device: &wgpu::Device, label: &str, floats: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: (floats.max(1) * 4) as u64,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

pub(super) fn buffer(
    device: &wgpu::Device,
    label: &str,
    bytes: u64,
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes,
        usage,
        mapped_at_creation: false,
    })
}

/// Refuses, before anything is allocated, a tensor or cache larger than the device binds.
pub(super) fn check_limits(ctx: &GpuContext, model: &Transformer) -> Result<(), GpuError> {
    let limit = ctx
        .limits
        .max_storage_buffer_binding_size
        .min(ctx.limits.max_buffer_size);
    let too_large = |tensor: &str, bytes: u64| {
        (bytes > limit).then(|| GpuError::TensorTooLarge {
            tensor: tensor.to_string(),
            bytes,
            limit,
        })
    };
    for (name, t, _) in model.weights.matrices(&model.config) {
        if let Some(e) = too_large(name, t.bytes()) {
            return Err(e);
        }
    }
    // One of K, V: half of the formula's 2 × seq_len × n_layers × kv_dim × 4.
    let cache = CacheBytes::of(&model.config, model.config.seq_len).allocated / 2;
    too_large("KV cache (one of K, V)", cache).map_or(Ok(()), Err)
}

impl Weights {
    pub(super) fn upload(d: &wgpu::Device, model: &Transformer) -> Weights {
        let (c, w) = (&model.config, &model.weights);
        let bytes = |label: &str, contents: &[u8]| {
            d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let upload = |label: &str, data: &[f32]| bytes(label, bytemuck::cast_slice(data));
        // Matrices in their own format (quantized ones stay quantized on the GPU).
        let matrix = |label: &str, t: &Tensor| bytes(label, &packed(t));
        let table = RopeTable::new(c.head_size(), c.seq_len, c.rope_theta);
        let mut rope = Vec::with_capacity(c.seq_len * c.head_size());
        for pos in 0..c.seq_len {
            let (cos, sin) = table.at(pos);
            for (c, s) in cos.iter().zip(sin) {
                rope.extend([*c, *s]);
            }
        }
        Weights {
            token_embedding: matrix("token_embedding", &w.token_embedding),
            rms_att: upload("rms_att", &w.rms_att),
            wq: matrix("wq", &w.wq),
            wk: matrix("wk", &w.wk),
            wv: matrix("wv", &w.wv),
            wo: matrix("wo", &w.wo),
            rms_ffn: upload("rms_ffn", &w.rms_ffn),
            w1: matrix("w1", &w.w1),
            w2: matrix("w2", &w.w2),
            w3: matrix("w3", &w.w3),
            rms_final: upload("rms_final", &w.rms_final),
            wcls: w.wcls.as_ref().map(|t| matrix("wcls", t)),
            rope: upload("rope table", &rope),
            matrix_bytes: w
                .matrices(c)
                .iter()
                .map(|(_, t, _)| packed(t).len() as u64)
                .sum(),
        }
    }
}

impl Activations {
    pub(super) fn new(d: &wgpu::Device, c: &Config) -> Activations {
        use wgpu::BufferUsages as U;
        let n = MAX_ROWS;
        Activations {
            tokens: buffer(d, "tokens", (n * 4) as u64, U::STORAGE | U::COPY_DST),
            table: buffer(
                d,
                "batch table",
                (2 * n * 4) as u64,
                U::STORAGE | U::COPY_DST,
            ),
            step: buffer(
                d,
                "step blocks",
                (1 + n as u64) * PARAM_SLOT,
                U::UNIFORM | U::COPY_DST,
            ),
            x: storage(d, "x", n * c.dim),
            xb: storage(d, "xb", n * c.dim),
            q: storage(d, "q", n * c.dim),
            hb: storage(d, "hb", n * 2 * c.hidden_dim),
            att: storage(d, "att", n * c.n_heads * c.seq_len),
            logits: storage(d, "logits", n * c.vocab_size),
            staging: buffer(
                d,
                "logits read-back",
                (n * c.vocab_size * 4) as u64,
                U::MAP_READ | U::COPY_DST,
            ),
        }
    }
}

impl GpuBackend {
    pub(super) fn shared_groups(
        d: &wgpu::Device,
        k: &Kernels,
        w: &Weights,
        a: &Activations,
        params: &wgpu::Buffer,
    ) -> SharedGroups {
        use Slot::*;
        let mm = |wb: &wgpu::Buffer, x: &wgpu::Buffer, out: &wgpu::Buffer| {
            let bufs = [
                (wb, Read),
                (x, Read),
                (out, ReadWrite),
                (params, Params),
                (&a.step, Step),
                (&a.table, Read),
            ];
            k.matmul.bind(d, &bufs)
        };
        let rms = |wb: &wgpu::Buffer| {
            let bufs = [
                (&a.x, Read),
                (wb, Read),
                (&a.xb, ReadWrite),
                (params, Params),
                (&a.table, Read),
            ];
            k.rmsnorm.bind(d, &bufs)
        };
        let embed = [
            (&w.token_embedding, Read),
            (&a.tokens, Read),
            (&a.x, ReadWrite),
            (params, Params),
        ];
        SharedGroups {
            embed: k.embed.bind(d, &embed),
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

    pub(super) fn new_seq(&self) -> GpuSeq {
        use Slot::*;
        let c = &self.config;
        let d = &self.ctx.device;
        let floats = c.n_layers * c.seq_len * c.kv_dim();
        let key = storage(d, "key cache", floats);
        let value = storage(d, "value cache", floats);
        let (k, a, w, p) = (&self.kernels, &self.act, &self.weights, &self.params);
        let mm = |wb: &wgpu::Buffer, out: &wgpu::Buffer| {
            let bufs = [
                (wb, Read),
                (&a.xb, Read),
                (out, ReadWrite),
                (p, Params),
                (&a.step, Step),
                (&a.table, Read),
            ];
            k.matmul.bind(d, &bufs)
        };
        let rope = [
            (&a.q, ReadWrite),
            (&key, ReadWrite),
            (&w.rope, Read),
            (p, Params),
            (&a.step, Step),
            (&a.table, Read),
        ];
        let attention = [
            (&a.q, Read),
            (&key, Read),
            (&value, Read),
            (&a.att, ReadWrite),
            (&a.xb, ReadWrite),
            (p, Params),
            (&a.step, Step),
            (&a.table, Read),
        ];
        GpuSeq {
            wk: mm(&w.wk, &key),
            wv: mm(&w.wv, &value),
            rope: k.rope.bind(d, &rope),
            attention: k.attention.bind(d, &attention),
            key,
            value,
            len: 0,
        }
    }
}
