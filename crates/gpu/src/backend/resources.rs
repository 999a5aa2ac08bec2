//! What the backend allocates on the device: the weights (uploaded once, at the model's
//! precision), the activations of a submission (`MAX_ROWS` rows), the bind groups every
//! sequence shares, and each sequence's KV cache with its own bind groups.

use super::GpuBackend;
use crate::context::{GpuContext, GpuError};
use crate::kernel::*;
use crate::pipelines::Kernels;
use decoding_engine::forward::kv_cache::CacheBytes;
use decoding_engine::kernels::RopeTable;
use decoding_engine::quant::Tensor;
use decoding_engine::{Config, Transformer};
use wgpu::util::DeviceExt;

/// The learned parameters on the GPU, one buffer per tensor (all layers).
pub(super) struct Weights {
    pub(super) token_embedding: wgpu::Buffer,
    pub(super) rms_att: wgpu::Buffer,
    /// [Wq; Wk; Wv] packed a layer at a time (`packed_parts`), in as many buffers as the
    /// device's binding limit asks (`Packing`)
    pub(super) wqkv: Vec<wgpu::Buffer>,
    pub(super) wo: wgpu::Buffer,
    pub(super) rms_ffn: wgpu::Buffer,
    /// [W1; W3] packed a layer at a time, likewise
    pub(super) w13: Vec<wgpu::Buffer>,
    pub(super) w2: wgpu::Buffer,
    pub(super) rms_final: wgpu::Buffer,
    /// None when the classifier shares the embedding.
    pub(super) wcls: Option<wgpu::Buffer>,
    /// RoPE cos/sin, interleaved (seq_len, head_size/2, 2): the CPU's table; then every
    /// layer's [bq; bk; bv] (Qwen2's; zeros for a Llama: `qkv.wgsl` adds them either way).
    pub(super) rope: wgpu::Buffer,
    /// Bytes of the matrices' buffers (quantized ones stay quantized).
    pub(super) matrix_bytes: u64,
    pub(super) packing: Packing,
}

/// Where the packed matrices are in a layer's block: Wq, Wk, Wv; W1, W3.
pub(super) struct Packing {
    pub(super) qkv: PartsLayout,
    pub(super) mlp: PartsLayout,
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
    pub(super) rms_final: wgpu::BindGroup,
    pub(super) wo: wgpu::BindGroup,
    /// one per buffer of [W1; W3] (`Packing::mlp`)
    pub(super) mlp_in: Vec<wgpu::BindGroup>,
    pub(super) w2: wgpu::BindGroup,
    pub(super) cls: wgpu::BindGroup,
}

