//! The matrix product (`matmul.wgsl`, mirroring `kernels::matmul`): Wo and W2 added into the
//! residual, the classifier. (Q, K, V and W1, W3 have their fused kernels: `qkv`, `mlp_in`.)

use super::run::*;
use crate::context::GpuContext;
use crate::kernel::*;
use bytemuck::{Pod, Zeroable};
use decoding_engine::quant::Precision;
use decoding_engine::quant::Tensor;
use decoding_engine::Config;

/// Its bindings, in order.
pub const SLOTS: [Slot; 5] = {
    use Slot::*;
    [Read, Read, ReadWrite, Params, Step]
};

/// Its pipeline for weights of `precision` (Q8 groups of `group`): the matrix is read through
/// that format's `weight` (`kernel::weight_reader`), four a load with `vec4`.
pub fn kernel(device: &wgpu::Device, precision: Precision, group: u32, vec4: bool) -> Kernel {
    let source = format!(
        "{}\n{}",
        weight_reader(precision, group, vec4),
        &format!("{}{}", constants_wgsl(), SOURCE)
    );
    Kernel::new(device, "matmul", &source, &SLOTS)
}

/// The kernel's WGSL.
pub const SOURCE: &str = include_str!("../shaders/matmul.wgsl");

/// `out[output row of batch row r] (=|+=) W[row] · x[r]`; see `matmul.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct MatmulParams {
    pub n: u32,
    pub rows: u32,
    pub w_offset: u32,
    pub x_offset: u32,
    pub x_stride: u32,
    pub out_offset: u32,
    pub out_stride: u32,
    pub flags: u32,
}

pub const MATMUL_ACCUMULATE: u32 = 1;

/// Weight rows a workgroup computes together (with `TILE_BATCH` batch rows): each input is
/// read once for TILE_ROWS weight rows. 4 × 8 sums a thread, 8 KiB of workgroup memory.
pub const TILE_ROWS: u32 = 4;

/// The flag and the tile as WGSL constants, put before the kernel: the shader names them,
/// the numbers are these.
pub fn constants_wgsl() -> String {
    format!(
        "const ACCUMULATE: u32 = {MATMUL_ACCUMULATE}u;\nconst TILE_ROWS: u32 = {TILE_ROWS}u;\nconst TILE_BATCH: u32 = {TILE_BATCH}u;\n"
    )
}

/// A matmul block: W (rows, n) at `w_offset` times x rows `x_stride` apart, into out rows
/// `out_stride` apart from `out_offset`.
pub fn mm(
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

/// Workgroups of a matmul with `out_rows` weight rows over `rows` batch rows: one per tile.
pub fn mm_groups(out_rows: usize, rows: u32) -> [u32; 3] {
    let (x, y) = row_groups((out_rows as u32).div_ceil(TILE_ROWS));
    [x, y, rows.div_ceil(TILE_BATCH)]
}

/// x += Wo · att.
pub fn wo_block(c: &Config, l: u32) -> Vec<u8> {
    let w = l as usize * c.dim * c.dim;
    mm(c.dim, c.dim, w, c.dim, (0, c.dim), MATMUL_ACCUMULATE)
}

/// x += W2 · gate (the gate half of each row of hb).
pub fn w2_block(c: &Config, l: u32) -> Vec<u8> {
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

/// The classifier over rows 0.. of xb.
pub fn classifier_block(c: &Config) -> Vec<u8> {
    mm(c.dim, c.vocab_size, 0, c.dim, (0, c.vocab_size), 0)
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
    let (p, g) = (w.precision(), group_of(w));
    let k = kernel(&ctx.device, p, g, vec4_loads(p, g, n));
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
    let [gx, gy, gz] = mm_groups(rows, t as u32);
    run(
        ctx,
        &k,
        vec![
            (buffer(ctx, &packed(w), false), Slot::Read),
            (buffer(ctx, f32s(x), false), Slot::Read),
            (buffer(ctx, f32s(&init), false), Slot::ReadWrite),
            (params_buffer(ctx, &p), Slot::Params),
            (step(ctx, t as u32), Slot::Step),
        ],
        (gx, gy, gz),
        2,
    )
    .await
}
