//! The worker's `Session` driven as the page drives it (`Session::handle`), one file per
//! panel; `last!` finds the last event of a kind.

use super::*;
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::backend::engine::Engine;
use decoding_engine::decode::generation::Generation;
use decoding_engine::decode::sampling::RawSettings;
use decoding_engine::decode::sampling::Settings;
use decoding_engine::formats::source::ModelFile;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;

/// The view an event carries, if it is of `kind` (`Transcript`, `Next`, `Beam`, …).
macro_rules! view_of {
    ($e:expr, Transcript) => {
        match $e {
            Event::Transcript(TranscriptEvent::Transcript { view }) => Some(view),
            _ => None,
        }
    };
    ($e:expr, Next) => {
        match $e {
            Event::Transcript(TranscriptEvent::Next { view }) => Some(view),
            _ => None,
        }
    };
    ($e:expr, Beam) => {
        match $e {
            Event::Beam(BeamEvent::Beam { view }) => Some(view),
            _ => None,
        }
    };
    ($e:expr, Probe) => {
        match $e {
            Event::Inside(ProbeEvent::Probe { view }) => Some(view),
            _ => None,
        }
    };
    ($e:expr, Quant) => {
        match $e {
            Event::Quant(QuantEvent::Quant { view }) => Some(view),
            _ => None,
        }
    };
    ($e:expr, Spec) => {
        match $e {
            Event::Spec(SpecEvent::Spec { view }) => Some(view),
            _ => None,
        }
    };
    ($e:expr, Lanes) => {
        match $e {
            Event::Batch(BatchEvent::Lanes { view }) => Some(view),
            _ => None,
        }
    };
    ($e:expr, Sweep) => {
        match $e {
            Event::Batch(BatchEvent::Sweep { view }) => Some(view),
            _ => None,
        }
    };
    ($e:expr, Serve) => {
        match $e {
            Event::Batch(BatchEvent::Serve { view }) => Some(view),
            _ => None,
        }
    };
    ($e:expr, GpuSplit) => {
        match $e {
            Event::Batch(BatchEvent::GpuSplit { view }) => Some(view),
            _ => None,
        }
    };
    ($e:expr, Columns) => {
        match $e {
            Event::Compare(ColumnsEvent::Columns { view }) => Some(view),
            _ => None,
        }
    };
}

/// The view of the last event of `kind` among `ev`.
macro_rules! last {
    ($ev:expr, $kind:ident) => {
        $ev.iter()
            .rev()
            .find_map(|e| view_of!(e, $kind))
            .expect(concat!("a ", stringify!($kind), " event"))
    };
}

/// The distribution the page draws after these events: the chain it runs itself on the
/// last `Next` logits, under `settings`.
pub(super) fn trace_after(ev: &[Event], settings: &Settings) -> TraceView {
    last!(ev, Next).trace(settings, None).unwrap()
}

/// The distribution the page draws now: the chain on the logits the worker last sent (its
/// current `next_view`), under the settings in force.
pub(super) fn page_trace(s: &Session) -> TraceView {
    s.core
        .next_view()
        .unwrap()
        .unwrap()
        .trace(&s.core.settings, None)
        .unwrap()
}

mod batch;
mod beam;
mod class;
mod columns;
mod export;
mod files;
mod kv;
mod lesson;
mod load;
mod malformed;
mod page;
mod quant;
mod remote;
mod spec;
mod transcript;

pub(super) struct TestHost {
    cancel: Cell<bool>,
    start: std::time::Instant,
    /// What the network serves, by URL (`remote.rs`'s models by link).
    pub(super) served: std::cell::RefCell<std::collections::HashMap<String, Vec<u8>>>,
    /// The browser's storage: each kept model's files, by key.
    pub(super) kept: std::cell::RefCell<std::collections::BTreeMap<String, remote::Kept>>,
    /// Every URL asked of the network.
    pub(super) asked: std::cell::RefCell<Vec<String>>,
    /// The processors the browser reports, and why one thread if so.
    pub(super) cores: std::cell::RefCell<crate::session::Cores>,
}

