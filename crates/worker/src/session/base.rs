//! The session's base: the model, the engine, the transcript's generation and beam search,
//! the host's hooks, and what a request replaced under the panels. The transcript's parts
//! and every panel's handler work on it; `Session` (mod.rs) adds the panels' own state.

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
pub(super) const MEASURE_MS: f64 = 20.0;
/// How often a multi-token step lets other messages (a cancel) in.
pub(super) const YIELD_EVERY_MS: f64 = 8.0;
/// How many recent decode timings are kept.
pub(super) const TIMINGS_KEPT: usize = 32;

/// Hooks the browser glue supplies: a clock, a yield to the event loop (so a cancel can
/// arrive between tokens), whether a cancel arrived, and the page's own files.
pub trait Host {
    fn now(&self) -> f64;
    fn yield_now(&self) -> Pin<Box<dyn Future<Output = ()> + '_>>;
    /// Waits about `ms` without using a processor (other messages are taken meanwhile).
    fn sleep(&self, ms: u32) -> Pin<Box<dyn Future<Output = ()> + '_>>;
    fn cancelled(&self) -> bool;
    fn clear_cancel(&self);
    /// A file of the page's own by its URL (the glue posts its progress as it arrives), or
    /// why it could not be had.
    fn fetch(&self, url: &str) -> Pin<Box<dyn Future<Output = Result<ModelFile, String>> + '_>>;
    /// A small file from anywhere the page may fetch (the hub's listing), at most `limit`
    /// bytes.
    fn fetch_small(
        &self,
        url: &str,
        limit: usize,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + '_>>;
    /// The name and files of the model kept whole under `key` in the browser's storage, if
    /// it is.
    fn stored(&self, key: &str) -> Pin<Box<dyn Future<Output = Option<Kept>> + '_>>;
    /// A remote model's files, downloaded into the browser's storage (each response checked
    /// by `remote::http`, a dropped connection resumed, a file finished checked by its size
    /// and sha256) and read from there. `check` runs on the files as soon as the small ones
    /// and the first [`HEAD_CHECK`] bytes of the last (the weights) are in: the header check
    /// before the bulk. A refusal there stops the download.
    fn download<'a>(
        &'a self,
        model: &'a decoding_page::remote::RemoteModel,
        check: &'a dyn Fn(&mut [ModelFile]) -> Result<(), String>,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<ModelFile>, String>> + 'a>>;
    /// What the browser's storage keeps, with its usage and quota.
    fn list_stored(&self) -> Pin<Box<dyn Future<Output = Result<ModelEvent, String>> + '_>>;
    fn delete_stored(&self, key: &str) -> Pin<Box<dyn Future<Output = Result<(), String>> + '_>>;
    /// The browser's processors, and why the engine must run on one if it must.
    fn cores(&self) -> super::Cores;
}

/// A kept model's name and its files, opened for reading.
pub type Kept = (String, Vec<ModelFile>);

/// How much of the weights' file is in before the header check runs: a GGUF file's
/// metadata and tensor table are read from its first 32 MiB (`GGUF_HEAD_BYTES`).
pub const HEAD_CHECK: u64 = decoding_engine::model::load::GGUF_HEAD_BYTES;

pub(super) struct Beam {
    pub(super) search: BeamSearch,
    pub(super) greedy: Generation,
    /// Σ log p of greedy's tokens after each of them, kept as it grows (never re-scored).
    pub(super) greedy_cum: Vec<f64>,
    /// Each node's status as last sent to the page: the next view sends only the nodes
    /// that are new or changed.
    pub(super) sent: Vec<NodeStatus>,
    /// The constraint the search follows (a new one starts it again).
    pub(super) constraint: Option<decoding_engine::decode::constraint::ConstraintSpec>,
}

/// The transcript's side of the session: the model, the engine that runs it, the
/// generation, the beam search and their settings. The transcript's parts (`load`,
/// `generate`, `beam`, `cache_compare`) are its methods; a panel's handler gets it beside
/// the panel's own state.
#[derive(Default)]
pub(super) struct Core {
    pub(super) model: Option<Model>,
    pub(super) engine: Option<Engine>,
    pub(super) gen: Option<Generation>,
    pub(super) prompt: String,
    pub(super) settings: Settings,
    pub(super) beam: Option<Beam>,
    pub(super) timings: Timings,
    /// The weights as loaded (f32, or the file's q8): what every precision is made from.
    pub(super) original: Option<std::sync::Arc<decoding_engine::Transformer>>,
    /// The vocabulary as constraints read it, built at the first constraint of a model.
    pub(super) constraint_vocab: Option<decoding_engine::decode::constraint::ConstraintVocab>,
    /// Why the settings' constraint could not be followed (a syntax error, with its line
    /// and column), for the next view and the steps.
    pub(super) constraint_error: Option<String>,
    /// The precision the transcript runs at.
    pub(super) precision: decoding_engine::Precision,
    /// Wall time of greedy steps a newly loaded model runs on the CPU before its first
    /// prompt (`generate::warm_up`); 0, the default, runs none.
    pub(super) warm_up_ms: f64,
    /// A model was loaded on the CPU and has not been warmed up yet.
    pub(super) warm_up_due: bool,
    /// The backend the user chose (auto, the default, measures).
    pub(super) choice: decoding_engine::backend::choose::BackendChoice,
    /// What this request replaced under the panels (`Session` resets them after it).
    pub(super) replaced: Replaced,
    /// Random weights of the 15M shape, while a measurement uses them (`shape.rs`).
    pub(super) shape: Option<super::shape::ShapeLab>,
}

/// What a request replaced under the panels, the most it did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Replaced {
    #[default]
    Nothing,
    /// Another engine runs the transcript (a new backend or new weights).
    Engine,
    /// Another model.
    Model,
}

impl Core {
    /// Notes that this request replaced `what` under the panels (the most it replaced
    /// is kept until `Session` resets them).
    pub(super) fn replaced(&mut self, what: Replaced) {
        self.replaced = self.replaced.max(what);
    }

    /// Sets the wall time a newly loaded model spends warming up on the CPU backend before
    /// its first prompt (see `generate::warm_up`).
    pub(super) fn set_warm_up(&mut self, ms: f64) {
        self.warm_up_ms = ms.max(0.0);
    }
}

pub(super) fn err(message: impl ToString) -> Event {
    Event::error(message)
}
