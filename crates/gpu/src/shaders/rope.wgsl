// Rotary position embedding of q and of the new keys in the cache, for the batch rows
// row0 .. row0 + n_rows of one sequence, one pair (v[2j], v[2j+1]) per thread, rotated by
// pos·θ_j (pos = the row's position) with cos/sin from the table the CPU uses (so both
// backends rotate by the same numbers).
// Mirrors: `cpu::rope` with `cpu::RopeTable`.
// Bindings: 0 q (read_write), 1 key cache (read_write), 2 table (read: cos, sin interleaved,
//           (seq_len, head_size/2, 2)), 3 params (uniform, dynamic offset), 4 step (uniform,
//           dynamic offset), 5 rows (read: positions).
// Workgroup: 64. Dispatch: (ceil((q_pairs + k_pairs) / 64), n_rows, 1).

struct Params {
    q_pairs: u32,
    k_pairs: u32,
    half_head: u32,
    q_stride: u32,
    k_offset: u32,
    k_stride: u32,
    _p0: u32,
    _p1: u32,
}

struct Step { row0: u32, n_rows: u32, _p0: u32, _p1: u32 }

@group(0) @binding(0) var<storage, read_write> q: array<f32>;
@group(0) @binding(1) var<storage, read_write> k: array<f32>;
@group(0) @binding(2) var<storage, read> table: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<uniform> step: Step;
@group(0) @binding(5) var<storage, read> positions: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let t = step.row0 + gid.y;
    let pos = positions[t];
    if (i < p.q_pairs) {
        let j = i % p.half_head;
        let c = table[2u * (pos * p.half_head + j)];
        let s = table[2u * (pos * p.half_head + j) + 1u];
        let b = t * p.q_stride + 2u * i;
        let v0 = q[b];
        let v1 = q[b + 1u];
        q[b] = v0 * c - v1 * s;
        q[b + 1u] = v0 * s + v1 * c;
    } else if (i < p.q_pairs + p.k_pairs) {
        let ik = i - p.q_pairs;
        let j = ik % p.half_head;
        let c = table[2u * (pos * p.half_head + j)];
        let s = table[2u * (pos * p.half_head + j) + 1u];
        let b = p.k_offset + pos * p.k_stride + 2u * ik;
        let v0 = k[b];
        let v1 = k[b + 1u];
        k[b] = v0 * c - v1 * s;
        k[b + 1u] = v0 * s + v1 * c;
    }
}
