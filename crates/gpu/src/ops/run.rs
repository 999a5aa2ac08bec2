//! What the single-kernel runs of `ops/` share: buffers from host data, one dispatch, one
//! read-back; the parameter-block helpers the layer's blocks are written with.

use crate::context::GpuContext;
use crate::kernel::*;
use decoding_engine::Config;
use wgpu::util::DeviceExt;

pub(crate) fn block<T: bytemuck::Pod>(p: T) -> Vec<u8> {
    bytemuck::bytes_of(&p).to_vec()
}

/// Where layer `l` starts in a sequence's K or V cache (floats).
pub(crate) fn layer_cache(c: &Config, l: u32) -> usize {
    l as usize * c.seq_len * c.kv_dim()
}

/// A buffer the test fills and may read back.
pub(crate) fn buffer(ctx: &GpuContext, data: &[u8], uniform: bool) -> wgpu::Buffer {
    let usage = if uniform {
        wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST
    } else {
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST
    };
    // Empty buffers are not allowed: pad to one element.
    let mut bytes = data.to_vec();
    if bytes.is_empty() {
        bytes.resize(4, 0);
    }
    ctx.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: &bytes,
            usage,
        })
}

pub(crate) fn params_buffer<T: bytemuck::Pod>(ctx: &GpuContext, p: &T) -> wgpu::Buffer {
    let mut bytes = vec![0u8; PARAM_SLOT as usize];
    bytes[..std::mem::size_of::<T>()].copy_from_slice(bytemuck::bytes_of(p));
    buffer(ctx, &bytes, true)
}

/// Binds `inputs` (each a storage buffer or a uniform) to `kernel`, dispatches `groups` and
/// returns the contents of input `read` as f32.
pub(crate) async fn run(
    ctx: &GpuContext,
    kernel: &Kernel,
    inputs: Vec<(wgpu::Buffer, Slot)>,
    groups: (u32, u32, u32),
    read: usize,
) -> Result<Vec<f32>, String> {
    let refs: Vec<(&wgpu::Buffer, Slot)> = inputs.iter().map(|(b, s)| (b, *s)).collect();
    let bg = kernel.bind(&ctx.device, &refs);
    let dynamic: Vec<u32> = inputs
        .iter()
        .filter(|(_, s)| matches!(s, Slot::Params | Slot::Step))
        .map(|_| 0)
        .collect();
    let size = inputs[read].0.size();
    let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read-back"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&kernel.pipeline);
        pass.set_bind_group(0, &bg, &dynamic);
        pass.dispatch_workgroups(groups.0, groups.1, groups.2);
    }
    enc.copy_buffer_to_buffer(&inputs[read].0, 0, &staging, 0, size);
    ctx.queue.submit([enc.finish()]);
    let slice = staging.slice(..);
    let (tx, rx) = futures_channel::oneshot::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    #[cfg(not(target_arch = "wasm32"))]
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| e.to_string())?;
    rx.await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    if let Some(e) = ctx.take_error() {
        return Err(e.to_string());
    }
    let view = slice.get_mapped_range().map_err(|e| e.to_string())?;
    let out = bytemuck::cast_slice::<u8, f32>(&view).to_vec();
    Ok(out)
}

pub(crate) fn f32s(v: &[f32]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// The step block for all `n` rows (one slot).
pub(crate) fn step(ctx: &GpuContext, n: u32) -> wgpu::Buffer {
    params_buffer(
        ctx,
        &StepParams {
            row0: 0,
            n_rows: n,
            _pad: [0; 2],
        },
    )
}

/// The batch table of `n` rows of one sequence at positions `pos0..`.
pub(crate) fn positions(ctx: &GpuContext, pos0: u32, n: u32) -> wgpu::Buffer {
    let table: Vec<u32> = (pos0..pos0 + n).collect();
    buffer(ctx, bytemuck::cast_slice(&table), false)
}

/// Bytes of the WGSL struct `name` in `source` as a uniform block: four bytes a scalar field
/// (they are all u32 or f32), rounded up to 16 (uniform blocks are 16-byte aligned). The
/// ops' test holds each op's Rust parameter block to it.
#[cfg(test)]
pub(crate) fn wgsl_struct_bytes(source: &str, name: &str) -> usize {
    let start = source
        .find(&format!("struct {name} {{"))
        .unwrap_or_else(|| panic!("no struct {name}"));
    let body = &source[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    let fields = body.split([',', '\n']).filter(|f| f.contains(':')).count();
    (fields * 4).div_ceil(16) * 16
}
