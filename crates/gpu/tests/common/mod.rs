//! The shared GPU context of the tests, tolerant comparison reporting the worst element, and
//! the forward-pass tests' model, backend, settings and generation.
#![allow(dead_code)]

/// The engine's tests' own softmax (one copy for both crates).
#[path = "../../../engine/tests/common/softmax.rs"]
pub mod softmax;
pub mod twins;

use decoding_engine::backend::Backend;
use decoding_engine::decode::generation::{Generation, StepOutcome};
use decoding_engine::decode::sampling::{RawSettings, Settings};
use decoding_engine::Model;
use decoding_gpu::{GpuBackend, GpuContext};
use pollster::block_on;
use std::rc::Rc;
use std::sync::OnceLock;

/// Set (to 1) in CI: a test that finds no GPU adapter fails instead of skipping.
pub const REQUIRE_GPU: &str = "DECODING_EXPLORER_REQUIRE_GPU";

static CTX: OnceLock<Option<GpuContext>> = OnceLock::new();

/// The test device (Mesa's lavapipe where there is no GPU), or None (skip) when there is no
/// adapter and the GPU is not required.
pub fn gpu() -> Option<&'static GpuContext> {
    CTX.get_or_init(|| match pollster::block_on(GpuContext::new()) {
        Ok(c) => {
            eprintln!("GPU tests on {}", c.describe());
            Some(c)
        }
        Err(e) => {
            if std::env::var(REQUIRE_GPU).is_ok_and(|v| v == "1") {
                panic!("{REQUIRE_GPU}=1 but no GPU is usable: {e}");
            }
            eprintln!("skipping GPU test: {e} (set {REQUIRE_GPU}=1 to make this a failure)");
            None
        }
    })
    .as_ref()
}

/// |a − b| ≤ atol + rtol·|b| everywhere, else a message naming the worst element.
#[track_caller]
pub fn assert_all_close(what: &str, got: &[f32], want: &[f32], atol: f32, rtol: f32) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    let mut worst = (0usize, 0.0f32);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let excess = (g - w).abs() - (atol + rtol * w.abs());
        if excess > worst.1 || !g.is_finite() {
            worst = (i, if g.is_finite() { excess } else { f32::INFINITY });
        }
    }
    let (i, e) = worst;
    assert!(
        e <= 0.0,
        "{what}: worst element {i}: GPU {} vs CPU {} (|Δ| = {}, tolerance {} + {}·|cpu|)",
        got[i],
        want[i],
        (got[i] - want[i]).abs(),
        atol,
        rtol
    );
}

/// Deterministic pseudo-random floats in [-scale, scale).
pub fn floats(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

/// stories260K with its tokenizer.
pub fn model() -> Model {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/models/stories260K");
    let read = |n: &str| std::fs::read(dir.join(n)).expect("run scripts/fetch-models.sh");
    Model::from_memory(
        [
            ("model.bin", &read("stories260K.bin")),
            ("tokenizer.bin", &read("tok512.bin")),
        ],
        decoding_engine::budget::Budget::default(),
    )
    .unwrap()
}

/// A fresh GPU backend on its own device (device-loss tests destroy theirs).
pub fn gpu_backend(m: &Model) -> Option<GpuBackend> {
    gpu()?;
    let ctx = block_on(GpuContext::new()).unwrap();
    Some(GpuBackend::new(Rc::new(ctx), &m.transformer).unwrap())
}

/// Validated settings from (name, value) pairs, for a vocabulary of 512.
pub fn settings(pairs: &[(&str, &str)]) -> Settings {
    RawSettings::from_pairs(pairs.iter().copied())
        .validate(512)
        .unwrap()
}

/// The tokens generated from `prompt` under `s` until a stop.
pub fn generate(be: &mut dyn Backend, m: &Model, prompt: &str, s: &Settings) -> Vec<u32> {
    let ids = m.encode_prompt(prompt).unwrap();
    let mut g = block_on(Generation::start(
        be,
        ids,
        vec![m.tokenizer.eos, m.tokenizer.bos],
    ))
    .unwrap();
    while let StepOutcome::Token { stop: None, .. } = block_on(g.step(be, s, &m.tokenizer)).unwrap()
    {
    }
    g.generated_ids()
}
