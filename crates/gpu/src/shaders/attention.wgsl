// Attention of one query head of one batch row against the cached keys/values of its
// sequence's layer, positions 0..=pos (pos = the row's position; causal): scores =
// q·k / sqrt(head_size), softmax, out = Σ att·v. Query head h reads K/V head h / kv_mul
// (grouped-query attention). The rows row0 .. row0 + n_rows belong to one sequence.
// Mirrors: `kernels::attend_head`.
// Bindings: 0 q (read), 1 key cache (read), 2 value cache (read), 3 att scratch
//           (read_write, (rows, n_heads, seq_len)), 4 out (read_write),
//           5 params (uniform, dynamic offset), 6 step (uniform, dynamic offset),
//           7 rows (read: positions).
// Workgroup: 64 threads per (head, row): positions strided over threads, max and sum by
//            tree reduction, then one thread per output element.
// Dispatch: (n_heads, n_rows, 1).

struct Params {
    n_heads: u32,
    head_size: u32,
    kv_dim: u32,
    kv_mul: u32,
    seq_len: u32,
    layer_offset: u32,
    q_stride: u32,
    _p0: u32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> kc: array<f32>;
@group(0) @binding(2) var<storage, read> vc: array<f32>;
@group(0) @binding(3) var<storage, read_write> att: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;
@group(0) @binding(6) var<uniform> step: Step;
@group(0) @binding(7) var<storage, read> positions: array<u32>;

var<workgroup> red: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let h = wid.x;
    let t = step.row0 + wid.y;
    let pos = positions[t];
    let qb = t * p.q_stride + h * p.head_size;
    let kvo = (h / p.kv_mul) * p.head_size;
    let ab = (t * p.n_heads + h) * p.seq_len;
    let scale = 1.0 / sqrt(f32(p.head_size));

    // Scores, and each thread's maximum.
    var m = -3.0e38;
    for (var s = lid.x; s <= pos; s += 64u) {
        let kb = p.layer_offset + s * p.kv_dim + kvo;
        var d = 0.0;
        for (var i = 0u; i < p.head_size; i += 1u) {
            d += q[qb + i] * kc[kb + i];
        }
        let sc = d * scale;
        att[ab + s] = sc;
        m = max(m, sc);
    }
    red[lid.x] = m;
    workgroupBarrier();
    for (var r = 32u; r > 0u; r >>= 1u) {
        if (lid.x < r) {
            red[lid.x] = max(red[lid.x], red[lid.x + r]);
        }
        workgroupBarrier();
    }
    let mx = red[0];
    workgroupBarrier();

    // exp(score − max) and the sum.
    var sum = 0.0;
    for (var s = lid.x; s <= pos; s += 64u) {
        let e = exp(att[ab + s] - mx);
        att[ab + s] = e;
        sum += e;
    }
    red[lid.x] = sum;
    workgroupBarrier();
    for (var r = 32u; r > 0u; r >>= 1u) {
        if (lid.x < r) {
            red[lid.x] += red[lid.x + r];
        }
        workgroupBarrier();
    }
    let total = red[0];
    storageBarrier();
    workgroupBarrier();

    // Weighted sum of the values, one output element per thread.
    for (var i = lid.x; i < p.head_size; i += 64u) {
        var acc = 0.0;
        for (var s = 0u; s <= pos; s += 1u) {
            acc += att[ab + s] * vc[p.layer_offset + s * p.kv_dim + kvo + i];
        }
        out[qb + i] = acc / total;
    }
}
