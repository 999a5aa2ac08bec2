//! Each kernel run on its own, on host data, for the `<op>_matches_cpu_reference` tests: the
//! same pipelines and parameter blocks as the backend, one dispatch, one read-back.

use crate::context::GpuContext;
use crate::kernels::*;
use decoding_engine::quant::Tensor;
use wgpu::util::DeviceExt;

/// A buffer the test fills and may read back.
fn buffer(ctx: &GpuContext, data: &[u8], uniform: bool) -> wgpu::Buffer {
    let usage = if uniform {
        wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST
    } else {
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST
    };
    // Empty buffers are not allowed: pad to one element.
    let mut bytes = data.to_vec();
    if bytes.is_empty() {
        bytes.resize(4, 0);
    }
    ctx.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: &bytes,
            usage,
        })
}

fn params_buffer<T: bytemuck::Pod>(ctx: &GpuContext, p: &T) -> wgpu::Buffer {
    let mut bytes = vec![0u8; PARAM_SLOT as usize];
    bytes[..std::mem::size_of::<T>()].copy_from_slice(bytemuck::bytes_of(p));
    buffer(ctx, &bytes, true)
}

/// Binds `inputs` (each a storage buffer or a uniform) to `kernel`, dispatches `groups` and
/// returns the contents of input `read` as f32.
async fn run(
    ctx: &GpuContext,
    kernel: &Kernel,
    inputs: Vec<(wgpu::Buffer, Slot)>,
    groups: (u32, u32, u32),
    read: usize,
) -> Result<Vec<f32>, String> {
    let refs: Vec<(&wgpu::Buffer, Slot)> = inputs.iter().map(|(b, s)| (b, *s)).collect();
    let bg = kernel.bind(&ctx.device, &refs);
    let dynamic: Vec<u32> = inputs
        .iter()
        .filter(|(_, s)| matches!(s, Slot::Params | Slot::Step))
        .map(|_| 0)
        .collect();
    let size = inputs[read].0.size();
    let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read-back"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&kernel.pipeline);
        pass.set_bind_group(0, &bg, &dynamic);
        pass.dispatch_workgroups(groups.0, groups.1, groups.2);
    }
    enc.copy_buffer_to_buffer(&inputs[read].0, 0, &staging, 0, size);
    ctx.queue.submit([enc.finish()]);
    let slice = staging.slice(..);
    let (tx, rx) = futures_channel::oneshot::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    #[cfg(not(target_arch = "wasm32"))]
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| e.to_string())?;
    rx.await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    if let Some(e) = ctx.take_error() {
        return Err(e.to_string());
    }
    let view = slice.get_mapped_range().map_err(|e| e.to_string())?;
    let out = bytemuck::cast_slice::<u8, f32>(&view).to_vec();
    Ok(out)
}

