//! The worker's state and logic in plain Rust (no browser types), tested natively: it owns
//! the model, the backend (through `decoding_engine::Engine`, which survives a lost GPU), the
//! generation, a beam search, and answers requests with events. One file per concern:
//! `load` (model and backend), `generate` (the transcript), `beam`, `cache_compare`, `toy`,
//! `view` (traces shaped for drawing); this file holds the state and routes requests.

mod batching;
mod beam;
mod cache_compare;
mod columns;
mod generate;
mod load;
mod probe;
mod quant;
mod speculative;
#[cfg(test)]
mod tests;

use decoding_engine::backend::engine::Engine;
use decoding_engine::decode::beam::{BeamSearch, NodeStatus};
use decoding_engine::decode::generation::Generation;
use decoding_engine::decode::sampling::Settings;
use decoding_engine::formats::source::ModelFile;
use decoding_engine::Model;
use decoding_page::protocol::*;
use std::future::Future;
use std::pin::Pin;

/// Least wall time of each measurement in the cache comparison.
const MEASURE_MS: f64 = 20.0;
/// How often a multi-token step lets other messages (a cancel) in.
const YIELD_EVERY_MS: f64 = 8.0;
/// How many recent decode timings are kept.
const TIMINGS_KEPT: usize = 32;

/// Hooks the browser glue supplies: a clock, a yield to the event loop (so a cancel can
/// arrive between tokens), whether a cancel arrived, and the page's own files.
pub trait Host {
    fn now(&self) -> f64;
    fn yield_now(&self) -> Pin<Box<dyn Future<Output = ()> + '_>>;
    fn cancelled(&self) -> bool;
    fn clear_cancel(&self);
    /// A file of the page's own by its URL (the glue posts its progress as it arrives), or
    /// why it could not be had.
    fn fetch(&self, url: &str) -> Pin<Box<dyn Future<Output = Result<ModelFile, String>> + '_>>;
}

struct Beam {
    search: BeamSearch,
    greedy: Generation,
    /// Σ log p of greedy's tokens after each of them, kept as it grows (never re-scored).
    greedy_cum: Vec<f64>,
    /// Each node's status as last sent to the page: the next view sends only the nodes
    /// that are new or changed.
    sent: Vec<NodeStatus>,
}

#[derive(Default)]
pub struct Session {
    model: Option<Model>,
    engine: Option<Engine>,
    gen: Option<Generation>,
    prompt: String,
    settings: Settings,
    beam: Option<Beam>,
    timings: Timings,
    /// The weights as loaded (f32, or the file's q8): what every precision is made from.
    original: Option<std::sync::Arc<decoding_engine::Transformer>>,
    /// The precision the transcript runs at.
    precision: decoding_engine::Precision,
    /// What the panels keep between requests.
    panels: Panels,
    /// Wall time of greedy steps a newly loaded model runs on the CPU before its first
    /// prompt (`generate::warm_up`); 0, the default, runs none.
    warm_up_ms: f64,
    /// A model was loaded on the CPU and has not been warmed up yet.
    warm_up_due: bool,
    /// The backend the user chose (auto, the default, measures).
    choice: decoding_engine::backend::choose::BackendChoice,
}

/// Each panel's state in the worker, one field a panel, and what happens to it when the
/// engine or the model under it is replaced.
#[derive(Default)]
struct Panels {
    /// The quantization panel: open, and its three models when it is.
    quant_open: bool,
    lab: Option<quant::Lab>,
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
        self.lab = None;
    }
}

fn err(message: impl ToString) -> Event {
    Event::error(message)
}

impl Session {
    /// Sets the wall time a newly loaded model spends warming up on the CPU backend before
    /// its first prompt (the page's worker sets it; see `generate::warm_up`).
    pub fn set_warm_up(&mut self, ms: f64) {
        self.warm_up_ms = ms.max(0.0);
    }

    /// Handles one request (the cancel flag and clock come from the host). If the GPU device
    /// was lost meanwhile, the engine moved every sequence to the CPU; the first event then
    /// says so.
    pub async fn handle(&mut self, req: Request, host: &dyn Host) -> Vec<Event> {
        let before = self.engine.as_ref().map(|e| e.report.clone());
        self.arm_probe();
        let opens_probe = matches!(req, Request::Inside(ProbeRequest::Probe { .. }));
        let mut events = self.route(req, host).await;
        self.arm_probe();
        let after = self.engine.as_ref().map(|e| e.report.clone());
        // The quantization panel and the view inside the step follow the transcript.
        let transcript = events
            .iter()
            .any(|e| matches!(e, Event::Transcript(TranscriptEvent::Transcript { .. })));
        if self.panels.quant_open && transcript {
            events.extend(self.quant_view(host));
        }
        if self.panels.probe.is_some() && transcript && !opens_probe {
            events.extend(self.probe_view(host).await);
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
        match req {
            Request::Model(r) => self.model_request(r, host).await,
            Request::Transcript(r) => self.transcript_request(r, host).await,
            Request::Beam(r) => self.beam_request(r).await,
            Request::Kv(r) => self.kv_request(r, host).await,
            Request::Inside(r) => self.probe_request(r, host).await,
            Request::Quant(r) => self.quant_request(r, host),
            Request::Spec(r) => self.spec_request(r, host).await,
            Request::Batch(r) => self.batch_request(r, host).await,
            Request::Compare(r) => self.columns_request(r, host).await,
        }
    }
}
