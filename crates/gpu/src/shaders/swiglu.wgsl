// SwiGLU on each batch row's (gate, up) pair: gate = silu(gate) ⊙ up, silu(v) = v·σ(v).
// Mirrors: `cpu::swiglu` (here hb holds each row's w1·x then its w3·x, (rows, 2, hidden);
// the CPU keeps all gates, then all ups).
// Bindings: 0 hb (read_write, (rows, 2, hidden)), 1 params (uniform).
// Workgroup: 64. Dispatch: (ceil(hidden / 64), rows, 1).

struct Params { hidden: u32, _p0: u32, _p1: u32, _p2: u32 }

@group(0) @binding(0) var<storage, read_write> hb: array<f32>;
@group(0) @binding(1) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let t = gid.y;
    if (i >= p.hidden) {
        return;
    }
    let b = t * 2u * p.hidden;
    let g = hb[b + i];
    let u = hb[b + p.hidden + i];
    hb[b + i] = g * (1.0 / (1.0 + exp(-g))) * u;
}
