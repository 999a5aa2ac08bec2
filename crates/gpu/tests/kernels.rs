//! Every WGSL kernel against its CPU twin in `decoding_engine::kernels`: one fixed case and a few
//! random shapes each, with a named tolerance (float sums run in a different order on the GPU,
//! and its exp is not libm's).
// Native only: these run on the Vulkan adapter (lavapipe without a GPU).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{assert_all_close, floats, gpu, twins};
use decoding_engine::kernels;
use decoding_engine::quant::{Precision, Tensor};
use decoding_gpu::ops;
use pollster::block_on;
use proptest::prelude::*;

/// Sums of products of O(1) numbers: a few ulps per term, relative to the magnitude.
/// The GPU multiplies quantized weights with float32 activations: so do its CPU twins.
const F32_ACTS: decoding_engine::quant::Activations = decoding_engine::quant::Activations::F32;
const MATMUL_TOL: (f32, f32) = (1e-5, 1e-5);
const RMSNORM_TOL: (f32, f32) = (1e-5, 1e-5);
/// RMSNorm folded into the product: the norm's scale applied after the sum, not before.
const FUSED_TOL: (f32, f32) = (1e-5, 2e-5);
/// exp on the GPU is within a few ulps; softmax weights then a weighted sum.
const ATTENTION_TOL: (f32, f32) = (2e-5, 1e-4);

fn cases() -> ProptestConfig {
    ProptestConfig::with_cases(6)
}

fn check_embed(vocab: usize, dim: usize, tokens: &[u32]) {
    let Some(ctx) = gpu() else { return };
    let emb = floats(vocab * dim, 1, 1.0);
    let got = block_on(ops::embed(
        ctx,
        &Tensor::F32(emb.clone().into()),
        tokens,
        dim,
    ))
    .unwrap();
    let want: Vec<f32> = tokens
        .iter()
        .flat_map(|&t| emb[t as usize * dim..(t as usize + 1) * dim].to_vec())
        .collect();
    assert_eq!(got, want, "embedding rows are copies");
}

#[test]
fn embed_matches_cpu_reference() {
    check_embed(512, 64, &[1, 403, 407, 261, 378]);
}

fn check_rmsnorm(rows: usize, dim: usize, seed: u64) {
    let Some(ctx) = gpu() else { return };
    let x = floats(rows * dim, seed, 3.0);
    let w = floats(dim, seed + 1, 1.0);
    let got = block_on(ops::rmsnorm(ctx, &x, &w, 1e-5)).unwrap();
    let mut want = vec![0.0; rows * dim];
    for (o, r) in want.chunks_mut(dim).zip(x.chunks(dim)) {
        kernels::rmsnorm(o, r, &w, 1e-5);
    }
    assert_all_close("rmsnorm", &got, &want, RMSNORM_TOL.0, RMSNORM_TOL.1);
}

#[test]
fn rmsnorm_matches_cpu_reference() {
    check_rmsnorm(3, 64, 7);
}

fn check_matmul(rows: usize, n: usize, tokens: usize, accumulate: bool, seed: u64) {
    let Some(ctx) = gpu() else { return };
    let w = floats(rows * n, seed, 0.5);
    let x = floats(tokens * n, seed + 1, 1.0);
    let acc = accumulate.then(|| floats(tokens * rows, seed + 2, 1.0));
    let w = Tensor::F32(w.into());
    let got = block_on(ops::matmul(ctx, &w, (1, 0), &x, n, acc.as_deref())).unwrap();
    let mut want = vec![0.0; tokens * rows];
    kernels::matmul(&mut want, &x, n, &[w.block(0, 1)]);
    if let Some(a) = &acc {
        kernels::add_in_place(&mut want, a);
    }
    assert_all_close(
        "matmul",
        &got,
        &want,
        MATMUL_TOL.0,
        MATMUL_TOL.1 * (n as f32).sqrt(),
    );
}

