//! The web worker's browser glue: receives [`Request`]s, runs them one at a time through the
//! [`Session`], posts [`Event`]s back, and fetches the model files with progress.

use crate::protocol::{Event, Request};
use crate::session::Session;
use js_sys::{Reflect, Uint8Array};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, ReadableStreamDefaultReader, Response};

struct Worker {
    scope: DedicatedWorkerGlobalScope,
    session: RefCell<Session>,
    queue: RefCell<VecDeque<Request>>,
    busy: std::cell::Cell<bool>,
}

impl Worker {
    fn post(&self, event: &Event) {
        match serde_wasm_bindgen::to_value(event) {
            Ok(v) => {
                if let Err(e) = self.scope.post_message(&v) {
                    web_sys::console::error_2(&"postMessage failed".into(), &e);
                }
            }
            Err(e) => web_sys::console::error_1(&format!("cannot encode event: {e}").into()),
        }
    }

    fn now(&self) -> f64 {
        self.scope
            .performance()
            .map(|p| p.now())
            .unwrap_or_else(js_sys::Date::now)
    }

    /// Runs queued requests in order until the queue is empty.
    async fn drain(self: Rc<Self>) {
        loop {
            let next = self.queue.borrow_mut().pop_front();
            let Some(req) = next else { break };
            self.handle(req).await;
        }
        self.busy.set(false);
    }

    async fn handle(&self, req: Request) {
        match req {
            Request::Load {
                model_url,
                tokenizer_url,
            } => {
                let model = match self.fetch(&model_url).await {
                    Ok(b) => b,
                    Err(message) => return self.post(&Event::Error { message }),
                };
                let tok = match self.fetch(&tokenizer_url).await {
                    Ok(b) => b,
                    Err(message) => return self.post(&Event::Error { message }),
                };
                let event = self.session.borrow_mut().load(&model, &tok);
                self.post(&event);
            }
            Request::Next { prompt, top } => {
                // Requests run one at a time (see `drain`), so the session can be taken out
                // for the duration of the (possibly GPU-asynchronous) work.
                let mut session = self.session.take();
                let event = session.next(&prompt, top, || self.now()).await;
                self.session.replace(session);
                self.post(&event);
            }
        }
    }

    /// GETs `url` from the page's own server, posting progress as bytes arrive.
    async fn fetch(&self, url: &str) -> Result<Vec<u8>, String> {
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
        let mut out: Vec<u8> = Vec::with_capacity(total.unwrap_or(0).min(1 << 30) as usize);
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
            let start = out.len();
            out.resize(start + value.length() as usize, 0);
            value.copy_to(&mut out[start..]);
            self.post(&Event::Progress {
                file: url.to_string(),
                loaded: out.len() as u64,
                total,
            });
        }
        Ok(out)
    }
}

/// The worker's entry point: installs the message handler.
pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let worker = Rc::new(Worker {
        scope: scope.clone(),
        session: RefCell::new(Session::default()),
        queue: RefCell::new(VecDeque::new()),
        busy: std::cell::Cell::new(false),
    });
    let w = worker.clone();
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        match serde_wasm_bindgen::from_value::<Request>(e.data()) {
            Ok(req) => {
                w.queue.borrow_mut().push_back(req);
                if !w.busy.replace(true) {
                    spawn_local(w.clone().drain());
                }
            }
            Err(err) => w.post(&Event::Error {
                message: format!("the worker cannot read a request: {err}"),
            }),
        }
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    worker.post(&Event::Ready);
}
