//! The pipelines of a model's forward pass, one per kernel (`ops/`), made once per device
//! for the model's precision.

use crate::kernel::{vec4_loads, FusedBuild, Kernel, TILE_BATCH};
use crate::ops::{attention, embed, matmul, mlp_in, qkv, rmsnorm};
use decoding_engine::quant::Precision;
use decoding_engine::Config;

/// Every kernel of the forward pass.
pub struct Kernels {
    pub embed: Kernel,
    pub rmsnorm: Kernel,
    pub matmul: Kernel,
    /// Q/K/V in tiles of batch rows, and for one row (decode): `kernel::fused_tile`.
    pub qkv: Kernel,
    pub qkv_row: Kernel,
    pub attention: Kernel,
    /// The MLP's input likewise.
    pub mlp_in: Kernel,
    pub mlp_in_row: Kernel,
}

impl Kernels {
    /// The kernels for a model whose matrices are `precision` (Q8 with groups of `group`):
    /// every kernel that reads a matrix reads it through that format's `weight`.
    /// Whether a kernel reads four weights a load is decided here for the model's shape
    /// (`kernel::vec4_loads`): the fused kernels' rows are `dim` long; the matmul's `dim`
    /// (Wo, the classifier) or `hidden_dim` (W2), and it checks each dispatch's n itself.
    pub fn for_weights(
        device: &wgpu::Device,
        precision: Precision,
        group: u32,
        c: &Config,
    ) -> Kernels {
        let v4 = |n| vec4_loads(precision, group, n);
        let (fused, mm) = (v4(c.dim), v4(c.dim) || v4(c.hidden_dim));
        let build = |rows| FusedBuild::new(precision, group, rows, fused);
        Kernels {
            embed: embed::kernel(device, precision, group),
            rmsnorm: rmsnorm::kernel(device),
            matmul: matmul::kernel(device, precision, group, mm),
            qkv: qkv::kernel(device, build(TILE_BATCH)),
            qkv_row: qkv::kernel(device, build(1)),
            attention: attention::kernel(device),
            mlp_in: mlp_in::kernel(device, build(TILE_BATCH)),
            mlp_in_row: mlp_in::kernel(device, build(1)),
        }
    }
}
