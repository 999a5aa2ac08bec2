// Matrix-vector (decode, one batch row) and matrix-matrix (several rows) product over the
// batch rows r = row0 .. row0 + n_rows of the step block:
//   out[output row of r] (=|+=) Σ_j W[w_offset + row·n + j] · x[x_offset + r·x_stride + j]
// W is read through `weight` (weights_f32/f16/q8/q4.wgsl, prepended, as are the flags' values
// from Rust, `ops::matmul::constants_wgsl`): w_offset is always a whole
// matrix (block = w_offset / (rows·n): a layer), so a quantized layer's groups are its own.
// Mirrors: `kernels::matmul` (and the residual `add_in_place` when flags & ACCUMULATE: add into
// out, as x += wo·xb and x += w2·hb). The output row of batch row r is r.
// Bindings: 0 W (read; f32, or packed u32 words for q8/q4), 1 x (read), 2 out (read_write),
//           3 params (uniform, dynamic offset), 4 step (uniform, dynamic offset: row0, n_rows).
// Workgroup: 64 threads per tile of TILE_ROWS weight rows × TILE_BATCH batch rows (their
//            values prepended from Rust, `ops::matmul::constants_wgsl`): each thread walks
//            j = lid, lid + 64, … (in a pipeline built with VEC4, `kernel::vec4_loads`,
//            where n is a multiple of 4 and at least 256 so every thread has a load: four
//            weights a load, j = 4·lid … 4·lid + 3, then 256 on) and
//            reads each weight once for all the tile's batch rows,
//            each input once for all its weight rows; then a tree reduction per output. Each
//            output's sum runs in the same order as one row alone, so a batch row gets the
//            same bits in any tile.
// Dispatch: (min(tiles, 65535), ceil(tiles / 65535), ceil(n_rows / TILE_BATCH)),
//           tiles = ceil(rows / TILE_ROWS); tile = wid.x + wid.y · nwg.x.

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

@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<uniform> step: Step;

const TILE: u32 = TILE_ROWS * TILE_BATCH;
var<workgroup> partial: array<f32, 64 * TILE>;

@compute @workgroup_size(64)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let row0 = (wid.x + wid.y * nwg.x) * TILE_ROWS;
    let t0 = step.row0 + wid.z * TILE_BATCH;
    let end = step.row0 + step.n_rows;
    if (row0 >= p.rows || t0 >= end) {
        return;
    }
    let nr = min(TILE_ROWS, p.rows - row0);
    let nt = min(TILE_BATCH, end - t0);
    let block_len = p.rows * p.n;
    let block = p.w_offset / block_len;
    var acc: array<f32, TILE>;
    if (VEC4 && p.n % 4u == 0u && p.n >= 256u) {
        // Four weights a load: thread lid takes j = 4·lid … 4·lid + 3, then 256 on.
        var xv: array<vec4<f32>, TILE_BATCH>;
        for (var j = lid.x * 4u; j < p.n; j += 256u) {
            for (var b = 0u; b < nt; b++) {
                let o = p.x_offset + (t0 + b) * p.x_stride + j;
                xv[b] = vec4<f32>(x[o], x[o + 1u], x[o + 2u], x[o + 3u]);
            }
            for (var r = 0u; r < nr; r++) {
                let wv = weight4(block, block_len, (row0 + r) * p.n + j);
                for (var b = 0u; b < nt; b++) {
                    let k = r * TILE_BATCH + b;
                    let v = wv * xv[b];
                    acc[k] += v.x;
                    acc[k] += v.y;
                    acc[k] += v.z;
                    acc[k] += v.w;
                }
            }
        }
    } else {
        var xv: array<f32, TILE_BATCH>;
        for (var j = lid.x; j < p.n; j += 64u) {
            for (var b = 0u; b < nt; b++) {
                xv[b] = x[p.x_offset + (t0 + b) * p.x_stride + j];
            }
            for (var r = 0u; r < nr; r++) {
                let wv = weight(block, block_len, (row0 + r) * p.n + j);
                for (var b = 0u; b < nt; b++) {
                    acc[r * TILE_BATCH + b] += wv * xv[b];
                }
            }
        }
    }
    // Only the tile's outputs (a decode row reduces its TILE_ROWS sums, not TILE's).
    for (var r = 0u; r < nr; r++) {
        for (var b = 0u; b < nt; b++) {
            let k = r * TILE_BATCH + b;
            partial[k * 64u + lid.x] = acc[k];
        }
    }
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            for (var r = 0u; r < nr; r++) {
                for (var b = 0u; b < nt; b++) {
                    let k = (r * TILE_BATCH + b) * 64u + lid.x;
                    partial[k] += partial[k + s];
                }
            }
        }
        workgroupBarrier();
    }
    // One thread per output of the tile.
    if (lid.x < nr * nt) {
        let r = lid.x / nt;
        let b = lid.x % nt;
        let sum = partial[(r * TILE_BATCH + b) * 64u];
        let o = p.out_offset + (t0 + b) * p.out_stride + row0 + r;
        if ((p.flags & ACCUMULATE) != 0u) {
            out[o] = out[o] + sum;
        } else {
            out[o] = sum;
        }
    }
}
