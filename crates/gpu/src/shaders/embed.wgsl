// Embedding lookup: x[t, i] = token_embedding[tokens[t], i] (read through `weight`,
// weights_f32/f16/q8/q4.wgsl prepended: a quantized table is dequantized row by row).
// Mirrors: the first step of `Transformer::forward` (copy of the token's embedding row).
// Bindings: 0 token_embedding (read; f32, or packed u32 words for q8/q4), 1 tokens (read), 2 x (read_write), 3 params (uniform).
// Workgroup: 64. Dispatch: (ceil(dim / 64), rows, 1).

// table_len: vocab_size · dim (the table is one block).
struct Params { dim: u32, table_len: u32, _p1: u32, _p2: u32 }

@group(0) @binding(1) var<storage, read> tokens: array<u32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let t = gid.y;
    if (i >= p.dim) {
        return;
    }
    x[t * p.dim + i] = weight(0u, p.table_len, tokens[t] * p.dim + i);
}