impl Host for TestHost {
    fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1000.0
    }
    fn yield_now(&self) -> Pin<Box<dyn Future<Output = ()> + '_>> {
        Box::pin(std::future::ready(()))
    }
    fn sleep(&self, ms: u32) -> Pin<Box<dyn Future<Output = ()> + '_>> {
        std::thread::sleep(std::time::Duration::from_millis(ms.into()));
        Box::pin(std::future::ready(()))
    }
    fn cancelled(&self) -> bool {
        self.cancel.get()
    }
    fn clear_cancel(&self) {
        self.cancel.set(false)
    }
    /// The page's own files, as `dist/` serves them (`models/…` is `assets/models/…`).
    fn fetch(&self, url: &str) -> Pin<Box<dyn Future<Output = Result<ModelFile, String>> + '_>> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../assets")
            .join(url);
        let got = std::fs::read(&path)
            .map(|b| ModelFile::from_bytes(url.rsplit('/').next().unwrap_or(url), b))
            .map_err(|_| format!("{url}: HTTP 404 Not Found"));
        Box::pin(std::future::ready(got))
    }
    fn fetch_small(
        &self,
        url: &str,
        limit: usize,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + '_>> {
        Box::pin(std::future::ready(remote::fetch_small(self, url, limit)))
    }
    fn stored(
        &self,
        key: &str,
    ) -> Pin<Box<dyn Future<Output = Option<(String, Vec<ModelFile>)>> + '_>> {
        Box::pin(std::future::ready(remote::stored(self, key)))
    }
    fn download<'a>(
        &'a self,
        model: &'a decoding_page::remote::RemoteModel,
        check: &'a dyn Fn(&mut [ModelFile]) -> Result<(), String>,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<ModelFile>, String>> + 'a>> {
        Box::pin(std::future::ready(remote::download(self, model, check)))
    }
    fn list_stored(&self) -> Pin<Box<dyn Future<Output = Result<ModelEvent, String>> + '_>> {
        Box::pin(std::future::ready(Ok(remote::list(self))))
    }
    fn delete_stored(&self, key: &str) -> Pin<Box<dyn Future<Output = Result<(), String>> + '_>> {
        let gone = self.kept.borrow_mut().remove(key).map(|_| ());
        Box::pin(std::future::ready(
            gone.ok_or_else(|| format!("{key} is not kept")),
        ))
    }
    fn cores(&self) -> crate::session::Cores {
        self.cores.borrow().clone()
    }
}

pub(super) fn host() -> TestHost {
    TestHost {
        cancel: Cell::new(false),
        start: std::time::Instant::now(),
        served: Default::default(),
        kept: Default::default(),
        asked: Default::default(),
        cores: std::cell::RefCell::new(crate::session::Cores {
            logical: 2,
            one_thread: Some(ThreadWhy::NotIsolated),
        }),
    }
}

/// Files dropped on the page: (name, bytes), through `Session::handle` as the page's glue
/// hands them over.
pub(super) fn drop_files(
    s: &mut Session,
    host: &TestHost,
    files: &[(&str, Vec<u8>)],
) -> Vec<Event> {
    let files = files
        .iter()
        .map(|(n, b)| ModelFile::from_bytes(*n, b.clone()))
        .collect();
    ask(
        s,
        host,
        Request::Model(ModelRequest::LoadFiles {
            files: Files::new(files),
        }),
    )
}

