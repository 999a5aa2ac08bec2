// Weights as float32: the matrix `block` of `block_len` weights starts at block · block_len.
// Prepended to matmul.wgsl and embed.wgsl for a float32 model (`Kernels::new`).
// Mirrors: `quant::MatRef::F32` (a plain slice).

@group(0) @binding(0) var<storage, read> w: array<f32>;

fn weight(block: u32, block_len: u32, k: u32) -> f32 {
    return w[block * block_len + k];
}
