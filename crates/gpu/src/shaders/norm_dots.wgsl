// Two rows of a matrix against up to TILE_BATCH normalised input rows, for the kernels that
// fold RMSNorm into the product that consumes it (qkv.wgsl, mlp_in.wgsl): for each batch row
// t < nt (input row x0 + t·stride), over j < n (four weights a load where n, a, b and the
// block are multiples of 4 and n ≥ 256, in a pipeline built with VEC4: `kernel::vec4_loads`),
//   Σ W[a + j]·γ[g0 + j]·x[j],  Σ W[b + j]·γ[g0 + j]·x[j],  Σ x[j]²
// reduced over the workgroup (64 threads, strided, tree reduction) into `dots_a[t·64]`,
// `dots_b[t·64]`, `dots_s[t·64]`. Each weight is read once for all nt rows. The caller
// scales the two sums by 1 / sqrt(Σ x² / n + ε): the norm's scale taken out of the sum (the
// CPU scales x first, `kernels::rmsnorm`; the products differ in the last bits). Uses the
// kernel's `x`, `gamma`, TILE_BATCH and the weights' `weight` (prepended). Called from
// uniform control flow.

// Tile `z` of the step's batch rows: its first row and how many it holds (0 past the end).
// Uses the kernel's `step`.
fn batch_tile(z: u32) -> vec2<u32> {
    let t0 = step.row0 + z * TILE_BATCH;
    let end = step.row0 + step.n_rows;
    if (t0 >= end) {
        return vec2<u32>(t0, 0u);
    }
    return vec2<u32>(t0, min(TILE_BATCH, end - t0));
}

var<workgroup> dots_a: array<f32, 64 * TILE_BATCH>;
var<workgroup> dots_b: array<f32, 64 * TILE_BATCH>;
var<workgroup> dots_s: array<f32, 64 * TILE_BATCH>;

fn norm_dots(block: u32, block_len: u32, a: u32, b: u32, x0: u32, stride: u32, nt: u32, g0: u32, n: u32, lid: u32) {
    var sa: array<f32, TILE_BATCH>;
    var sb: array<f32, TILE_BATCH>;
    var ss: array<f32, TILE_BATCH>;
    if (VEC4 && n % 4u == 0u && n >= 256u && a % 4u == 0u && b % 4u == 0u && block_len % 4u == 0u) {
        // Four weights a load: thread lid takes j = 4·lid … 4·lid + 3, then 256 on.
        for (var j = lid * 4u; j < n; j += 256u) {
            let wa = weight4(block, block_len, a + j);
            let wb = weight4(block, block_len, b + j);
            let gj = vec4<f32>(gamma[g0 + j], gamma[g0 + j + 1u], gamma[g0 + j + 2u], gamma[g0 + j + 3u]);
            for (var t = 0u; t < nt; t++) {
                let o = x0 + t * stride + j;
                let v = vec4<f32>(x[o], x[o + 1u], x[o + 2u], x[o + 3u]);
                let gv = gj * v;
                let pa = wa * gv;
                let pb = wb * gv;
                let pv = v * v;
                sa[t] += pa.x;
                sa[t] += pa.y;
                sa[t] += pa.z;
                sa[t] += pa.w;
                sb[t] += pb.x;
                sb[t] += pb.y;
                sb[t] += pb.z;
                sb[t] += pb.w;
                ss[t] += pv.x;
                ss[t] += pv.y;
                ss[t] += pv.z;
                ss[t] += pv.w;
            }
        }
    } else {
        for (var j = lid; j < n; j += 64u) {
            let wa = weight(block, block_len, a + j);
            let wb = weight(block, block_len, b + j);
            let gj = gamma[g0 + j];
            for (var t = 0u; t < nt; t++) {
                let v = x[x0 + t * stride + j];
                let gv = gj * v;
                sa[t] += wa * gv;
                sb[t] += wb * gv;
                ss[t] += v * v;
            }
        }
    }
    for (var t = 0u; t < nt; t++) {
        dots_a[t * 64u + lid] = sa[t];
        dots_b[t * 64u + lid] = sb[t];
        dots_s[t * 64u + lid] = ss[t];
    }
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid < s) {
            for (var t = 0u; t < nt; t++) {
                let k = t * 64u + lid;
                dots_a[k] += dots_a[k + s];
                dots_b[k] += dots_b[k + s];
                dots_s[k] += dots_s[k + s];
            }
        }
        workgroupBarrier();
    }
}
