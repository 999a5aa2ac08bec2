//! The WebGPU backend in headless Chromium (Chromium's SwiftShader adapter, exposed by
//! `--enable-unsafe-webgpu`; flags in `webdriver.json`): the same greedy text as the CPU
//! backend compiled to the same wasm.
#![cfg(target_arch = "wasm32")]

use decoding_engine::backend::{Backend, CpuBackend};
use decoding_engine::generation::{Generation, StepOutcome};
use decoding_engine::sampling::RawSettings;
use decoding_engine::Model;
use decoding_gpu::{GpuBackend, GpuContext};
use std::rc::Rc;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

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
    let m = Model::from_bytes(MODEL, TOKENIZER).unwrap();
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

fn web_sys_log(s: &str) {
    wasm_bindgen_test::console_log!("{}", s);
}
