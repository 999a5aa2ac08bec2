// A layer's attention input for the batch rows row0 .. row0 + n_rows of one sequence:
// x̂ = RMSNorm(x); q, k, v = Wq·x̂, Wk·x̂, Wv·x̂; RoPE on q and k; k and v written into the
// sequence's cache at each row's position. One workgroup per pair of output rows (2i, 2i+1)
// of [Wq; Wk; Wv] (packed per layer by `kernel::packed_parts`, Wk at k_at and Wv at v_at
// weights into the layer's block), so the pair is rotated in the epilogue with the CPU's
// cos/sin table. A pair never straddles two matrices (q_rows and kv_rows are even).
// Each row's bias (Qwen2's [bq; bk; bv], zeros for a Llama) is added before RoPE.
// Mirrors: `kernels::rmsnorm`, then `kernels::matmul` for each of Wq, Wk, Wv, the biases, then
// `kernels::rope` (`ops::qkv::cpu_twin`).
// Bindings: 0 W (read), 1 x (read), 2 q (read_write), 3 key cache (read_write), 4 value cache
//           (read_write), 5 params (uniform, dynamic offset), 6 step (uniform, dynamic
//           offset), 7 rows (read: positions), 8 norm weights (read), 9 rope table (read:
//           cos, sin interleaved, (seq_len, head_size/2, 2), then every layer's biases
//           [bq; bk; bv], the layer's at bias_at: one buffer, so that the kernel binds 8
//           storage buffers, WebGPU's default maxStorageBuffersPerShaderStage).
// Workgroup: 64 threads per pair and tile of TILE_BATCH batch rows (each weight read once
//            for the tile). Dispatch: (pairs, 1, ceil(n_rows / TILE_BATCH)).

struct Params {
    n: u32,
    q_rows: u32,
    kv_rows: u32,
    half_head: u32,
    block: u32,
    block_len: u32,
    k_at: u32,
    v_at: u32,
    cache_offset: u32,
    g_offset: u32,
    eps: f32,
    bias_at: u32,
}

@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> q: array<f32>;
@group(0) @binding(3) var<storage, read_write> key: array<f32>;
@group(0) @binding(4) var<storage, read_write> value: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;
@group(0) @binding(6) var<uniform> step: Step;
@group(0) @binding(7) var<storage, read> positions: array<u32>;
@group(0) @binding(8) var<storage, read> gamma: array<f32>;
@group(0) @binding(9) var<storage, read> rope: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = 2u * wid.x;
    if (row >= p.q_rows + 2u * p.kv_rows) {
        return;
    }
    let tile = batch_tile(wid.z);
    let t0 = tile.x;
    let nt = tile.y;
    if (nt == 0u) {
        return;
    }
    // Which matrix the pair is in (0 q, 1 k, 2 v), its first row there and where it starts.
    var part = 0u;
    var local = row;
    var at = row * p.n;
    if (row >= p.q_rows + p.kv_rows) {
        part = 2u;
        local = row - p.q_rows - p.kv_rows;
        at = p.v_at + local * p.n;
    } else if (row >= p.q_rows) {
        part = 1u;
        local = row - p.q_rows;
        at = p.k_at + local * p.n;
    }
    norm_dots(p.block, p.block_len, at, at + p.n, t0 * p.n, p.n, nt, p.g_offset, p.n, lid.x);
    // One thread per batch row of the tile.
    if (lid.x >= nt) {
        return;
    }
    let t = t0 + lid.x;
    let inv = 1.0 / sqrt(dots_s[lid.x * 64u] / f32(p.n) + p.eps);
    var a = dots_a[lid.x * 64u] * inv;
    var b = dots_b[lid.x * 64u] * inv + rope[p.bias_at + row + 1u];
    a += rope[p.bias_at + row];
    let pos = positions[t];
    if (part < 2u) {
        let j = (local / 2u) % p.half_head;
        let c = rope[2u * (pos * p.half_head + j)];
        let s = rope[2u * (pos * p.half_head + j) + 1u];
        let a0 = a;
        a = a0 * c - b * s;
        b = a0 * s + b * c;
    }
    if (part == 0u) {
        q[t * p.q_rows + local] = a;
        q[t * p.q_rows + local + 1u] = b;
    } else {
        let o = p.cache_offset + pos * p.kv_rows + local;
        if (part == 1u) {
            key[o] = a;
            key[o + 1u] = b;
        } else {
            value[o] = a;
            value[o + 1u] = b;
        }
    }
}
