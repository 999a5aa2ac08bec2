// Two rows of a matrix against one normalised input row, for the kernels that fold RMSNorm
// into the product that consumes it (qkv.wgsl, mlp_in.wgsl): over j < n,
//   Σ W[a + j]·γ[g0 + j]·x[x0 + j],  Σ W[b + j]·γ[g0 + j]·x[x0 + j],  Σ x[x0 + j]²
// reduced over the workgroup (64 threads, strided, tree reduction). The caller scales the
// two sums by 1 / sqrt(Σ x² / n + ε): the norm's scale taken out of the sum (the CPU scales
// x first, `cpu::rmsnorm`; the products differ in the last bits). Uses the kernel's `x`,
// `gamma` and the weights' `weight` (prepended). Called from uniform control flow.

var<workgroup> part_a: array<f32, 64>;
var<workgroup> part_b: array<f32, 64>;
var<workgroup> part_s: array<f32, 64>;

fn norm_dots(block: u32, block_len: u32, a: u32, b: u32, x0: u32, g0: u32, n: u32, lid: u32) -> vec3<f32> {
    var sa = 0.0;
    var sb = 0.0;
    var ss = 0.0;
    for (var j = lid; j < n; j += 64u) {
        let v = x[x0 + j];
        let gv = gamma[g0 + j] * v;
        sa += weight(block, block_len, a + j) * gv;
        sb += weight(block, block_len, b + j) * gv;
        ss += v * v;
    }
    part_a[lid] = sa;
    part_b[lid] = sb;
    part_s[lid] = ss;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid < s) {
            part_a[lid] += part_a[lid + s];
            part_b[lid] += part_b[lid + s];
            part_s[lid] += part_s[lid + s];
        }
        workgroupBarrier();
    }
    return vec3<f32>(part_a[0], part_b[0], part_s[0]);
}
