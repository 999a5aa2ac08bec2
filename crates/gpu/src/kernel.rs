//! What every WGSL kernel shares: a compute pipeline with its bind-group layout (`Kernel`,
//! made from a source and its bindings' kinds), the workgroup size, the step block (which
//! rows a dispatch covers), the weights' readers and packing. Each kernel is `ops/<op>.rs`;
//! `pipelines.rs` makes all of a model's once per device.

use bytemuck::{Pod, Zeroable};
use decoding_engine::quant::{Precision, Tensor};
/// Threads per workgroup in every kernel.
pub const WORKGROUP: u32 = 64;
/// Largest workgroup count along one dispatch dimension (WebGPU's default limit).
pub const MAX_GROUPS: u32 = 65_535;
/// Bytes between parameter blocks in the uniform buffer (the dynamic-offset alignment).
pub const PARAM_SLOT: u64 = 256;

/// Which batch rows a dispatch covers: all rows of a submission, or one sequence's run of
/// them. Written per submission, one block per `PARAM_SLOT`, chosen by dynamic offset.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct StepParams {
    pub row0: u32,
    pub n_rows: u32,
    pub _pad: [u32; 2],
}

/// Rows one submission runs at most; the batch table holds their positions at
/// `0..MAX_ROWS` and the rows that want logits at `MAX_ROWS..2·MAX_ROWS`.
pub const MAX_ROWS: usize = 64;

/// What a binding is, in a kernel's layout.
#[derive(Clone, Copy)]
pub enum Slot {
    Read,
    ReadWrite,
    /// The kernel's parameter block (dynamic offset into the shared parameter buffer).
    Params,
    /// The rows a dispatch covers (dynamic offset into the per-call step buffer).
    Step,
}

/// A compute pipeline and its bind-group layout.
pub struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub name: &'static str,
    /// Whether the layout has a `Step` binding (a second dynamic offset).
    pub has_step: bool,
}

impl Kernel {
    pub fn new(device: &wgpu::Device, name: &'static str, source: &str, slots: &[Slot]) -> Kernel {
        let entries: Vec<wgpu::BindGroupLayoutEntry> = slots
            .iter()
            .enumerate()
            .map(|(i, s)| wgpu::BindGroupLayoutEntry {
                binding: i as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: match s {
                    Slot::Read | Slot::ReadWrite => wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage {
                            read_only: matches!(s, Slot::Read),
                        },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    Slot::Params | Slot::Step => wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: true,
                        min_binding_size: None,
                    },
                },
                count: None,
            })
            .collect();
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(name),
            entries: &entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(name),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(name),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(name),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        Kernel {
            pipeline,
            layout,
            name,
            has_step: slots.iter().any(|s| matches!(s, Slot::Step)),
        }
    }

    /// A bind group with `buffers` in binding order; `Params` and `Step` bindings cover one
    /// slot (chosen by dynamic offset when dispatching).
    pub fn bind(
        &self,
        device: &wgpu::Device,
        buffers: &[(&wgpu::Buffer, Slot)],
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, (b, s))| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: match s {
                    Slot::Params | Slot::Step => {
                        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: b,
                            offset: 0,
                            size: wgpu::BufferSize::new(PARAM_SLOT),
                        })
                    }
                    _ => b.as_entire_binding(),
                },
            })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(self.name),
            layout: &self.layout,
            entries: &entries,
        })
    }
}

/// The WGSL that reads a weight of the given format (`weight(block, block_len, k)`), put
/// before the kernels that read matrices (matmul, embed).
pub fn weight_reader(precision: Precision, group: u32) -> String {
    match precision {
        Precision::F32 => include_str!("shaders/weights_f32.wgsl").to_string(),
        Precision::Q8 => {
            include_str!("shaders/weights_q8.wgsl").replace("{GROUP}", &group.max(1).to_string())
        }
        Precision::Q4 => include_str!("shaders/weights_q4.wgsl").to_string(),
    }
}

/// A matrix as the GPU holds it: float32 as is; quantized, each block (layer) its values
/// (`QTensor::values`, already a whole number of words) then its scales, the layout
/// `weights_q8.wgsl` / `weights_q4.wgsl` read. The bytes stay quantized.
pub fn packed(t: &Tensor) -> Vec<u8> {
    match t {
        Tensor::F32(v) => bytemuck::cast_slice(&v[..]).to_vec(),
        Tensor::Quant(q) => {
            let (vb, ng) = (q.block_value_bytes(), q.groups_per_block());
            let mut out = Vec::with_capacity(q.bytes() as usize);
            for b in 0..q.blocks {
                out.extend_from_slice(&q.values[b * vb..(b + 1) * vb]);
                for s in &q.scales[b * ng..(b + 1) * ng] {
                    out.extend_from_slice(&s.to_le_bytes());
                }
            }
            out
        }
    }
}

/// The Q8 group of a tensor (what `weights_q8.wgsl` is built with), 0 otherwise.
pub fn group_of(t: &Tensor) -> u32 {
    match t {
        Tensor::Quant(q) => q.group as u32,
        Tensor::F32(_) => 0,
    }
}

/// Workgroups for `rows` outputs per token: rows beyond 65,535 spill into the y dimension.
pub fn row_groups(rows: u32) -> (u32, u32) {
    let x = rows.clamp(1, MAX_GROUPS);
    (x, rows.div_ceil(x))
}
