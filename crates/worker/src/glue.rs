//! The web worker's browser glue: receives [`Request`]s, runs them one at a time through the
//! [`Session`], posts [`Event`]s back, fetches the model files with progress, and lets a
//! `Cancel` through at once (it stops a multi-token step between tokens).

use crate::session::{Host, Session};
use decoding_page::protocol::{Event, Request};
use js_sys::{Reflect, Uint8Array};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, ReadableStreamDefaultReader, Response};

/// Work for the worker: a request, or model files the user picked (their bytes arrive as
/// ArrayBuffers beside the JSON protocol, not inside it).
enum Job {
    Request(Request),
    Files {
        name: String,
        model: JsBytes,
        tokenizer: Vec<u8>,
        /// A Hugging Face checkpoint's config.json.
        config: Option<Vec<u8>>,
    },
}

/// A file held in JavaScript memory (the fetched chunks, or a picked file's ArrayBuffer),
/// read into wasm a piece at a time: the checkpoint parser copies each tensor straight into
/// its buffer, so the file itself never takes wasm memory (which never shrinks), and the
/// JavaScript copy is garbage once the model is built.
struct JsBytes {
    chunks: Vec<Uint8Array>,
    /// The chunk being read and the offset in it.
    at: (usize, u32),
    len: u64,
}

impl JsBytes {
    fn new(chunks: Vec<Uint8Array>) -> JsBytes {
        let len = chunks.iter().map(|c| c.length() as u64).sum();
        JsBytes {
            chunks,
            at: (0, 0),
            len,
        }
    }

    /// The whole file in wasm memory (the small tokenizer).
    fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len as usize);
        for c in &self.chunks {
            out.extend_from_slice(&c.to_vec());
        }
        out
    }
}

impl std::io::Read for JsBytes {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let (mut i, mut off) = self.at;
        let mut n = 0;
        while n < buf.len() && i < self.chunks.len() {
            let chunk = &self.chunks[i];
            let left = chunk.length() - off;
            let k = left.min((buf.len() - n) as u32);
            chunk
                .subarray(off, off + k)
                .copy_to(&mut buf[n..n + k as usize]);
            n += k as usize;
            off += k;
            if off == chunk.length() {
                i += 1;
                off = 0;
            }
        }
        self.at = (i, off);
        Ok(n)
    }
}

struct Worker {
    scope: DedicatedWorkerGlobalScope,
    session: RefCell<Session>,
    queue: RefCell<VecDeque<Job>>,
    busy: Cell<bool>,
    cancel: Cell<bool>,
}

impl Host for Worker {
    fn now(&self) -> f64 {
        self.scope
            .performance()
            .map(|p| p.now())
            .unwrap_or_else(js_sys::Date::now)
    }

    /// Returns to the event loop once, so queued messages (a cancel) are seen between tokens.
    /// A message to ourselves, not a zero timeout: nested timeouts are clamped to 4 ms.
    fn yield_now(&self) -> Pin<Box<dyn Future<Output = ()> + '_>> {
        let promise =
            js_sys::Promise::new(
                &mut |resolve, _reject| match web_sys::MessageChannel::new() {
                    Ok(ch) => {
                        ch.port1().set_onmessage(Some(&resolve));
                        let _ = ch.port2().post_message(&JsValue::NULL);
                    }
                    Err(_) => {
                        let _ = resolve.call0(&JsValue::NULL);
                    }
                },
            );
        Box::pin(async move {
            let _ = JsFuture::from(promise).await;
        })
    }

    fn cancelled(&self) -> bool {
        self.cancel.get()
    }

    fn clear_cancel(&self) {
        self.cancel.set(false);
    }
}

impl Worker {
    fn post(&self, event: &Event) {
        match decoding_page::protocol::encode(event) {
            Ok(text) => {
                if let Err(e) = self.scope.post_message(&JsValue::from_str(&text)) {
                    web_sys::console::error_2(&"postMessage failed".into(), &e);
                }
            }
            Err(e) => web_sys::console::error_1(&e.into()),
        }
    }

    /// Runs queued requests in order until the queue is empty.
    async fn drain(self: Rc<Self>) {
        loop {
            let next = self.queue.borrow_mut().pop_front();
            let Some(job) = next else { break };
            match job {
                Job::Request(req) => self.handle(req).await,
                Job::Files {
                    name,
                    model,
                    tokenizer,
                    config,
                } => {
                    self.load_files(&name, model, &tokenizer, config.as_deref())
                        .await
                }
            }
        }
        self.busy.set(false);
    }

    async fn handle(&self, req: Request) {
        // Requests run one at a time (see `drain`), so the session can be taken out for the
        // duration of the (possibly GPU-asynchronous) work.
        let mut session = self.session.take();
        let events = match req {
            Request::Load {
                model_url,
                tokenizer_url,
                backend,
                prompt,
                settings,
                steps,
                precision,
            } => match self.fetch_both(&model_url, &tokenizer_url).await {
                Err(message) => vec![Event::Error { message }],
                Ok((model, tok)) => {
                    let name = model_url
                        .rsplit('/')
                        .next()
                        .unwrap_or(&model_url)
                        .trim_end_matches(".bin")
                        .to_string();
                    let (len, tok) = (model.len, tok.to_vec());
                    let mut model = model;
                    let mut events = session
                        .load_from(&name, &mut model, len, &tok, None, backend, self)
                        .await;
                    drop(model);
                    if matches!(events.first(), Some(Event::Loaded { .. })) {
                        if let Some(p) = precision {
                            events.extend(session.set_precision(p, self).await);
                        }
                        for e in &events {
                            self.post(e);
                        }
                        events = session.restore(prompt, settings, steps, self).await;
                    }
                    events
                }
            },
            other => session.handle(other, self).await,
        };
        self.session.replace(session);
        for e in &events {
            self.post(e);
        }
    }

