//! Loading a model from bytes and opening (or switching) the backend that runs it; the
//! transcript is rebuilt on the new backend.

use super::{err, Session};
use crate::protocol::*;
use decoding_engine::Model;
use decoding_gpu::{open_backend, BackendChoice, Engine};

impl Session {
    /// Loads a model from bytes; on failure the previous model (if any) is kept.
    pub fn load(&mut self, name: &str, model: &[u8], tokenizer: &[u8]) -> Vec<Event> {
        match Model::from_bytes(model, tokenizer) {
            Ok(m) => {
                let info = ModelInfo {
                    name: name.to_string(),
                    config: *m.config(),
                    params: m.config().n_params(),
                    pieces: (0..m.tokenizer.vocab_size() as u32)
                        .map(|i| m.tokenizer.piece(i).unwrap_or("?").to_string())
                        .collect(),
                };
                self.model = Some(m);
                self.engine = None;
                self.gen = None;
                self.beam = None;
                vec![Event::Loaded { info }]
            }
            Err(e) => vec![err(e)],
        }
    }

    pub fn model(&self) -> Option<&Model> {
        self.model.as_ref()
    }

    /// The prompt of the current transcript.
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    /// The backend to reopen after loading another model: the current kind, or auto.
    pub fn backend_choice(&self) -> BackendChoice {
        match self.engine.as_ref().map(|e| e.report.kind) {
            Some(decoding_engine::BackendKind::Gpu) => BackendChoice::Gpu,
            Some(decoding_engine::BackendKind::Cpu) => BackendChoice::Cpu,
            None => BackendChoice::Auto,
        }
    }

    /// Opens the chosen backend (or switches to it, rebuilding the transcript there).
    pub async fn set_backend(&mut self, choice: BackendChoice) -> Vec<Event> {
        let Some(m) = &self.model else {
            return vec![err("no model is loaded yet")];
        };
        let (backend, report) = match open_backend(choice, &m.transformer).await {
            Ok(x) => x,
            Err(e) => return vec![err(e)],
        };
        let mut engine = Engine::new(m.transformer.clone(), backend, report.clone());
        let mut events = vec![Event::Backend { report }];
        // Carry the transcript over: rebuild its cache on the new backend.
        if let Some(old) = &self.gen {
            match old.rebuild(&mut engine).await {
                Ok(g) => {
                    if let (Some(old_engine), Some(old)) = (self.engine.as_mut(), self.gen.take()) {
                        old.release(&mut *old_engine);
                    }
                    self.gen = Some(g);
                }
                Err(e) => return vec![err(format!("could not move the transcript: {e}"))],
            }
        }
        self.beam = None;
        self.engine = Some(engine);
        // A transcript that was moved is shown again; with none, the caller runs a prompt.
        if self.gen.is_some() {
            events.push(self.transcript());
            events.extend(self.preview().await);
        }
        events
    }
}
