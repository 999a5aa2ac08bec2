//! The messages between the page (UI thread) and the engine's web worker. Requests go to the
//! worker, events come back; both are plain serde types with named fields, so the protocol is
//! checked by the compiler on both sides. They travel as JSON text ([`encode`] / [`decode`]):
//! one string through `postMessage` plus `serde_json` was measured faster than building a JS
//! object per number (BENCHMARKS.md, "Messages are JSON text"), and a trace's
//! vocabulary-sized arrays go inside it as base64 of their bytes ([`crate::packed`]), not a
//! JSON number per token.

mod batch;
mod beam;
mod class;
mod columns;
mod kv;
mod model;
mod probe;
mod quant;
mod registry;
mod spec;
mod trace;
pub mod trace_view;
mod transcript;

pub use batch::*;
pub use beam::*;
pub use class::*;
pub use columns::*;
pub use kv::*;
pub use model::*;
pub use probe::*;
pub use quant::*;
pub use spec::*;
pub use trace::*;
pub use transcript::*;

use registry::messages;
use serde::{Deserialize, Serialize};

messages! {
    /// UI → worker: each part's requests, one line a part.
    Request {
        Model(ModelRequest),
        Transcript(TranscriptRequest),
        Beam(BeamRequest),
        Kv(KvRequest),
        Inside(ProbeRequest),
        Quant(QuantRequest),
        Spec(SpecRequest),
        Batch(BatchRequest),
        Compare(ColumnsRequest),
        Class(ClassRequest),
    }
}

messages! {
    /// Worker → UI: each part's events, one line a part.
    Event {
        Model(ModelEvent),
        Transcript(TranscriptEvent),
        Beam(BeamEvent),
        Kv(KvEvent),
        Inside(ProbeEvent),
        Quant(QuantEvent),
        Spec(SpecEvent),
        Batch(BatchEvent),
        Compare(ColumnsEvent),
        Class(ClassEvent),
    }
}

impl Event {
    /// An error for the user (nothing was lost).
    pub fn error(message: impl ToString) -> Event {
        ModelEvent::Error {
            message: message.to_string(),
        }
        .into()
    }
}

/// The kinds of request that only restate the latest knobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnobKind {
    /// The sampling settings.
    Settings,
}

/// Which requests only restate the latest knobs (a later one of the same kind makes an
/// earlier one pointless, as long as no step runs between them).
pub fn knob_kind(req: &Request) -> Option<KnobKind> {
    match req {
        Request::Transcript(TranscriptRequest::SetSettings { .. }) => Some(KnobKind::Settings),
        _ => None,
    }
}

/// Drops, from the trailing run of knob requests in `queue`, those of the kind of the one
/// about to be queued (`kind_of` maps a queued item to its knob kind).
pub fn coalesce<T>(
    queue: &mut std::collections::VecDeque<T>,
    new_kind: Option<KnobKind>,
    kind_of: impl Fn(&T) -> Option<KnobKind>,
) {
    let Some(k) = new_kind else { return };
    let tail = queue
        .iter()
        .rev()
        .take_while(|j| kind_of(j).is_some())
        .count();
    let mut i = queue.len() - tail;
    while i < queue.len() {
        if kind_of(&queue[i]) == Some(k) {
            queue.remove(i);
        } else {
            i += 1;
        }
    }
}

/// A message as the text `postMessage` carries. A message holding a non-finite number is
/// refused (JSON would carry it as `null`, which the other side cannot read as a number).
pub fn encode<T: Serialize>(msg: &T) -> Result<String, String> {
    crate::finite::check(msg).map_err(|e| format!("cannot encode a message: {e}"))?;
    serde_json::to_string(msg).map_err(|e| format!("cannot encode a message: {e}"))
}

/// A request from its text, or the message of the one error the worker answers a text it
/// cannot read with (a malformed draft name, a negative count: refused before any handler
/// runs).
pub fn read_request(text: &str) -> Result<Request, String> {
    decode(text).map_err(|err| format!("the worker cannot read a request: {err}"))
}

/// A message back from its text.
pub fn decode<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("cannot read a message: {e}"))
}

#[cfg(test)]
mod tests;
