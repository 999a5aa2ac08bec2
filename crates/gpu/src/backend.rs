//! The WebGPU backend: the whole forward pass of `decoding_engine::forward` as compute
//! dispatches over a batch of rows. Weights are uploaded once; each sequence's KV cache
//! lives on the GPU (preallocated for the whole context, written at each row's position);
//! pipelines, bind groups, buffers and every parameter block are created once and reused.
//!
//! A submission runs up to `MAX_ROWS` rows. Its rows are grouped by sequence (a stable
//! reordering: a sequence's rows keep their order) into runs; the batch table gives each
//! row's position and the rows that want logits. The matrices that do not touch a cache
//! (Q, O, the MLP, the classifier) run once over all rows, so each weight is read once per
//! submission; K, V, RoPE and attention run once per sequence's run, against that
//! sequence's cache. A decode step is one submission and one logits read-back; its dispatch
//! count does not grow with the sequence.

use crate::context::{GpuContext, GpuError};
use crate::kernels::*;
use decoding_engine::backend::{Backend, BackendError, BackendKind, LocalFuture, SeqId, SeqSlots};
use decoding_engine::cpu::RopeTable;
use decoding_engine::kv_cache::CacheBytes;
use decoding_engine::quant::Tensor;
use decoding_engine::{Batch, Config, ProbeRecord, ProbeSpec, Probed, Row, Transformer};
use std::rc::Rc;
use wgpu::util::DeviceExt;

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
    /// Bytes of the matrices' buffers (quantized ones stay quantized).
    matrix_bytes: u64,
}

