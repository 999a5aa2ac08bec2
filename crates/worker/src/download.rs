//! Downloading a model by link into the browser's storage (`store.rs`): each file streamed
//! into its OPFS file as it arrives, hashed (sha256) on the way, its progress posted; every
//! response checked by `decoding_page::remote::http` (status, type, range, length against
//! the list and the budget); a dropped connection resumed from the last byte written with
//! `Range` and `If-Range: <ETag>` (a 200 instead of a 206 starts the file again); the
//! engine's header check run once the weights' first bytes are in, stopping the download on
//! a refusal; a stopped download resumed next time from the bytes kept. Cancelled at once by
//! the page (the fetch aborted).

use crate::session::HEAD_CHECK;
use crate::store::{self, js_text, Meta, Store};
use decoding_engine::budget::Budget;
use decoding_engine::formats::source::ModelFile;
use decoding_page::protocol::{Event, ModelEvent};
use decoding_page::remote::http::{self, DownloadError, Got};
use decoding_page::remote::{RemoteFile, RemoteModel};
use js_sys::{Reflect, Uint8Array};
use sha2::{Digest, Sha256};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, DedicatedWorkerGlobalScope, FileSystemSyncAccessHandle, Headers,
    ReadableStreamDefaultReader, RequestInit, Response,
};

/// The page's hold on a download: stopped by a `CancelDownload` (the fetch under way
/// aborted).
#[derive(Default)]
pub struct Control {
    pub stop: Cell<bool>,
    pub abort: RefCell<Option<AbortController>>,
}

impl Control {
    pub fn cancel(&self) {
        self.stop.set(true);
        if let Some(a) = self.abort.borrow().as_ref() {
            a.abort();
        }
    }
}

/// What a download needs from the worker.
pub struct Ctx<'a> {
    pub scope: &'a DedicatedWorkerGlobalScope,
    pub control: &'a Control,
    pub post: Rc<dyn Fn(&Event)>,
}

type Check<'a> = &'a dyn Fn(&mut [ModelFile]) -> Result<(), String>;

/// Downloads `model` into the storage (files already whole there are not fetched again)
/// and opens its files for reading.
pub async fn download(
    cx: &Ctx<'_>,
    model: &RemoteModel,
    check: Check<'_>,
) -> Result<Vec<ModelFile>, String> {
    cx.control.stop.set(false);
    let store = Store::open(cx.scope).await?;
    let folder = store.folder(&model.key, true).await?;
    let need: u64 = model.files.iter().filter_map(|f| f.size).sum();
    if let (Some(usage), Some(quota)) = store::estimate(cx.scope).await {
        http::check_quota(&model.name, need, usage, quota).map_err(|e| e.to_string())?;
    }
    let meta = |complete| Meta {
        model: model.clone(),
        complete,
    };
    store::write_meta(&folder, &meta(false)).await?;
    let mut small: Vec<ModelFile> = Vec::new();
    for (i, f) in model.files.iter().enumerate() {
        let h = store::handle(&folder, &f.name, true).await?;
        let last = i + 1 == model.files.len();
        let got = fetch_into(cx, f, &h, last.then_some((&mut small, check))).await;
        let bytes = match &got {
            Ok(()) if !last => read_whole(&h).map_err(js_text),
            _ => Ok(Vec::new()),
        };
        let _ = h.flush();
        h.close();
        let got = match got {
            Err(DownloadError::Storage { name, why }) => {
                let (usage, quota) = store::estimate(cx.scope).await;
                let figures = match (usage, quota) {
                    (Some(u), Some(q)) => format!("{why}; it holds {u} bytes of its quota of {q}"),
                    _ => why,
                };
                Err(DownloadError::Storage { name, why: figures })
            }
            other => other,
        };
        if let Err(e) = got {
            // A file refused is not kept; a download stopped (dropped, cancelled) is, to be
            // resumed.
            if !matches!(e, DownloadError::Dropped { .. } | DownloadError::Cancelled) {
                let _ = store.remove(&model.key).await;
            }
            return Err(e.to_string());
        }
        small.push(ModelFile::from_bytes(f.name.clone(), bytes?));
    }
    store::write_meta(&folder, &meta(true)).await?;
    store::open_kept(&store, &model.key, cx.post.clone())
        .await
        .map(|(_, files)| files)
        .ok_or_else(|| {
            format!(
                "{} was downloaded but cannot be read back from the browser's storage",
                model.name
            )
        })
}