/// A sequence: its KV cache on the GPU and the bind groups that reach it.
pub(super) struct GpuSeq {
    pub(super) key: wgpu::Buffer,
    pub(super) value: wgpu::Buffer,
    pub(super) len: usize,
    /// one per buffer of [Wq; Wk; Wv] (`Packing::qkv`)
    pub(super) qkv: Vec<wgpu::BindGroup>,
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

/// The largest buffer the device binds at once.
pub(super) fn bind_limit(ctx: &GpuContext) -> u64 {
    ctx.limits
        .max_storage_buffer_binding_size
        .min(ctx.limits.max_buffer_size)
}

fn too_large(limit: u64, tensor: &str, bytes: u64) -> Option<GpuError> {
    (bytes > limit).then(|| GpuError::TensorTooLarge {
        tensor: tensor.to_string(),
        bytes,
        limit,
    })
}

/// The matrices packed a layer at a time (their limit is a layer's, checked in `upload`).
const PACKED: [&str; 5] = ["wq", "wk", "wv", "w1", "w3"];

/// Refuses, before anything is allocated, a tensor or cache larger than `limit` (what the
/// device binds at once).
pub(super) fn check_limits(model: &Transformer, limit: u64) -> Result<(), GpuError> {
    let too_large = |tensor: &str, bytes: u64| too_large(limit, tensor, bytes);
    for (name, t, _) in model.weights.matrices(&model.config) {
        if PACKED.contains(&name) {
            continue;
        }
        if let Some(e) = too_large(name, t.bytes()) {
            return Err(e);
        }
    }
    // One of K, V: half of the formula's 2 × seq_len × n_layers × kv_dim × 4.
    let cache = CacheBytes::of(&model.config, model.config.seq_len).allocated / 2;
    too_large("KV cache (one of K, V)", cache).map_or(Ok(()), Err)
}

impl Weights {
    /// Uploads the weights; the packed [Wq; Wk; Wv] and [W1; W3] are refused, by name,
    /// when larger than `limit` (before they are allocated).
    pub(super) fn upload(
        d: &wgpu::Device,
        model: &Transformer,
        limit: u64,
    ) -> Result<Weights, GpuError> {
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
        let table = RopeTable::with_factors(
            c.head_size(),
            c.seq_len,
            c.rope_theta,
            w.rope_factors.as_deref(),
        );
        let biases = c.n_layers * (c.dim + 2 * c.kv_dim());
        let mut rope = Vec::with_capacity(c.seq_len * c.head_size() + biases);
        for pos in 0..c.seq_len {
            let (cos, sin) = table.at(pos);
            for (c, s) in cos.iter().zip(sin) {
                rope.extend([*c, *s]);
            }
        }
        match &w.qkv_bias {
            Some(b) => rope.extend_from_slice(b),
            None => rope.resize(rope.len() + biases, 0.0),
        }
        // As many layers a buffer as the device binds at once (one layer at least), each
        // buffer packed and uploaded on its own so the host holds one buffer's copy at most.
        let layers = c.n_layers.max(1);
        let split =
            |name: &str, parts: &[&Tensor]| -> Result<(Vec<wgpu::Buffer>, PartsLayout), GpuError> {
                let one = packed_parts(parts, layers, 0..1).map_err(GpuError::Gpu)?;
                let per_layer = one.bytes.len();
                if let Some(e) = too_large(limit, name, per_layer as u64) {
                    return Err(e);
                }
                let per_buffer = (limit / per_layer.max(1) as u64).clamp(1, layers as u64) as usize;
                let mut buffers = Vec::new();
                for first in (0..layers).step_by(per_buffer) {
                    let range = first..(first + per_buffer).min(layers);
                    let p = packed_parts(parts, layers, range).map_err(GpuError::Gpu)?;
                    buffers.push(bytes(name, &p.bytes));
                }
                let layout = PartsLayout {
                    per_buffer,
                    ..one.layout
                };
                Ok((buffers, layout))
            };
        let (wqkv, qkv) = split("wq, wk and wv of a layer (packed)", &[&w.wq, &w.wk, &w.wv])?;
        let (w13, mlp) = split("w1 and w3 of a layer (packed)", &[&w.w1, &w.w3])?;
        Ok(Weights {
            token_embedding: matrix("token_embedding", &w.token_embedding),
            rms_att: upload("rms_att", &w.rms_att),
            wqkv,
            wo: matrix("wo", &w.wo),
            rms_ffn: upload("rms_ffn", &w.rms_ffn),
            w13,
            w2: matrix("w2", &w.w2),
            rms_final: upload("rms_final", &w.rms_final),
            wcls: w.wcls.as_ref().map(|t| matrix("wcls", t)),
            rope: upload("rope table and q, k, v biases", &rope),
            matrix_bytes: w.matrices(c).iter().map(|(_, t, _)| t.bytes()).sum(),
            packing: Packing { qkv, mlp },
        })
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
            ];
            k.matmul.bind(d, &bufs)
        };
        let rms_final = [
            (&a.x, Read),
            (&w.rms_final, Read),
            (&a.xb, ReadWrite),
            (params, Params),
            (&a.table, Read),
        ];
        let embed = [
            (&w.token_embedding, Read),
            (&a.tokens, Read),
            (&a.x, ReadWrite),
            (params, Params),
        ];
        let mlp_in = |w13: &wgpu::Buffer| {
            let bufs = [
                (w13, Read),
                (&a.x, Read),
                (&a.hb, ReadWrite),
                (params, Params),
                (&a.step, Step),
                (&w.rms_ffn, Read),
            ];
            k.mlp_in.bind(d, &bufs)
        };
        SharedGroups {
            embed: k.embed.bind(d, &embed),
            rms_final: k.rmsnorm.bind(d, &rms_final),
            wo: mm(&w.wo, &a.xb, &a.x),
            mlp_in: w.w13.iter().map(mlp_in).collect(),
            w2: mm(&w.w2, &a.hb, &a.x),
            cls: mm(
                w.wcls.as_ref().unwrap_or(&w.token_embedding),
                &a.xb,
                &a.logits,
            ),
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
        let qkv = |wqkv: &wgpu::Buffer| {
            let bufs = [
                (wqkv, Read),
                (&a.x, Read),
                (&a.q, ReadWrite),
                (&key, ReadWrite),
                (&value, ReadWrite),
                (p, Params),
                (&a.step, Step),
                (&a.table, Read),
                (&w.rms_att, Read),
                (&w.rope, Read),
            ];
            k.qkv.bind(d, &bufs)
        };
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
            qkv: w.wqkv.iter().map(qkv).collect(),
            attention: k.attention.bind(d, &attention),
            key,
            value,
            len: 0,
        }
    }
}
