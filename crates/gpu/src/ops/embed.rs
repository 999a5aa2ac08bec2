//! x[t] = emb[tokens[t]]: the token embedding of each row (`embed.wgsl`), the table
//! float32 or quantized, as `Transformer::forward` embeds.

use super::run::*;
use crate::context::GpuContext;
use crate::kernel::*;
use bytemuck::{Pod, Zeroable};
use decoding_engine::quant::Precision;
use decoding_engine::quant::Tensor;
use decoding_engine::Config;

/// Its bindings, in order.
pub const SLOTS: [Slot; 4] = {
    use Slot::*;
    [Read, Read, ReadWrite, Params]
};

/// Its pipeline for weights of `precision` (Q8 groups of `group`): the matrix is read through
/// that format's `weight` (`kernel::weight_reader`).
pub fn kernel(device: &wgpu::Device, precision: Precision, group: u32) -> Kernel {
    let source = format!("{}\n{}", weight_reader(precision, group, false), SOURCE);
    Kernel::new(device, "embed", &source, &SLOTS)
}

/// The kernel's WGSL.
pub const SOURCE: &str = include_str!("../shaders/embed.wgsl");

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct EmbedParams {
    pub dim: u32,
    /// vocab_size · dim: the table is one block of the weights' format
    pub table_len: u32,
    pub _pad: [u32; 2],
}

/// The embedding's block: the table is one block of the weights' format.
pub fn params(c: &Config) -> Vec<u8> {
    block(EmbedParams {
        dim: c.dim as u32,
        table_len: (c.vocab_size * c.dim) as u32,
        ..Default::default()
    })
}

/// x[t] = emb[tokens[t]], the table float32 or quantized (dequantized row by row).
pub async fn embed(
    ctx: &GpuContext,
    emb: &Tensor,
    tokens: &[u32],
    dim: usize,
) -> Result<Vec<f32>, String> {
    let k = kernel(&ctx.device, emb.precision(), group_of(emb));
    let out = vec![0.0f32; tokens.len() * dim];
    run(
        ctx,
        &k,
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
