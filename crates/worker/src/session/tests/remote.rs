//! Models by link through the session: the storage first, else the download (here a
//! network of URLs in memory and a storage map, keeping the glue's contract: each response
//! checked by `remote::http`, the header check on the weights' first bytes, each finished
//! file by its size and sha256), the link carried by the loaded model, the current model
//! kept on any failure, the page's own model loaded when a shared link fails at start.
//! Sizes and hashes are the stories260K README's table and sha2's digests.

use super::*;
use crate::session::remote::{header_check, Arriving};
use decoding_engine::budget::Budget;
use decoding_page::remote::http::{
    check_finished, check_response, looks_like_html, DownloadError, Got,
};
use decoding_page::remote::RemoteModel;
use sha2::{Digest, Sha256};

/// A model in the storage.
pub(crate) struct Kept {
    model: RemoteModel,
    files: Vec<(String, Vec<u8>)>,
}

fn sha_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(super) fn fetch_small(h: &TestHost, url: &str, limit: usize) -> Result<Vec<u8>, String> {
    h.asked.borrow_mut().push(url.to_string());
    match h.served.borrow().get(url) {
        Some(b) if b.len() <= limit => Ok(b.clone()),
        Some(b) => Err(format!("{url}: {} bytes, over {limit}", b.len())),
        None => Err(DownloadError::NotFound { url: url.into() }.to_string()),
    }
}

pub(super) fn stored(h: &TestHost, key: &str) -> Option<(String, Vec<ModelFile>)> {
    h.kept.borrow().get(key).map(|k| {
        let files = k
            .files
            .iter()
            .map(|(n, b)| ModelFile::from_bytes(n.clone(), b.clone()))
            .collect();
        (k.model.name.clone(), files)
    })
}

pub(super) fn download(
    h: &TestHost,
    model: &RemoteModel,
    check: &dyn Fn(&mut [ModelFile]) -> Result<(), String>,
) -> Result<Vec<ModelFile>, String> {
    let mut got: Vec<(String, Vec<u8>)> = Vec::new();
    for (i, f) in model.files.iter().enumerate() {
        h.asked.borrow_mut().push(f.url.clone());
        let served = h.served.borrow();
        let Some(bytes) = served.get(&f.url) else {
            return Err(DownloadError::NotFound { url: f.url.clone() }.to_string());
        };
        let len = bytes.len() as u64;
        let response = Got {
            status: 200,
            content_type: Some("application/octet-stream".into()),
            content_length: Some(len),
            content_range: None,
        };
        check_response(&f.url, &f.name, 0, &response, f.size, Budget::default().0)
            .map_err(|e| e.to_string())?;
        if looks_like_html(bytes) {
            return Err(DownloadError::Html { url: f.url.clone() }.to_string());
        }
        if i + 1 == model.files.len() {
            let mut files: Vec<ModelFile> = got
                .iter()
                .map(|(n, b)| ModelFile::from_bytes(n.clone(), b.clone()))
                .collect();
            let head = bytes[..len.min(crate::session::base::HEAD_CHECK) as usize].to_vec();
            // The length the list says, else the response's (as the glue does).
            let len = f.size.unwrap_or(len);
            files.push(ModelFile::new(
                f.name.clone(),
                Box::new(Arriving { head, len }),
            ));
            check(&mut files)?;
        }
        check_finished(&f.name, len, &sha_hex(bytes), f.size, f.sha256.as_deref())
            .map_err(|e| e.to_string())?;
        got.push((f.name.clone(), bytes.clone()));
    }
    let files = got
        .iter()
        .map(|(n, b)| ModelFile::from_bytes(n.clone(), b.clone()))
        .collect();
    h.kept.borrow_mut().insert(
        model.key.clone(),
        Kept {
            model: model.clone(),
            files: got,
        },
    );
    Ok(files)
}

pub(super) fn list(h: &TestHost) -> ModelEvent {
    let models: Vec<StoredModel> = h
        .kept
        .borrow()
        .iter()
        .map(|(key, k)| StoredModel {
            key: key.clone(),
            name: k.model.name.clone(),
            link: k.model.link.clone(),
            bytes: k.files.iter().map(|(_, b)| b.len() as u64).sum(),
            complete: true,
        })
        .collect();
    let usage = models.iter().map(|m| m.bytes).sum();
    ModelEvent::Stored {
        models,
        usage: Some(usage),
        quota: Some(1 << 30),
    }
}

const HUB: &str = "https://hub.test";

