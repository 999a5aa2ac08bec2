// Weights as IEEE half, two to a u32 word: weight i of the buffer (i = block · block_len +
// k) in the low half of word i / 2 when i is even, the high half when odd; the buffer padded
// to a whole word. `unpack2x16float` widens them to float32 exactly and is core WGSL, so f16
// weights need no `shader-f16` feature: every adapter reads them, and the products and sums
// stay float32, in the float32 kernels' order (the same bits as the float32 model of the
// rounded weights). Prepended for an f16 model (`Kernels::new`). Mirrors: `quant::MatRef::F16`.

@group(0) @binding(0) var<storage, read> w: array<u32>;

fn weight(block: u32, block_len: u32, k: u32) -> f32 {
    let i = block * block_len + k;
    return unpack2x16float(w[i / 2u])[i % 2u];
}

// Weights k … k + 3 (k and block_len multiples of 4): two adjacent words.
fn weight4(block: u32, block_len: u32, k: u32) -> vec4<f32> {
    let i = (block * block_len + k) / 2u;
    return vec4<f32>(unpack2x16float(w[i]), unpack2x16float(w[i + 1u]));
}
