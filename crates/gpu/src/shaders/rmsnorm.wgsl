// RMSNorm of each batch row: out = w ⊙ x / sqrt(mean(x²) + ε), ε the model's (1e-5 in
// llama2.c). With `select`, output
// row i normalises input row rows[select_offset + i] (the final norm gathers the rows that
// want logits, so the classifier runs on those only).
// Mirrors: `kernels::rmsnorm`.
// Bindings: 0 x (read), 1 weights (read, at w_offset), 2 out (read_write), 3 params (uniform),
//           4 rows (read: the batch table).
// Workgroup: 64 threads per row (strided sum of squares, tree reduction).
// Dispatch: (rows, 1, 1).

struct Params { dim: u32, w_offset: u32, select_offset: u32, select: u32, eps: f32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read> table: array<u32>;

var<workgroup> partial: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    var src = wid.x;
    if (p.select != 0u) {
        src = table[p.select_offset + wid.x];
    }
    let base = src * p.dim;
    let obase = wid.x * p.dim;
    var ss = 0.0;
    for (var i = lid.x; i < p.dim; i += 64u) {
        let v = x[base + i];
        ss += v * v;
    }
    partial[lid.x] = ss;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            partial[lid.x] += partial[lid.x + s];
        }
        workgroupBarrier();
    }
    let inv = 1.0 / sqrt(partial[0] / f32(p.dim) + p.eps);
    for (var i = lid.x; i < p.dim; i += 64u) {
        out[obase + i] = w[p.w_offset + i] * (inv * x[base + i]);
    }
}
