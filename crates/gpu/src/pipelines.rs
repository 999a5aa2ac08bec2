//! The pipelines of a model's forward pass, one per kernel (`ops/`), made once per device
//! for the model's precision.

use crate::kernel::{Kernel, TILE_BATCH};
use crate::ops::{attention, embed, matmul, mlp_in, qkv, rmsnorm};
use decoding_engine::quant::Precision;

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
    /// The kernels for a float32 model.
    pub fn new(device: &wgpu::Device) -> Kernels {
        Kernels::for_weights(device, Precision::F32, 0)
    }

    /// The kernels for a model whose matrices are `precision` (Q8 with groups of `group`):
    /// every kernel that reads a matrix reads it through that format's `weight`.
    pub fn for_weights(device: &wgpu::Device, precision: Precision, group: u32) -> Kernels {
        Kernels {
            embed: embed::kernel(device, precision, group),
            rmsnorm: rmsnorm::kernel(device),
            matmul: matmul::kernel(device, precision, group),
            qkv: qkv::kernel(device, precision, group, TILE_BATCH),
            qkv_row: qkv::kernel(device, precision, group, 1),
            attention: attention::kernel(device),
            mlp_in: mlp_in::kernel(device, precision, group, TILE_BATCH),
            mlp_in_row: mlp_in::kernel(device, precision, group, 1),
        }
    }
}
