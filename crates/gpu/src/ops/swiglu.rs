//! gate = silu(gate) ⊙ up over each row of hb (`swiglu.wgsl`, mirroring `cpu::swiglu`).

use super::run::*;
use crate::context::GpuContext;
use crate::kernel::*;
use bytemuck::{Pod, Zeroable};
use decoding_engine::Config;

/// Its bindings, in order.
pub const SLOTS: [Slot; 2] = {
    use Slot::*;
    [ReadWrite, Params]
};

/// Its pipeline.
pub fn kernel(device: &wgpu::Device) -> Kernel {
    Kernel::new(device, "swiglu", SOURCE, &SLOTS)
}

/// The kernel's WGSL.
pub const SOURCE: &str = include_str!("../shaders/swiglu.wgsl");

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SwigluParams {
    pub hidden: u32,
    pub _pad: [u32; 3],
}

/// The block (the same for every layer).
pub fn layer_params(c: &Config, _l: u32) -> Vec<u8> {
    block(SwigluParams {
        hidden: c.hidden_dim as u32,
        ..Default::default()
    })
}

/// SwiGLU on rows of (gate, up), each `hidden` wide; returns the whole buffer.
pub async fn swiglu(ctx: &GpuContext, hb: &[f32], hidden: usize) -> Result<Vec<f32>, String> {
    let k = kernel(&ctx.device);
    let t = hb.len() / (2 * hidden);
    run(
        ctx,
        &k,
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
