//! A matrix as the engine holds it: float32 (`F32s`: a buffer of its own, or a view into
//! shared file bytes) or quantized (`QTensor`; `GTensor` in a GGUF file's own ggml blocks),
//! and `MatRef`, what the kernels take.

use super::ggml::{GRef, GTensor};
use super::{Precision, QRef, QTensor};

/// Bytes a model's float32 tensors can be views into, shared by every tensor of the file:
/// natively the mapped checkpoint (`memmap2::Mmap`), so the weights are the file's pages and
/// not a copy of them (peak memory holds the weights once).
pub type SharedBytes = std::sync::Arc<dyn AsRef<[u8]> + Send + Sync>;

/// Float32 weights: a buffer of their own, or a view into the file's bytes.
#[derive(Clone)]
pub enum F32s {
    Owned(Vec<f32>),
    /// `len` floats from byte `start` of `bytes`; made only by `F32s::view`, which checks
    /// the range and the alignment, so taking the slice cannot fail.
    Shared {
        bytes: SharedBytes,
        start: usize,
        len: usize,
    },
}

impl F32s {
    /// The `len` little-endian floats at byte `start` of `bytes`, in place; `None` when they
    /// are not all there or not 4-byte aligned in memory (the caller then copies them), or
    /// on a big-endian machine, where the bytes would have to be turned around.
    pub fn view(bytes: &SharedBytes, start: usize, len: usize) -> Option<F32s> {
        let end = start.checked_add(len.checked_mul(4)?)?;
        let b = (**bytes).as_ref().get(start..end)?;
        (cfg!(target_endian = "little") && bytemuck::try_cast_slice::<u8, f32>(b).is_ok()).then(
            || F32s::Shared {
                bytes: bytes.clone(),
                start,
                len,
            },
        )
    }

    /// Whether the floats are a view into shared bytes (the mapped file), not a copy.
    pub fn is_shared(&self) -> bool {
        matches!(self, F32s::Shared { .. })
    }
}

impl std::ops::Deref for F32s {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        match self {
            F32s::Owned(v) => v,
            F32s::Shared { bytes, start, len } => {
                bytemuck::cast_slice(&(**bytes).as_ref()[*start..*start + 4 * *len])
            }
        }
    }
}

impl From<Vec<f32>> for F32s {
    fn from(v: Vec<f32>) -> Self {
        F32s::Owned(v)
    }
}

impl PartialEq for F32s {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for F32s {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.is_shared() { "shared" } else { "owned" };
        write!(f, "F32s({kind}, {} floats)", self.len())
    }
}

/// A matrix tensor of a model: float32 (its own or a view into the file) or quantized.
#[derive(Debug, Clone, PartialEq)]
pub enum Tensor {
    F32(F32s),
    F16(Vec<half::f16>),
    Quant(QTensor),
    /// a GGUF file's blocks as they are (k-quants, mixes)
    Ggml(GTensor),
}

impl Tensor {
    pub fn precision(&self) -> Precision {
        match self {
            Tensor::F32(_) => Precision::F32,
            Tensor::F16(_) => Precision::F16,
            Tensor::Quant(q) => q.precision,
            Tensor::Ggml(_) => Precision::Ggml,
        }
    }

    /// Weights it holds.
    pub fn len(&self) -> usize {
        match self {
            Tensor::F32(v) => v.len(),
            Tensor::F16(v) => v.len(),
            Tensor::Quant(q) => q.blocks * q.block_len,
            Tensor::Ggml(g) => g.parts.len() * g.block_len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes it takes in memory (and on the GPU).
    pub fn bytes(&self) -> u64 {
        match self {
            Tensor::F32(v) => 4 * v.len() as u64,
            Tensor::F16(v) => 2 * v.len() as u64,
            Tensor::Quant(q) => q.bytes(),
            Tensor::Ggml(g) => g.bytes(),
        }
    }

    /// Matrix `b` of `blocks` equal ones (layer b's).
    pub fn block(&self, b: usize, blocks: usize) -> MatRef<'_> {
        match self {
            Tensor::F32(v) => {
                let n = v.len() / blocks.max(1);
                MatRef::F32(&v[b * n..(b + 1) * n])
            }
            Tensor::F16(v) => {
                let n = v.len() / blocks.max(1);
                MatRef::F16(&v[b * n..(b + 1) * n])
            }
            Tensor::Quant(q) => MatRef::Quant(q.block(b)),
            Tensor::Ggml(g) => MatRef::Ggml(g.block(b)),
        }
    }

    /// The same tensor multiplied with `activations` on the CPU (unchanged unless quantized).
    pub fn with_activations(mut self, activations: super::Activations) -> Tensor {
        match &mut self {
            Tensor::Quant(q) => q.activations = activations,
            Tensor::Ggml(g) => g.activations = activations,
            _ => {}
        }
        self
    }

    /// The float32 values (dequantized if quantized).
    pub fn to_f32(&self) -> std::borrow::Cow<'_, [f32]> {
        match self {
            Tensor::F32(v) => std::borrow::Cow::Borrowed(&v[..]),
            Tensor::F16(v) => std::borrow::Cow::Owned(v.iter().map(|h| h.to_f32()).collect()),
            Tensor::Quant(q) => std::borrow::Cow::Owned(q.dequantize()),
            Tensor::Ggml(g) => std::borrow::Cow::Owned(g.dequantize()),
        }
    }

