// A layer's MLP input for every batch row: x̂ = RMSNorm(x); gate = W1·x̂, up = W3·x̂;
// hb = silu(gate) ⊙ up (silu(v) = v·σ(v)), into the first `hidden` floats of each row of hb
// (W2 reads them there). One workgroup per (output i, batch row): W1's row i and W3's row i
// (packed per layer by `kernel::packed_parts`, W3 at up_at weights into the layer's block).
// Mirrors: `kernels::rmsnorm`, `kernels::matmul` for W1 and W3, then `kernels::swiglu`
// (`ops::mlp_in::cpu_twin`).
// Bindings: 0 W (read), 1 x (read), 2 hb (read_write), 3 params (uniform, dynamic offset),
//           4 step (uniform, dynamic offset), 5 norm weights (read).
// Workgroup: 64 threads per output i and tile of TILE_BATCH batch rows (each weight read
//            once for the tile). Dispatch: (min(hidden, 65535), ceil(hidden / 65535),
//            ceil(n_rows / TILE_BATCH)); i = wid.x + wid.y · nwg.x.

struct Params {
    n: u32,
    hidden: u32,
    block: u32,
    block_len: u32,
    up_at: u32,
    out_stride: u32,
    g_offset: u32,
    eps: f32,
}

@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> hb: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<uniform> step: Step;
@group(0) @binding(5) var<storage, read> gamma: array<f32>;

@compute @workgroup_size(64)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = wid.x + wid.y * nwg.x;
    if (i >= p.hidden) {
        return;
    }
    let tile = batch_tile(wid.z);
    let t0 = tile.x;
    let nt = tile.y;
    if (nt == 0u) {
        return;
    }
    norm_dots(p.block, p.block_len, i * p.n, p.up_at + i * p.n, t0 * p.n, p.n, nt, p.g_offset, p.n, lid.x);
    // One thread per batch row of the tile.
    if (lid.x < nt) {
        let inv = 1.0 / sqrt(dots_s[lid.x * 64u] / f32(p.n) + p.eps);
        let gate = dots_a[lid.x * 64u] * inv;
        let up = dots_b[lid.x * 64u] * inv;
        hb[(t0 + lid.x) * p.out_stride + i] = gate * (1.0 / (1.0 + exp(-gate))) * up;
    }
}
