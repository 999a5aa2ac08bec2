//! Which backend runs the model, and why: the user's choice (auto, gpu, cpu) against what
//! opening a GPU device gave. The `Engine` that survives a lost device lives in the engine
//! crate (`decoding_engine::backend::engine`).

use crate::backend::GpuBackend;
use crate::context::{GpuContext, GpuError};
use decoding_engine::backend::choose::{choose_faster, BackendChoice, Candidate};
use decoding_engine::backend::engine::BackendReport;
use decoding_engine::backend::{Backend, BackendKind, CpuBackend};
use decoding_engine::Transformer;
use std::rc::Rc;
use std::sync::Arc;

/// Each backend's share of the measuring "auto" does (`choose::choose_faster`): a few
/// decode steps each, about a quarter of a second in all with the GPU's first pass.
pub const AUTO_BUDGET_MS: f64 = 120.0;

/// Opens the chosen backend. `Gpu` fails if no GPU can run the model; `Auto` measures the
/// CPU and a hardware GPU and runs the faster (a software adapter is never chosen), falling
/// back to the CPU and saying why. `now` is a clock in ms.
pub async fn open_backend(
    choice: BackendChoice,
    model: &Arc<Transformer>,
    now: &dyn Fn() -> f64,
) -> Result<(Box<dyn Backend>, BackendReport), GpuError> {
    if choice == BackendChoice::Cpu {
        return select(
            choice,
            model,
            Err(GpuError::Gpu("not asked for".into())),
            now,
        )
        .await;
    }
    select(choice, model, GpuContext::new().await, now).await
}

/// The CPU backend for `model`, with the reason to show.
pub fn cpu_backend(model: &Arc<Transformer>, reason: String) -> (Box<dyn Backend>, BackendReport) {
    (
        Box::new(CpuBackend::new(model.clone())),
        BackendReport {
            kind: BackendKind::Cpu,
            reason,
            dispatches_per_token: None,
            measured_ms: None,
        },
    )
}

/// The decision, given what opening a GPU device gave (tests pass a failure here).
pub async fn select(
    choice: BackendChoice,
    model: &Arc<Transformer>,
    gpu: Result<GpuContext, GpuError>,
    now: &dyn Fn() -> f64,
) -> Result<(Box<dyn Backend>, BackendReport), GpuError> {
    if choice == BackendChoice::Cpu {
        return Ok(cpu_backend(model, "the CPU backend was chosen".into()));
    }
    let software = gpu.as_ref().is_ok_and(GpuContext::is_software);
    let opened = gpu.and_then(|ctx| {
        let ctx = Rc::new(ctx);
        let desc = ctx.describe();
        GpuBackend::new(ctx, model).map(|be| (be, desc))
    });
    let (be, desc) = match (opened, choice) {
        (Ok(x), _) => x,
        (Err(e), BackendChoice::Auto) => return Ok(cpu_backend(model, e.to_string())),
        (Err(e), _) => return Err(e),
    };
    let n = be.dispatches_per_token();
    let gpu_report = BackendReport {
        kind: BackendKind::Gpu,
        reason: format!("WebGPU on {desc}"),
        dispatches_per_token: Some(n),
        measured_ms: None,
    };
    if choice == BackendChoice::Gpu {
        return Ok((Box::new(be), gpu_report));
    }
    // Auto. A software adapter (Chromium's SwiftShader, Mesa's lavapipe: WebGPU's
    // `isFallbackAdapter`, a CPU device to wgpu) runs the shaders on the CPU, far slower
    // than the CPU backend itself (BENCHMARKS.md, the decision on "auto" in "Decisions, by
    // topic"); it is never chosen by default.
    if software {
        return Ok(cpu_backend(
            model,
            format!(
                "the GPU adapter, {desc}, is a software renderer on the CPU: the CPU backend runs the model directly (choose WebGPU to use it anyway)"
            ),
        ));
    }
    let (cpu_be, cpu_report) = cpu_backend(model, "the CPU backend".into());
    let candidates = vec![
        Candidate {
            backend: cpu_be,
            report: cpu_report,
            label: "CPU",
        },
        Candidate {
            backend: Box::new(be),
            report: gpu_report,
            label: "WebGPU",
        },
    ];
    choose_faster(candidates, now, AUTO_BUDGET_MS)
        .await
        .map_err(|e| GpuError::Gpu(e.to_string()))
}

#[cfg(test)]
mod name_tests {
    use super::BackendChoice;
    use strum::VariantArray;

    #[test]
    fn a_backend_choice_has_one_name() {
        let names: Vec<&str> = BackendChoice::VARIANTS.iter().map(|b| b.name()).collect();
        assert_eq!(names, ["auto", "gpu", "cpu"]);
        for &b in BackendChoice::VARIANTS {
            assert_eq!(BackendChoice::parse(b.name()), Some(b));
            assert_eq!(b.to_string(), b.name());
            assert_eq!(
                serde_json::to_string(&b).unwrap(),
                format!("{:?}", b.name())
            );
        }
        assert_eq!(BackendChoice::parse(" WebGPU "), Some(BackendChoice::Gpu));
        assert_eq!(BackendChoice::parse("CPU"), Some(BackendChoice::Cpu));
        assert_eq!(BackendChoice::parse("tpu"), None);
    }
}
