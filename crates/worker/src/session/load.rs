//! Loading a model from bytes with its backend, as one swap that keeps the old model on any
//! failure, and switching the backend that runs it (the transcript is rebuilt there).

use super::base::{err, Core, Host, Replaced};
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::backend::engine::BackendReport;
use decoding_engine::backend::engine::Engine;
use decoding_engine::formats::source::ModelFile;
use decoding_engine::Precision;
use decoding_engine::{Backend, Model};
use decoding_gpu::{open_backend, GpuError};
use decoding_page::protocol::*;
use std::sync::Arc;

impl Core {
    /// The page's own model: its files fetched (`host.fetch`), then loaded with `choice`.
    pub(super) async fn load_urls(
        &mut self,
        urls: &[String],
        choice: BackendChoice,
        host: &dyn Host,
    ) -> Vec<Event> {
        let mut files = Vec::with_capacity(urls.len());
        for url in urls {
            match host.fetch(url).await {
                Ok(f) => files.push(f),
                Err(e) => return vec![err(e)],
            }
        }
        self.load(files, choice, host).await
    }

    /// Files the user picked or dropped, loaded on the backend in use; the current prompt
    /// then runs on the new model (its chat is off: the page turns the toggle off on
    /// `Loaded`).
    pub(super) async fn load_picked(
        &mut self,
        files: Vec<ModelFile>,
        host: &dyn Host,
    ) -> Vec<Event> {
        let mut events = self.load(files, self.backend_choice(), host).await;
        if matches!(
            events.first(),
            Some(Event::Model(ModelEvent::Loaded { .. }))
        ) && !self.prompt.is_empty()
        {
            events.extend(self.set_prompt(self.prompt.clone(), false, host).await);
        }
        events
    }

    /// Loads a model from its files (told apart by content, checked against the memory
    /// budget before the bulk is read: `Model::load`) and opens its backend aside
    /// (`choice`; `Auto` measures the backends on the new model with `host`'s clock), then
    /// swaps: the current model, its backend and its transcript are replaced only when both
    /// worked. On any failure the old model keeps working, on the backend it had.
    pub(super) async fn load(
        &mut self,
        mut files: Vec<ModelFile>,
        choice: BackendChoice,
        host: &dyn Host,
    ) -> Vec<Event> {
        let m = match Model::load(&mut files, decoding_engine::budget::Budget::default()) {
            Ok(m) => m,
            Err(e) => return vec![err(e)],
        };
        // The files' bytes (the page's JavaScript copies) are no longer needed.
        drop(files);
        let opened = open_backend(choice, &m.transformer, &|| host.now()).await;
        let events = self.install(m, opened);
        if matches!(
            events.first(),
            Some(Event::Model(ModelEvent::Loaded { .. }))
        ) {
            self.choice = choice;
        }
        events
    }

    /// The swap: a model and what opening its backend gave.
    pub(super) fn install(
        &mut self,
        m: Model,
        opened: Result<(Box<dyn Backend>, BackendReport), GpuError>,
    ) -> Vec<Event> {
        let (backend, report) = match opened {
            Ok(x) => x,
            // With no model yet (a link being opened), the backend asked for is a preference:
            // the CPU runs the model and the report says why (a GPU link opened without
            // WebGPU once stranded the student on "no model is loaded yet").
            Err(e) if self.model.is_none() => decoding_gpu::select::cpu_backend(
                &m.transformer,
                format!("the GPU asked for is not available ({e}); running on the CPU"),
            ),
            Err(e) => {
                let kept = if self.model.is_some() {
                    "; the current model is kept"
                } else {
                    ""
                };
                return vec![err(format!("{} could not be opened: {e}{kept}", m.name))];
            }
        };
        let info = ModelInfo {
            name: m.name.clone(),
            config: *m.config(),
            params: m.config().n_params(),
            pieces: (0..m.tokenizer.vocab_size() as u32)
                .map(|i| m.tokenizer.piece(i).unwrap_or("?").to_string())
                .collect(),
            format: m.format,
            architecture: m.architecture.clone(),
            tensor_types: m.tensor_types.clone(),
            precision: m.transformer.weights.precision(),
            extras: m.extras(),
            chat_template: matches!(m.chat_template, Some(Ok(_))),
            trained_context: m.trained_context,
            add_bos: m.tokenizer.add_bos,
            link: None,
        };
        if let (Some(engine), Some(old)) = (self.engine.as_mut(), self.gen.take()) {
            old.release(engine);
        }
        self.beam = None;
        self.replaced(Replaced::Model);
        self.warm_up_due = report.kind == decoding_engine::BackendKind::Cpu;
        self.engine = Some(Engine::new(m.transformer.clone(), backend, report.clone()));
        self.original = Some(m.transformer.clone());
        self.precision = m.transformer.weights.precision();
        self.model = Some(m);
        self.constraint_vocab = None;
        vec![
            Event::Model(ModelEvent::Loaded { info }),
            self.precision_event(),
            Event::Model(ModelEvent::Backend { report }),
        ]
    }