#[test]
fn matmul_matches_cpu_reference() {
    // stories260K's classifier shape (decode) and a prefill of 5 tokens with accumulation;
    // a submission's 64 batch rows over rows that are not whole tiles.
    check_matmul(512, 64, 1, false, 3);
    check_matmul(172, 64, 5, true, 4);
    check_matmul(173, 48, 64, true, 5);
}

/// The matmul's tiles (4 weight rows × 8 batch rows a workgroup, vec4 loads): 173 weight rows (the
/// last tile one row) over 20 batch rows (the last tile four): every batch row gets the bits
/// it gets alone, and the CPU's products within the tolerance, at f32, q8 and q4.
#[test]
fn matmul_tiles_give_each_batch_row_its_own_bits() {
    let Some(ctx) = gpu() else { return };
    // n = 288 (the 15M shape's dim): four weights a load (n ≥ 256, a multiple of 4).
    let (rows, n, tokens) = (173, 288, 20);
    let x = floats(tokens * n, 4, 1.0);
    for p in Precision::ALL {
        let w = matrix(p, rows, n, 3);
        let all = block_on(ops::matmul(ctx, &w, (1, 0), &x, n, None)).unwrap();
        for t in [0, 7, 8, 19] {
            let one = block_on(ops::matmul(
                ctx,
                &w,
                (1, 0),
                &x[t * n..(t + 1) * n],
                n,
                None,
            ))
            .unwrap();
            assert_eq!(
                &all[t * rows..(t + 1) * rows],
                &one[..],
                "{p} batch row {t}"
            );
        }
        let mut want = vec![0.0; tokens * rows];
        kernels::matmul(&mut want, &x, n, &[w.block(0, 1)]);
        let tol = MATMUL_TOL.1 * (n as f32).sqrt();
        assert_all_close(&format!("{p} tiled matmul"), &all, &want, MATMUL_TOL.0, tol);
    }
}

/// A quantized or f16 matrix (`blocks` layers of rows × n) on the GPU against the CPU's
/// row products (`quant::QRef::dot`, or the float32 dot of the widened f16 row: the CPU
/// twins), layer `block`, rows straddling groups where n is not a multiple of the group
/// (and f16 blocks that start in the middle of a word where rows × n is odd).
fn check_quantized_matmul(p: Precision, rows: usize, n: usize, tokens: usize, blocks: usize) {
    let Some(ctx) = gpu() else { return };
    let w = Tensor::F32(floats(blocks * rows * n, 5, 0.5).into())
        .at(p, blocks, 64)
        .with_activations(F32_ACTS);
    let x = floats(tokens * n, 6, 1.0);
    for block in [0, blocks - 1] {
        let got = block_on(ops::matmul(ctx, &w, (blocks, block), &x, n, None)).unwrap();
        let mut want = vec![0.0; tokens * rows];
        kernels::matmul(&mut want, &x, n, &[w.block(block, blocks)]);
        assert_all_close(
            &format!("{p} matmul {rows}x{n} block {block}"),
            &got,
            &want,
            MATMUL_TOL.0,
            MATMUL_TOL.1 * (n as f32).sqrt(),
        );
    }
}

#[test]
fn matmul_q8_matches_cpu_reference() {
    // stories260K's w2 (64 × 172, groups of 64 straddle its rows), 5 layers, decode and a
    // prefill of 3; its wq (64 × 64); a padded-word shape (7 × 9, 63 weights a layer).
    check_quantized_matmul(Precision::Q8, 64, 172, 1, 5);
    check_quantized_matmul(Precision::Q8, 64, 172, 3, 5);
    check_quantized_matmul(Precision::Q8, 64, 64, 2, 2);
    check_quantized_matmul(Precision::Q8, 7, 9, 2, 3);
    // n ≥ 256 and a multiple of 4: four weights a load (one word); 3 layers.
    check_quantized_matmul(Precision::Q8, 13, 288, 2, 3);
}