fn f32s(v: &[f32]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// The step block for all `n` rows (one slot).
fn step(ctx: &GpuContext, n: u32) -> wgpu::Buffer {
    params_buffer(
        ctx,
        &StepParams {
            row0: 0,
            n_rows: n,
            _pad: [0; 2],
        },
    )
}

/// The batch table of `n` rows of one sequence at positions `pos0..`.
fn positions(ctx: &GpuContext, pos0: u32, n: u32) -> wgpu::Buffer {
    let table: Vec<u32> = (pos0..pos0 + n).collect();
    buffer(ctx, bytemuck::cast_slice(&table), false)
}

/// x[t] = emb[tokens[t]], the table float32 or quantized (dequantized row by row).
pub async fn embed(
    ctx: &GpuContext,
    emb: &Tensor,
    tokens: &[u32],
    dim: usize,
) -> Result<Vec<f32>, String> {
    let k = Kernels::for_weights(&ctx.device, emb.precision(), group_of(emb));
    let out = vec![0.0f32; tokens.len() * dim];
    run(
        ctx,
        &k.embed,
        vec![
            (buffer(ctx, &packed(emb), false), Slot::Read),
            (buffer(ctx, bytemuck::cast_slice(tokens), false), Slot::Read),
            (buffer(ctx, f32s(&out), false), Slot::ReadWrite),
            (
                params_buffer(
                    ctx,
                    &EmbedParams {
                        dim: dim as u32,
                        table_len: emb.len() as u32,
                        _pad: [0; 2],
                    },
                ),
                Slot::Params,
            ),
        ],
        ((dim as u32).div_ceil(WORKGROUP), tokens.len() as u32, 1),
        2,
    )
    .await
}

/// RMSNorm of each row of x (rows × dim).
pub async fn rmsnorm(ctx: &GpuContext, x: &[f32], w: &[f32], eps: f32) -> Result<Vec<f32>, String> {
    let k = Kernels::new(&ctx.device);
    let dim = w.len();
    let rows = x.len() / dim;
    run(
        ctx,
        &k.rmsnorm,
        vec![
            (buffer(ctx, f32s(x), false), Slot::Read),
            (buffer(ctx, f32s(w), false), Slot::Read),
            (
                buffer(ctx, f32s(&vec![0.0; x.len()]), false),
                Slot::ReadWrite,
            ),
            (
                params_buffer(
                    ctx,
                    &RmsNormParams {
                        dim: dim as u32,
                        eps,
                        ..Default::default()
                    },
                ),
                Slot::Params,
            ),
            (positions(ctx, 0, rows as u32), Slot::Read),
        ],
        (rows as u32, 1, 1),
        2,
    )
    .await
}

/// out (tokens × rows) = x (tokens × n) · Wᵀ, W (rows × n) matrix `block` of the `blocks`
/// in `w` (float32 or quantized, packed as the backend packs it); added to `acc` when given.
pub async fn matmul(
    ctx: &GpuContext,
    w: &Tensor,
    (blocks, block): (usize, usize),
    x: &[f32],
    n: usize,
    acc: Option<&[f32]>,
) -> Result<Vec<f32>, String> {
    let k = Kernels::for_weights(&ctx.device, w.precision(), group_of(w));
    let rows = w.len() / blocks / n;
    let t = x.len() / n;
    let init = acc
        .map(<[f32]>::to_vec)
        .unwrap_or_else(|| vec![0.0; t * rows]);
    let p = MatmulParams {
        n: n as u32,
        rows: rows as u32,
        w_offset: (block * rows * n) as u32,
        x_offset: 0,
        x_stride: n as u32,
        out_offset: 0,
        out_stride: rows as u32,
        flags: if acc.is_some() { MATMUL_ACCUMULATE } else { 0 },
    };
    let (gx, gy) = row_groups(rows as u32);
    run(
        ctx,
        &k.matmul,
        vec![
            (buffer(ctx, &packed(w), false), Slot::Read),
            (buffer(ctx, f32s(x), false), Slot::Read),
            (buffer(ctx, f32s(&init), false), Slot::ReadWrite),
            (params_buffer(ctx, &p), Slot::Params),
            (step(ctx, t as u32), Slot::Step),
            (positions(ctx, 0, t as u32), Slot::Read),
        ],
        (gx, gy, t as u32),
        2,
    )
    .await
}

/// RoPE on q (tokens × q_dim) and on the keys at positions pos0.. of a one-layer cache
/// (positions × k_dim); `table` is the CPU's cos/sin, interleaved. Returns (q, k).
#[allow(clippy::too_many_arguments)]
pub async fn rope(
    ctx: &GpuContext,
    q: &[f32],
    k_cache: &[f32],
    table: &[f32],
    q_dim: usize,
    k_dim: usize,
    head_size: usize,
    pos0: usize,
) -> Result<(Vec<f32>, Vec<f32>), String> {
    let kern = Kernels::new(&ctx.device);
    let t = q.len() / q_dim;
    let p = RopeParams {
        q_pairs: (q_dim / 2) as u32,
        k_pairs: (k_dim / 2) as u32,
        half_head: (head_size / 2) as u32,
        q_stride: q_dim as u32,
        k_offset: 0,
        k_stride: k_dim as u32,
        _pad: [0; 2],
    };
    let groups = (((q_dim + k_dim) / 2) as u32).div_ceil(WORKGROUP);
    let make = |ctx: &GpuContext| {
        vec![
            (buffer(ctx, f32s(q), false), Slot::ReadWrite),
            (buffer(ctx, f32s(k_cache), false), Slot::ReadWrite),
            (buffer(ctx, f32s(table), false), Slot::Read),
            (params_buffer(ctx, &p), Slot::Params),
            (step(ctx, t as u32), Slot::Step),
            (positions(ctx, pos0 as u32, t as u32), Slot::Read),
        ]
    };
    let q_out = run(ctx, &kern.rope, make(ctx), (groups, t as u32, 1), 0).await?;
    let k_out = run(ctx, &kern.rope, make(ctx), (groups, t as u32, 1), 1).await?;
    Ok((q_out, k_out))
}

/// Attention of `tokens` queries (tokens × n_heads·head_size) at positions pos0.. against a
/// one-layer cache (positions × kv_dim).
#[allow(clippy::too_many_arguments)]
pub async fn attention(
    ctx: &GpuContext,
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    n_heads: usize,
    n_kv_heads: usize,
    head_size: usize,
    seq_len: usize,
    pos0: usize,
) -> Result<Vec<f32>, String> {
    let kern = Kernels::new(&ctx.device);
    let dim = n_heads * head_size;
    let t = q.len() / dim;
    let p = AttentionParams {
        n_heads: n_heads as u32,
        head_size: head_size as u32,
        kv_dim: (n_kv_heads * head_size) as u32,
        kv_mul: (n_heads / n_kv_heads) as u32,
        seq_len: seq_len as u32,
        layer_offset: 0,
        q_stride: dim as u32,
        _pad: 0,
    };
    run(
        ctx,
        &kern.attention,
        vec![
            (buffer(ctx, f32s(q), false), Slot::Read),
            (buffer(ctx, f32s(keys), false), Slot::Read),
            (buffer(ctx, f32s(values), false), Slot::Read),
            (
                buffer(ctx, f32s(&vec![0.0; t * n_heads * seq_len]), false),
                Slot::ReadWrite,
            ),
            (
                buffer(ctx, f32s(&vec![0.0; q.len()]), false),
                Slot::ReadWrite,
            ),
            (params_buffer(ctx, &p), Slot::Params),
            (step(ctx, t as u32), Slot::Step),
            (positions(ctx, pos0 as u32, t as u32), Slot::Read),
        ],
        (n_heads as u32, t as u32, 1),
        4,
    )
    .await
}

/// SwiGLU on rows of (gate, up), each `hidden` wide; returns the whole buffer.
pub async fn swiglu(ctx: &GpuContext, hb: &[f32], hidden: usize) -> Result<Vec<f32>, String> {
    let k = Kernels::new(&ctx.device);
    let t = hb.len() / (2 * hidden);
    run(
        ctx,
        &k.swiglu,
        vec![
            (buffer(ctx, f32s(hb), false), Slot::ReadWrite),
            (
                params_buffer(
                    ctx,
                    &SwigluParams {
                        hidden: hidden as u32,
                        _pad: [0; 3],
                    },
                ),
                Slot::Params,
            ),
        ],
        ((hidden as u32).div_ceil(WORKGROUP), t as u32, 1),
        0,
    )
    .await
}