    /// The backend the user chose (auto by default): another model, or other weights, are
    /// opened with it (auto measures again).
    /// (A GPU asked for that could not be had runs on the CPU: that is what reopens.)
    pub(super) fn backend_choice(&self) -> BackendChoice {
        let kind = self.engine.as_ref().map(|e| e.report.kind);
        match (self.choice, kind) {
            (BackendChoice::Gpu, Some(decoding_engine::BackendKind::Cpu)) => BackendChoice::Cpu,
            (c, _) => c,
        }
    }

    /// Opens the chosen backend (or switches to it, rebuilding the transcript there).
    pub(super) async fn set_backend(
        &mut self,
        choice: BackendChoice,
        host: &dyn Host,
    ) -> Vec<Event> {
        let Some(m) = &self.model else {
            return vec![err("no model is loaded yet")];
        };
        let (backend, report) = match open_backend(choice, &m.transformer, &|| host.now()).await {
            Ok(x) => x,
            Err(e) => return vec![err(e)],
        };
        self.choice = choice;
        let engine = Engine::new(m.transformer.clone(), backend, report.clone());
        match self.adopt(engine).await {
            Ok(_) => [
                vec![Event::Model(ModelEvent::Backend { report })],
                self.shown_again().await,
            ]
            .concat(),
            Err(e) => vec![e],
        }
    }

    /// Runs the transcript on `engine` from now on: its cache rebuilt there from its tokens
    /// (backend switch, new weights); the beam search is dropped. On failure nothing
    /// changed.
    pub(super) async fn adopt(&mut self, mut engine: Engine) -> Result<(), Event> {
        if let Some(old) = &self.gen {
            let g = old
                .rebuild(&mut engine)
                .await
                .map_err(|e| err(format!("could not move the transcript: {e}")))?;
            if let (Some(old_engine), Some(old)) = (self.engine.as_mut(), self.gen.take()) {
                old.release(&mut *old_engine);
            }
            self.gen = Some(g);
        }
        self.beam = None;
        // The step timings were the old backend's: a mean across both would mix them.
        self.timings.forward_ms.clear();
        self.timings.chain_ms.clear();
        self.timings.last_run = None;
        self.replaced(Replaced::Engine);
        self.engine = Some(engine);
        Ok(())
    }

    /// The transcript and its distribution, shown again after `adopt` (none without one).
    pub(super) async fn shown_again(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        if self.gen.is_some() {
            events.push(self.transcript());
            events.extend(self.next().await);
        }
        events
    }
}

impl Core {
    /// The precision event: what the page's selector and summary show.
    pub(super) fn precision_event(&self) -> Event {
        let bytes = self
            .model
            .as_ref()
            .map_or(0, |m| m.transformer.weights.bytes(m.config()));
        Event::Model(ModelEvent::Precision {
            precision: self.precision,
            weight_bytes: bytes,
        })
    }

    /// Requantizes the loaded weights to `p` and rebuilds the transcript under them on the
    /// backend that runs now (its tokens kept; the next distribution is the new weights').
    /// On any failure the current weights keep running.
    /// With "auto" the backends are measured again on the new weights.
    pub(super) async fn set_precision(&mut self, p: Precision, host: &dyn Host) -> Vec<Event> {
        let (Some(m), Some(original)) = (&self.model, &self.original) else {
            return vec![err("no model is loaded yet")];
        };
        if p == self.precision {
            return vec![self.precision_event()];
        }
        let transformer = if original.weights.precision() == p {
            original.clone()
        } else {
            Arc::new(original.at(p))
        };
        let new = m.with_transformer(transformer);
        let (backend, report) =
            match open_backend(self.backend_choice(), &new.transformer, &|| host.now()).await {
                Ok(x) => x,
                Err(e) => {
                    return vec![err(format!(
                        "the {p} weights could not be opened: {e}; still running {}",
                        self.precision
                    ))]
                }
            };
        let engine = Engine::new(new.transformer.clone(), backend, report.clone());
        if let Err(e) = self.adopt(engine).await {
            return vec![e];
        }
        self.model = Some(new);
        self.constraint_vocab = None;
        self.precision = p;
        let mut events = vec![
            self.precision_event(),
            Event::Model(ModelEvent::Backend { report }),
        ];
        events.extend(self.shown_again().await);
        events
    }
}

impl Core {
    /// The model's requests.
    pub(super) async fn model_request(&mut self, r: ModelRequest, host: &dyn Host) -> Vec<Event> {
        match r {
            ModelRequest::LoadUrl { urls, backend } => self.load_urls(&urls, backend, host).await,
            ModelRequest::LoadFiles { files } => self.load_picked(files.take(), host).await,
            ModelRequest::SetBackend { backend } => self.set_backend(backend, host).await,
            ModelRequest::SetPrecision { precision } => self.set_precision(precision, host).await,
            ModelRequest::SetThreads { threads } => self.set_threads(threads, host).await,
            ModelRequest::LoadRemote {
                link,
                hub,
                backend,
                fallback,
            } => {
                self.load_remote(&link, &hub, backend, &fallback, host)
                    .await
            }
            // The glue stops a download at once; one that reaches the queue has nothing left
            // to stop.
            ModelRequest::CancelDownload => Vec::new(),
            r @ (ModelRequest::ListStored | ModelRequest::DeleteStored { .. }) => {
                self.stored_request(r, host).await
            }
        }
    }
}
