//! The fused kernels' CPU twins, composed of the reference kernels of `decoding_engine::kernels`
//! in the order the engine's forward pass runs them (shared by the native and the Chromium
//! tests).

use decoding_engine::kernels;
use decoding_engine::quant::Tensor;

/// RMSNorm of each row of x (rows of `gamma.len()`).
fn normed(x: &[f32], gamma: &[f32], eps: f32) -> Vec<f32> {
    let dim = gamma.len();
    let mut xb = vec![0.0; x.len()];
    for (o, r) in xb.chunks_mut(dim).zip(x.chunks(dim)) {
        kernels::rmsnorm(o, r, gamma, eps);
    }
    xb
}

/// `qkv.wgsl`'s twin: x̂ = RMSNorm(x); q, k, v = Wq·x̂, Wk·x̂, Wv·x̂; RoPE (the CPU's table,
/// base 10,000) on q and k at positions pos0..; k and v written into copies of the caches.
/// Returns (q, key cache, value cache).
#[allow(clippy::too_many_arguments)]
pub fn qkv(
    w: [&Tensor; 3],
    x: &[f32],
    gamma: &[f32],
    eps: f32,
    head_size: usize,
    pos0: usize,
    cache: (&[f32], &[f32]),
    seq_len: usize,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let dim = gamma.len();
    let kv_dim = w[1].len() / dim;
    let tokens = x.len() / dim;
    let table = kernels::RopeTable::new(head_size, seq_len, 10000.0);
    let xb = normed(x, gamma, eps);
    let mut q = vec![0.0; tokens * dim];
    kernels::matmul(&mut q, &xb, dim, &[w[0].block(0, 1)]);
    let (mut k, mut v) = (vec![0.0; tokens * kv_dim], vec![0.0; tokens * kv_dim]);
    kernels::matmul(&mut k, &xb, dim, &[w[1].block(0, 1)]);
    kernels::matmul(&mut v, &xb, dim, &[w[2].block(0, 1)]);
    let (mut kc, mut vc) = (cache.0.to_vec(), cache.1.to_vec());
    for t in 0..tokens {
        let (c, s) = table.at(pos0 + t);
        kernels::rope(&mut q[t * dim..(t + 1) * dim], head_size, c, s);
        kernels::rope(&mut k[t * kv_dim..(t + 1) * kv_dim], head_size, c, s);
        let at = (pos0 + t) * kv_dim;
        kc[at..at + kv_dim].copy_from_slice(&k[t * kv_dim..(t + 1) * kv_dim]);
        vc[at..at + kv_dim].copy_from_slice(&v[t * kv_dim..(t + 1) * kv_dim]);
    }
    (q, kc, vc)
}

/// `mlp_in.wgsl`'s twin: x̂ = RMSNorm(x); silu(W1·x̂) ⊙ (W3·x̂) (tokens × hidden).
pub fn mlp_in(w: [&Tensor; 2], x: &[f32], gamma: &[f32], eps: f32) -> Vec<f32> {
    let dim = gamma.len();
    let hidden = w[0].len() / dim;
    let tokens = x.len() / dim;
    let xb = normed(x, gamma, eps);
    let (mut gate, mut up) = (vec![0.0; tokens * hidden], vec![0.0; tokens * hidden]);
    kernels::matmul(&mut gate, &xb, dim, &[w[0].block(0, 1)]);
    kernels::matmul(&mut up, &xb, dim, &[w[1].block(0, 1)]);
    for (g, u) in gate.chunks_mut(hidden).zip(up.chunks_mut(hidden)) {
        kernels::swiglu(g, u);
    }
    gate
}

/// The CPU's cos/sin table (base 10,000), interleaved as the GPU holds it.
pub fn rope_table(head_size: usize, seq_len: usize) -> Vec<f32> {
    let table = kernels::RopeTable::new(head_size, seq_len, 10000.0);
    let mut flat = Vec::new();
    for pos in 0..seq_len {
        let (c, s) = table.at(pos);
        for j in 0..c.len() {
            flat.push(c[j]);
            flat.push(s[j]);
        }
    }
    flat
}
