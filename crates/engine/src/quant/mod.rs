//! Quantized weights (lesson 10, section 5: "store/compute weights in 8-, 4-, or fewer bits.
//! Cuts memory and bandwidth — the decode bottleneck — with small, manageable accuracy loss.
//! This changes the representation of θ, not its learned values").
//!
//! **F16** stores each weight as IEEE half (rounded to nearest even: 11 significant bits,
//! exponents down to 2⁻²⁴), 2 bytes a weight, and widens it back to float32 where it is
//! read: the arithmetic is float32's, so an f16 model's logits are, bit for bit, those of the
//! float32 model whose weights are the rounded ones (on the CPU and the GPU alike).
//!
//! Two formats besides float32 and f16, both symmetric with one float32 scale per group of
//! weights:
//!
//! - **Q8** (llama2.c `export.py --version 2`, `quantize_q80`; GGML's Q8_0): scale
//!   d = max|w| / 127, q = round(w / d) as int8 (round half to even, as `torch.round`), w ≈ q·d.
//!   The group size is the file's (llama2.c: 64, halved until it divides `dim`); quantizing in
//!   memory uses the same rule, so `quantize --out` writes what `export.py` would.
//! - **Q4** (GGML's Q4_0, `quantize_row_q4_0_ref` in ggml-quants.c): groups of 32; m = the
//!   value of largest magnitude (with its sign), d = m / −8, q = min(15, trunc(w/d + 8.5)),
//!   w ≈ (q − 8)·d; 16 bytes per group, element j in the low nibble of byte j and element
//!   j + 16 in its high nibble. GGML stores d as float16 (4.5 bits a weight); we keep it
//!   float32 (5 bits a weight) so the scale adds no rounding of its own and the GPU and the
//!   CPU read the same scale.
//!
//! **Groups run over each layer's flattened matrix**, as `export.py` writes them, not over
//! rows: a group may straddle two rows. stories260K's hidden dim is 172, a multiple of neither
//! 32 nor 64, so every row of its `w2` (64 × 172) starts inside a group; llama2.c's `runq.c`
//! then silently uses only the first 128 of the 172 inputs (llama2.c PRs #532/#533), and
//! llama.cpp refuses the model. Our row product walks the groups the row overlaps, each
//! partial group with its own scale, so every input counts and the product is that of the
//! dequantized weights. A matrix whose size is not a multiple of the group (possible only
//! in memory, never in a v2 file, whose loader refuses it) gets a zero-padded last group.
//!
//! **Activations** (`Activations`): by default the CPU quantizes the activation row too, once
//! per matrix, to int8 in the weights' groups (llama.cpp's Q8_0 `vec_dot_type`, `runq.c`'s
//! `quantize`), and multiplies int8 × int8 with integer sums (`int8`): four times less
//! arithmetic a weight byte than dequantize-then-multiply, so a quantized model runs at the
//! speed of its bytes. It adds a second rounding (x's own, up to half a step of max|x|/127 a
//! value), measured as the KL from the float32 model (`quality`, the quantization panel).
//! `Activations::F32` keeps x in float32: the logits then equal, up to the order of float
//! additions, those of the float32 model whose weights are the dequantized ones; it is the
//! GPU's product (its WGSL reads float32 activations) and the CPU twin its tests compare.
//!
//! Float order is fixed by the code (as in `kernels::dot`; `QRef::dot` says it in full): each
//! product goes into lane (index in its group) mod 16, a group's 16 lanes are scaled and
//! added into 16 row totals, reduced pairwise; a row's partial groups at either end are
//! reduced on their own. AVX-512 natively and simd128 in the page give the same bits, alone
//! or in a batch.

pub mod ggml;
mod int8;
mod int8_simd;
#[cfg(test)]
mod int8_tests;
mod qref;
mod rows;
pub mod simd;
mod tensor;
#[cfg(test)]
mod tests;

