//! The messages between the page (UI thread) and the engine's web worker. Requests go to the
//! worker, events come back; both are plain serde types with named fields (sent with
//! `serde-wasm-bindgen`), so the protocol is checked by the compiler on both sides.

use decoding_engine::{BackendKind, Config};
use serde::{Deserialize, Serialize};

/// UI → worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// Fetch the model and tokenizer from the page's own static files and load them.
    Load {
        model_url: String,
        tokenizer_url: String,
    },
    /// The next-token distribution after `prompt`, the `top` most likely tokens.
    Next { prompt: String, top: usize },
}

/// One row of a distribution table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenRow {
    pub rank: usize,
    pub id: u32,
    pub piece: String,
    pub prob: f64,
    pub logprob: f64,
}

/// Worker → UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The worker is running and listening (messages sent before this would be lost).
    Ready,
    /// Bytes of `file` received so far (`total` when the server says).
    Progress {
        file: String,
        loaded: u64,
        total: Option<u64>,
    },
    /// The model is ready.
    Loaded {
        config: Config,
        params: u64,
        backend: BackendKind,
        backend_reason: String,
    },
    Next {
        prompt: String,
        prompt_tokens: Vec<u32>,
        rows: Vec<TokenRow>,
        millis: f64,
    },
    /// Something failed; the message is for the user.
    Error { message: String },
}
