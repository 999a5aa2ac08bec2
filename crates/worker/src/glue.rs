//! The web worker's browser glue: receives [`Request`]s (JSON text, or the files the user
//! picked as `{files: [File, …]}`), runs them one at a time through the [`Session`], posts
//! [`Event`]s back, and lets a `Cancel` through at once (it stops a multi-token step between
//! tokens). Beyond that it only reads bytes: a fetch of the page's own files with progress,
//! and picked files a slice at a time (`FileReaderSync`), for the session to load.

use crate::session::{Host, Session};
use decoding_engine::formats::source::{ByteSource, ModelFile};
use decoding_page::protocol::*;
use js_sys::{Reflect, Uint8Array};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{
    DedicatedWorkerGlobalScope, FileReaderSync, MessageEvent, ReadableStreamDefaultReader, Response,
};

/// A fetched file held in JavaScript memory as the chunks it arrived in, read into wasm a
/// piece at a time: the checkpoint parser copies each tensor straight into its buffer, so
/// the file itself never takes wasm memory (which never shrinks), and the JavaScript copy
/// is garbage once the model is built.
struct JsBytes {
    chunks: Vec<Uint8Array>,
    /// The chunk read last and the file's offset where it starts.
    at: (usize, u64),
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
}

impl ByteSource for JsBytes {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        // The chunk holding `offset`: the one read last, or the next (reads run forward).
        let (mut i, mut start) = self.at;
        if offset < start {
            (i, start) = (0, 0);
        }
        while i < self.chunks.len() && start + self.chunks[i].length() as u64 <= offset {
            start += self.chunks[i].length() as u64;
            i += 1;
        }
        self.at = (i, start);
        let mut n = 0;
        let mut off = (offset - start) as u32;
        while n < buf.len() && i < self.chunks.len() {
            let chunk = &self.chunks[i];
            let k = (chunk.length() - off).min((buf.len() - n) as u32);
            chunk
                .subarray(off, off + k)
                .copy_to(&mut buf[n..n + k as usize]);
            n += k as usize;
            off = 0;
            i += 1;
        }
        Ok(n)
    }
}

/// A file the user picked or dropped, read a slice at a time when the session asks
/// (`FileReaderSync`, which a worker may use): its first bytes tell what it is, its header
/// (or a `config.json`, whole) is checked before the bulk is read, and the page never holds
/// the file's bytes. Its reading posts progress.
struct PickedFile {
    file: web_sys::File,
    reader: FileReaderSync,
    /// How far reading has got, and where progress was last posted.
    read: u64,
    posted: u64,
    post: Rc<dyn Fn(&Event)>,
}

impl ByteSource for PickedFile {
    fn len(&self) -> u64 {
        self.file.size() as u64
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let io = |e: JsValue| std::io::Error::other(format!("{e:?}"));
        let end = (offset + buf.len() as u64).min(self.len());
        if offset >= end {
            return Ok(0);
        }
        let blob = self
            .file
            .slice_with_f64_and_f64(offset as f64, end as f64)
            .map_err(io)?;
        let buffer = self.reader.read_as_array_buffer(&blob).map_err(io)?;
        let bytes = Uint8Array::new(&buffer);
        let n = bytes.length() as usize;
        bytes.copy_to(&mut buf[..n]);
        self.read = self.read.max(offset + n as u64);
        // Progress at every 1/64 of the file (a model's bulk is read in a few large reads).
        if self.read - self.posted >= (self.len() / 64).max(1) || self.read == self.len() {
            self.posted = self.read;
            (self.post)(&Event::Model(ModelEvent::Progress {
                file: self.file.name(),
                loaded: self.read,
                total: Some(self.len()),
            }));
        }
        Ok(n)
    }
}

struct Worker {
    scope: DedicatedWorkerGlobalScope,
    session: RefCell<Session>,
    queue: RefCell<VecDeque<Request>>,
    busy: Cell<bool>,
    cancel: Cell<bool>,
    /// The download under way, stopped at once by `CancelDownload`.
    download: crate::download::Control,
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

