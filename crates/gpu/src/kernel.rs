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

/// Batch rows a matrix-product workgroup computes together (matmul, qkv, mlp_in): each weight
/// is read once for up to this many rows (prefill, batches, beams, speculative verification).
pub const TILE_BATCH: u32 = 8;

/// Rows one submission runs at most; the batch table holds their positions at
/// `0..MAX_ROWS` and the rows that want logits at `MAX_ROWS..2·MAX_ROWS`.
pub const MAX_ROWS: usize = 64;

/// `StepParams` as WGSL, put by `Kernel::new` before every kernel that has a `Step`
/// binding (the ops' test holds the two to one size).
pub const STEP_WGSL: &str = "struct Step { row0: u32, n_rows: u32, _p0: u32, _p1: u32 }\n";

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
        let has_step = slots.iter().any(|s| matches!(s, Slot::Step));
        let source = if has_step {
            format!("{STEP_WGSL}{source}")
        } else {
            source.to_string()
        };
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
            has_step,
        }
    }

    /// Records one dispatch into `pass`: the parameter block at `slot` and, where the
    /// layout has one, the step block `step` (0 = all rows, 1 + i = sequence run i).
    pub fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass,
        bg: &wgpu::BindGroup,
        (slot, step): (u64, u64),
        groups: [u32; 3],
    ) {
        pass.set_pipeline(&self.pipeline);
        let offsets = [(slot * PARAM_SLOT) as u32, (step * PARAM_SLOT) as u32];
        let dynamic = if self.has_step {
            &offsets[..]
        } else {
            &offsets[..1]
        };
        pass.set_bind_group(0, bg, dynamic);
        pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
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

/// The WGSL of `norm_dots` (two rows against a normalised input), put after the weight
/// reader in the kernels that fold RMSNorm into their product (qkv, mlp_in).
pub const NORM_DOTS: &str = include_str!("shaders/norm_dots.wgsl");

/// `NORM_DOTS` for tiles of `tile` batch rows, put after the weight reader.
pub fn norm_dots_wgsl(tile: u32) -> String {
    format!("const TILE_BATCH: u32 = {tile}u;\n{NORM_DOTS}")
}

/// The batch tile of a fused kernel's pipeline for a dispatch of `rows` batch rows: one row
/// (decode) has its own pipeline, built for tiles of one (a tile's arrays and workgroup
/// memory slowed a one-row dispatch on a software adapter: BENCHMARKS.md, "Figures behind
/// the code"); more rows, tiles of `TILE_BATCH`. Either way the workgroups are
/// `rows.div_ceil(TILE_BATCH)` deep.
pub fn fused_tile(rows: u32) -> u32 {
    if rows == 1 {
        1
    } else {
        TILE_BATCH
    }
}

/// Whether a kernel reading rows of `n` weights of this format is built to read four
/// weights a load (`weight4`, `VEC4`): n a multiple of 4 and at least 4 × 64 (so each of a
/// workgroup's 64 threads has a load: below, a quarter of them would idle), and for Q8 a
/// group that is a multiple of 4 (four weights of a word share one scale). Decided when the
/// pipeline is built, so a small model's kernels are the one-weight code alone.
pub fn vec4_loads(precision: Precision, group: u32, n: usize) -> bool {
    n.is_multiple_of(4) && n >= 256 && (precision != Precision::Q8 || group.is_multiple_of(4))
}

/// How a fused kernel (`qkv`, `mlp_in`) is built: its weights' format and Q8 group, its
/// batch tile (`fused_tile`) and whether it reads four weights a load (`vec4_loads` of dim).
#[derive(Debug, Clone, Copy)]
pub struct FusedBuild {
    pub precision: Precision,
    pub group: u32,
    pub tile: u32,
    pub vec4: bool,
}

impl FusedBuild {
    /// For dispatches of `rows` batch rows.
    pub fn new(precision: Precision, group: u32, rows: u32, vec4: bool) -> FusedBuild {
        let tile = fused_tile(rows);
        FusedBuild {
            precision,
            group,
            tile,
            vec4,
        }
    }

    /// The pipeline of the fused kernel `source`: the weight reader, the norm-and-dots
    /// prelude, then the kernel.
    pub fn kernel(
        self,
        device: &wgpu::Device,
        name: &'static str,
        source: &str,
        slots: &[Slot],
    ) -> Kernel {
        let source = format!(
            "{}\n{}\n{source}",
            weight_reader(self.precision, self.group, self.vec4),
            norm_dots_wgsl(self.tile)
        );
        Kernel::new(device, name, &source, slots)
    }
}

/// The WGSL that reads a weight of the given format (`weight(block, block_len, k)`, and
/// `weight4` for four), with `VEC4` (whether the kernel reads four a load), put before the
/// kernels that read matrices (matmul, embed, the fused ones).
pub fn weight_reader(precision: Precision, group: u32, vec4: bool) -> String {
    format!(
        "const VEC4: bool = {vec4};\n{}",
        weight_reader_only(precision, group)
    )
}

fn weight_reader_only(precision: Precision, group: u32) -> String {
    match precision {
        Precision::F32 => include_str!("shaders/weights_f32.wgsl").to_string(),
        Precision::F16 => include_str!("shaders/weights_f16.wgsl").to_string(),
        // ggml blocks go up as q8 (`packed`; the backend converts a model of them first)
        Precision::Q8 | Precision::Ggml => {
            include_str!("shaders/weights_q8.wgsl").replace("{GROUP}", &group.max(1).to_string())
        }
        Precision::Q4 => include_str!("shaders/weights_q4.wgsl").to_string(),
    }
}

/// The q8 group a matrix in ggml blocks is uploaded in (no WGSL reads ggml blocks yet).
const GGML_AS_Q8_GROUP: usize = 32;

/// A matrix as the GPU holds it: float32 as is; quantized, each block (layer) its values
/// (`QTensor::values`, already a whole number of words) then its scales, the layout
/// `weights_q8.wgsl` / `weights_q4.wgsl` read (f16: halves two to a word). The bytes stay
/// quantized. Zero-padded to whole 16 bytes (`weights_f32.wgsl` binds vec4s).
pub fn packed(t: &Tensor) -> Vec<u8> {
    let mut out = packed_unpadded(t);
    out.resize(out.len().next_multiple_of(16), 0);
    out
}

fn packed_unpadded(t: &Tensor) -> Vec<u8> {
    match t {
        Tensor::F32(v) => bytemuck::cast_slice(&v[..]).to_vec(),
        Tensor::F16(v) => f16_words(v),
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
        Tensor::Ggml(g) => packed_unpadded(&t.at(Precision::Q8, g.parts.len(), GGML_AS_Q8_GROUP)),
    }
}

/// The Q8 group of a tensor (what `weights_q8.wgsl` is built with), 0 otherwise.
pub fn group_of(t: &Tensor) -> u32 {
    match t {
        Tensor::Quant(q) => q.group as u32,
        Tensor::Ggml(_) => GGML_AS_Q8_GROUP as u32,
        Tensor::F32(_) | Tensor::F16(_) => 0,
    }
}

/// f16 weights as `weights_f16.wgsl` reads them: their bits, little-endian, padded with a
/// zero to a whole word.
fn f16_words(v: &[half::f16]) -> Vec<u8> {
    let mut out: Vec<u8> = v.iter().flat_map(|h| h.to_bits().to_le_bytes()).collect();
    out.resize(out.len().next_multiple_of(4), 0);
    out
}

/// Workgroups for `rows` outputs per token: rows beyond 65,535 spill into the y dimension.
pub fn row_groups(rows: u32) -> (u32, u32) {
    let x = rows.clamp(1, MAX_GROUPS);
    (x, rows.div_ceil(x))
}

/// Where each packed matrix starts in a layer's block (in weights), a block's length, and
/// how many layers one buffer holds (the backend splits the layers over several buffers when
/// all of them exceed what the device binds at once).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PartsLayout {
    pub at: Vec<usize>,
    pub block_len: usize,
    pub per_buffer: usize,
}