    /// A model the user chose: validated, and only then replacing the current one.
    async fn load_files(
        &self,
        name: &str,
        mut model: JsBytes,
        tokenizer: &[u8],
        config: Option<&[u8]>,
    ) {
        let mut session = self.session.take();
        let choice = session.backend_choice();
        let len = model.len;
        let mut events = session
            .load_from(name, &mut model, len, tokenizer, config, choice, self)
            .await;
        drop(model);
        if matches!(events.first(), Some(Event::Loaded { .. })) {
            for e in &events {
                self.post(e);
            }
            // The current prompt, on the new model.
            // (its chat is off: the page turns the toggle off on `Loaded`)
            events = session
                .set_prompt(session.prompt().to_string(), false, self)
                .await;
        }
        self.session.replace(session);
        for e in &events {
            self.post(e);
        }
    }

    async fn fetch_both(&self, model: &str, tokenizer: &str) -> Result<(JsBytes, JsBytes), String> {
        Ok((self.fetch(model).await?, self.fetch(tokenizer).await?))
    }

    /// GETs `url` from the page's own server, posting progress as bytes arrive. The body
    /// stays in JavaScript memory as the chunks it arrived in.
    async fn fetch(&self, url: &str) -> Result<JsBytes, String> {
        let js_err = |e: JsValue| {
            format!(
                "{url}: {}",
                e.as_string().unwrap_or_else(|| format!("{e:?}"))
            )
        };
        let resp: Response = JsFuture::from(self.scope.fetch_with_str(url))
            .await
            .map_err(js_err)?
            .dyn_into()
            .map_err(js_err)?;
        if !resp.ok() {
            return Err(format!(
                "{url}: HTTP {} {}",
                resp.status(),
                resp.status_text()
            ));
        }
        let total = resp
            .headers()
            .get("content-length")
            .ok()
            .flatten()
            .and_then(|s| s.parse::<u64>().ok());
        let body = resp
            .body()
            .ok_or_else(|| format!("{url}: empty response"))?;
        let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
        let mut chunks = Vec::new();
        let mut loaded = 0u64;
        loop {
            let chunk = JsFuture::from(reader.read()).await.map_err(js_err)?;
            let done = Reflect::get(&chunk, &"done".into())
                .map_err(js_err)?
                .as_bool()
                .unwrap_or(true);
            if done {
                break;
            }
            let value: Uint8Array = Reflect::get(&chunk, &"value".into())
                .map_err(js_err)?
                .unchecked_into();
            loaded += value.length() as u64;
            chunks.push(value);
            self.post(&Event::Progress {
                file: url.to_string(),
                loaded,
                total,
            });
        }
        Ok(JsBytes::new(chunks))
    }
}

/// Wall time a model loaded on the CPU spends warming up before its first prompt
/// (`Session::set_warm_up`: V8 compiles the engine's hot functions with its optimising
/// compiler only after they have done some work).
///
/// 150 ms: stories260K's 200-token replay 2,567–3,968 → 6,944–8,696 tok/s in the perf test
/// (three alternating runs each), its first distribution 316–366 → 411–526 ms.
const WARM_UP_MS: f64 = 150.0;

/// The worker's entry point: installs the message handler and says it is ready.
pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let mut session = Session::default();
    session.set_warm_up(WARM_UP_MS);
    let worker = Rc::new(Worker {
        scope: scope.clone(),
        session: RefCell::new(session),
        queue: RefCell::new(VecDeque::new()),
        busy: Cell::new(false),
        cancel: Cell::new(false),
    });
    let w = worker.clone();
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let data = e.data();
        let job = match data.as_string() {
            Some(text) => match decoding_page::protocol::read_request(&text) {
                Ok(Request::Cancel) => {
                    w.cancel.set(true);
                    return;
                }
                Ok(req) => Job::Request(req),
                Err(message) => {
                    w.post(&Event::Error { message });
                    return;
                }
            },
            // {name, model: ArrayBuffer, tokenizer: ArrayBuffer, config?: ArrayBuffer} from the
            // file picker (config: a Hugging Face checkpoint's config.json).
            None => {
                let bytes = |key: &str| {
                    Reflect::get(&data, &key.into())
                        .ok()
                        .filter(|v| v.is_instance_of::<js_sys::ArrayBuffer>())
                        .map(|v| JsBytes::new(vec![Uint8Array::new(&v)]))
                };
                match (bytes("model"), bytes("tokenizer").map(|t| t.to_vec())) {
                    (Some(model), Some(tokenizer)) => Job::Files {
                        name: Reflect::get(&data, &"name".into())
                            .ok()
                            .and_then(|v| v.as_string())
                            .unwrap_or_else(|| "model".into()),
                        model,
                        tokenizer,
                        config: bytes("config").map(|c| c.to_vec()),
                    },
                    _ => {
                        w.post(&Event::Error {
                            message: "the worker got files it cannot read".into(),
                        });
                        return;
                    }
                }
            }
        };
        {
            let mut q = w.queue.borrow_mut();
            // Knob moves arrive faster than a busy worker takes them: a new one replaces the
            // queued ones it supersedes, so the chart catches up with the slider instead of
            // replaying every position it passed.
            let kind = |j: &Job| match j {
                Job::Request(r) => decoding_page::protocol::knob_kind(r),
                Job::Files { .. } => None,
            };
            decoding_page::protocol::coalesce(&mut q, kind(&job), kind);
            q.push_back(job);
        }
        if !w.busy.replace(true) {
            spawn_local(w.clone().drain());
        }
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    worker.post(&Event::Ready);
}