    fn sleep(&self, ms: u32) -> Pin<Box<dyn Future<Output = ()> + '_>> {
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            let set = self
                .scope
                .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms as i32);
            if set.is_err() {
                let _ = resolve.call0(&JsValue::NULL);
            }
        });
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

    fn fetch(&self, url: &str) -> Pin<Box<dyn Future<Output = Result<ModelFile, String>> + '_>> {
        let url = url.to_string();
        Box::pin(async move {
            let bytes = self.fetch_chunks(&url).await?;
            let name = url.rsplit('/').next().unwrap_or(&url).to_string();
            Ok(ModelFile::new(name, Box::new(bytes)))
        })
    }

    fn fetch_small(
        &self,
        url: &str,
        limit: usize,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + '_>> {
        let url = url.to_string();
        Box::pin(async move {
            let bytes = self.fetch_chunks(&url).await?;
            if bytes.len() > limit as u64 {
                return Err(format!(
                    "{url}: {} bytes, over the {limit} read",
                    bytes.len()
                ));
            }
            let mut buf = vec![0; bytes.len() as usize];
            let mut bytes = bytes;
            bytes.read_at(0, &mut buf).map_err(|e| e.to_string())?;
            Ok(buf)
        })
    }

    fn stored(
        &self,
        key: &str,
    ) -> Pin<Box<dyn Future<Output = Option<(String, Vec<ModelFile>)>> + '_>> {
        let key = key.to_string();
        Box::pin(async move {
            let store = crate::store::Store::open(&self.scope).await.ok()?;
            crate::store::open_kept(&store, &key, self.poster()).await
        })
    }

    fn download<'a>(
        &'a self,
        model: &'a decoding_page::remote::RemoteModel,
        check: &'a dyn Fn(&mut [ModelFile]) -> Result<(), String>,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<ModelFile>, String>> + 'a>> {
        Box::pin(async move {
            let cx = crate::download::Ctx {
                scope: &self.scope,
                control: &self.download,
                post: self.poster(),
            };
            crate::download::download(&cx, model, check).await
        })
    }

    fn list_stored(&self) -> Pin<Box<dyn Future<Output = Result<ModelEvent, String>> + '_>> {
        Box::pin(async move {
            let store = crate::store::Store::open(&self.scope).await?;
            let models = store.list().await?;
            let (usage, quota) = crate::store::estimate(&self.scope).await;
            Ok(ModelEvent::Stored {
                models,
                usage,
                quota,
            })
        })
    }

    fn delete_stored(&self, key: &str) -> Pin<Box<dyn Future<Output = Result<(), String>> + '_>> {
        let key = key.to_string();
        Box::pin(async move {
            let store = crate::store::Store::open(&self.scope).await?;
            store.remove(&key).await
        })
    }

    fn cores(&self) -> crate::session::Cores {
        crate::threads::cores()
    }
}

impl Worker {
    fn post(&self, event: &Event) {
        post(&self.scope, event)
    }

    /// Posting, as a closure a byte source keeps.
    fn poster(&self) -> Rc<dyn Fn(&Event)> {
        let scope = self.scope.clone();
        Rc::new(move |e: &Event| post(&scope, e))
    }

    /// Runs queued requests in order until the queue is empty.
    async fn drain(self: Rc<Self>) {
        loop {
            let next = self.queue.borrow_mut().pop_front();
            let Some(req) = next else { break };
            // Requests run one at a time, so the session can be taken out for the
            // duration of the (possibly GPU-asynchronous) work.
            let mut session = self.session.take();
            let events = session.handle(req, &*self).await;
            self.session.replace(session);
            for e in &events {
                self.post(e);
            }
        }
        self.busy.set(false);
    }