impl PartsLayout {
    /// Layer `l`'s buffer, and its block in that buffer.
    pub fn locate(&self, l: usize) -> (usize, usize) {
        let per = self.per_buffer.max(1);
        (l / per, l % per)
    }
}

/// Matrices packed side by side as one per layer (`packed_parts`): the bytes and where the
/// parts are.
#[derive(Debug, Clone, PartialEq)]
pub struct Parts {
    pub bytes: Vec<u8>,
    pub layout: PartsLayout,
}

/// Several matrices of one format, each `layers` blocks, packed as one matrix a layer: block
/// l holds part 0's layer l, then part 1's, …, in the layout the format's reader expects
/// (`weights_*.wgsl`: for a quantized block all its values, then all its scales). Each part
/// starts a whole number of groups in (padded with zero weights, and zero scales for any
/// padding group), so every part keeps its own groups and their scales: the weights read are
/// the parts' own, bit for bit. A fused kernel reads Wq, Wk and Wv (or W1 and W3) through
/// one binding this way. Only the blocks of `range` are packed (a buffer's worth: the host
/// never holds more than one buffer's copy); `per_buffer` is its length.
pub fn packed_parts(
    parts: &[&Tensor],
    layers: usize,
    range: std::ops::Range<usize>,
) -> Result<Parts, String> {
    let layers = layers.max(1);
    if range.start >= range.end || range.end > layers {
        return Err(format!("layers {range:?} of {layers} to pack"));
    }
    let first = parts.first().ok_or("no matrices to pack")?;
    let (precision, group) = (first.precision(), group_of(first));
    if parts
        .iter()
        .any(|t| t.precision() != precision || group_of(t) != group)
    {
        return Err("the matrices packed together differ in format".into());
    }
    // Weights a part is padded to: a whole number of groups (and of u32 words for Q8).
    let align = match precision {
        Precision::F32 | Precision::F16 => 1,
        Precision::Q8 | Precision::Ggml => lcm(group.max(1) as usize, 4),
        Precision::Q4 => decoding_engine::quant::Q4_GROUP,
    };
    let lens: Vec<usize> = parts.iter().map(|t| t.len() / layers).collect();
    let padded: Vec<usize> = lens.iter().map(|l| l.div_ceil(align) * align).collect();
    let mut at = Vec::with_capacity(parts.len());
    let mut block_len = 0;
    for p in &padded {
        at.push(block_len);
        block_len += p;
    }
    let mut bytes = Vec::new();
    let mut halves: Vec<half::f16> = Vec::new();
    for l in range.clone() {
        match precision {
            Precision::F32 => {
                for (t, &len) in parts.iter().zip(&lens) {
                    let Tensor::F32(v) = t else { unreachable!() };
                    bytes.extend_from_slice(bytemuck::cast_slice(&v[l * len..(l + 1) * len]));
                }
            }
            Precision::F16 => {
                // The halves of every part and block in order, made words once at the end.
                for (t, &len) in parts.iter().zip(&lens) {
                    let Tensor::F16(v) = t else { unreachable!() };
                    halves.extend_from_slice(&v[l * len..(l + 1) * len]);
                }
            }
            _ => pack_quantized(parts, &padded, l, &mut bytes)?,
        }
    }
    if precision == Precision::F16 {
        bytes = f16_words(&halves);
    }
    // Whole 16-byte vec4s: `weights_f32.wgsl` binds the buffer as an array of them.
    bytes.resize(bytes.len().next_multiple_of(16), 0);
    Ok(Parts {
        bytes,
        layout: PartsLayout {
            at,
            block_len,
            per_buffer: range.len(),
        },
    })
}

