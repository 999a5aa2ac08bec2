//! A layer's MLP input in one kernel (`mlp_in.wgsl`): RMSNorm folded into the product with
//! the packed [W1; W3] (`kernel::packed_parts`), SwiGLU in its epilogue. Its CPU twin is
//! `kernels::rmsnorm`, `kernels::matmul` for W1 and W3, then `kernels::swiglu`.

use super::run::*;
use crate::context::GpuContext;
use crate::kernel::*;
use bytemuck::{Pod, Zeroable};
use decoding_engine::quant::Tensor;
use decoding_engine::Config;

/// Its bindings, in order.
pub const SLOTS: [Slot; 6] = {
    use Slot::*;
    [Read, Read, ReadWrite, Params, Step, Read]
};

/// Its pipeline as `build` says (`kernel::FusedBuild`).
pub fn kernel(device: &wgpu::Device, build: FusedBuild) -> Kernel {
    build.kernel(device, "mlp_in", SOURCE, &SLOTS)
}

/// The kernel's WGSL.
pub const SOURCE: &str = include_str!("../shaders/mlp_in.wgsl");

/// See `mlp_in.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct MlpInParams {
    pub n: u32,
    pub hidden: u32,
    pub block: u32,
    pub block_len: u32,
    pub up_at: u32,
    pub out_stride: u32,
    pub g_offset: u32,
    pub eps: f32,
}

/// Layer `l`'s block: W1 and W3 where `packed` put them, into the gate half of hb's rows.
pub fn layer_params(c: &Config, packed: &PartsLayout, l: u32) -> Vec<u8> {
    block(MlpInParams {
        n: c.dim as u32,
        hidden: c.hidden_dim as u32,
        block: packed.locate(l as usize).1 as u32,
        block_len: packed.block_len as u32,
        up_at: packed.at[1] as u32,
        out_stride: 2 * c.hidden_dim as u32,
        g_offset: l * c.dim as u32,
        eps: c.rms_eps,
    })
}

/// Workgroups over `rows` batch rows: one per output and tile of batch rows.
pub fn groups(c: &Config, rows: u32) -> [u32; 3] {
    let (x, y) = row_groups(c.hidden_dim as u32);
    [x, y, rows.div_ceil(TILE_BATCH)]
}

/// silu(W1·x̂) ⊙ (W3·x̂) of each row of x (tokens × n), x̂ = RMSNorm(x) with `gamma` and
/// `eps`, W1 and W3 one block each (hidden × n); returns tokens × hidden.
pub async fn mlp_in(
    ctx: &GpuContext,
    w: [&Tensor; 2],
    x: &[f32],
    gamma: &[f32],
    eps: f32,
) -> Result<Vec<f32>, String> {
    let n = gamma.len();
    let hidden = w[0].len() / n;
    let t = x.len() / n;
    let packed = packed_parts(&w, 1, 0..1)?;
    let (p, g) = (w[0].precision(), group_of(w[0]));
    let kern = kernel(
        &ctx.device,
        FusedBuild::new(p, g, t as u32, vec4_loads(p, g, n)),
    );
    let p = MlpInParams {
        n: n as u32,
        hidden: hidden as u32,
        block: 0,
        block_len: packed.layout.block_len as u32,
        up_at: packed.layout.at[1] as u32,
        out_stride: hidden as u32,
        g_offset: 0,
        eps,
    };
    let (gx, gy) = row_groups(hidden as u32);
    run(
        ctx,
        &kern,
        vec![
            (buffer(ctx, &packed.bytes, false), Slot::Read),
            (buffer(ctx, f32s(x), false), Slot::Read),
            (
                buffer(ctx, f32s(&vec![0.0; t * hidden]), false),
                Slot::ReadWrite,
            ),
            (params_buffer(ctx, &p), Slot::Params),
            (step(ctx, t as u32), Slot::Step),
            (buffer(ctx, f32s(gamma), false), Slot::Read),
        ],
        (gx, gy, (t as u32).div_ceil(TILE_BATCH)),
        2,
    )
    .await
}