    /// GETs `url` from the page's own server, posting progress as bytes arrive. The body
    /// stays in JavaScript memory as the chunks it arrived in.
    async fn fetch_chunks(&self, url: &str) -> Result<JsBytes, String> {
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
            self.post(&Event::Model(ModelEvent::Progress {
                file: url.to_string(),
                loaded,
                total,
            }));
        }
        Ok(JsBytes::new(chunks))
    }

    /// `{files: [File, …]}` from the page: a `LoadFiles` request whose files are read when
    /// the session asks for their bytes.
    fn picked(&self, data: &JsValue) -> Option<Request> {
        let list = Reflect::get(data, &"files".into()).ok()?;
        let list: &js_sys::Array = list.dyn_ref()?;
        let reader = FileReaderSync::new().ok()?;
        let scope = self.scope.clone();
        let post: Rc<dyn Fn(&Event)> = Rc::new(move |e: &Event| post(&scope, e));
        let mut files = Vec::new();
        for f in list.iter() {
            let file: web_sys::File = f.dyn_into().ok()?;
            let name = file.name();
            let bytes = PickedFile {
                file,
                reader: reader.clone(),
                read: 0,
                posted: 0,
                post: post.clone(),
            };
            files.push(ModelFile::new(name, Box::new(bytes)));
        }
        Some(Request::Model(ModelRequest::LoadFiles {
            files: Files::new(files),
        }))
    }
}

/// Posts an event to the page as JSON text.
fn post(scope: &DedicatedWorkerGlobalScope, event: &Event) {
    match decoding_page::protocol::encode(event) {
        Ok(text) => {
            if let Err(e) = scope.post_message(&JsValue::from_str(&text)) {
                web_sys::console::error_2(&"postMessage failed".into(), &e);
            }
        }
        Err(e) => web_sys::console::error_1(&e.into()),
    }
}

/// Wall time a model loaded on the CPU spends warming up before its first prompt
/// (`Session::set_warm_up`: V8 compiles the engine's hot functions with its optimising
/// compiler only after they have done some work).
///
/// 150 ms: in the perf test it made stories260K's 200-token replay faster and its first
/// distribution a little later (BENCHMARKS.md, "The worker warms up after a load").
const WARM_UP_MS: f64 = 150.0;

/// The worker's entry point: installs the message handler and says it is ready.
pub fn start() {
    console_error_panic_hook::set_once();
    crate::threads::install();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let mut session = Session::default();
    session.set_warm_up(WARM_UP_MS);
    let worker = Rc::new(Worker {
        scope: scope.clone(),
        session: RefCell::new(session),
        queue: RefCell::new(VecDeque::new()),
        busy: Cell::new(false),
        cancel: Cell::new(false),
        download: Default::default(),
    });
    let w = worker.clone();
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let data = e.data();
        let req = match data.as_string() {
            Some(text) => match decoding_page::protocol::read_request(&text) {
                Ok(Request::Transcript(TranscriptRequest::Cancel)) => {
                    w.cancel.set(true);
                    return;
                }
                Ok(Request::Model(ModelRequest::CancelDownload)) => {
                    w.download.cancel();
                    return;
                }
                // A new download starts uncancelled; a cancel sent after it stops it, even
                // while it waits in the queue or looks in the storage.
                Ok(req @ Request::Model(ModelRequest::LoadRemote { .. })) => {
                    w.download.stop.set(false);
                    req
                }
                Ok(req) => req,
                Err(message) => {
                    w.post(&Event::Model(ModelEvent::Error { message }));
                    return;
                }
            },
            None => match w.picked(&data) {
                Some(req) => req,
                None => {
                    w.post(&Event::Model(ModelEvent::Error {
                        message: "the worker got files it cannot read".into(),
                    }));
                    return;
                }
            },
        };
        {
            let mut q = w.queue.borrow_mut();
            // Knob moves arrive faster than a busy worker takes them: a new one replaces the
            // queued ones it supersedes, so the worker catches up with the slider instead of
            // replaying every position it passed.
            let kind = decoding_page::protocol::knob_kind;
            decoding_page::protocol::coalesce(&mut q, kind(&req), kind);
            q.push_back(req);
        }
        if !w.busy.replace(true) {
            spawn_local(w.clone().drain());
        }
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    // The threads are timed when the page asks (`SetThreads`), once it has drawn its first
    // distribution: timed at start-up, the page's own start shared the cores.
    worker.post(&Event::Model(ModelEvent::Ready));
}
