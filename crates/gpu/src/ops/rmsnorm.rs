//! RMSNorm of each row (`rmsnorm.wgsl`, mirroring `kernels::rmsnorm`): before attention, before
//! the MLP, and the final norm over the rows that want logits.

use super::run::*;
use crate::context::GpuContext;
use crate::kernel::*;
use bytemuck::{Pod, Zeroable};
use decoding_engine::Config;

/// Its bindings, in order.
pub const SLOTS: [Slot; 5] = {
    use Slot::*;
    [Read, Read, ReadWrite, Params, Read]
};

/// Its pipeline.
pub fn kernel(device: &wgpu::Device) -> Kernel {
    Kernel::new(device, "rmsnorm", SOURCE, &SLOTS)
}

/// The kernel's WGSL.
pub const SOURCE: &str = include_str!("../shaders/rmsnorm.wgsl");

/// `select` ≠ 0: output row i normalises input row `table[select_offset + i]`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct RmsNormParams {
    pub dim: u32,
    pub w_offset: u32,
    pub select_offset: u32,
    pub select: u32,
    /// The model's ε (`Config::rms_eps`).
    pub eps: f32,
    pub _pad: [u32; 3],
}

pub fn layer_params(c: &Config, l: u32) -> Vec<u8> {
    block(RmsNormParams {
        dim: c.dim as u32,
        w_offset: l * c.dim as u32,
        eps: c.rms_eps,
        ..Default::default()
    })
}

/// The final norm: it gathers the rows that want logits (the batch table's second half);
/// the classifier then runs on rows 0.. of xb.
pub fn final_params(c: &Config) -> Vec<u8> {
    block(RmsNormParams {
        dim: c.dim as u32,
        w_offset: 0,
        select_offset: MAX_ROWS as u32,
        select: 1,
        eps: c.rms_eps,
        _pad: [0; 3],
    })
}

/// RMSNorm of each row of x (rows × dim).
pub async fn rmsnorm(ctx: &GpuContext, x: &[f32], w: &[f32], eps: f32) -> Result<Vec<f32>, String> {
    let k = kernel(&ctx.device);
    let dim = w.len();
    let rows = x.len() / dim;
    run(
        ctx,
        &k,
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