pub use int8::{QActs, ShiftedActs};
pub use qref::QRef;
pub use rows::{reduce8, QActRow};
use serde::{Deserialize, Serialize};
use strum::{Display, EnumString, IntoStaticStr};
pub use tensor::{widen, widen_portable, F32s, MatRef, SharedBytes, Tensor};

/// How the matrices of a model are stored. Norms always stay float32.
#[derive(EnumString, IntoStaticStr, Display)]
#[strum(serialize_all = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Precision {
    #[default]
    F32,
    /// IEEE half (binary16): each weight rounded to nearest even, widened back to float32
    /// exactly where it is read, the products and sums float32 as for `F32`.
    F16,
    Q8,
    Q4,
    /// A GGUF file's own ggml blocks (k-quants, or a mix of types across layers), each
    /// matrix in its file's type (`ggml`): what a file holds, not a conversion target
    /// (`parse` refuses it).
    #[cfg_attr(feature = "clap", value(skip))]
    Ggml,
}

impl Precision {
    pub const ALL: [Precision; 4] = [Precision::F32, Precision::F16, Precision::Q8, Precision::Q4];

    /// Its one name (serde's, a link's, the CLI's).
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Exactly the name of a precision weights can be converted to (not `ggml`: a file's
    /// own blocks come only from the file).
    pub fn parse(s: &str) -> Result<Precision, String> {
        match s.parse() {
            Ok(p) if p != Precision::Ggml => Ok(p),
            _ => Err(format!("precision must be f32, f16, q8 or q4, not {s:?}")),
        }
    }

    /// The page's and the CLI's label: "f32 (4 bytes a weight)".
    pub fn label(self) -> &'static str {
        match self {
            Precision::F32 => "f32: 32 bits a weight",
            Precision::F16 => "f16: 16 bits a weight (IEEE half)",
            Precision::Q8 => "q8: int8 + a float32 scale per group",
            Precision::Q4 => "q4: 4 bits + a float32 scale per 32",
            Precision::Ggml => "ggml: the file's own blocks (k-quants)",
        }
    }
}

/// What a quantized matrix multiplies: its activations' precision on the CPU.
#[derive(EnumString, IntoStaticStr, Display)]
#[strum(serialize_all = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Activations {
    /// x quantized to int8 per group once per matrix, integer dot products (where the
    /// matrix's groups allow: `QRef::int8_ready`; rows inside groups, one scale a row:
    /// `QRef::int8_shifted_ready`; float32 elsewhere)
    #[default]
    Int8,
    /// x kept in float32: dequantize, multiply, add
    F32,
}

impl Activations {
    pub const ALL: [Activations; 2] = [Activations::Int8, Activations::F32];

    /// Its one name (the CLI's, a link's).
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// Q4's group size (GGML's QK4_0).
pub const Q4_GROUP: usize = 32;
/// Q8's group size when quantizing in memory: llama2.c `export.py`'s default, halved until
/// it divides `dim` (see [`q8_group_for`]).
pub const Q8_GROUP: usize = 64;

/// `export.py`'s rule: 64, halved while `dim` is not a multiple of it.
pub fn q8_group_for(dim: usize) -> usize {
    let mut g = Q8_GROUP;
    while g > 1 && !dim.is_multiple_of(g) {
        g /= 2;
    }
    g
}

/// A quantized tensor: `blocks` matrices (one per layer) of `block_len` weights each, each
/// quantized on its own (its groups start at its first weight).
#[derive(Debug, Clone, PartialEq)]
pub struct QTensor {
    /// Q8 or Q4 (never F32)
    pub precision: Precision,
    pub group: usize,
    pub blocks: usize,
    pub block_len: usize,
    /// Per block: Q8 one byte a weight (an `i8`), padded to a multiple of 4 bytes so that
    /// the GPU reads each block from a whole `u32`; Q4 16 bytes a group.
    pub values: Vec<u8>,
    /// Per block: one scale a group.
    pub scales: Vec<f32>,
    /// How the CPU multiplies it (the weights are the same either way).
    pub activations: Activations,
}

impl QTensor {
    /// Groups in one block (the last one zero-padded when the group does not divide it).
    pub fn groups_per_block(&self) -> usize {
        self.block_len.div_ceil(self.group)
    }

