//! The engine: a model and the backend that runs it, which can change under a generation.
//! On a lost GPU device it switches to the CPU, rebuilds the generation's cache from its
//! tokens (the transcript is kept) and carries on. Engine types only: which GPU backend to
//! open is decided in `decoding-gpu` (`select.rs`).

use crate::backend::{Backend, BackendError, BackendKind, CpuBackend};
use crate::generation::{Generation, GenerationError, StepOutcome};
use crate::sampling::Settings;
use crate::{Tokenizer, Transformer};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Which backend runs, and why, in words for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendReport {
    pub kind: BackendKind,
    pub reason: String,
    /// Compute dispatches per decoded token (GPU only).
    pub dispatches_per_token: Option<usize>,
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
