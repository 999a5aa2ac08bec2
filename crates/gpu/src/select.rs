//! Which backend runs the model, and why: the user's choice (auto, gpu, cpu) against what
//! opening a GPU device gave. The `Engine` that survives a lost device lives in the engine
//! crate (`decoding_engine::engine`); it is re-exported here for the front ends.

use crate::backend::GpuBackend;
use crate::context::{GpuContext, GpuError};
use decoding_engine::backend::{Backend, BackendKind, CpuBackend};
pub use decoding_engine::engine::{BackendReport, Engine};
use decoding_engine::Transformer;
use serde::{Deserialize, Serialize};
use std::rc::Rc;
use std::sync::Arc;

/// What the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// WebGPU when an adapter is available, else the CPU.
    Auto,
    Gpu,
    Cpu,
}

impl BackendChoice {
    pub fn parse(s: &str) -> Option<BackendChoice> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(BackendChoice::Auto),
            "gpu" | "webgpu" => Some(BackendChoice::Gpu),
            "cpu" => Some(BackendChoice::Cpu),
            _ => None,
        }
    }
}

/// Opens the chosen backend. `Gpu` fails if no GPU can run the model; `Auto` falls back to
/// the CPU and says why.
pub async fn open_backend(
    choice: BackendChoice,
    model: &Arc<Transformer>,
) -> Result<(Box<dyn Backend>, BackendReport), GpuError> {
    if choice == BackendChoice::Cpu {
        return select(choice, model, Err(GpuError::Gpu("not asked for".into())));
    }
    select(choice, model, GpuContext::new().await)
}

/// The decision, given what opening a GPU device gave (tests pass a failure here).
pub fn select(
    choice: BackendChoice,
    model: &Arc<Transformer>,
    gpu: Result<GpuContext, GpuError>,
) -> Result<(Box<dyn Backend>, BackendReport), GpuError> {
    let cpu = |reason: String| -> (Box<dyn Backend>, BackendReport) {
        (
            Box::new(CpuBackend::new(model.clone())),
            BackendReport {
                kind: BackendKind::Cpu,
                reason,
                dispatches_per_token: None,
            },
        )
    };
    if choice == BackendChoice::Cpu {
        return Ok(cpu("the CPU backend was chosen".into()));
    }
    let opened = gpu.and_then(|ctx| {
        let ctx = Rc::new(ctx);
        let desc = ctx.describe();
        GpuBackend::new(ctx, model).map(|be| (be, desc))
    });
    match (opened, choice) {
        (Ok((be, desc)), _) => {
            let n = be.dispatches_per_token();
            Ok((
                Box::new(be),
                BackendReport {
                    kind: BackendKind::Gpu,
                    reason: format!("WebGPU on {desc}"),
                    dispatches_per_token: Some(n),
                },
            ))
        }
        (Err(e), BackendChoice::Auto) => Ok(cpu(e.to_string())),
        (Err(e), _) => Err(e),
    }
}
