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
/// and opens its files for reading. The page's `CancelDownload` stops it (the flag is
/// cleared when the glue takes the request, so a cancel sent meanwhile is kept).
pub async fn download(
    cx: &Ctx<'_>,
    model: &RemoteModel,
    check: Check<'_>,
) -> Result<Vec<ModelFile>, String> {
    let store = Store::open(cx.scope).await?;
    let folder = store.folder(&model.key, true).await?;
    let mut meta = store::read_meta(&folder)
        .await
        .filter(|m| m.model == *model)
        .unwrap_or(Meta {
            model: model.clone(),
            complete: false,
            files: Vec::new(),
        });
    // The quota against what is still to come (a resumed download has part of it).
    let kept = kept_bytes(&folder, model).await;
    let need = model
        .files
        .iter()
        .filter_map(|f| f.size)
        .sum::<u64>()
        .saturating_sub(kept);
    if let (Some(usage), Some(quota)) = store::estimate(cx.scope).await {
        http::check_quota(&model.name, need, usage, quota).map_err(|e| e.to_string())?;
    }
    meta.complete = false;
    store::write_meta(&folder, &meta).await?;
    let mut before: Vec<ModelFile> = Vec::new();
    for (i, f) in model.files.iter().enumerate() {
        let h = store::handle(&folder, &f.name, true).await?;
        let last = i + 1 == model.files.len();
        let state = meta.state(&f.name);
        let whole = state.done && h.get_size().ok().map(|n| n as u64) == state.size;
        let mut etag = state.etag.clone();
        let got = if whole {
            Ok(())
        } else {
            fetch_into(cx, f, &h, &mut etag, last.then_some((&mut before, check))).await
        };
        let size = h.get_size().ok().map(|n| n as u64);
        let head = match (&got, last) {
            (Ok(()), false) => Some(read_head(&h, HEAD_CHECK).map_err(js_text)),
            _ => None,
        };
        let _ = h.flush();
        h.close();
        meta.set(&f.name, got.is_ok(), size, etag);
        let _ = store::write_meta(&folder, &meta).await;
        if let Err(e) = got {
            let e = with_figures(cx, e).await;
            // A file that is not the one it names is not kept, nor a download that kept no
            // byte (a 404, a refused first response, a cancel before the body): nothing to
            // resume. A download stopped part way (dropped, cancelled, a server's passing
            // error) is kept, to be resumed.
            if e.is_content() || kept_bytes(&folder, model).await == 0 {
                let _ = store.remove(&model.key).await;
            }
            return Err(e.to_string());
        }
        if let Some(head) = head {
            let arriving = crate::session::Arriving {
                head: head?,
                len: size.unwrap_or(0),
            };
            before.push(ModelFile::new(f.name.clone(), Box::new(arriving)));
        }
    }
    meta.complete = true;
    store::write_meta(&folder, &meta).await?;
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

/// The bytes of `model`'s files the folder holds.
async fn kept_bytes(folder: &web_sys::FileSystemDirectoryHandle, model: &RemoteModel) -> u64 {
    let mut kept = 0;
    for f in &model.files {
        kept += store::file_size(folder, &f.name).await.unwrap_or(0);
    }
    kept
}

/// A storage refusal with the storage's figures.
async fn with_figures(cx: &Ctx<'_>, e: DownloadError) -> DownloadError {
    match e {
        DownloadError::Storage { name, why } => {
            let (usage, quota) = store::estimate(cx.scope).await;
            let why = match (usage, quota) {
                (Some(u), Some(q)) => format!("{why}; it holds {u} bytes of its quota of {q}"),
                _ => why,
            };
            DownloadError::Storage { name, why }
        }
        other => other,
    }
}

/// A file's first `n` bytes (a file before the weights, for the header check).
fn read_head(h: &FileSystemSyncAccessHandle, n: u64) -> Result<Vec<u8>, JsValue> {
    let mut buf = vec![0; (h.get_size()? as u64).min(n) as usize];
    let got = store::read_at(h, 0, &mut buf)?;
    buf.truncate(got);
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

/// One file into its handle: resumed from the bytes already there (from the start when
/// nothing can vouch for them: no ETag and no sha256 in the list), its responses checked, a
/// dropped connection or a server's passing error resumed up to `MAX_RESUMES` times
/// (without `If-Range` after a request carrying it failed outright: a host that refuses
/// the header's preflight), the header check run on the last file's first bytes once its
/// length is known (`check`, with the files before it), the finished file checked by its
/// size and sha256.
async fn fetch_into(
    cx: &Ctx<'_>,
    f: &RemoteFile,
    h: &FileSystemSyncAccessHandle,
    etag: &mut Option<String>,
    mut check: Option<(&mut Vec<ModelFile>, Check<'_>)>,
) -> Result<(), DownloadError> {
    let storage = |e: JsValue| DownloadError::Storage {
        name: f.name.clone(),
        why: js_text(e),
    };
    let mut have = h.get_size().map_err(storage)? as u64;
    let mut sha = Sha256::new();
    let unvouched = etag.is_none() && f.sha256.is_none();
    if f.size.is_some_and(|s| have > s) || (have > 0 && unvouched) {
        h.truncate_with_f64(0.0).map_err(storage)?;
        have = 0;
    }
    rehash(h, have, &mut sha).map_err(storage)?;
    let (mut tries, mut total, mut if_range, mut restarted) = (0u32, f.size, true, false);
    loop {
        if cx.control.stop.get() {
            return Err(DownloadError::Cancelled);
        }
        if let (Some((small, run)), Some(t)) = (check.as_mut(), total) {
            if have >= t.min(HEAD_CHECK) {
                header_check(h, have, t, small, *run, &f.name)?;
                check = None;
            }
        }
        if total == Some(have) {
            break;
        }
        let mut once = Once {
            have: &mut have,
            sha: &mut sha,
            etag,
            total: &mut total,
            check: &mut check,
            if_range,
        };
        let step = fetch_once(cx, f, h, &mut once).await;
        // Whatever ended this response, its connection is let go.
        if let Some(a) = cx.control.abort.take() {
            a.abort();
        }
        match step {
            Ok(()) => break,
            // A range the server answered in a way that cannot be followed: the file again
            // from its first byte, once.
            Err(Stop::Refused(DownloadError::BadRange { .. })) if !restarted => {
                restarted = true;
                h.truncate_with_f64(0.0).map_err(storage)?;
                (have, sha, *etag) = (0, Sha256::new(), None);
            }
            Err(Stop::Refused(e)) => return Err(e),
            Err(Stop::Dropped {
                why,
                before_response,
            }) => {
                if cx.control.stop.get() {
                    return Err(DownloadError::Cancelled);
                }
                if before_response && have > 0 && if_range && etag.is_some() {
                    if_range = false;
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
        header_check(h, have, have, small, run, &f.name)?;
    }
    let hex: String = sha.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let finished = http::check_finished(&f.name, have, &hex, f.size, f.sha256.as_deref());
    if finished.is_err() {
        let _ = h.truncate_with_f64(0.0);
    }
    finished
}

/// What one request updates.
struct Once<'a, 'b, 'c> {
    have: &'a mut u64,
    sha: &'a mut Sha256,
    etag: &'a mut Option<String>,
    total: &'a mut Option<u64>,
    check: &'a mut Option<(&'b mut Vec<ModelFile>, Check<'c>)>,
    if_range: bool,
}

enum Stop {
    Refused(DownloadError),
    /// The connection or the server failed; `before_response`: no response came at all.
    Dropped {
        why: String,
        before_response: bool,
    },
}

fn dropped(e: JsValue, before_response: bool) -> Stop {
    Stop::Dropped {
        why: js_text(e),
        before_response,
    }
}

/// The engine's header check on the files before this one and the first bytes of this one
/// (whose whole length is `len`).
fn header_check(
    h: &FileSystemSyncAccessHandle,
    have: u64,
    len: u64,
    before: &mut Vec<ModelFile>,
    run: Check<'_>,
    name: &str,
) -> Result<(), DownloadError> {
    let mut head = vec![0; have.min(HEAD_CHECK) as usize];
    let n = store::read_at(h, 0, &mut head).unwrap_or(0);
    head.truncate(n);
    let arriving = crate::session::Arriving { head, len };
    before.push(ModelFile::new(name.to_string(), Box::new(arriving)));
    let r = run(before);
    before.pop();
    r.map_err(|why| DownloadError::Check {
        name: name.to_string(),
        why,
    })
}

/// A header's value.
fn header(r: &Response, name: &str) -> Option<String> {
    r.headers().get(name).ok().flatten()
}

/// One request and its body into the file: Ok when the file is whole, a refusal, or a drop
/// (a server's passing error, 408, 429 or 5xx, is one too: asked again).
async fn fetch_once(
    cx: &Ctx<'_>,
    f: &RemoteFile,
    h: &FileSystemSyncAccessHandle,
    o: &mut Once<'_, '_, '_>,
) -> Result<(), Stop> {
    let abort = AbortController::new().map_err(|e| dropped(e, true))?;
    let init = RequestInit::new();
    init.set_signal(Some(&abort.signal()));
    let headers = Headers::new().map_err(|e| dropped(e, true))?;
    if *o.have > 0 {
        let _ = headers.set("Range", &format!("bytes={}-", o.have));
        if let Some(e) = o.etag.as_deref().filter(|_| o.if_range) {
            let _ = headers.set("If-Range", e);
        }
    }
    init.set_headers(&headers);
    cx.control.abort.replace(Some(abort));
    let resp: Response = JsFuture::from(cx.scope.fetch_with_str_and_init(&f.url, &init))
        .await
        .map_err(|e| dropped(e, true))?
        .unchecked_into();
    let got = Got {
        status: resp.status(),
        content_type: header(&resp, "content-type"),
        content_length: header(&resp, "content-length").and_then(|v| v.parse().ok()),
        content_range: header(&resp, "content-range"),
    };
    if matches!(got.status, 408 | 429 | 500..=599) {
        return Err(Stop::Dropped {
            why: format!("HTTP {}", got.status),
            before_response: false,
        });
    }
    let start = http::check_response(&f.url, &f.name, *o.have, &got, f.size, Budget::default().0)
        .map_err(Stop::Refused)?;
    if start.from == 0 && *o.have > 0 {
        h.truncate_with_f64(0.0).map_err(|e| dropped(e, false))?;
        *o.have = 0;
        *o.sha = Sha256::new();
    }
    // The response's length, where it says one (a compressed body's is smaller: then the
    // list's size, or the body's end, decides).
    let mut said = start.total;
    *o.total = f.size.or(said);
    *o.etag = header(&resp, "etag").filter(|e| !e.starts_with("W/"));
    let body = resp.body().ok_or_else(|| Stop::Dropped {
        why: "the response has no body".into(),
        before_response: false,
    })?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    stream(cx, f, h, o, &reader, &mut said).await?;
    (cx.post)(&Event::Model(ModelEvent::Progress {
        file: f.name.clone(),
        loaded: *o.have,
        total: *o.total,
    }));
    // Whole as the server has it (the length it said, all delivered; or no length to
    // reach): the list's size and sha256 then judge it. Short of it: a drop, resumed.
    let whole = said == Some(*o.have) || o.total.is_none_or(|t| *o.have >= t);
    if !whole {
        return Err(Stop::Dropped {
            why: format!("the body ended at byte {}", o.have),
            before_response: false,
        });
    }
    *o.total = Some(*o.have);
    Ok(())
}

/// A response's body into the file from `o.have`, chunk by chunk: each one written, hashed,
/// its progress posted, the header check run once the first bytes are in; refused where it
/// runs past the list's size or starts as an HTML page.
async fn stream(
    cx: &Ctx<'_>,
    f: &RemoteFile,
    h: &FileSystemSyncAccessHandle,
    o: &mut Once<'_, '_, '_>,
    reader: &ReadableStreamDefaultReader,
    said: &mut Option<u64>,
) -> Result<(), Stop> {
    let mut posted = *o.have;
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|e| dropped(e, false))?;
        if Reflect::get(&chunk, &"done".into())
            .ok()
            .and_then(|d| d.as_bool())
            .unwrap_or(true)
        {
            break;
        }
        let value: Uint8Array = Reflect::get(&chunk, &"value".into())
            .map_err(|e| dropped(e, false))?
            .unchecked_into();
        let bytes = value.to_vec();
        if *o.have == 0 && http::looks_like_html(&bytes) {
            return Err(Stop::Refused(DownloadError::Html { url: f.url.clone() }));
        }
        let next = *o.have + bytes.len() as u64;
        if let Some(want) = f.size.filter(|&w| next > w) {
            return Err(Stop::Refused(DownloadError::WrongSize {
                name: f.name.clone(),
                got: next,
                want,
            }));
        }
        if said.is_some_and(|t| next > t) {
            *said = None;
            *o.total = f.size;
        }
        store::write_at(h, *o.have, &bytes).map_err(|e| {
            Stop::Refused(DownloadError::Storage {
                name: f.name.clone(),
                why: js_text(e),
            })
        })?;
        o.sha.update(&bytes);
        *o.have = next;
        if *o.have - posted >= (o.total.unwrap_or(0) / 100).max(64 << 10) {
            posted = *o.have;
            (cx.post)(&Event::Model(ModelEvent::Progress {
                file: f.name.clone(),
                loaded: *o.have,
                total: *o.total,
            }));
        }
        if let (Some((before, run)), Some(t)) = (o.check.as_mut(), *o.total) {
            if *o.have >= t.min(HEAD_CHECK) {
                header_check(h, *o.have, t, before, *run, &f.name).map_err(Stop::Refused)?;
                *o.check = None;
            }
        }
    }
    Ok(())
}
