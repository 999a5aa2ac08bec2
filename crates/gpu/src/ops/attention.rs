//! Attention of each row against its sequence's cache (`attention.wgsl`, mirroring
//! `kernels::attend_head`): each query head over positions 0..=pos, GQA's shared K/V heads.

use super::run::*;
use crate::context::GpuContext;
use crate::kernel::*;
use bytemuck::{Pod, Zeroable};
use decoding_engine::Config;

/// Its bindings, in order.
pub const SLOTS: [Slot; 8] = {
    use Slot::*;
    [Read, Read, Read, ReadWrite, ReadWrite, Params, Step, Read]
};

/// Its pipeline.
pub fn kernel(device: &wgpu::Device) -> Kernel {
    Kernel::new(device, "attention", SOURCE, &SLOTS)
}

/// The kernel's WGSL.
pub const SOURCE: &str = include_str!("../shaders/attention.wgsl");

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct AttentionParams {
    pub n_heads: u32,
    pub head_size: u32,
    pub kv_dim: u32,
    pub kv_mul: u32,
    pub seq_len: u32,
    pub layer_offset: u32,
    pub q_stride: u32,
    pub _pad: u32,
}

/// Layer `l`'s block.
pub fn layer_params(c: &Config, l: u32) -> Vec<u8> {
    block(AttentionParams {
        n_heads: c.n_heads as u32,
        head_size: c.head_size() as u32,
        kv_dim: c.kv_dim() as u32,
        kv_mul: c.kv_mul() as u32,
        seq_len: c.seq_len as u32,
        layer_offset: layer_cache(c, l) as u32,
        q_stride: c.dim as u32,
        _pad: 0,
    })
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
    let kern = kernel(&ctx.device);
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
        &kern,
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