#[test]
fn matmul_f16_matches_cpu_reference() {
    check_quantized_matmul(Precision::F16, 64, 172, 1, 5);
    check_quantized_matmul(Precision::F16, 64, 172, 3, 5);
    // 63 weights a layer: layers 1 and 2 start in the high half of a word.
    check_quantized_matmul(Precision::F16, 7, 9, 2, 3);
    check_quantized_matmul(Precision::F16, 13, 288, 2, 3);
}

#[test]
fn matmul_q4_matches_cpu_reference() {
    check_quantized_matmul(Precision::Q4, 64, 172, 1, 5);
    check_quantized_matmul(Precision::Q4, 64, 172, 3, 5);
    check_quantized_matmul(Precision::Q4, 512, 64, 1, 1);
    check_quantized_matmul(Precision::Q4, 7, 9, 2, 3);
    check_quantized_matmul(Precision::Q4, 13, 288, 2, 3);
}

/// A quantized or f16 embedding table's rows, dequantized (widened) on the GPU, are the
/// CPU's exactly (one product q·d each; f16 widening is exact).
#[test]
fn embed_quantized_matches_cpu_reference() {
    let Some(ctx) = gpu() else { return };
    let (vocab, dim) = (512, 64);
    for p in [Precision::F16, Precision::Q8, Precision::Q4] {
        let emb = Tensor::F32(floats(vocab * dim, 1, 1.0).into()).at(p, 1, 64);
        let tokens = [1u32, 403, 407, 261, 511];
        let got = block_on(ops::embed(ctx, &emb, &tokens, dim)).unwrap();
        let mut want = vec![0.0; tokens.len() * dim];
        for (o, &t) in want.chunks_mut(dim).zip(&tokens) {
            emb.block(0, 1).row_into(t as usize, o);
        }
        assert_eq!(got, want, "{p}");
    }
}

/// A matrix of rows × n at `p` (groups of 64 for Q8: they straddle rows where n is not a
/// multiple of 64).
fn matrix(p: Precision, rows: usize, n: usize, seed: u64) -> Tensor {
    Tensor::F32(floats(rows * n, seed, 0.5).into())
        .at(p, 1, 64)
        .with_activations(F32_ACTS)
}

/// The fused Q/K/V kernel against its CPU twin: `kernels::rmsnorm`, `kernels::matmul` for Wq, Wk
/// and Wv, `kernels::rope` on q and k; k and v land in the cache at their positions.
fn check_qkv(
    p: Precision,
    n_heads: usize,
    n_kv_heads: usize,
    head_size: usize,
    tokens: usize,
    pos0: usize,
) {
    let Some(ctx) = gpu() else { return };
    let (dim, kv_dim) = (n_heads * head_size, n_kv_heads * head_size);
    let seq_len = pos0 + tokens + 2;
    let (wq, wk, wv) = (
        matrix(p, dim, dim, 1),
        matrix(p, kv_dim, dim, 2),
        matrix(p, kv_dim, dim, 3),
    );
    let x = floats(tokens * dim, 4, 3.0);
    let gamma = floats(dim, 5, 1.0);
    let cache = (
        floats(seq_len * kv_dim, 6, 1.0),
        floats(seq_len * kv_dim, 7, 1.0),
    );
    let shape = ops::QkvShape {
        dim,
        kv_dim,
        head_size,
        eps: 1e-5,
        pos0,
    };
    let flat = twins::rope_table(head_size, seq_len);
    let (gq, gk, gv) = block_on(ops::qkv(
        ctx,
        [&wq, &wk, &wv],
        &x,
        &gamma,
        &flat,
        shape,
        (&cache.0, &cache.1),
    ))
    .unwrap();
    let c = (&cache.0[..], &cache.1[..]);
    let (q, wkc, wvc) = twins::qkv(
        [&wq, &wk, &wv],
        &x,
        &gamma,
        1e-5,
        head_size,
        pos0,
        c,
        seq_len,
    );
    let tol = FUSED_TOL.1 * (dim as f32).sqrt();
    assert_all_close(&format!("{p} qkv q"), &gq, &q, FUSED_TOL.0, tol);
    assert_all_close(&format!("{p} qkv k cache"), &gk, &wkc, FUSED_TOL.0, tol);
    assert_all_close(&format!("{p} qkv v cache"), &gv, &wvc, FUSED_TOL.0, tol);
}