    /// This tensor (`blocks` matrices) at `precision`, from its float32 values. Requantizing
    /// a quantized tensor starts from its dequantized values.
    pub fn at(&self, precision: Precision, blocks: usize, q8_group: usize) -> Tensor {
        if precision == self.precision()
            && !matches!(self, Tensor::Quant(q) if q.group != q8_group && precision == Precision::Q8)
        {
            return self.clone();
        }
        let f = self.to_f32();
        match precision {
            Precision::F32 => Tensor::F32(f.into_owned().into()),
            // half's from_f32 rounds to nearest, ties to even (IEEE 754's default).
            Precision::F16 => Tensor::F16(f.iter().map(|&v| half::f16::from_f32(v)).collect()),
            // the file's blocks are made only by reading a file: kept as they are
            Precision::Ggml => self.clone(),
            p => Tensor::Quant(QTensor::quantize(&f, blocks, p, q8_group)),
        }
    }
}

/// A matrix (rows of `n` weights) as the kernels see it.
#[derive(Debug, Clone, Copy)]
pub enum MatRef<'a> {
    F32(&'a [f32]),
    F16(&'a [half::f16]),
    Quant(QRef<'a>),
    Ggml(GRef<'a>),
}

impl MatRef<'_> {
    pub fn len(&self) -> usize {
        match self {
            MatRef::F32(v) => v.len(),
            MatRef::F16(v) => v.len(),
            MatRef::Quant(q) => q.len,
            MatRef::Ggml(g) => g.len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `r` (n wide) dequantized into `out`.
    pub fn row_into(&self, r: usize, out: &mut [f32]) {
        let n = out.len();
        match self {
            MatRef::F32(v) => out.copy_from_slice(&v[r * n..(r + 1) * n]),
            MatRef::F16(v) => widen(&v[r * n..(r + 1) * n], out),
            MatRef::Quant(q) => q.dequantize_into(r * n, out),
            MatRef::Ggml(g) => g.row_into(r, out),
        }
    }
}

impl<'a> From<&'a [f32]> for MatRef<'a> {
    fn from(v: &'a [f32]) -> Self {
        MatRef::F32(v)
    }
}

impl<'a> From<&'a Vec<f32>> for MatRef<'a> {
    fn from(v: &'a Vec<f32>) -> Self {
        MatRef::F32(v)
    }
}

/// f16 weights widened to float32 (exact: every f16 is a float32), into `out`. Natively
/// `half`'s slice conversion (F16C where the CPU has it, detected at run time); in the page's
/// wasm, where `half` converts in scalar software (an f16 decode step cost many times
/// f32's: BENCHMARKS.md, "f16 weights in wasm and on the CPU"), `widen_portable`, which the
/// compiler vectorises with simd128.
pub fn widen(w: &[half::f16], out: &mut [f32]) {
    #[cfg(target_arch = "wasm32")]
    widen_portable(w, out);
    #[cfg(not(target_arch = "wasm32"))]
    {
        use half::slice::HalfFloatSliceExt;
        w.convert_to_f32_slice(out);
    }
}

/// `widen` in branch-free bit arithmetic (the same bits as `half`'s, tested for all 65,536).
pub fn widen_portable(w: &[half::f16], out: &mut [f32]) {
    for (o, h) in out.iter_mut().zip(w) {
        *o = f16_to_f32(h.to_bits());
    }
}

/// One IEEE half's bits as float32: the exponent rebiased (normal numbers), all ones kept
/// (infinities; NaN with its payload, made quiet), or the 10-bit mantissa × 2⁻²⁴
/// (subnormals and zero: exact in float32); the sign put back.
#[inline(always)]
fn f16_to_f32(h: u16) -> f32 {
    let h = h as u32;
    let em = h & 0x7fff;
    let normal = (em << 13) + ((127 - 15) << 23);
    // A NaN comes back quiet (as F16C's conversion gives it).
    let quiet = if em > 0x7c00 { 0x0040_0000 } else { 0 };
    let inf_nan = (em << 13) | 0x7f80_0000 | quiet;
    // 2⁻²⁴ is 0x3380_0000.
    let subnormal = (em as f32 * f32::from_bits(0x3380_0000)).to_bits();
    let bits = if em >= 0x7c00 {
        inf_nan
    } else if em >= 0x0400 {
        normal
    } else {
        subnormal
    };
    f32::from_bits(bits | ((h & 0x8000) << 16))
}