/// Activations for up to MAX_ROWS rows, shared by all sequences.
struct Activations {
    /// (rows,) token ids
    tokens: wgpu::Buffer,
    /// the batch table: (MAX_ROWS,) positions, then (MAX_ROWS,) rows that want logits
    table: wgpu::Buffer,
    /// step blocks, one per PARAM_SLOT: all rows, then each sequence's run
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

/// One dispatch of a layer: its kernel, bind group, parameter block for layer `l` and
/// workgroup counts for `rows` rows; `per_seq` dispatches run once per sequence's run.
/// `LAYER` lists them in order: adding a kernel to the layer is one entry.
struct LayerOp {
    kernel: fn(&Kernels) -> &Kernel,
    group: for<'a> fn(&'a SharedGroups, &'a GpuSeq) -> &'a wgpu::BindGroup,
    params: fn(&Config, u32) -> Vec<u8>,
    groups: fn(&Config, u32) -> [u32; 3],
    per_seq: bool,
}

fn block<T: bytemuck::Pod>(p: T) -> Vec<u8> {
    bytemuck::bytes_of(&p).to_vec()
}

/// A matmul block: W (rows, n) at `w_offset` times x rows `x_stride` apart, into out rows
/// `out_stride` apart from `out_offset`.
fn mm(
    n: usize,
    rows: usize,
    w_offset: usize,
    x_stride: usize,
    out: (usize, usize),
    flags: u32,
) -> Vec<u8> {
    block(MatmulParams {
        n: n as u32,
        rows: rows as u32,
        w_offset: w_offset as u32,
        x_offset: 0,
        x_stride: x_stride as u32,
        out_offset: out.0 as u32,
        out_stride: out.1 as u32,
        flags,
    })
}

/// Workgroups of a matmul with `out_rows` weight rows over `rows` batch rows.
fn mm_groups(out_rows: usize, rows: u32) -> [u32; 3] {
    let (x, y) = row_groups(out_rows as u32);
    [x, y, rows]
}

fn norm(c: &Config, l: u32) -> Vec<u8> {
    block(RmsNormParams {
        dim: c.dim as u32,
        w_offset: l * c.dim as u32,
        eps: c.rms_eps,
        ..Default::default()
    })
}

/// Where layer `l` starts in a sequence's K or V cache (floats).
fn layer_cache(c: &Config, l: u32) -> usize {
    l as usize * c.seq_len * c.kv_dim()
}

fn kv_write(c: &Config, l: u32) -> Vec<u8> {
    let (dim, kv) = (c.dim, c.kv_dim());
    mm(
        dim,
        kv,
        l as usize * kv * dim,
        dim,
        (layer_cache(c, l), kv),
        MATMUL_AT_POSITION,
    )
}

/// x += Wo · att.
fn wo_block(c: &Config, l: u32) -> Vec<u8> {
    let w = l as usize * c.dim * c.dim;
    mm(c.dim, c.dim, w, c.dim, (0, c.dim), MATMUL_ACCUMULATE)
}

/// W1 (at = 0) or W3 (at = hidden) times x̂, into its half of each row of hb.
fn mlp_in_block(c: &Config, l: u32, at: usize) -> Vec<u8> {
    let w = l as usize * c.hidden_dim * c.dim;
    mm(c.dim, c.hidden_dim, w, c.dim, (at, 2 * c.hidden_dim), 0)
}

/// x += W2 · gate (the gate half of each row of hb).
fn w2_block(c: &Config, l: u32) -> Vec<u8> {
    let w = l as usize * c.dim * c.hidden_dim;
    mm(
        c.hidden_dim,
        c.dim,
        w,
        2 * c.hidden_dim,
        (0, c.dim),
        MATMUL_ACCUMULATE,
    )
}

#[rustfmt::skip]
const LAYER: [LayerOp; 12] = [
    // x̂ = RMSNorm(x)
    LayerOp { kernel: |k| &k.rmsnorm, group: |g, _| &g.rms_att, params: norm,
        groups: |_, r| [r, 1, 1], per_seq: false },
    // q = Wq·x̂
    LayerOp { kernel: |k| &k.matmul, group: |g, _| &g.wq,
        params: |c, l| mm(c.dim, c.dim, l as usize * c.dim * c.dim, c.dim, (0, c.dim), 0),
        groups: |c, r| mm_groups(c.dim, r), per_seq: false },
    // K = Wk·x̂ and V = Wv·x̂, written into the sequence's cache at each row's position
    LayerOp { kernel: |k| &k.matmul, group: |_, s| &s.wk, params: kv_write,
        groups: |c, r| mm_groups(c.kv_dim(), r), per_seq: true },
    LayerOp { kernel: |k| &k.matmul, group: |_, s| &s.wv, params: kv_write,
        groups: |c, r| mm_groups(c.kv_dim(), r), per_seq: true },
    // RoPE on q and on the new keys
    LayerOp { kernel: |k| &k.rope, group: |_, s| &s.rope,
        params: |c, l| block(RopeParams {
            q_pairs: (c.dim / 2) as u32,
            k_pairs: (c.kv_dim() / 2) as u32,
            half_head: (c.head_size() / 2) as u32,
            q_stride: c.dim as u32,
            k_offset: layer_cache(c, l) as u32,
            k_stride: c.kv_dim() as u32,
            _pad: [0; 2],
        }),
        groups: |c, r| [((c.dim + c.kv_dim()) as u32 / 2).div_ceil(WORKGROUP), r, 1],
        per_seq: true },
    // attention of each row against its sequence's cache
    LayerOp { kernel: |k| &k.attention, group: |_, s| &s.attention,
        params: |c, l| block(AttentionParams {
            n_heads: c.n_heads as u32,
            head_size: c.head_size() as u32,
            kv_dim: c.kv_dim() as u32,
            kv_mul: c.kv_mul() as u32,
            seq_len: c.seq_len as u32,
            layer_offset: layer_cache(c, l) as u32,
            q_stride: c.dim as u32,
            _pad: 0,
        }),
        groups: |c, r| [c.n_heads as u32, r, 1], per_seq: true },
    // x += Wo·att
    LayerOp { kernel: |k| &k.matmul, group: |g, _| &g.wo,
        params: wo_block,
        groups: |c, r| mm_groups(c.dim, r), per_seq: false },
    // x̂ = RMSNorm(x)
    LayerOp { kernel: |k| &k.rmsnorm, group: |g, _| &g.rms_ffn, params: norm,
        groups: |_, r| [r, 1, 1], per_seq: false },
    // gate = W1·x̂, up = W3·x̂ (side by side in hb)
    LayerOp { kernel: |k| &k.matmul, group: |g, _| &g.w1,
        params: |c, l| mlp_in_block(c, l, 0),
        groups: |c, r| mm_groups(c.hidden_dim, r), per_seq: false },
    LayerOp { kernel: |k| &k.matmul, group: |g, _| &g.w3,
        params: |c, l| mlp_in_block(c, l, c.hidden_dim),
        groups: |c, r| mm_groups(c.hidden_dim, r), per_seq: false },
    // gate = silu(gate) ⊙ up
    LayerOp { kernel: |k| &k.swiglu, group: |g, _| &g.swiglu,
        params: |c, _| block(SwigluParams { hidden: c.hidden_dim as u32, ..Default::default() }),
        groups: |c, r| [(c.hidden_dim as u32).div_ceil(WORKGROUP), r, 1], per_seq: false },
    // x += W2·gate
    LayerOp { kernel: |k| &k.matmul, group: |g, _| &g.w2,
        params: w2_block,
        groups: |c, r| mm_groups(c.dim, r), per_seq: false },
];

/// Parameter-slot indices in the shared uniform buffer: the embedding, LAYER for each
/// layer, the final norm and the classifier.
fn layer_slot(l: usize, op: usize) -> u64 {
    (1 + l * LAYER.len() + op) as u64
}

fn final_slot(c: &Config) -> u64 {
    layer_slot(c.n_layers, 0)
}

/// One submission's rows, grouped by sequence into runs (each run's rows in batch order).
struct Chunk {
    /// (index in the batch, row), grouped
    rows: Vec<(usize, Row)>,
    /// (sequence, first row, rows)
    runs: Vec<(SeqId, u32, u32)>,
}

impl Chunk {
    /// Cuts the batch into submissions of at most MAX_ROWS rows, each grouped by sequence.
    /// Within a submission every K/V is written before any attention reads it, so grouping
    /// keeps each row's view of its sequence.
    fn plan(rows: &[Row]) -> Vec<Chunk> {
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
    fn logit_rows(&self) -> Vec<u32> {
        (0..self.rows.len() as u32)
            .filter(|&i| self.rows[i as usize].1.logits)
            .collect()
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

fn buffer(
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
fn check_limits(ctx: &GpuContext, model: &Transformer) -> Result<(), GpuError> {
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
    fn upload(d: &wgpu::Device, model: &Transformer) -> Weights {
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
    fn new(d: &wgpu::Device, c: &Config) -> Activations {
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
    /// Uploads the model. Tensors larger than the device can bind are refused with a
    /// message naming the tensor, before anything is allocated.
    pub fn new(ctx: Rc<GpuContext>, model: &Transformer) -> Result<GpuBackend, GpuError> {
        check_limits(&ctx, model)?;
        let c = model.config;
        let d = &ctx.device;
        let weights = Weights::upload(d, model);
        let act = Activations::new(d, &c);
        let w = &model.weights;
        let kernels = Kernels::for_weights(d, w.precision(), group_of(&w.wq));
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
            ctx,
        };
        backend.write_params();
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

    /// Every parameter block, written once: they depend on the layer, never on the call
    /// (which rows a dispatch covers is the step block's job).
    fn write_params(&self) {
        let c = &self.config;
        let write = |slot: u64, bytes: &[u8]| {
            self.ctx
                .queue
                .write_buffer(&self.params, slot * PARAM_SLOT, bytes);
        };
        let embed = EmbedParams {
            dim: c.dim as u32,
            table_len: (c.vocab_size * c.dim) as u32,
            ..Default::default()
        };
        write(0, bytemuck::bytes_of(&embed));
        for l in 0..c.n_layers {
            for (i, op) in LAYER.iter().enumerate() {
                write(layer_slot(l, i), &(op.params)(c, l as u32));
            }
        }
        // The final norm gathers the rows that want logits (the batch table's second half);
        // the classifier then runs on rows 0.. of xb.
        let final_norm = RmsNormParams {
            dim: c.dim as u32,
            w_offset: 0,
            select_offset: MAX_ROWS as u32,
            select: 1,
            eps: c.rms_eps,
            _pad: [0; 3],
        };
        write(final_slot(c), bytemuck::bytes_of(&final_norm));
        write(
            final_slot(c) + 1,
            &mm(c.dim, c.vocab_size, 0, c.dim, (0, c.vocab_size), 0),
        );
    }

    fn new_seq(&self) -> GpuSeq {
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

    fn seq(&self, seq: SeqId) -> Result<&GpuSeq, BackendError> {
        self.seqs.get(seq)
    }

    fn check_error(&self) -> Result<(), BackendError> {
        match self.ctx.take_error() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Encodes the forward pass of a chunk (its tables already written) with logits for
    /// `logit_rows` rows. With `taps`, each layer's pass is cut after the attention (its
    /// weights copied out) and after the MLP (the residual rows copied out); without, the
    /// whole chunk is one compute pass.
    fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
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
        let begin = |e: &mut wgpu::CommandEncoder| {
            e.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("forward"),
                timestamp_writes: None,
            })
            .forget_lifetime()
        };
        let mut pass = begin(encoder);
        dispatch(
            &mut pass,
            &k.embed,
            &g.embed,
            0,
            0,
            [(c.dim as u32).div_ceil(WORKGROUP), n, 1],
        );
        for l in 0..layers.min(c.n_layers) {
            for (i, op) in LAYER.iter().enumerate() {
                let kernel = (op.kernel)(k);
                if op.per_seq {
                    for (r, &(s, rows)) in runs.iter().enumerate() {
                        let groups = (op.groups)(c, rows);
                        let bg = (op.group)(g, s);
                        dispatch(
                            &mut pass,
                            kernel,
                            bg,
                            layer_slot(l, i),
                            1 + r as u64,
                            groups,
                        );
                    }
                } else {
                    let bg = (op.group)(g, runs[0].0);
                    let groups = (op.groups)(c, n);
                    dispatch(&mut pass, kernel, bg, layer_slot(l, i), 0, groups);
                }
                if let Some(t) = taps {
                    let copy = if i == ATTENTION_OP {
                        t.attention_copy(c, l)
                    } else if i + 1 == LAYER.len() {
                        t.residual_copies(c, l)
                    } else {
                        Vec::new()
                    };
                    if !copy.is_empty() {
                        drop(pass);
                        let src = if i == ATTENTION_OP {
                            &self.act.att
                        } else {
                            &self.act.x
                        };
                        for (from, to, bytes) in copy {
                            encoder.copy_buffer_to_buffer(src, from, &t.buffer, to, bytes);
                        }
                        pass = begin(encoder);
                    }
                }
            }
        }
        if logit_rows > 0 {
            let m = logit_rows;
            dispatch(
                &mut pass,
                &k.rmsnorm,
                &g.rms_final,
                final_slot(c),
                0,
                [m, 1, 1],
            );
            let groups = mm_groups(c.vocab_size, m);
            dispatch(&mut pass, &k.matmul, &g.cls, final_slot(c) + 1, 0, groups);
        }
        Ok(())
    }

    /// Writes a chunk's tokens, batch table and step blocks.
    fn write_tables(&self, chunk: &Chunk, logit_rows: &[u32]) {
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
    async fn run_chunk(
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
        self.encode(
            &mut encoder,
            chunk,
            logit_rows.len() as u32,
            layers,
            taps.as_ref(),
        )?;
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
        if bytes == 0 {
            return self.check_error().map(|_| Vec::new());
        }
        let logits = self.read_back(&self.act.staging, bytes).await?;
        let index = logit_rows.iter().map(|&i| chunk.rows[i as usize].0);
        Ok(index
            .zip(logits.chunks(vocab).map(<[f32]>::to_vec))
            .collect())
    }

    /// Maps a read-back buffer and copies `bytes` out.
    async fn read_back(&self, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<f32>, BackendError> {
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
            bytemuck::cast_slice::<u8, f32>(&view).to_vec()
        };
        buffer.unmap();
        Ok(out)
    }

    /// Runs a checked batch chunk by chunk through the first `layers` layers (all of them but
    /// for an early-exit draft); the rows' logits come back in batch order, with `probe`
    /// also what the pass recorded. If a submission fails, every sequence is rewound to where
    /// it was (its positions are not in the cache).
    async fn forward_impl(
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

/// One dispatch: `step` picks the step block (0 = all rows, 1 + i = run i).
fn dispatch(
    pass: &mut wgpu::ComputePass,
    kernel: &Kernel,
    bg: &wgpu::BindGroup,
    slot: u64,
    step: u64,
    groups: [u32; 3],
) {
    pass.set_pipeline(&kernel.pipeline);
    let offsets = [(slot * PARAM_SLOT) as u32, (step * PARAM_SLOT) as u32];
    let dynamic = if kernel.has_step {
        &offsets[..]
    } else {
        &offsets[..1]
    };
    pass.set_bind_group(0, bg, dynamic);
    pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
}

/// The LAYER entry after which the attention scratch holds the layer's weights.
const ATTENTION_OP: usize = 5;

/// What one chunk copies out for the probe, into a read-back buffer laid out as: for each
/// layer the attention row's scratch (n_heads × seq_len: exp(score − max), the kernel keeps
/// the sum apart), then for each layer the recorded rows' residual streams (dim each).
struct Taps {
    /// The chunk's (grouped) index of the batch's last row, if it is in this chunk.
    attention_row: Option<u32>,
    /// (grouped index in the chunk, row of the record) of the recorded rows in this chunk.
    lens: Vec<(u32, usize)>,
    layers: usize,
    buffer: wgpu::Buffer,
    bytes: u64,
}

impl Taps {
    fn plan(
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

    fn att_floats(&self, c: &Config) -> usize {
        self.attention_row.map_or(0, |_| c.n_heads * c.seq_len)
    }

    /// (from, to, bytes) copying layer `l`'s attention row out of the scratch.
    fn attention_copy(&self, c: &Config, l: usize) -> Vec<(u64, u64, u64)> {
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
    fn residual_copies(&self, c: &Config, l: usize) -> Vec<(u64, u64, u64)> {
        let base = self.layers * self.att_floats(c) + l * self.lens.len() * c.dim;
        let row = (c.dim * 4) as u64;
        (self.lens.iter().enumerate())
            .map(|(j, &(g, _))| (g as u64 * row, ((base + j * c.dim) * 4) as u64, row))
            .collect()
    }

    /// Writes what came back into the record (attention still unnormalised).
    fn fill(&self, c: &Config, tapped: &[f32], r: &mut ProbeRecord) {
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
    fn forward_exit<'a>(
        &'a mut self,
        seq: SeqId,
        tokens: &[u32],
        layers: usize,
    ) -> LocalFuture<'a, Result<Vec<f32>, BackendError>> {
        match self.seq_len(seq) {
            Ok(pos0) => {
                let batch = Batch::tokens(seq, pos0, tokens, decoding_engine::Logits::Last);
                Box::pin(async move { Ok(self.forward_impl(batch, layers, None).await?.0) })
            }
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
}