#[test]
fn qkv_matches_cpu_reference() {
    // stories260K's heads (8 query, 4 K/V, head size 8) at position 100 and a prefill of 3;
    // GQA 4:1 with head size 64; parts that are not whole groups (dim 18: Wq 324 weights,
    // Wk and Wv 108 each), packed with padding.
    for p in Precision::ALL {
        check_qkv(p, 8, 4, 8, 1, 100);
        check_qkv(p, 8, 4, 8, 3, 0);
        check_qkv(p, 4, 1, 64, 2, 7);
        // A prefill of 11 rows: a tile of 8 batch rows, then one of 3.
        check_qkv(p, 8, 4, 8, 11, 20);
        // Head size 128 (GQA 2:1), and a submission's 64 batch rows (eight tiles).
        check_qkv(p, 2, 1, 128, 3, 4);
        check_qkv(p, 4, 2, 16, 64, 0);
        check_qkv(p, 3, 1, 6, 2, 5);
    }
}

#[allow(clippy::too_many_arguments)]
fn check_attention(
    n_heads: usize,
    n_kv_heads: usize,
    head_size: usize,
    tokens: usize,
    pos0: usize,
    seed: u64,
) {
    let Some(ctx) = gpu() else { return };
    let seq_len = pos0 + tokens;
    let kv_dim = n_kv_heads * head_size;
    let dim = n_heads * head_size;
    let q = floats(tokens * dim, seed, 1.0);
    let keys = floats(seq_len * kv_dim, seed + 1, 1.0);
    let values = floats(seq_len * kv_dim, seed + 2, 1.0);
    let got = block_on(ops::attention(
        ctx, &q, &keys, &values, n_heads, n_kv_heads, head_size, seq_len, pos0,
    ))
    .unwrap();
    let mut want = vec![0.0; tokens * dim];
    let mut att = vec![0.0; seq_len];
    for t in 0..tokens {
        for h in 0..n_heads {
            let off = (h / (n_heads / n_kv_heads)) * head_size;
            let r = t * dim + h * head_size..t * dim + (h + 1) * head_size;
            kernels::attend_head(
                &mut want[r.clone()],
                &q[r],
                &keys,
                &values,
                kv_dim,
                off,
                pos0 + t,
                &mut att,
            );
        }
    }
    assert_all_close("attention", &got, &want, ATTENTION_TOL.0, ATTENTION_TOL.1);
}

#[test]
fn attention_matches_cpu_reference() {
    // stories260K's heads (8 query, 4 K/V: GQA factor 2) at position 200, and a prefill.
    check_attention(8, 4, 8, 1, 200, 21);
    check_attention(8, 4, 8, 6, 0, 22);
}

/// The fused MLP input against its CPU twin: `kernels::rmsnorm`, `kernels::matmul` for W1 and W3,
/// `kernels::swiglu`.
fn check_mlp_in(p: Precision, hidden: usize, dim: usize, tokens: usize, seed: u64) {
    let Some(ctx) = gpu() else { return };
    let (w1, w3) = (
        matrix(p, hidden, dim, seed),
        matrix(p, hidden, dim, seed + 1),
    );
    let x = floats(tokens * dim, seed + 2, 3.0);
    let gamma = floats(dim, seed + 3, 1.0);
    let got = block_on(ops::mlp_in(ctx, [&w1, &w3], &x, &gamma, 1e-5)).unwrap();
    let gate = twins::mlp_in([&w1, &w3], &x, &gamma, 1e-5);
    let tol = FUSED_TOL.1 * (dim as f32).sqrt();
    assert_all_close(&format!("{p} mlp_in"), &got, &gate, FUSED_TOL.0, tol);
}

