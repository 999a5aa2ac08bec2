//! The WebGPU backend in headless Chromium (Chromium's SwiftShader adapter, exposed by
//! `--enable-unsafe-webgpu`; flags in `webdriver.json`): the same greedy text as the CPU
//! backend compiled to the same wasm.
#![cfg(target_arch = "wasm32")]

use decoding_engine::backend::{Backend, CpuBackend};
use decoding_engine::decode::generation::{Generation, StepOutcome};
use decoding_engine::decode::sampling::RawSettings;
use decoding_engine::quant::Activations;
use decoding_engine::{Model, Precision};
use decoding_gpu::{GpuBackend, GpuContext};
use std::rc::Rc;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[path = "common/twins.rs"]
mod twins;

const MODEL: &[u8] = include_bytes!("../../../assets/models/stories260K/stories260K.bin");
const TOKENIZER: &[u8] = include_bytes!("../../../assets/models/stories260K/tok512.bin");

async fn greedy(be: &mut dyn Backend, m: &Model, n: usize) -> Vec<u32> {
    let s = RawSettings::from_pairs([("temperature", "0"), ("max_tokens", &n.to_string())])
        .validate(512)
        .unwrap();
    let ids = m.encode_prompt("Once upon a time").unwrap();
    let mut g = Generation::start(be, ids, vec![1, 2]).await.unwrap();
    while let StepOutcome::Token { stop: None, .. } = g.step(be, &s, &m.tokenizer).await.unwrap() {}
    g.generated_ids()
}

#[wasm_bindgen_test]
async fn webgpu_in_chromium_generates_the_cpu_greedy_text() {
    let m = Model::from_memory(
        [("model.bin", MODEL), ("tokenizer.bin", TOKENIZER)],
        decoding_engine::budget::Budget::default(),
    )
    .unwrap();
    let ctx = GpuContext::new()
        .await
        .expect("headless Chromium with --enable-unsafe-webgpu exposes WebGPU");
    web_sys_log(&format!("WebGPU adapter: {}", ctx.describe()));
    let mut gpu = GpuBackend::new(Rc::new(ctx), &m.transformer).unwrap();
    let mut cpu = CpuBackend::new(m.transformer.clone());
    let on_gpu = greedy(&mut gpu, &m, 40).await;
    let on_cpu = greedy(&mut cpu, &m, 40).await;
    assert_eq!(on_gpu, on_cpu);
    let text = m.tokenizer.decode(&on_gpu).unwrap();
    assert!(
        text.starts_with(", there was a little girl named Lily."),
        "{text}"
    );
}

/// The quantized kernels in Chromium's WebGPU against their CPU twins (stories260K's w2:
/// rows straddling groups; f16), and f16/q8/q4 greedy text equal to the CPU's.
#[wasm_bindgen_test]
async fn quantized_kernels_and_text_in_chromium_match_the_cpu() {
    let m = Model::from_memory(
        [("model.bin", MODEL), ("tokenizer.bin", TOKENIZER)],
        decoding_engine::budget::Budget::default(),
    )
    .unwrap();
    let ctx = GpuContext::new().await.expect("WebGPU");
    let c = m.transformer.config;
    let x: Vec<f32> = (0..3 * c.hidden_dim)
        .map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0)
        .collect();
    for p in [Precision::F16, Precision::Q8, Precision::Q4] {
        // float32 activations, as the GPU's kernels multiply them
        let q = m.transformer.at(p).with_activations(Activations::F32);
        for layer in [0, c.n_layers - 1] {
            let got = decoding_gpu::ops::matmul(
                &ctx,
                &q.weights.w2,
                (c.n_layers, layer),
                &x,
                c.hidden_dim,
                None,
            )
            .await
            .unwrap();
            let mut want = vec![0.0; 3 * c.dim];
            decoding_engine::kernels::matmul(
                &mut want,
                &x,
                c.hidden_dim,
                &[q.weights.w2.block(layer, c.n_layers)],
            );
            for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-4 * b.abs().max(1.0),
                    "{p} layer {layer} [{i}]: {a} vs {b}"
                );
            }
        }
        // The quantized embedding table, dequantized on the GPU row by row: the CPU's values.
        let tokens = [1u32, 403, 407, 261, 511];
        let got = decoding_gpu::ops::embed(&ctx, &q.weights.token_embedding, &tokens, c.dim)
            .await
            .unwrap();
        let mut want = vec![0.0; tokens.len() * c.dim];
        for (o, &t) in want.chunks_mut(c.dim).zip(&tokens) {
            q.weights
                .token_embedding
                .block(0, 1)
                .row_into(t as usize, o);
        }
        assert_eq!(got, want, "{p} embedding");
        let qm = m.with_transformer(std::sync::Arc::new(q));
        let ctx = GpuContext::new().await.expect("WebGPU");
        let mut gpu = GpuBackend::new(Rc::new(ctx), &qm.transformer).unwrap();
        // float32 activations, as the GPU's kernels multiply them
        let mut cpu = CpuBackend::new(std::sync::Arc::new(
            qm.transformer
                .with_activations(decoding_engine::quant::Activations::F32),
        ));
        let on_gpu = greedy(&mut gpu, &qm, 40).await;
        let on_cpu = greedy(&mut cpu, &qm, 40).await;
        assert_eq!(on_gpu, on_cpu, "{p}");
    }
}

