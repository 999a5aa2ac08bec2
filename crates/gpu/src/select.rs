//! Which backend runs the model, and why; and generation that survives a lost GPU device by
//! switching to the CPU and rebuilding the cache from the tokens (the transcript is kept).

use crate::backend::GpuBackend;
use crate::context::{GpuContext, GpuError};
use decoding_engine::backend::{Backend, BackendError, BackendKind, CpuBackend};
use decoding_engine::generation::{Generation, GenerationError, StepOutcome};
use decoding_engine::sampling::Settings;
use decoding_engine::{Tokenizer, Transformer};
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

/// Which backend runs, and why, in words for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendReport {
    pub kind: BackendKind,
    pub reason: String,
    /// Compute dispatches per decoded token (GPU only).
    pub dispatches_per_token: Option<usize>,
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

/// A backend that can change under a generation: on a lost device the engine switches to
/// the CPU, rebuilds the generation's cache from its tokens, and carries on.
pub struct Engine {
    pub model: Arc<Transformer>,
    pub backend: Box<dyn Backend>,
    pub report: BackendReport,
}

impl Engine {
    pub fn new(
        model: Arc<Transformer>,
        backend: Box<dyn Backend>,
        report: BackendReport,
    ) -> Engine {
        Engine {
            model,
            backend,
            report,
        }
    }

    /// Replaces the backend by the CPU's, saying why.
    pub fn switch_to_cpu(&mut self, why: &str) {
        self.backend = Box::new(CpuBackend::new(self.model.clone()));
        self.report = BackendReport {
            kind: BackendKind::Cpu,
            reason: why.to_string(),
            dispatches_per_token: None,
        };
    }

    /// `Generation::step`, recovering from a lost GPU device once.
    pub async fn step(
        &mut self,
        g: &mut Generation,
        settings: &Settings,
        tokenizer: &Tokenizer,
    ) -> Result<StepOutcome, GenerationError> {
        match g.step(&mut *self.backend, settings, tokenizer).await {
            Err(GenerationError::Backend(BackendError::DeviceLost(msg))) => {
                self.switch_to_cpu(&format!(
                    "the GPU device was lost ({msg}); switched to the CPU"
                ));
                *g = g.rebuild(&mut *self.backend).await?;
                g.step(&mut *self.backend, settings, tokenizer).await
            }
            other => other,
        }
    }
}
