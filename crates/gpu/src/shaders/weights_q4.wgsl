// Weights as Q4 (GGML Q4_0: groups of 32, two weights a byte, x = (nibble − 8) · d, the
// scale kept as float32): each block (a layer's matrix) is its groups' 16 bytes (4 words:
// element e of a group in byte e % 16, the low nibble for e < 16, the high one above), then
// its scales' bits, one word a group. Prepended to matmul.wgsl and embed.wgsl for a Q4 model
// (`Kernels::new`). Mirrors: `quant::QRef::weight`.

@group(0) @binding(0) var<storage, read> w: array<u32>;

fn weight(block: u32, block_len: u32, k: u32) -> f32 {
    let groups = (block_len + 31u) / 32u;
    let base = block * groups * 5u;
    let g = k / 32u;
    let e = k % 32u;
    let byte = e % 16u;
    let shift = (byte % 4u) * 8u + select(0u, 4u, e >= 16u);
    let nibble = (w[base + g * 4u + byte / 4u] >> shift) & 15u;
    return f32(i32(nibble) - 8) * bitcast<f32>(w[base + groups * 4u + g]);
}

// Weights k … k + 3 (k a multiple of 4): four nibbles of one word (all low or all high:
// 16 is a multiple of 4), one scale.
fn weight4(block: u32, block_len: u32, k: u32) -> vec4<f32> {
    let groups = (block_len + 31u) / 32u;
    let base = block * groups * 5u;
    let g = k / 32u;
    let e = k % 32u;
    let byte = e % 16u;
    let word = w[base + g * 4u + byte / 4u] >> select(0u, 4u, e >= 16u);
    let nib = vec4<u32>(word & 15u, (word >> 8u) & 15u, (word >> 16u) & 15u, (word >> 24u) & 15u);
    return (vec4<f32>(nib) - 8.0) * bitcast<f32>(w[base + groups * 4u + g]);
}
