//! A layer's attention input in one kernel (`qkv.wgsl`): RMSNorm folded into the product
//! with the packed [Wq; Wk; Wv] (`kernel::packed_parts`), RoPE on q and k in its epilogue,
//! k and v written into the sequence's cache at each row's position. Its CPU twin is
//! `kernels::rmsnorm`, `kernels::matmul` for each matrix, then `kernels::rope`.

use super::run::*;
use crate::context::GpuContext;
use crate::kernel::*;
use bytemuck::{Pod, Zeroable};
use decoding_engine::quant::Tensor;
use decoding_engine::Config;

/// Its bindings, in order.
pub const SLOTS: [Slot; 10] = {
    use Slot::*;
    [
        Read, Read, ReadWrite, ReadWrite, ReadWrite, Params, Step, Read, Read, Read,
    ]
};

/// Its pipeline as `build` says (`kernel::FusedBuild`).
pub fn kernel(device: &wgpu::Device, build: FusedBuild) -> Kernel {
    build.kernel(device, "qkv", SOURCE, &SLOTS)
}

/// The kernel's WGSL.
pub const SOURCE: &str = include_str!("../shaders/qkv.wgsl");

/// See `qkv.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct QkvParams {
    pub n: u32,
    pub q_rows: u32,
    pub kv_rows: u32,
    pub half_head: u32,
    pub block: u32,
    pub block_len: u32,
    pub k_at: u32,
    pub v_at: u32,
    pub cache_offset: u32,
    pub g_offset: u32,
    pub eps: f32,
    /// Where layer l's [bq; bk; bv] starts in the RoPE table's buffer: after the table
    /// (seq_len · head_size floats), l · (dim + 2·kv_dim) on.
    pub bias_at: u32,
}

/// Layer `l`'s block: Wq, Wk, Wv where `packed` put them; the new keys and values at each
/// row's position in the layer's part of the cache.
pub fn layer_params(c: &Config, packed: &PartsLayout, l: u32) -> Vec<u8> {
    block(QkvParams {
        n: c.dim as u32,
        q_rows: c.dim as u32,
        kv_rows: c.kv_dim() as u32,
        half_head: (c.head_size() / 2) as u32,
        block: packed.locate(l as usize).1 as u32,
        block_len: packed.block_len as u32,
        k_at: packed.at[1] as u32,
        v_at: packed.at[2] as u32,
        cache_offset: layer_cache(c, l) as u32,
        g_offset: l * c.dim as u32,
        eps: c.rms_eps,
        bias_at: (c.seq_len * c.head_size() + l as usize * (c.dim + 2 * c.kv_dim())) as u32,
    })
}

/// Workgroups over `rows` batch rows: one per pair of output rows and tile of batch rows.
pub fn groups(c: &Config, rows: u32) -> [u32; 3] {
    [
        ((c.dim + 2 * c.kv_dim()) / 2) as u32,
        1,
        rows.div_ceil(TILE_BATCH),
    ]
}

/// One layer's shapes for the test run: the model's width, K/V width, head size and ε, and
/// the first row's position.
#[derive(Debug, Clone, Copy)]
pub struct QkvShape {
    pub dim: usize,
    pub kv_dim: usize,
    pub head_size: usize,
    pub eps: f32,
    pub pos0: usize,
}

/// x (tokens × dim) at positions `shape.pos0`.. through one layer's [Wq; Wk; Wv] (`w`, one block
/// each) with norm weights `gamma`, RoPE from `table` (the CPU's cos/sin, interleaved) and
/// one layer's caches `cache` (positions × kv_dim each), no biases (the model's, Qwen2's,
/// are checked through the whole forward pass). Returns q and the two caches.
pub async fn qkv(
    ctx: &GpuContext,
    w: [&Tensor; 3],
    x: &[f32],
    gamma: &[f32],
    table: &[f32],
    shape: QkvShape,
    cache: (&[f32], &[f32]),
) -> Result<(Vec<f32>, Vec<f32>, Vec<f32>), String> {
    let packed = packed_parts(&w, 1, 0..1)?;
    let precision = w[0].precision();
    let t = x.len() / shape.dim;
    let g = group_of(w[0]);
    let v4 = vec4_loads(precision, g, shape.dim);
    let kern = kernel(&ctx.device, FusedBuild::new(precision, g, t as u32, v4));
    let QkvShape {
        dim,
        kv_dim,
        head_size,
        eps,
        pos0,
    } = shape;
    let p = QkvParams {
        n: dim as u32,
        q_rows: dim as u32,
        kv_rows: kv_dim as u32,
        half_head: (head_size / 2) as u32,
        block: 0,
        block_len: packed.layout.block_len as u32,
        k_at: packed.layout.at[1] as u32,
        v_at: packed.layout.at[2] as u32,
        cache_offset: 0,
        g_offset: 0,
        eps,
        bias_at: table.len() as u32,
    };
    let mut rope_and_bias = table.to_vec();
    rope_and_bias.resize(table.len() + dim + 2 * kv_dim, 0.0);
    let make = |ctx: &GpuContext| {
        vec![
            (buffer(ctx, &packed.bytes, false), Slot::Read),
            (buffer(ctx, f32s(x), false), Slot::Read),
            (
                buffer(ctx, f32s(&vec![0.0; t * dim]), false),
                Slot::ReadWrite,
            ),
            (buffer(ctx, f32s(cache.0), false), Slot::ReadWrite),
            (buffer(ctx, f32s(cache.1), false), Slot::ReadWrite),
            (params_buffer(ctx, &p), Slot::Params),
            (step(ctx, t as u32), Slot::Step),
            (positions(ctx, pos0 as u32, t as u32), Slot::Read),
            (buffer(ctx, f32s(gamma), false), Slot::Read),
            (buffer(ctx, f32s(&rope_and_bias), false), Slot::Read),
        ]
    };
    let groups = (
        ((dim + 2 * kv_dim) / 2) as u32,
        1,
        (t as u32).div_ceil(TILE_BATCH),
    );
    let q = run(ctx, &kern, make(ctx), groups, 2).await?;
    let k = run(ctx, &kern, make(ctx), groups, 3).await?;
    let v = run(ctx, &kern, make(ctx), groups, 4).await?;
    Ok((q, k, v))
}
