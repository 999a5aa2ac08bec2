//! What happens around the GPU's forward pass, on stories260K: limits (a tensor beyond the
//! device's binding size refused by name), fallback (the backend chosen, and why) and device
//! loss (the engine carries on, on the CPU, with the same transcript).
// Native only: these run on the Vulkan adapter (lavapipe without a GPU).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{generate, gpu, gpu_backend, model, settings};
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::backend::engine::Engine;
use decoding_engine::backend::{Backend, CpuBackend};
use decoding_engine::decode::generation::{Generation, StepOutcome};
use decoding_engine::{BackendError, BackendKind};
use decoding_gpu::select::select;
use decoding_gpu::{GpuBackend, GpuContext, GpuError};
use pollster::block_on;
use std::rc::Rc;

#[test]
fn tensors_beyond_the_binding_limit_are_refused_clearly() {
    let m = model();
    let Some(_) = gpu() else { return };
    let mut ctx = block_on(GpuContext::new()).unwrap();
    // Pretend the device binds at most 100 KB: the 131 KB embedding does not fit.
    ctx.limits.max_storage_buffer_binding_size = 100_000;
    match GpuBackend::new(Rc::new(ctx), &m.transformer) {
        Err(GpuError::TensorTooLarge {
            tensor,
            bytes,
            limit,
        }) => {
            assert_eq!(
                (tensor.as_str(), bytes, limit),
                ("token_embedding", 131_072, 100_000)
            );
        }
        Err(e) => panic!("unexpected {e}"),
        Ok(_) => panic!("a too-large tensor was accepted"),
    }
}

#[test]
fn auto_falls_back_to_the_cpu_and_says_why() {
    let m = model();
    let model = m.transformer.clone();
    let start = std::time::Instant::now();
    let now = || start.elapsed().as_secs_f64() * 1000.0;
    let no_adapter = Err(GpuError::NoAdapter("none found".into()));
    let (be, report) = block_on(select(BackendChoice::Auto, &model, no_adapter, &now)).unwrap();
    assert_eq!(be.kind(), BackendKind::Cpu);
    assert_eq!(report.kind, BackendKind::Cpu);
    assert!(report
        .reason
        .contains("no GPU adapter is available (none found); using the CPU"));
    let e = block_on(select(
        BackendChoice::Gpu,
        &model,
        Err(GpuError::NoWebGpu),
        &now,
    ))
    .err()
    .unwrap();
    assert_eq!(
        e.to_string(),
        "this browser does not expose WebGPU; using the CPU"
    );
    let (be, report) = block_on(select(
        BackendChoice::Cpu,
        &model,
        Err(GpuError::NoWebGpu),
        &now,
    ))
    .unwrap();
    assert_eq!(
        (be.kind(), report.reason.as_str()),
        (BackendKind::Cpu, "the CPU backend was chosen")
    );
    if gpu().is_some() {
        // Asked for, the GPU runs whatever it is.
        let (be, report) = block_on(select(
            BackendChoice::Gpu,
            &model,
            block_on(GpuContext::new()),
            &now,
        ))
        .unwrap();
        assert_eq!(be.kind(), BackendKind::Gpu);
        assert!(report.reason.starts_with("WebGPU on "));
        // Five dispatches a layer (stories260K has five layers) and three a token.
        assert_eq!(report.dispatches_per_token, Some(5 * 5 + 3));
        // Auto never picks a software adapter (lavapipe here; SwiftShader in Chromium); on a
        // hardware GPU it measures both and runs the faster.
        let ctx = block_on(GpuContext::new()).unwrap();
        let software = ctx.is_software();
        let (be, report) = block_on(select(BackendChoice::Auto, &model, Ok(ctx), &now)).unwrap();
        if software {
            assert_eq!(be.kind(), BackendKind::Cpu, "{}", report.reason);
            assert!(
                report.reason.contains("software renderer"),
                "{}",
                report.reason
            );
        } else {
            assert!(
                report.reason.contains("auto, measured: CPU "),
                "{}",
                report.reason
            );
            assert!(report.measured_ms.is_some());
        }
    }
}

#[test]
fn a_lost_device_switches_to_the_cpu_and_keeps_the_transcript() {
    let m = model();
    let Some(be) = gpu_backend(&m) else { return };
    let ctx = be.context().clone();
    let mut raw = GpuBackend::new(ctx.clone(), &m.transformer).unwrap();
    let report = decoding_engine::backend::engine::BackendReport {
        kind: BackendKind::Gpu,
        reason: "test".into(),
        dispatches_per_token: None,
        measured_ms: None,
    };
    let mut engine = Engine::new(m.transformer.clone(), Box::new(be), report);
    let s = settings(&[("seed", "3"), ("max_tokens", "30")]);
    let ids = m.encode_prompt("Once upon a time").unwrap();
    let ends = vec![m.tokenizer.eos, m.tokenizer.bos];
    let mut g = block_on(Generation::start(&mut engine, ids.clone(), ends.clone())).unwrap();
    for _ in 0..10 {
        block_on(g.step(&mut engine, &s, &m.tokenizer)).unwrap();
    }
    let before = g.generated_ids();
    ctx.destroy();
    // A raw backend on the same device reports the loss...
    let probe = raw
        .new_sequence()
        .and_then(|seq| block_on(raw.forward(seq, &[1], false)));
    assert!(
        matches!(probe, Err(BackendError::DeviceLost(_))),
        "{probe:?}"
    );
    // ... and the engine carries on, on the CPU, with the same transcript.
    while let StepOutcome::Token { stop: None, .. } =
        block_on(g.step(&mut engine, &s, &m.tokenizer)).unwrap()
    {}
    assert_eq!(engine.report.kind, BackendKind::Cpu);
    assert!(
        engine.report.reason.contains("GPU device was lost"),
        "{}",
        engine.report.reason
    );
    assert_eq!(&g.generated_ids()[..10], &before[..]);
    let mut c = CpuBackend::new(m.transformer.clone());
    let cpu_only = generate(&mut c, &m, "Once upon a time", &s);
    assert_eq!(g.generated_ids(), cpu_only);
}
