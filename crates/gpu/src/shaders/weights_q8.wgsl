// Weights as Q8 (llama2.c version 2 / GGML Q8_0, symmetric int8, one float32 scale per GROUP
// weights, groups over each layer's flattened matrix): each block (a layer's matrix) is its
// int8 values packed four to a u32 word (weight k in byte k % 4 of word k / 4, the words
// padded to a whole word), then its scales' bits, one word each. Prepended to matmul.wgsl
// and embed.wgsl for a Q8 model, GROUP replaced by the model's group size (`Kernels::new`).
// Mirrors: `quant::QRef::weight` (q · d). Unpacked with shifts (sign-extending the byte
// with an arithmetic shift), which every adapter has; `unpack4xI8` needs a WGSL language
// extension not all adapters expose.

@group(0) @binding(0) var<storage, read> w: array<u32>;

const GROUP: u32 = {GROUP}u;

fn weight(block: u32, block_len: u32, k: u32) -> f32 {
    let words = (block_len + 3u) / 4u;
    let base = block * (words + (block_len + GROUP - 1u) / GROUP);
    let word = w[base + k / 4u];
    let q = bitcast<i32>(word << ((3u - k % 4u) * 8u)) >> 24u;
    return f32(q) * bitcast<f32>(w[base + words + k / GROUP]);
}

// Weights k … k + 3 (k a multiple of 4, GROUP too): one word, one scale.
fn weight4(block: u32, block_len: u32, k: u32) -> vec4<f32> {
    let words = (block_len + 3u) / 4u;
    let base = block * (words + (block_len + GROUP - 1u) / GROUP);
    let word = w[base + k / 4u];
    let q = vec4<i32>(
        bitcast<i32>(word << 24u) >> 24u,
        bitcast<i32>(word << 16u) >> 24u,
        bitcast<i32>(word << 8u) >> 24u,
        bitcast<i32>(word) >> 24u,
    );
    return vec4<f32>(q) * bitcast<f32>(w[base + words + k / GROUP]);
}