/// Layer `l` of quantized parts, each padded to `padded` weights: all the parts' values, then
/// all their scales (zero scales for padding groups).
fn pack_quantized(
    parts: &[&Tensor],
    padded: &[usize],
    l: usize,
    bytes: &mut Vec<u8>,
) -> Result<(), String> {
    let q: Vec<&decoding_engine::quant::QTensor> = parts
        .iter()
        .map(|t| match t {
            Tensor::Quant(q) => Ok(q),
            _ => Err("the matrices packed together differ in format"),
        })
        .collect::<Result<_, _>>()?;
    for (t, &p) in q.iter().zip(padded) {
        let vb = t.block_value_bytes();
        let mut v = t.values[l * vb..(l + 1) * vb].to_vec();
        // Q4: two weights a byte.
        v.resize(
            if t.precision == Precision::Q4 {
                p / 2
            } else {
                p
            },
            0,
        );
        bytes.extend_from_slice(&v);
    }
    for (t, &p) in q.iter().zip(padded) {
        let ng = t.groups_per_block();
        let mut s = t.scales[l * ng..(l + 1) * ng].to_vec();
        s.resize(p / t.group, 0.0);
        for x in s {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    Ok(())
}

fn lcm(a: usize, b: usize) -> usize {
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    a / gcd(a, b) * b
}

#[cfg(test)]
mod tests {
    use super::*;
    use decoding_engine::quant::QTensor;

    /// Two matrices of two layers each: A 6 weights a layer, B 4.
    fn parts() -> (Vec<f32>, Vec<f32>) {
        let a = (0..12).map(|i| i as f32 / 8.0 - 0.7).collect();
        let b = (0..8).map(|i| 0.3 - i as f32 / 16.0).collect();
        (a, b)
    }

    #[test]
    fn packed_parts_keep_each_part_and_its_groups() {
        let (a, b) = parts();
        // Float32: layer 1 of [A; B] is A's layer 1, then B's.
        let (fa, fb) = (Tensor::F32(a.clone().into()), Tensor::F32(b.clone().into()));
        let p = packed_parts(&[&fa, &fb], 2, 1..2).unwrap();
        let got: &[f32] = bytemuck::cast_slice(&p.bytes);
        // 10 floats, padded to 12 (whole 16-byte vec4s) with zeros.
        assert_eq!(got, [&a[6..12], &b[4..8], &[0.0, 0.0]].concat());
        assert_eq!(
            (p.layout.at, p.layout.block_len, p.layout.per_buffer),
            (vec![0, 6], 10, 1)
        );
        // Q8 in groups of 4: A's 6 weights padded to 8 (its two groups), so B starts at 8;
        // a block is its 12 values, then A's two scales and B's one.
        let (qa, qb) = (
            QTensor::quantize(&a, 2, Precision::Q8, 4),
            QTensor::quantize(&b, 2, Precision::Q8, 4),
        );
        let (ta, tb) = (Tensor::Quant(qa.clone()), Tensor::Quant(qb.clone()));
        let p = packed_parts(&[&ta, &tb], 2, 0..2).unwrap();
        assert_eq!((p.layout.at, p.layout.block_len), (vec![0, 8], 12));
        for l in 0..2 {
            let block = &p.bytes[l * 24..(l + 1) * 24];
            assert_eq!(&block[..6], &qa.values[l * 8..l * 8 + 6], "A's values");
            assert_eq!(&block[6..8], &[0, 0], "A's padding");
            assert_eq!(&block[8..12], &qb.values[l * 4..(l + 1) * 4], "B's values");
            let scales: Vec<f32> = block[12..]
                .chunks(4)
                .map(|w| f32::from_le_bytes(w.try_into().unwrap()))
                .collect();
            let want = [qa.scales[2 * l], qa.scales[2 * l + 1], qb.scales[l]];
            assert_eq!(scales, want);
        }
        // Q4 (groups of 32): each part one group of 16 bytes and one scale.
        let (ta, tb) = (
            Tensor::Quant(QTensor::quantize(&a, 2, Precision::Q4, 32)),
            Tensor::Quant(QTensor::quantize(&b, 2, Precision::Q4, 32)),
        );
        let p = packed_parts(&[&ta, &tb], 2, 0..1).unwrap();
        assert_eq!(
            (p.layout.at, p.bytes.len()),
            (vec![0, 32], 48),
            "40 bytes, padded to 48"
        );
    }

    /// f16: the halves of A's layer l then B's, one after another (no padding: the reader
    /// indexes halves), two to a word, low half first, the buffer padded with a zero half.
    #[test]
    fn packed_f16_parts_are_their_halves_two_to_a_word() {
        let a: Vec<f32> = (0..10).map(|i| i as f32 * 0.25 - 1.0).collect(); // 5 a layer
        let b: Vec<f32> = (0..4).map(|i| 2.0 + i as f32).collect(); // 2 a layer
        let (ha, hb) = (
            Tensor::F32(a.clone().into()).at(Precision::F16, 2, 64),
            Tensor::F32(b.clone().into()).at(Precision::F16, 2, 64),
        );
        let p = packed_parts(&[&ha, &hb], 2, 0..2).unwrap();
        assert_eq!((p.layout.at, p.layout.block_len), (vec![0, 5], 7));
        // 14 halves: 28 bytes, padded to 32. These values are exact in f16.
        assert_eq!(p.bytes.len(), 32);
        let halves: Vec<f32> = p.bytes[..28]
            .chunks(2)
            .map(|h| half::f16::from_le_bytes([h[0], h[1]]).to_f32())
            .collect();
        let want = [&a[..5], &b[..2], &a[5..], &b[2..]].concat();
        assert_eq!(halves, want);
        // −1.0 is 0xbc00, 2.0 is 0x4000: little-endian bytes, A's first in word 0's low
        // half, B's first (half 5) in word 2's high half.
        assert_eq!(&p.bytes[0..2], &[0x00, 0xbc]);
        assert_eq!(&p.bytes[10..12], &[0x00, 0x40]);
        // One layer of 7 halves: padded to 4 words with a zero half.
        let one = packed_parts(&[&ha, &hb], 2, 1..2).unwrap();
        assert_eq!(one.bytes.len(), 16);
        assert_eq!(&one.bytes[14..], &[0, 0]);
        assert_eq!(packed(&ha).len(), 32, "10 halves, 5 words, padded to 8");
    }

    #[test]
    fn packed_parts_refuse_mixed_formats_and_empty_ranges() {
        let (a, b) = parts();
        let fa = Tensor::F32(a.clone().into());
        let qb = Tensor::Quant(QTensor::quantize(&b, 2, Precision::Q8, 4));
        assert!(packed_parts(&[&fa, &qb], 2, 0..2).is_err());
        let fb = Tensor::F32(b.into());
        assert!(packed_parts(&[&fa, &fb], 2, 1..1).is_err());
        assert!(packed_parts(&[&fa, &fb], 2, 0..3).is_err());
        assert!(packed_parts(&[], 2, 0..1).is_err());
    }
}