fn read_whole(h: &FileSystemSyncAccessHandle) -> Result<Vec<u8>, JsValue> {
    let mut buf = vec![0; h.get_size()? as usize];
    let n = store::read_at(h, 0, &mut buf)?;
    buf.truncate(n);
    Ok(buf)
}

/// Hashes what a stopped download left (it is resumed after it).
fn rehash(h: &FileSystemSyncAccessHandle, len: u64, sha: &mut Sha256) -> Result<(), JsValue> {
    let mut buf = vec![0; 4 << 20];
    let mut at = 0;
    while at < len {
        let n = store::read_at(h, at, &mut buf)?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        at += n as u64;
    }
    Ok(())
}

/// One file into its handle: resumed from the bytes already there, its responses checked,
/// a dropped connection resumed up to `MAX_RESUMES` times, the header check run on the
/// last file's first bytes (`check`, with the small files before it), the finished file
/// checked by its size and sha256.
async fn fetch_into(
    cx: &Ctx<'_>,
    f: &RemoteFile,
    h: &FileSystemSyncAccessHandle,
    mut check: Option<(&mut Vec<ModelFile>, Check<'_>)>,
) -> Result<(), DownloadError> {
    let storage = |e: JsValue| DownloadError::Dropped {
        url: f.url.clone(),
        tries: 0,
        at: 0,
        why: format!("the browser's storage refused it: {}", js_text(e)),
    };
    let mut have = h.get_size().map_err(storage)? as u64;
    let mut sha = Sha256::new();
    if f.size.is_some_and(|s| have > s) {
        h.truncate_with_f64(0.0).map_err(storage)?;
        have = 0;
    }
    rehash(h, have, &mut sha).map_err(storage)?;
    let (mut etag, mut tries, mut total) = (None::<String>, 0u32, f.size);
    loop {
        if cx.control.stop.get() {
            return Err(DownloadError::Cancelled);
        }
        if let Some((small, run)) = check.as_mut() {
            if have >= total.unwrap_or(u64::MAX).min(HEAD_CHECK) {
                header_check(h, have, total, small, *run, &f.name)?;
                check = None;
            }
        }
        if total == Some(have) {
            break;
        }
        let step = fetch_once(
            cx, f, h, &mut have, &mut sha, &mut etag, &mut total, &mut check,
        )
        .await;
        // Whatever ended this response, its connection is let go.
        if let Some(a) = cx.control.abort.take() {
            a.abort();
        }
        match step {
            Ok(true) => break,
            Ok(false) => {}
            Err(Stop::Refused(e)) => return Err(e),
            Err(Stop::Dropped(why)) => {
                if cx.control.stop.get() {
                    return Err(DownloadError::Cancelled);
                }
                tries += 1;
                if tries > http::MAX_RESUMES {
                    return Err(DownloadError::Dropped {
                        url: f.url.clone(),
                        tries,
                        at: have,
                        why,
                    });
                }
            }
        }
    }
    if let Some((small, run)) = check {
        header_check(h, have, total, small, run, &f.name)?;
    }
    let hex: String = sha.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let finished = http::check_finished(&f.name, have, &hex, f.size, f.sha256.as_deref());
    if finished.is_err() {
        let _ = h.truncate_with_f64(0.0);
    }
    finished
}

enum Stop {
    Refused(DownloadError),
    Dropped(String),
}

/// The engine's header check on the small files and the first bytes of this one.
fn header_check(
    h: &FileSystemSyncAccessHandle,
    have: u64,
    total: Option<u64>,
    small: &mut Vec<ModelFile>,
    run: Check<'_>,
    name: &str,
) -> Result<(), DownloadError> {
    let mut head = vec![0; have.min(HEAD_CHECK) as usize];
    let n = store::read_at(h, 0, &mut head).unwrap_or(0);
    head.truncate(n);
    let arriving = crate::session::Arriving {
        head,
        len: total.unwrap_or(have),
    };
    small.push(ModelFile::new(name.to_string(), Box::new(arriving)));
    let r = run(small);
    small.pop();
    r.map_err(|why| DownloadError::Check {
        name: name.to_string(),
        why,
    })
}

/// A header's value.
fn header(r: &Response, name: &str) -> Option<String> {
    r.headers().get(name).ok().flatten()
}

/// One request and its body: Ok(true) when the file is whole, Ok(false) when it should be
/// asked again (its length was not said and the body ended: whole), a refusal, or a drop.
#[allow(clippy::too_many_arguments)]
async fn fetch_once(
    cx: &Ctx<'_>,
    f: &RemoteFile,
    h: &FileSystemSyncAccessHandle,
    have: &mut u64,
    sha: &mut Sha256,
    etag: &mut Option<String>,
    total: &mut Option<u64>,
    check: &mut Option<(&mut Vec<ModelFile>, Check<'_>)>,
) -> Result<bool, Stop> {
    let abort = AbortController::new().map_err(|e| Stop::Dropped(js_text(e)))?;
    let init = RequestInit::new();
    init.set_signal(Some(&abort.signal()));
    let headers = Headers::new().map_err(|e| Stop::Dropped(js_text(e)))?;
    if *have > 0 {
        let _ = headers.set("Range", &format!("bytes={have}-"));
        if let Some(e) = etag.as_deref() {
            let _ = headers.set("If-Range", e);
        }
    }
    init.set_headers(&headers);
    cx.control.abort.replace(Some(abort));
    let resp: Response = JsFuture::from(cx.scope.fetch_with_str_and_init(&f.url, &init))
        .await
        .map_err(|e| Stop::Dropped(js_text(e)))?
        .unchecked_into();
    let got = Got {
        status: resp.status(),
        content_type: header(&resp, "content-type"),
        content_length: header(&resp, "content-length").and_then(|v| v.parse().ok()),
        content_range: header(&resp, "content-range"),
    };
    let start = http::check_response(&f.url, &f.name, *have, &got, f.size, Budget::default().0)
        .map_err(Stop::Refused)?;
    if start.from == 0 && *have > 0 {
        h.truncate_with_f64(0.0)
            .map_err(|e| Stop::Dropped(js_text(e)))?;
        *have = 0;
        *sha = Sha256::new();
    }
    *total = start.total.or(*total);
    *etag = header(&resp, "etag").filter(|e| !e.starts_with("W/"));
    let body = resp
        .body()
        .ok_or_else(|| Stop::Dropped("the response has no body".into()))?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut posted = *have;
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|e| Stop::Dropped(js_text(e)))?;
        if Reflect::get(&chunk, &"done".into())
            .ok()
            .and_then(|d| d.as_bool())
            .unwrap_or(true)
        {
            break;
        }
        let value: Uint8Array = Reflect::get(&chunk, &"value".into())
            .map_err(|e| Stop::Dropped(js_text(e)))?
            .unchecked_into();
        let bytes = value.to_vec();
        if *have == 0 && http::looks_like_html(&bytes) {
            return Err(Stop::Refused(DownloadError::Html { url: f.url.clone() }));
        }
        if *have + bytes.len() as u64 > total.unwrap_or(u64::MAX) {
            return Err(Stop::Refused(DownloadError::WrongSize {
                name: f.name.clone(),
                got: *have + bytes.len() as u64,
                want: total.unwrap_or(0),
            }));
        }
        store::write_at(h, *have, &bytes).map_err(|e| Stop::Refused(quota_error(f, e)))?;
        sha.update(&bytes);
        *have += bytes.len() as u64;
        if *have - posted >= (total.unwrap_or(0) / 100).max(64 << 10) {
            posted = *have;
            (cx.post)(&Event::Model(ModelEvent::Progress {
                file: f.name.clone(),
                loaded: *have,
                total: *total,
            }));
        }
        if let Some((small, run)) = check.as_mut() {
            if *have >= total.unwrap_or(u64::MAX).min(HEAD_CHECK) {
                header_check(h, *have, *total, small, *run, &f.name).map_err(Stop::Refused)?;
                *check = None;
            }
        }
    }
    (cx.post)(&Event::Model(ModelEvent::Progress {
        file: f.name.clone(),
        loaded: *have,
        total: *total,
    }));
    match *total {
        // The body ended short of the length said: a drop, resumed.
        Some(t) if *have < t => Err(Stop::Dropped(format!(
            "the body ended at byte {have} of {t}"
        ))),
        Some(_) => Ok(true),
        None => {
            *total = Some(*have);
            Ok(true)
        }
    }
}

/// A write the storage refused: its quota, with the figures.
fn quota_error(f: &RemoteFile, e: JsValue) -> DownloadError {
    DownloadError::Storage {
        name: f.name.clone(),
        why: js_text(e),
    }
}
