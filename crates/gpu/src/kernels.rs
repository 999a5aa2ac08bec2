//! The compute pipelines, one per WGSL kernel in `shaders/`, created once per device, and
//! the uniform parameter blocks each kernel reads. Every kernel has a CPU twin in
//! `decoding_engine::cpu` and a `<op>_matches_cpu_reference` test.

use bytemuck::{Pod, Zeroable};

/// Threads per workgroup in every kernel.
pub const WORKGROUP: u32 = 64;
/// Largest workgroup count along one dispatch dimension (WebGPU's default limit).
pub const MAX_GROUPS: u32 = 65_535;
/// Bytes between parameter blocks in the uniform buffer (the dynamic-offset alignment).
pub const PARAM_SLOT: u64 = 256;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct EmbedParams {
    pub dim: u32,
    pub _pad: [u32; 3],
}

/// `select` ≠ 0: output row i normalises input row `table[select_offset + i]`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct RmsNormParams {
    pub dim: u32,
    pub w_offset: u32,
    pub select_offset: u32,
    pub select: u32,
}

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
pub const MATMUL_AT_POSITION: u32 = 2;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct RopeParams {
    pub q_pairs: u32,
    pub k_pairs: u32,
    pub half_head: u32,
    pub q_stride: u32,
    pub k_offset: u32,
    pub k_stride: u32,
    pub _pad: [u32; 2],
}

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

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SwigluParams {
    pub hidden: u32,
    pub _pad: [u32; 3],
}

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
    fn new(device: &wgpu::Device, name: &'static str, source: &str, slots: &[Slot]) -> Kernel {
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

/// Every kernel of the forward pass.
pub struct Kernels {
    pub embed: Kernel,
    pub rmsnorm: Kernel,
    pub matmul: Kernel,
    pub rope: Kernel,
    pub attention: Kernel,
    pub swiglu: Kernel,
}

impl Kernels {
    pub fn new(device: &wgpu::Device) -> Kernels {
        use Slot::*;
        Kernels {
            embed: Kernel::new(
                device,
                "embed",
                include_str!("shaders/embed.wgsl"),
                &[Read, Read, ReadWrite, Params],
            ),
            rmsnorm: Kernel::new(
                device,
                "rmsnorm",
                include_str!("shaders/rmsnorm.wgsl"),
                &[Read, Read, ReadWrite, Params, Read],
            ),
            matmul: Kernel::new(
                device,
                "matmul",
                include_str!("shaders/matmul.wgsl"),
                &[Read, Read, ReadWrite, Params, Step, Read],
            ),
            rope: Kernel::new(
                device,
                "rope",
                include_str!("shaders/rope.wgsl"),
                &[ReadWrite, ReadWrite, Read, Params, Step, Read],
            ),
            attention: Kernel::new(
                device,
                "attention",
                include_str!("shaders/attention.wgsl"),
                &[Read, Read, Read, ReadWrite, ReadWrite, Params, Step, Read],
            ),
            swiglu: Kernel::new(
                device,
                "swiglu",
                include_str!("shaders/swiglu.wgsl"),
                &[ReadWrite, Params],
            ),
        }
    }
}

/// Workgroups for `rows` outputs per token: rows beyond 65,535 spill into the y dimension.
pub fn row_groups(rows: u32) -> (u32, u32) {
    let x = rows.clamp(1, MAX_GROUPS);
    (x, rows.div_ceil(x))
}
