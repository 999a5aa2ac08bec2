//! RoPE on the queries and the new keys (`rope.wgsl`, mirroring `cpu::rope`), the keys in
//! place in the sequence's cache.

use super::run::*;
use crate::context::GpuContext;
use crate::kernel::*;
use bytemuck::{Pod, Zeroable};
use decoding_engine::Config;

/// Its bindings, in order.
pub const SLOTS: [Slot; 6] = {
    use Slot::*;
    [ReadWrite, ReadWrite, Read, Params, Step, Read]
};

/// Its pipeline.
pub fn kernel(device: &wgpu::Device) -> Kernel {
    Kernel::new(device, "rope", SOURCE, &SLOTS)
}

/// The kernel's WGSL.
pub const SOURCE: &str = include_str!("../shaders/rope.wgsl");

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct RopeParams {
    pub q_pairs: u32,
    pub k_pairs: u32,
    pub half_head: u32,
    pub q_stride: u32,
    pub k_offset: u32,
    pub k_stride: u32,
    pub _pad: [u32; 2],
}

/// Layer `l`'s block: q of every row, the new keys at their positions in the layer's cache.
pub fn layer_params(c: &Config, l: u32) -> Vec<u8> {
    block(RopeParams {
        q_pairs: (c.dim / 2) as u32,
        k_pairs: (c.kv_dim() / 2) as u32,
        half_head: (c.head_size() / 2) as u32,
        q_stride: c.dim as u32,
        k_offset: layer_cache(c, l) as u32,
        k_stride: c.kv_dim() as u32,
        _pad: [0; 2],
    })
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
    let kern = kernel(&ctx.device);
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
    let q_out = run(ctx, &kern, make(ctx), (groups, t as u32, 1), 0).await?;
    let k_out = run(ctx, &kern, make(ctx), (groups, t as u32, 1), 1).await?;
    Ok((q_out, k_out))
}
