//! The worker's state and logic in plain Rust (no browser types), tested natively: it owns
//! the model, the backend (through `decoding_engine::Engine`, which survives a lost GPU), the
//! generation, a beam search, and answers requests with events. `base` holds what every
//! part works on (`Core`); the transcript's parts are its methods: `load` (model, backend,
//! precision), `generate` (the transcript), `beam`, `cache_compare`; each panel's file owns
//! its state and its handler, which gets the core beside that state: `quant`, `probe`,
//! `speculative`, `batching`, `columns`. This file holds the panels' state and routes each
//! part's requests to its handler, one line a part.

mod base;
mod batching;
mod beam;
mod cache_compare;
mod class;
mod columns;
mod constraint;
mod generate;
mod load;
mod probe;
mod quant;
mod remote;
mod shape;
mod speculative;
#[cfg(test)]
mod tests;
mod threads;

use base::Core;
use base::Replaced;
pub use base::{Host, HEAD_CHECK};
use decoding_page::protocol::*;
pub use remote::Arriving;
pub use threads::Cores;

/// The worker's session: the core (model, engine, transcript) and each panel's state.
#[derive(Default)]
pub struct Session {
    core: Core,
    panels: Panels,
}

/// Each panel's state in the worker, one field a panel, and what happens to it when the
/// engine or the model under it is replaced.
#[derive(Default)]
struct Panels {
    /// The quantization panel: open, and its models when it is.
    quant: quant::QuantPanel,
    /// The speculative run, on its own sequence of the engine.
    spec: Option<speculative::SpecRun>,
    /// The batching panel's lanes, on their own sequences of the engine.
    lanes: Option<batching::LanesRun>,
    /// The "same θ, different config" columns, on their own sequences of the engine.
    columns: Option<columns::ColumnsRun>,
    /// The view inside the step: open, and its lens columns when it is.
    probe: Option<probe::ProbeState>,
}

impl Panels {
    /// Another engine runs the transcript (a new backend or new weights): the runs that
    /// lived on the old one's sequences are gone (the page starts them again), and the lens
    /// columns were the old weights'.
    fn engine_replaced(&mut self) {
        self.spec = None;
        self.lanes = None;
        self.columns = None;
        if let Some(p) = self.probe.as_mut() {
            *p = probe::ProbeState::default();
        }
    }

    /// Another model: the above, and the quantization panel's models were the old one's.
    fn model_replaced(&mut self) {
        self.engine_replaced();
        self.quant.model_replaced();
    }
}

impl Session {
    /// Sets the wall time a newly loaded model spends warming up on the CPU backend before
    /// its first prompt (the page's worker sets it; see `generate::warm_up`).
    pub fn set_warm_up(&mut self, ms: f64) {
        self.core.set_warm_up(ms);
    }

    /// Handles one request (the cancel flag and clock come from the host). If the GPU device
    /// was lost meanwhile, the engine moved every sequence to the CPU; the first event then
    /// says so.
    pub async fn handle(&mut self, req: Request, host: &dyn Host) -> Vec<Event> {
        let before = self.core.engine.as_ref().map(|e| e.report.clone());
        self.core.arm_probe(&self.panels.probe);
        let opens_probe = matches!(req, Request::Inside(ProbeRequest::Probe { .. }));
        let mut events = self.route(req, host).await;
        self.settle();
        self.core.arm_probe(&self.panels.probe);
        let after = self.core.engine.as_ref().map(|e| e.report.clone());
        // The quantization panel and the view inside the step follow the transcript.
        let transcript = events
            .iter()
            .any(|e| matches!(e, Event::Transcript(TranscriptEvent::Transcript { .. })));
        let (core, panels) = (&mut self.core, &mut self.panels);
        if panels.quant.open && transcript {
            events.extend(core.quant_view(&mut panels.quant, host));
        }
        if panels.probe.is_some() && transcript && !opens_probe {
            events.extend(core.probe_view(&mut panels.probe, host).await);
        }
        let announced = events
            .iter()
            .any(|e| matches!(e, Event::Model(ModelEvent::Backend { .. })));
        if let (Some(b), Some(report)) = (before, after) {
            if b != report && !announced {
                events.insert(0, Event::Model(ModelEvent::Backend { report }));
            }
        }
        events
    }

    /// Each part's requests to its handler, one line a part.
    async fn route(&mut self, req: Request, host: &dyn Host) -> Vec<Event> {
        let (core, p) = (&mut self.core, &mut self.panels);
        match req {
            Request::Model(r) => core.model_request(r, host).await,
            Request::Transcript(r) => core.transcript_request(r, host).await,
            Request::Beam(r) => core.beam_request(r).await,
            Request::Kv(r) => core.kv_request(r, host).await,
            Request::Inside(r) => core.probe_request(&mut p.probe, r, host).await,
            Request::Quant(r) => core.quant_request(&mut p.quant, r, host),
            Request::Spec(r) => core.spec_request(&mut p.spec, r, host).await,
            Request::Batch(r) => core.batch_request(&mut p.lanes, r, host).await,
            Request::Compare(r) => core.columns_request(&mut p.columns, r, host).await,
            Request::Class(r) => core.class_request(r),
        }
    }

    /// The panels reset for what the request replaced under them (the runs on an old
    /// engine's sequences, the models of an old model).
    fn settle(&mut self) {
        match std::mem::take(&mut self.core.replaced) {
            Replaced::Nothing => {}
            Replaced::Engine => self.panels.engine_replaced(),
            Replaced::Model => self.panels.model_replaced(),
        }
    }

    /// Installs a loaded model with what opening its backend gave (`Core::install`), the
    /// panels reset under it.
    #[cfg(test)]
    fn install(
        &mut self,
        m: decoding_engine::Model,
        opened: Result<
            (
                Box<dyn decoding_engine::Backend>,
                decoding_engine::backend::engine::BackendReport,
            ),
            decoding_gpu::GpuError,
        >,
    ) -> Vec<Event> {
        let events = self.core.install(m, opened);
        self.settle();
        events
    }
}