fn serve_own_model(h: &TestHost, model: Vec<u8>) {
    let mut s = h.served.borrow_mut();
    s.insert(
        format!("{HUB}/karpathy/tinyllamas/resolve/main/stories260K/stories260K.bin"),
        model,
    );
    s.insert(
        format!("{HUB}/karpathy/tinyllamas/resolve/main/stories260K/tok512.bin"),
        asset("tok512.bin"),
    );
}

fn load_remote(s: &mut Session, h: &TestHost, link: &str, fallback: Vec<String>) -> Vec<Event> {
    ask(
        s,
        h,
        Request::Model(ModelRequest::LoadRemote {
            link: link.into(),
            hub: HUB.into(),
            backend: BackendChoice::Cpu,
            fallback,
        }),
    )
}

fn loaded_info(ev: &[Event]) -> Option<&ModelInfo> {
    ev.iter().find_map(|e| match e {
        Event::Model(ModelEvent::Loaded { info }) => Some(info),
        _ => None,
    })
}

fn errors(ev: &[Event]) -> Vec<&str> {
    ev.iter()
        .filter_map(|e| match e {
            Event::Model(ModelEvent::Error { message }) => Some(message.as_str()),
            _ => None,
        })
        .collect()
}

fn kept_list(ev: &[Event]) -> Option<&Vec<StoredModel>> {
    ev.iter().find_map(|e| match e {
        Event::Model(ModelEvent::Stored { models, .. }) => Some(models),
        _ => None,
    })
}

#[test]
fn a_listed_model_is_downloaded_checked_kept_and_then_loaded_from_storage() {
    let h = host();
    serve_own_model(&h, asset("stories260K.bin"));
    let mut s = Session::default();
    let ev = load_remote(&mut s, &h, "stories260K", Vec::new());
    assert!(errors(&ev).is_empty(), "{ev:?}");
    let info = loaded_info(&ev).expect("loaded");
    assert_eq!(info.link.as_deref(), Some("stories260K"));
    assert_eq!(info.name, "stories260K");
    assert_eq!(info.config.vocab_size, 512);
    // Kept whole: both files, the README's byte counts.
    let kept = kept_list(&ev).unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        (kept[0].key.as_str(), kept[0].bytes),
        ("stories260K", 1_056_540 + 6_227)
    );
    assert_eq!(h.asked.borrow().len(), 2);
    // Again, in a new session (the page reloaded): from the storage, no request.
    let mut again = Session::default();
    let ev = load_remote(&mut again, &h, "STORIES260k", Vec::new());
    assert!(errors(&ev).is_empty(), "{ev:?}");
    assert_eq!(loaded_info(&ev).unwrap().name, "stories260K");
    assert_eq!(h.asked.borrow().len(), 2, "no request the second time");
}

#[test]
fn a_wrong_file_or_a_missing_one_is_refused_and_the_current_model_kept() {
    let (mut s, h) = loaded();
    let before = s.core.model.as_ref().unwrap().transformer.clone();
    // One byte changed in the weights: the sha256 is not the list's.
    let mut bad = asset("stories260K.bin");
    bad[5_000] ^= 1;
    serve_own_model(&h, bad);
    let ev = load_remote(&mut s, &h, "stories260K", Vec::new());
    let e = errors(&ev);
    assert_eq!(e.len(), 1, "{ev:?}");
    assert!(
        e[0].contains("stories260K.bin's sha256 is") && e[0].contains("b0a507e7"),
        "{}",
        e[0]
    );
    assert!(e[0].ends_with("the current model is kept"), "{}", e[0]);
    assert!(loaded_info(&ev).is_none());
    assert!(std::sync::Arc::ptr_eq(
        &before,
        &s.core.model.as_ref().unwrap().transformer
    ));
    assert!(
        kept_list(&ev).unwrap().is_empty(),
        "a refused file is not kept"
    );
    // A file cut short: its size is not the list's (refused from the response's length).
    serve_own_model(&h, asset("stories260K.bin")[..1_000_000].to_vec());
    let ev = load_remote(&mut s, &h, "stories260K", Vec::new());
    assert!(
        errors(&ev)[0].contains("is 1000000 bytes where the list says 1056540"),
        "{ev:?}"
    );
    // A URL nobody serves, and an HTML page where a model should be.
    let ev = load_remote(&mut s, &h, "https://example.org/missing.gguf", Vec::new());
    assert!(
        errors(&ev)[0].starts_with("https://example.org/missing.gguf: not found (HTTP 404)"),
        "{ev:?}"
    );
    h.served.borrow_mut().insert(
        "https://example.org/page.gguf".into(),
        b"<!DOCTYPE html><title>x</title>".to_vec(),
    );
    let ev = load_remote(&mut s, &h, "https://example.org/page.gguf", Vec::new());
    assert!(
        errors(&ev)[0].contains("is an HTML page, not a model file"),
        "{ev:?}"
    );
    // Nonsense is named before anything is asked.
    let asked = h.asked.borrow().len();
    let ev = load_remote(&mut s, &h, "ftp://x", Vec::new());
    assert!(
        errors(&ev)[0].contains("is not a model of the list"),
        "{ev:?}"
    );
    assert_eq!(h.asked.borrow().len(), asked);
    assert!(std::sync::Arc::ptr_eq(
        &before,
        &s.core.model.as_ref().unwrap().transformer
    ));
}