/// The fused kernels in Chromium's WebGPU against their CPU twins, on stories260K's layer 0
/// at f32, f16, q8 and q4: Q/K/V with the norm, RoPE and the cache write (a prefill of three
/// rows at position 5), and the MLP's input with the norm and SwiGLU.
#[wasm_bindgen_test]
async fn fused_kernels_in_chromium_match_their_cpu_twins() {
    use decoding_engine::quant::Tensor;
    let m = Model::from_memory(
        [("model.bin", MODEL), ("tokenizer.bin", TOKENIZER)],
        decoding_engine::budget::Budget::default(),
    )
    .unwrap();
    let ctx = GpuContext::new().await.expect("WebGPU");
    let c = m.transformer.config;
    let w = &m.transformer.weights;
    let (dim, kv, hidden, hs) = (c.dim, c.kv_dim(), c.hidden_dim, c.head_size());
    let layer0 = |t: &Tensor, len: usize, p: Precision| {
        let Tensor::F32(v) = t else {
            panic!("stories260K is float32")
        };
        let v = &v[..len];
        Tensor::F32(v.to_vec().into())
            .at(p, 1, 64)
            .with_activations(Activations::F32)
    };
    let x: Vec<f32> = (0..3 * dim)
        .map(|i| ((i * 37 % 101) as f32 / 25.0) - 2.0)
        .collect();
    let (pos0, seq_len) = (5, 8);
    let cache = (vec![0.5; seq_len * kv], vec![-0.5; seq_len * kv]);
    let table = twins::rope_table(hs, seq_len);
    let close = |what: &str, got: &[f32], want: &[f32]| {
        for (i, (a, b)) in got.iter().zip(want).enumerate() {
            assert!(
                (a - b).abs() <= 1e-4 * b.abs().max(1.0),
                "{what} [{i}]: {a} vs {b}"
            );
        }
    };
    for p in Precision::ALL {
        let qkv_w = [
            layer0(&w.wq, dim * dim, p),
            layer0(&w.wk, kv * dim, p),
            layer0(&w.wv, kv * dim, p),
        ];
        let ws = [&qkv_w[0], &qkv_w[1], &qkv_w[2]];
        let gamma = &w.rms_att[..dim];
        let shape = decoding_gpu::ops::QkvShape {
            dim,
            kv_dim: kv,
            head_size: hs,
            eps: c.rms_eps,
            pos0,
        };
        let caches = (&cache.0[..], &cache.1[..]);
        let got = decoding_gpu::ops::qkv(&ctx, ws, &x, gamma, &table, shape, caches)
            .await
            .unwrap();
        let want = twins::qkv(ws, &x, gamma, c.rms_eps, hs, pos0, caches, seq_len);
        close(&format!("{p} q"), &got.0, &want.0);
        close(&format!("{p} key cache"), &got.1, &want.1);
        close(&format!("{p} value cache"), &got.2, &want.2);
        let (w1, w3) = (
            layer0(&w.w1, hidden * dim, p),
            layer0(&w.w3, hidden * dim, p),
        );
        let gamma = &w.rms_ffn[..dim];
        let got = decoding_gpu::ops::mlp_in(&ctx, [&w1, &w3], &x, gamma, c.rms_eps)
            .await
            .unwrap();
        close(
            &format!("{p} mlp_in"),
            &got,
            &twins::mlp_in([&w1, &w3], &x, gamma, c.rms_eps),
        );
    }
}

fn web_sys_log(s: &str) {
    wasm_bindgen_test::console_log!("{}", s);
}

/// Four weights a load in Chromium's WebGPU (rows of 288, `kernel::vec4_loads`): the matrix
/// product at every precision against the CPU's, three layers of 13 rows.
#[wasm_bindgen_test]
async fn vec4_matmul_in_chromium_matches_the_cpu() {
    use decoding_engine::quant::Tensor;
    let ctx = GpuContext::new().await.expect("WebGPU");
    let (rows, n, layers) = (13, 288, 3);
    let wave = |len: usize, k: usize| -> Vec<f32> {
        (0..len)
            .map(|i| ((i * k % 97) as f32 / 48.0) - 1.0)
            .collect()
    };
    let x = wave(2 * n, 31);
    let f = Tensor::F32(wave(layers * rows * n, 17).into());
    for p in Precision::ALL {
        let w = f.at(p, layers, 64).with_activations(Activations::F32);
        let got = decoding_gpu::ops::matmul(&ctx, &w, (layers, 2), &x, n, None)
            .await
            .unwrap();
        let mut want = vec![0.0; 2 * rows];
        decoding_engine::kernels::matmul(&mut want, &x, n, &[w.block(2, layers)]);
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!(
                (a - b).abs() <= 1e-4 * b.abs().max(1.0) * (n as f32).sqrt(),
                "{p} [{i}]: {a} vs {b}"
            );
        }
    }
}
