//! Q and K rows from Hugging Face's rotate-half RoPE order (which a `qwen2` GGUF file keeps:
//! llama.cpp runs it with LLAMA_ROPE_TYPE_NEOX, and its converter does not permute) to the
//! interleaved pairs the engine rotates: `hf::unpermute`'s row map, for float tensors and
//! for quantized ones (each row's values and its groups' scales moved whole).

use super::gguf::GgufError;
use crate::quant::{Precision, Tensor};

/// Q or K rows of every block (layer) from Hugging Face's rotate-half order back to the
/// interleaved pairs (`hf::unpermute`'s row map), whole rows moved: float rows, or a
/// quantized row's values and its groups' scales (a row a whole number of groups).
pub(super) fn interleave_heads(
    t: Tensor,
    layers: usize,
    heads: usize,
    head_size: usize,
) -> Result<Tensor, GgufError> {
    let rows = heads * head_size;
    let cols = t.len() / layers.max(1) / rows.max(1);
    let permute = |b: usize, per_row: usize| Rows {
        block: b,
        rows,
        per_row,
        head_size,
    };
    match t {
        Tensor::F32(w) => {
            let mut w: Vec<f32> = w.to_vec();
            permute(rows * cols, cols).apply(&mut w);
            Ok(Tensor::F32(w.into()))
        }
        Tensor::F16(mut w) => {
            permute(rows * cols, cols).apply(&mut w);
            Ok(Tensor::F16(w))
        }
        Tensor::Quant(mut q) => {
            if !cols.is_multiple_of(q.group) {
                return Err(GgufError::Unsupported(format!(
                    "Q/K rows of {cols} in groups of {}: a row must be whole groups to be reordered",
                    q.group
                )));
            }
            let row_bytes = match q.precision {
                Precision::Q4 => cols / 2,
                _ => cols,
            };
            permute(q.block_value_bytes(), row_bytes).apply(&mut q.values);
            permute(q.groups_per_block(), cols / q.group).apply(&mut q.scales);
            Ok(Tensor::Quant(q))
        }
        Tensor::Ggml(mut g) => {
            // each layer's rows in its own type's bytes (a row is whole blocks)
            for p in &mut g.parts {
                let rb = crate::quant::ggml::row_bytes(p.kind, cols);
                permute(rows * rb, rb).apply(&mut p.bytes);
            }
            Ok(Tensor::Ggml(g))
        }
    }
}

/// Blocks of `block` items (one a layer), each `rows` rows of `per_row` first (a
/// quantized block may end in padding).
struct Rows {
    block: usize,
    rows: usize,
    per_row: usize,
    head_size: usize,
}

impl Rows {
    /// Interleaved row (h, 2j + k) of each block takes rotate-half row (h, k·half + j).
    fn apply<T: Copy>(&self, data: &mut [T]) {
        let (hs, n) = (self.head_size, self.per_row);
        let src = |r: usize| (r / hs) * hs + (r % 2) * (hs / 2) + (r % hs) / 2;
        for b in data.chunks_exact_mut(self.block) {
            let old = b[..self.rows * n].to_vec();
            for r in 0..self.rows {
                b[r * n..(r + 1) * n].copy_from_slice(&old[src(r) * n..(src(r) + 1) * n]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::QTensor;

    /// Reordering a quantized Q or K (its rows' bytes and their groups' scales) gives the
    /// values that reordering its float values does, for q8 and q4, rows of 1 and 2 groups,
    /// 2 layers; the float reorder is `hf::unpermute`, row for row.
    #[test]
    fn quantized_heads_are_reordered_as_their_values() {
        let (layers, heads, hs) = (2, 3, 8);
        for (precision, cols) in [
            (Precision::Q8, 32),
            (Precision::Q8, 64),
            (Precision::Q4, 64),
        ] {
            let n = layers * heads * hs * cols;
            let w: Vec<f32> = (0..n)
                .map(|i| ((i * 7919) % 613) as f32 / 97.0 - 3.0)
                .collect();
            let q = QTensor::quantize(&w, layers, precision, 32);
            let floats = q.dequantize();
            let want: Vec<f32> = floats
                .chunks_exact(n / layers)
                .flat_map(|b| crate::formats::hf::unpermute(b, heads, hs, cols))
                .collect();
            let got = interleave_heads(Tensor::Quant(q), layers, heads, hs).unwrap();
            assert_eq!(
                got.to_f32().as_ref(),
                want.as_slice(),
                "{precision:?} {cols}"
            );
            let f = interleave_heads(Tensor::F32(floats.into()), layers, heads, hs).unwrap();
            assert_eq!(f.to_f32().as_ref(), want.as_slice());
        }
    }
}