#[test]
fn a_shared_link_that_fails_at_start_loads_the_pages_own_model_and_says_why() {
    let h = host();
    let mut s = Session::default();
    let own = vec![
        decoding_page::behaviour::MODEL_URL.to_string(),
        decoding_page::behaviour::TOKENIZER_URL.to_string(),
    ];
    let ev = load_remote(&mut s, &h, "https://example.org/gone.gguf", own);
    let info = loaded_info(&ev).expect("the page's own model");
    assert_eq!(info.link, None);
    assert_eq!(info.config.vocab_size, 512);
    let e = errors(&ev);
    assert_eq!(e.len(), 1);
    assert!(
        e[0].contains("not found (HTTP 404)")
            && e[0].ends_with("the page's own model is loaded instead"),
        "{}",
        e[0]
    );
}

#[test]
fn a_repository_resolves_through_the_hubs_listing_and_is_kept_under_its_name() {
    let h = host();
    let gguf = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../assets/models/fixtures/gguf/stories260K.gguf"),
    )
    .expect("the GGUF fixture (scripts/make-fixtures.sh)");
    let listing = format!(
        r#"[{{"type":"file","path":"README.md","size":5}},{{"type":"file","path":"stories260K.gguf","size":134,"lfs":{{"oid":"{}","size":{}}}}}]"#,
        sha_hex(&gguf),
        gguf.len()
    );
    h.served.borrow_mut().insert(
        format!("{HUB}/api/models/someone/tiny/tree/main"),
        listing.into_bytes(),
    );
    h.served.borrow_mut().insert(
        format!("{HUB}/someone/tiny/resolve/main/stories260K.gguf"),
        gguf,
    );
    let mut s = Session::default();
    let ev = load_remote(&mut s, &h, "someone/tiny", Vec::new());
    assert!(errors(&ev).is_empty(), "{ev:?}");
    assert_eq!(
        loaded_info(&ev).unwrap().link.as_deref(),
        Some("someone/tiny")
    );
    let kept = kept_list(&ev).unwrap();
    assert_eq!(kept[0].key, "hf-someone--tiny");
    assert_eq!(kept[0].link, "someone/tiny");
    // Listed, then deleted; deleting it twice is said.
    let ev = ask(&mut s, &h, Request::Model(ModelRequest::ListStored));
    assert_eq!(kept_list(&ev).unwrap().len(), 1);
    let ev = ask(
        &mut s,
        &h,
        Request::Model(ModelRequest::DeleteStored {
            key: "hf-someone--tiny".into(),
        }),
    );
    assert!(kept_list(&ev).unwrap().is_empty());
    let ev = ask(
        &mut s,
        &h,
        Request::Model(ModelRequest::DeleteStored {
            key: "hf-someone--tiny".into(),
        }),
    );
    assert!(
        errors(&ev)[0].contains("could not delete hf-someone--tiny"),
        "{ev:?}"
    );
}

