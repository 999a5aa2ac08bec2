// Matrix-vector (decode, one batch row) and matrix-matrix (several rows) product over the
// batch rows r = row0 .. row0 + n_rows of the step block:
//   out[output row of r] (=|+=) Σ_j W[w_offset + row·n + j] · x[x_offset + r·x_stride + j]
// W is read through `weight` (weights_f32/q8/q4.wgsl, prepended, as are the flags' values
// from Rust, `ops::matmul::flags_wgsl`): w_offset is always a whole
// matrix (block = w_offset / (rows·n): a layer), so a quantized layer's groups are its own.
// Mirrors: `cpu::matmul` (and the residual `add_in_place` when flags & ACCUMULATE: add into
// out, as x += wo·xb and x += w2·hb). The output row of batch row r is r.
// Bindings: 0 W (read; f32, or packed u32 words for q8/q4), 1 x (read), 2 out (read_write),
//           3 params (uniform, dynamic offset), 4 step (uniform, dynamic offset: row0, n_rows).
// Workgroup: 64 threads per (weight row, batch row): coalesced strided dot product, tree
//            reduction.
// Dispatch: (min(rows, 65535), ceil(rows / 65535), n_rows); row = wid.x + wid.y · nwg.x.

struct Params {
    n: u32,
    rows: u32,
    w_offset: u32,
    x_offset: u32,
    x_stride: u32,
    out_offset: u32,
    out_stride: u32,
    flags: u32,
}

struct Step { row0: u32, n_rows: u32, _p0: u32, _p1: u32 }

@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<uniform> step: Step;

var<workgroup> partial: array<f32, 64>;

@compute @workgroup_size(64)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let row = wid.x + wid.y * nwg.x;
    let t = step.row0 + wid.z;
    if (row >= p.rows) {
        return;
    }
    let block_len = p.rows * p.n;
    let block = p.w_offset / block_len;
    let wbase = row * p.n;
    let xbase = p.x_offset + t * p.x_stride;
    var acc = 0.0;
    for (var j = lid.x; j < p.n; j += 64u) {
        acc += weight(block, block_len, wbase + j) * x[xbase + j];
    }
    partial[lid.x] = acc;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            partial[lid.x] += partial[lid.x + s];
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        let o = p.out_offset + t * p.out_stride + row;
        if ((p.flags & ACCUMULATE) != 0u) {
            out[o] = out[o] + partial[0];
        } else {
            out[o] = partial[0];
        }
    }
}
