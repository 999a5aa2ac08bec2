//! The worker, its model and its backend: loading, the backend and the weights' precision.

use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::backend::engine::BackendReport;
use decoding_engine::formats::source::ModelFile;
use decoding_engine::{Config, Precision};
use serde::{Deserialize, Serialize};

/// The model's requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ModelRequest {
    /// Fetch a model's files (the page's own static files: its default model) and load
    /// them with `backend`. The page then opens its link's view (`Restore`) once the model
    /// has loaded.
    LoadUrl {
        urls: Vec<String>,
        backend: BackendChoice,
    },
    /// A model by link (`model=`: a name of the page's list, file URLs or a Hugging Face
    /// repository; `remote::ModelLink`), from the browser's storage when it is kept there,
    /// else downloaded (each response checked, a dropped connection resumed, the header
    /// checked before the bulk arrives) and kept. `hub` is the hub names resolve against.
    /// With no model loaded yet (a shared link opening) and the download failing, the
    /// `fallback` URLs (the page's own model) are loaded and the failure said.
    LoadRemote {
        link: String,
        hub: String,
        backend: BackendChoice,
        #[serde(default)]
        fallback: Vec<String>,
    },
    /// Stops the download under way (the glue takes it at once, not in the queue).
    CancelDownload,
    /// The models kept in the browser, with the storage's usage and quota.
    ListStored,
    /// Deletes a kept model (by its folder's key).
    DeleteStored { key: String },
    /// Files the user picked or dropped: told apart by content, checked, loaded with the
    /// backend in use, and the current prompt run on the new model. Their bytes travel
    /// beside the message, never in JSON (the glue builds this request).
    #[serde(skip)]
    LoadFiles { files: Files },
    /// Switch backend; the transcript is rebuilt from its tokens on the new one.
    SetBackend { backend: BackendChoice },
    /// Requantize the loaded weights (f32 / f16 / q8 / q4) in the worker; the transcript
    /// keeps its tokens and is rebuilt under the new weights.
    SetPrecision { precision: Precision },
    /// The engine's threads: `None` times 1, 2, 4, … threads and takes the fewest near the
    /// fastest (`serving::threads`; the worker asks itself this at start-up), `Some(n)` the
    /// user's count.
    SetThreads { threads: Option<u32> },
}

/// The worker and its model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ModelEvent {
    /// The worker is running and listening (messages sent before this would be lost).
    Ready,
    /// Bytes of `file` received so far (`total` when known).
    Progress {
        file: String,
        loaded: u64,
        total: Option<u64>,
    },
    Loaded {
        info: ModelInfo,
    },
    /// Which backend runs, and why.
    Backend {
        report: BackendReport,
    },
    /// How many threads the engine runs on, and why.
    Threads {
        report: ThreadReport,
    },
    /// The precision the model's weights run at, and what they take.
    Precision {
        precision: Precision,
        weight_bytes: u64,
    },
    /// The models kept in the browser's storage, and the storage's usage and quota (bytes,
    /// where the browser says them).
    Stored {
        models: Vec<StoredModel>,
        usage: Option<u64>,
        quota: Option<u64>,
    },
    /// Something failed; the message is for the user. Nothing was lost.
    Error {
        message: String,
    },
}

/// What the page needs to know about the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub name: String,
    pub config: Config,
    pub params: u64,
    /// Every token's piece, by id.
    pub pieces: Vec<String>,
    /// The format it was read from, and the architecture as its files name it.
    pub format: decoding_engine::model::Format,
    pub architecture: String,
    /// A GGUF file's tensor types ("Q4_K ×12, Q6_K ×3, F32 ×5"); None for other formats.
    pub tensor_types: Option<String>,
    /// The precision it was read at (`Ggml`: a GGUF file's own blocks, which the weights
    /// select offers again after a conversion).
    #[serde(default)]
    pub precision: Precision,
    /// What it has beyond llama2.c's Llama (`Model::extras`: "Q/K/V biases", …).
    #[serde(default)]
    pub extras: Vec<String>,
    /// The context its file was trained at, where longer than the one it runs at.
    #[serde(default)]
    pub trained_context: Option<u64>,
    /// Its file carries a chat template (the prompt's "Chat" toggle renders it).
    #[serde(default)]
    pub chat_template: bool,
    /// The link that loads it again (`model=`), for a model loaded by link; None for the
    /// page's own model and for files picked or dropped.
    #[serde(default)]
    pub link: Option<String>,
    /// Its vocabulary starts a prompt with BOS (Qwen2's does not).
    #[serde(default = "yes")]
    pub add_bos: bool,
}

/// The engine's threads in the page, and why that many.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadReport {
    pub threads: u32,
    /// The most the page offers: the browser's logical processors (1 where it runs one).
    pub most: u32,
    pub why: ThreadWhy,
}

/// Why the engine runs on the threads it does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ThreadWhy {
    /// Timed at start-up: ms per product at each count tried (`serving::threads`).
    Measured { timed: Vec<(u32, f64)> },
    /// The user's count.
    Chosen,
    /// The page is not cross-origin isolated (served without COOP/COEP headers), so the
    /// browser gives it no shared memory.
    NotIsolated,
    /// Isolated, but the browser has no shared WebAssembly memory.
    NoSharedMemory,
    /// The browser reports one logical processor.
    OneCore,
    /// The threads could not start.
    Failed { message: String },
}

/// A model kept in the browser's storage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredModel {
    /// Its folder.
    pub key: String,
    pub name: String,
    /// The link that loads it (`model=`).
    pub link: String,
    /// Its files' bytes together.
    pub bytes: u64,
    /// Every file arrived whole and checked (else a download stopped part way: loading it
    /// resumes the download).
    pub complete: bool,
}

fn yes() -> bool {
    true
}

/// Model files handed to the worker with a request (their bytes read by the worker's
/// glue, or held in memory in tests), taken once by the session that loads them.
#[derive(Clone, Default)]
pub struct Files(std::rc::Rc<std::cell::RefCell<Vec<ModelFile>>>);

impl Files {
    pub fn new(files: Vec<ModelFile>) -> Files {
        Files(std::rc::Rc::new(std::cell::RefCell::new(files)))
    }

    /// The files, taken (a second take finds none).
    pub fn take(&self) -> Vec<ModelFile> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.borrow().iter()).finish()
    }
}

/// Two handles are equal when they hold the same files.
impl PartialEq for Files {
    fn eq(&self, other: &Files) -> bool {
        std::rc::Rc::ptr_eq(&self.0, &other.0)
    }
}