/// The header check reads the files' headers only: on the weights' first bytes (with their
/// whole length) it passes or refuses as on the whole file, and it never reads past them.
#[test]
fn the_header_check_runs_on_the_first_bytes_and_refuses_an_oversized_model() {
    let model = asset("stories260K.bin");
    let tok = asset("tok512.bin");
    let len = model.len() as u64;
    let arriving = |head: usize, len: u64| {
        vec![
            ModelFile::from_bytes("tok512.bin", tok.clone()),
            ModelFile::new(
                "m.bin",
                Box::new(Arriving {
                    head: model[..head].to_vec(),
                    len,
                }),
            ),
        ]
    };
    // 256 bytes of a llama2.c checkpoint are its header: enough.
    assert_eq!(header_check(&mut arriving(4096, len)), Ok(()));
    // A header saying 7B parameters (Llama 2's shape, float32: 26 GB, the length it implies
    // announced by the server) is refused from the header, over the budget (the page's
    // 1.5 GiB in wasm, 16 GiB natively).
    let mut big = model[..4096].to_vec();
    for (i, v) in [4096i32, 11008, 32, 32, 32, 32000, 2048].iter().enumerate() {
        big[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
    let c = decoding_engine::Config::from_header([4096, 11008, 32, 32, 32, 32000, 2048]).unwrap();
    let big_len = c.expected_file_bytes().unwrap();
    assert!(big_len > 26_000_000_000);
    let mut files = vec![
        ModelFile::from_bytes("tok512.bin", tok.clone()),
        ModelFile::new(
            "7b.bin",
            Box::new(Arriving {
                head: big,
                len: big_len,
            }),
        ),
    ];
    let e = header_check(&mut files).unwrap_err();
    assert!(
        e.contains("the weights would need 24.62 GiB") && e.contains("the limit is"),
        "{e}"
    );
    // A read past the bytes in is an error, never zeros.
    let mut a = Arriving {
        head: vec![1, 2, 3],
        len: 10,
    };
    let mut buf = [0u8; 4];
    use decoding_engine::formats::source::ByteSource;
    assert!(a.read_at(0, &mut buf).is_err());
    assert_eq!(a.read_at(1, &mut buf[..2]).unwrap(), 2);
    assert_eq!(a.read_at(10, &mut buf).unwrap(), 0);
}

/// A shared link with `model=`: the page asks the worker for it (the page's own model as
/// the fallback), the loaded model carries the link back into the page's link, a lesson
/// step's view keeps it, and a model dropped later clears it.
#[test]
fn a_link_with_a_model_opens_it_and_the_page_keeps_its_link() {
    let (page, st) = {
        let r = decoding_page::lesson::from_link("model=stories260K&prompt=The+dog&hub=x", 512);
        assert_eq!(
            r.problems.len(),
            1,
            "hub is not a key the link may set: {:?}",
            r.problems
        );
        (r.page, r.settings)
    };
    assert_eq!(page.model.as_deref(), Some("stories260K"));
    let mut m = decoding_page::behaviour::PageModel::default();
    m.hub = HUB.into();
    let r = m.apply(&page, &st, &mut Event::Model(ModelEvent::Ready));
    let [Request::Model(req @ ModelRequest::LoadRemote { .. })] = &r.send[..] else {
        panic!("{:?}", r.send)
    };
    let ModelRequest::LoadRemote {
        link,
        hub,
        fallback,
        ..
    } = req
    else {
        unreachable!()
    };
    assert_eq!((link.as_str(), hub.as_str()), ("stories260K", HUB));
    assert_eq!(fallback.len(), 2);
    // The worker loads it; its Loaded event puts the link in the page's.
    let h = host();
    serve_own_model(&h, asset("stories260K.bin"));
    let mut s = Session::default();
    let mut ev = ask(&mut s, &h, Request::Model(req.clone()));
    let loaded = ev
        .iter_mut()
        .find(|e| matches!(e, Event::Model(ModelEvent::Loaded { .. })))
        .unwrap();
    let r = m.apply(&page, &st, loaded);
    assert_eq!(r.model_link, Some(Some("stories260K".to_string())));
    assert!(matches!(
        &r.send[..],
        [Request::Transcript(TranscriptRequest::Restore { .. })]
    ));
    // A lesson step's view keeps the model; the link written carries it.
    let (opened, _) = m.open_view(&page, decoding_page::lesson::STEPS[3].query, Some(3), 512);
    assert_eq!(opened.page.model.as_deref(), Some("stories260K"));
    assert!(
        decoding_page::page::to_query(&opened.page, &opened.settings).contains("model=stories260K")
    );
    // Files dropped: their model has no link.
    let mut dropped = drop_files(
        &mut s,
        &h,
        &[
            ("stories260K.bin", asset("stories260K.bin")),
            ("tok512.bin", asset("tok512.bin")),
        ],
    );
    let r = m.apply(&page, &st, &mut dropped[0]);
    assert_eq!(r.model_link, Some(None));
    // A nonsense model in a link is named and not asked for.
    let bad = decoding_page::lesson::from_link("model=ftp%3A%2F%2Fx", 512);
    assert_eq!(bad.page.model, None);
    assert_eq!(bad.problems[0].field, "model");
}