#[test]
fn mlp_in_matches_cpu_reference() {
    // stories260K's MLP (172 × 64) at decode and a prefill of 4, and a shape whose W1 is
    // not whole groups (5 × 9: 45 weights), packed with padding.
    for p in Precision::ALL {
        check_mlp_in(p, 172, 64, 1, 9);
        check_mlp_in(p, 172, 64, 4, 10);
        check_mlp_in(p, 5, 9, 2, 11);
        // dim 256: four weights a load (the 15M's hidden 768 over dim 288 alike).
        check_mlp_in(p, 40, 256, 3, 12);
        // 19 rows: tiles of 8, 8 and 3 batch rows; a submission's 64.
        check_mlp_in(p, 172, 64, 19, 12);
        check_mlp_in(p, 40, 32, 64, 13);
    }
}

/// A batch row gets the same bits from the fused kernels in any tile: 19 rows at once
/// against each row alone (the one-row pipeline), with one weight a load (dim 64) and four
/// (dim 256).
#[test]
fn fused_tiles_give_each_batch_row_its_own_bits() {
    let Some(ctx) = gpu() else { return };
    for (hidden, dim) in [(172, 64), (40, 256)] {
        let tokens = 19;
        let (w1, w3) = (
            matrix(Precision::Q8, hidden, dim, 1),
            matrix(Precision::Q8, hidden, dim, 2),
        );
        let x = floats(tokens * dim, 3, 3.0);
        let gamma = floats(dim, 4, 1.0);
        let all = block_on(ops::mlp_in(ctx, [&w1, &w3], &x, &gamma, 1e-5)).unwrap();
        for t in [0, 8, 18] {
            let row = &x[t * dim..(t + 1) * dim];
            let one = block_on(ops::mlp_in(ctx, [&w1, &w3], row, &gamma, 1e-5)).unwrap();
            assert_eq!(
                &all[t * hidden..(t + 1) * hidden],
                &one[..],
                "dim {dim}, batch row {t}"
            );
        }
    }
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn embed_random_shapes(vocab in 2usize..300, dim in 1usize..150, n in 1usize..6, seed in 0u32..1000) {
        let tokens: Vec<u32> = (0..n).map(|i| ((seed as usize + i * 7) % vocab) as u32).collect();
        check_embed(vocab, dim, &tokens);
    }

    #[test]
    fn rmsnorm_random_shapes(rows in 1usize..5, dim in 1usize..300, seed in 0u64..1000) {
        check_rmsnorm(rows, dim, seed);
    }

    #[test]
    fn matmul_random_shapes(rows in 1usize..300, n in 1usize..300, tokens in 1usize..5, acc in any::<bool>(), seed in 0u64..1000) {
        check_matmul(rows, n, tokens, acc, seed);
    }

    #[test]
    fn qkv_random_shapes(kv in 1usize..4, mul in 1usize..4, half in 1usize..9, tokens in 1usize..4, pos0 in 0usize..300) {
        check_qkv(Precision::F32, kv * mul, kv, 2 * half, tokens, pos0);
    }

    #[test]
    fn attention_random_shapes(kv in 1usize..4, mul in 1usize..4, hs in 1usize..40, tokens in 1usize..4, pos0 in 0usize..200, seed in 0u64..1000) {
        check_attention(kv * mul, kv, hs, tokens, pos0, seed);
    }

    #[test]
    fn mlp_in_random_shapes(hidden in 1usize..400, dim in 1usize..200, tokens in 1usize..4, seed in 0u64..1000) {
        check_mlp_in(Precision::F32, hidden, dim, tokens, seed);
    }
}