pub(super) fn asset(name: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../assets/models/stories260K")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A session with the page's own model loaded on the CPU, as the page asks for it.
pub(super) fn loaded() -> (Session, TestHost) {
    let host = host();
    let mut s = Session::default();
    let ev = ask(
        &mut s,
        &host,
        Request::Model(ModelRequest::LoadUrl {
            urls: vec![
                decoding_page::behaviour::MODEL_URL.into(),
                decoding_page::behaviour::TOKENIZER_URL.into(),
            ],
            backend: BackendChoice::Cpu,
        }),
    );
    assert!(
        matches!(
            ev[..],
            [
                Event::Model(ModelEvent::Loaded { .. }),
                Event::Model(ModelEvent::Precision { .. }),
                Event::Model(ModelEvent::Backend { .. })
            ]
        ),
        "{ev:?}"
    );
    (s, host)
}

/// Asks the session as the page does (`Session::handle`: the request, then what follows
/// it, such as the quantization panel's and the probe's views).
pub(super) fn ask(s: &mut Session, host: &TestHost, req: Request) -> Vec<Event> {
    pollster::block_on(s.handle(req, host))
}

/// A loaded session with these settings and "Once upon a time" prefilled.
pub(super) fn prompted(pairs: &[(&str, &str)]) -> (Session, TestHost) {
    let (mut s, host) = loaded();
    set_settings(&mut s, &host, pairs);
    set_prompt(&mut s, &host, "Once upon a time");
    (s, host)
}

/// The page's "Run prompt": the events it answers.
pub(super) fn set_prompt(s: &mut Session, host: &TestHost, prompt: &str) -> Vec<Event> {
    let prompt = prompt.to_string();
    ask(
        s,
        host,
        Request::Transcript(TranscriptRequest::SetPrompt {
            prompt,
            chat: false,
        }),
    )
}

/// The page's "Step": `count` tokens, and the events they answer.
pub(super) fn step(s: &mut Session, host: &TestHost, count: u32) -> Vec<Event> {
    ask(
        s,
        host,
        Request::Transcript(TranscriptRequest::Step { count }),
    )
}

/// A knob moved: the settings of these pairs, and the events they answer.
pub(super) fn set_settings(s: &mut Session, host: &TestHost, pairs: &[(&str, &str)]) -> Vec<Event> {
    ask(
        s,
        host,
        Request::Transcript(TranscriptRequest::SetSettings {
            settings: settings(pairs),
        }),
    )
}

pub(super) fn settings(pairs: &[(&str, &str)]) -> Settings {
    RawSettings::from_pairs(pairs.iter().copied())
        .validate(512)
        .unwrap()
}

/// `last!(ev, Transcript)` as a function (the lesson tests' helper).
pub(super) fn last_transcript(ev: &[Event]) -> &TranscriptView {
    last!(ev, Transcript)
}

/// The next-token probabilities after `tokens` under `t` (softmax of the logits, f64).
pub(super) fn model_probs(t: &decoding_engine::Transformer, tokens: &[u32]) -> Vec<f64> {
    let mut cache = decoding_engine::KvCache::new(&t.config);
    let logits = t.prefill(&mut cache, tokens, false).unwrap();
    let z: Vec<f64> = logits.iter().map(|&v| v as f64).collect();
    decoding_engine::decode::sampling::stages::softmax(&z)
}

/// The requests of a short class demo: a prompt, 12 tokens, then a beam search of 4 steps.
pub(super) fn demo(s: &mut Session, host: &TestHost) -> (Vec<Event>, Vec<Event>) {
    let greedy = settings(&[("temperature", "0"), ("max_tokens", "40")]);
    ask(
        s,
        host,
        Request::Transcript(TranscriptRequest::SetSettings { settings: greedy }),
    );
    ask(
        s,
        host,
        Request::Transcript(TranscriptRequest::SetPrompt {
            prompt: "Once upon a time".into(),
            chat: false,
        }),
    );
    let steps = ask(
        s,
        host,
        Request::Transcript(TranscriptRequest::Step { count: 12 }),
    );
    let beam = settings(&[("strategy", "beam"), ("beams", "3")]);
    ask(
        s,
        host,
        Request::Transcript(TranscriptRequest::SetSettings { settings: beam }),
    );
    let mut beams = ask(s, host, Request::Beam(BeamRequest::BeamStart));
    for _ in 0..4 {
        beams.extend(ask(s, host, Request::Beam(BeamRequest::BeamStep)));
    }
    (steps, beams)
}
