//! Matrices in ggml's own blocks, held as a GGUF file holds them and multiplied block by
//! block, as llama.cpp's CPU backend multiplies them: the k-quants Q4_K, Q5_K and Q6_K (and
//! the 32-weight Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 where a file mixes them in), so a Q4_K_M
//! file takes its own 4.5–6.6 bits a weight in memory and decode reads no more bytes than
//! the file has.
//!
//! **Activations** are quantized once per matrix product to ggml's `vec_dot_type` of the
//! weights' type (`ggml-cpu.c`'s `type_traits_cpu`; [`acts`]): Q8_K for the k-quants (256 a
//! block, a float32 scale, the sums of each 16), Q8_0 or Q8_1 for the 32-weight types (an
//! f16 scale; Q8_1 also d·Σq). The weights' integers times the activations' integers add up
//! exactly in 32 bits whatever order a SIMD kernel adds in; the float part (the scales) has
//! one order on every target ([`dot`]), so AVX2, AVX-512 and the portable loops give the
//! same bits (tested), and llama.cpp's arithmetic up to the order of its float additions.
//!
//! A matrix of several layers keeps each layer's type (a Q4_K_M file gives half the layers'
//! `ffn_down` Q6_K and the rest Q4_K). A float part (F32, F16, BF16: a mixed file's
//! one-dimensional tensors never reach here, but a matrix may be float32 in some layers)
//! is multiplied in float32 by the kernels, widened row by row.

mod acts;
pub mod blocks;
mod dot;
#[cfg(kernel = "wasm")]
mod dot_wasm;
#[cfg(any(kernel = "avx512", kernel = "avx2"))]
mod dot_x86;
mod kind;
#[cfg(kernel = "avx512")]
mod rows_x86;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
#[cfg(test)]
mod tests;

pub use acts::{Family, GActRow, GActs};
pub use dot::{row_dot, row_dot_portable, rows_dot};
pub use kind::Kind;

use super::Activations;

/// One layer's matrix of a [`GTensor`]: its type and its blocks, row after row.
#[derive(Debug, Clone, PartialEq)]
pub struct GPart {
    pub kind: Kind,
    pub bytes: Vec<u8>,
}

/// A tensor of `parts.len()` matrices (one per layer) of `block_len` weights each, each in
/// its file's ggml type.
#[derive(Debug, Clone, PartialEq)]
pub struct GTensor {
    pub parts: Vec<GPart>,
    pub block_len: usize,
    /// How the CPU multiplies it: `Int8` the ggml `vec_dot_type`'s integers, `F32` each
    /// row dequantized and multiplied in float32.
    pub activations: Activations,
}

impl GTensor {
    /// Layer `b`'s matrix as a view.
    pub fn block(&self, b: usize) -> GRef<'_> {
        let p = &self.parts[b];
        GRef {
            kind: p.kind,
            bytes: &p.bytes,
            len: self.block_len,
            activations: self.activations,
        }
    }

    /// Bytes it takes in memory: the file's.
    pub fn bytes(&self) -> u64 {
        self.parts.iter().map(|p| p.bytes.len() as u64).sum()
    }

    /// The float32 values, ggml's own dequantization of every block.
    pub fn dequantize(&self) -> Vec<f32> {
        let mut out = vec![0.0f32; self.parts.len() * self.block_len];
        for (p, o) in self.parts.iter().zip(out.chunks_mut(self.block_len.max(1))) {
            blocks::dequantize(p.kind, &p.bytes, o);
        }
        out
    }

    /// The types of its parts, each once, in layer order.
    pub fn kinds(&self) -> Vec<Kind> {
        let mut k: Vec<Kind> = Vec::new();
        for p in &self.parts {
            if !k.contains(&p.kind) {
                k.push(p.kind);
            }
        }
        k
    }
}

/// Bytes a row of `n` weights of `kind` takes (n a whole number of its blocks).
pub fn row_bytes(kind: Kind, n: usize) -> usize {
    let (per, size) = kind.block();
    n / per as usize * size as usize
}

/// One layer's matrix in ggml blocks, as the kernels see it.
#[derive(Debug, Clone, Copy)]
pub struct GRef<'a> {
    pub kind: Kind,
    pub bytes: &'a [u8],
    /// weights
    pub len: usize,
    pub activations: Activations,
}

impl GRef<'_> {
    /// Row `r` (of `out.len()` weights) dequantized into `out`.
    pub fn row_into(&self, r: usize, out: &mut [f32]) {
        let rb = row_bytes(self.kind, out.len());
        blocks::dequantize(self.kind, &self.bytes[r * rb..(r + 1) * rb], out);
    }

    /// Whether the kernels multiply it with quantized activations (`GActs` of its
    /// [`Family`]) rather than float32 ones.
    pub fn int8(&self) -> bool {
        self.activations == Activations::Int8 && self.kind.family() != Family::Float
    }

    /// Row `r` (n = `a`'s width) times one quantized activation row.
    #[inline]
    pub fn dot(&self, r: usize, n: usize, a: &GActRow) -> f32 {
        let rb = row_bytes(self.kind, n);
        row_dot(self.kind, &self.bytes[r * rb..(r + 1) * rb], a)
    }
}
