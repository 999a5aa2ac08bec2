// Weights as float32: the matrix `block` of `block_len` weights starts at block · block_len.
// Bound as vec4s (the buffer is padded to 16 bytes, `kernel::packed`): `weight4` is one
// 16-byte load. Prepended to the kernels that read matrices for a float32 model
// (`Kernels::new`). Mirrors: `quant::MatRef::F32` (a plain slice).

@group(0) @binding(0) var<storage, read> w: array<vec4<f32>>;

fn weight(block: u32, block_len: u32, k: u32) -> f32 {
    let i = block * block_len + k;
    return w[i / 4u][i % 4u];
}

// Weights k … k + 3 (k and block_len multiples of 4).
fn weight4(block: u32, block_len: u32, k: u32) -> vec4<f32> {
    return w[(block * block_len + k) / 4u];
}