    /// Bytes of `values` one block takes.
    pub fn block_value_bytes(&self) -> usize {
        value_bytes(self.precision, self.block_len)
    }

    /// Quantizes `w`, `blocks` matrices one after another, each on its own.
    pub fn quantize(w: &[f32], blocks: usize, precision: Precision, group: usize) -> QTensor {
        let block_len = w.len() / blocks.max(1);
        let group = match precision {
            Precision::Q4 => Q4_GROUP,
            _ => group.max(1),
        };
        let vb = value_bytes(precision, block_len);
        let ng = block_len.div_ceil(group);
        let mut values = vec![0u8; blocks * vb];
        let mut scales = vec![0.0f32; blocks * ng];
        for b in 0..blocks {
            let src = &w[b * block_len..(b + 1) * block_len];
            let vals = &mut values[b * vb..(b + 1) * vb];
            for (g, chunk) in src.chunks(group).enumerate() {
                scales[b * ng + g] = match precision {
                    Precision::Q4 => quantize_q4_group(chunk, &mut vals[g * 16..(g + 1) * 16]),
                    _ => quantize_q8_group(chunk, &mut vals[g * group..g * group + chunk.len()]),
                };
            }
        }
        QTensor {
            precision,
            group,
            blocks,
            block_len,
            values,
            scales,
            activations: Activations::default(),
        }
    }

    /// Block `b` (a layer's matrix) as a view.
    pub fn block(&self, b: usize) -> QRef<'_> {
        let (vb, ng) = (self.block_value_bytes(), self.groups_per_block());
        QRef {
            precision: self.precision,
            group: self.group,
            len: self.block_len,
            values: &self.values[b * vb..(b + 1) * vb],
            scales: &self.scales[b * ng..(b + 1) * ng],
            activations: self.activations,
        }
    }

    /// The float32 weights this tensor stands for (q·d, one rounding each).
    pub fn dequantize(&self) -> Vec<f32> {
        let mut out = vec![0.0f32; self.blocks * self.block_len];
        for (b, o) in out.chunks_mut(self.block_len.max(1)).enumerate() {
            self.block(b).dequantize_into(0, o);
        }
        out
    }

    pub fn bytes(&self) -> u64 {
        (self.values.len() + 4 * self.scales.len()) as u64
    }
}

fn value_bytes(p: Precision, block_len: usize) -> usize {
    match p {
        Precision::Q4 => block_len.div_ceil(Q4_GROUP) * 16,
        _ => block_len.next_multiple_of(4),
    }
}

/// `quantize_q80` of llama2.c `export.py` for one group: d = max|w| / 127, q = round(w / d)
/// (half to even, `torch.round`). A group of zeros gets d = 0 and q = 0.
fn quantize_q8_group(w: &[f32], q: &mut [u8]) -> f32 {
    let max = w.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let d = max / 127.0;
    for (q, &v) in q.iter_mut().zip(w) {
        let r = if d > 0.0 {
            (v / d).round_ties_even()
        } else {
            0.0
        };
        *q = (r.clamp(-127.0, 127.0) as i8) as u8;
    }
    d
}

/// `quantize_row_q4_0_ref` of GGML for one group (≤ 32 values; the rest are zeros).
fn quantize_q4_group(w: &[f32], qs: &mut [u8]) -> f32 {
    let (mut amax, mut max) = (0.0f32, 0.0f32);
    for &v in w {
        if v.abs() > amax {
            amax = v.abs();
            max = v;
        }
    }
    let d = max / -8.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let nib = |j: usize| -> u8 {
        let v = w.get(j).copied().unwrap_or(0.0);
        ((v * id + 8.5) as i8).clamp(0, 15) as u8
    };
    for (j, q) in qs.iter_mut().enumerate() {
        *q = nib(j) | (nib(j + 16) << 4);
    }
    d
}
