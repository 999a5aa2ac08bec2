//! Links to models, the hub's listing and the download's rules, checked.

use super::http::*;
use super::*;

const HUB_T: &str = "https://huggingface.co";

#[test]
fn a_link_names_a_listed_model_urls_or_a_repository() {
    let listed = ModelLink::parse("stories15m").unwrap();
    let Resolved::Files(m) = listed.resolve("stories15m", "/hub/") else {
        panic!("a listed model resolves to its files")
    };
    assert_eq!(m.key, "stories15M");
    assert_eq!(m.files.len(), 2);
    // The tokenizer first (small files first), the checkpoint on the hub given.
    assert_eq!(m.files[0].name, "tokenizer.bin");
    assert_eq!(
        m.files[1].url,
        "/hub/karpathy/tinyllamas/resolve/main/stories15M.bin"
    );
    assert_eq!(m.files[1].size, Some(60_816_028));
    // The hub's file page (/blob/) is read as its file (/resolve/).
    let blob = "https://huggingface.co/bartowski/SmolLM2-135M-Instruct-GGUF/blob/main/SmolLM2-135M-Instruct-Q8_0.gguf";
    let ModelLink::Urls(u) = ModelLink::parse(blob).unwrap() else {
        panic!()
    };
    assert_eq!(u[0], blob.replace("/blob/", "/resolve/"));
    // Several URLs, by spaces or commas: one model's files, kept under one folder.
    let two = "https://example.org/m/stories15M.bin, https://example.org/m/tokenizer.bin";
    let Resolved::Files(m2) = ModelLink::parse(two).unwrap().resolve(two, HUB_T) else {
        panic!()
    };
    assert_eq!(
        m2.files.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        ["stories15M.bin", "tokenizer.bin"]
    );
    assert!(
        m2.key.starts_with("url-") && m2.key.len() == 20,
        "{}",
        m2.key
    );
    let Resolved::Files(m3) = ModelLink::parse(two).unwrap().resolve(two, HUB_T) else {
        panic!()
    };
    assert_eq!(m3.key, m2.key, "the same URLs, the same folder");
    // Two files of one name, or one named as the folder's record: kept apart.
    let same = "https://a.org/x/model.bin https://b.org/y/model.bin https://c.org/meta.json";
    let Resolved::Files(m4) = ModelLink::parse(same).unwrap().resolve(same, HUB_T) else {
        panic!()
    };
    let names: Vec<&str> = m4.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["model.bin", "2-model.bin", "3-meta.json"]);
    // A repository, bare or by its page.
    for r in [
        "Qwen/Qwen2.5-0.5B-Instruct-GGUF",
        "https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/",
    ] {
        let link = ModelLink::parse(r).unwrap();
        assert_eq!(
            link,
            ModelLink::Repo("Qwen/Qwen2.5-0.5B-Instruct-GGUF".into())
        );
        assert_eq!(
            link.resolve(r, "https://huggingface.co"),
            Resolved::Repo {
                repo: "Qwen/Qwen2.5-0.5B-Instruct-GGUF".into(),
                listing:
                    "https://huggingface.co/api/models/Qwen/Qwen2.5-0.5B-Instruct-GGUF/tree/main"
                        .into(),
                key: "hf-Qwen--Qwen2.5-0.5B-Instruct-GGUF".into(),
            }
        );
    }
    // A path on the page's own server (a bundle's models).
    assert_eq!(
        ModelLink::parse("/models/x.gguf").unwrap(),
        ModelLink::Urls(vec!["/models/x.gguf".into()])
    );
}

#[test]
fn nonsense_links_are_named() {
    for (v, says) in [
        ("", "name a model"),
        ("http://example.org/m.gguf", "https only"),
        ("ftp://x/y", "is not a model of the list"),
        ("stories99M", "stories15M"),
        ("//evil.example/m.gguf", "is not a model of the list"),
        ("https://example.org", "is not a model of the list"),
        ("a b c d", "4 URLs"),
        ("../../etc/passwd", "is not a model of the list"),
    ] {
        let e = ModelLink::parse(v).unwrap_err();
        assert!(e.contains(says), "{v:?}: {e}");
    }
    assert!(ModelLink::parse(&"x".repeat(MAX_LINK + 1))
        .unwrap_err()
        .contains("at most"));
    // A repository's parts are names, not paths.
    assert!(matches!(
        ModelLink::parse("a/.."),
        Err(_) | Ok(ModelLink::Urls(_))
    ));
    assert_ne!(
        ModelLink::parse("a/..").ok(),
        Some(ModelLink::Repo("a/..".into()))
    );
}

#[test]
fn file_names_are_safe_for_the_browsers_storage() {
    assert_eq!(
        file_name("https://h/a/b/model.Q8_0.gguf?download=true"),
        "model.Q8_0.gguf"
    );
    assert_eq!(file_name("https://h/a/"), "file");
    assert_eq!(safe_name("../x y"), "_.._x_y");
    assert_eq!(safe_name(".hidden"), "_.hidden");
    assert_eq!(safe_name("模型.gguf"), "__.gguf");
}

#[test]
fn every_listed_model_is_well_formed() {
    let mut keys: Vec<String> = catalogue::ENTRIES
        .iter()
        .map(|e| e.key.to_lowercase())
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(
        keys.len(),
        catalogue::ENTRIES.len(),
        "keys differ in more than case"
    );
    for e in catalogue::ENTRIES {
        assert_eq!(catalogue::by_key(&e.key.to_uppercase()), Some(e));
        assert!(!e.licence.is_empty() && e.size() > 0);
        let m = e.model(HUB_T);
        for f in &m.files {
            assert!(f.url.starts_with("https://"), "{}", f.url);
            let sha = f.sha256.as_deref().unwrap();
            assert!(
                sha.len() == 64
                    && sha
                        .chars()
                        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
                "{sha}"
            );
            assert!(
                f.size.unwrap() <= decoding_engine::budget::Budget::default().0,
                "{} is over the page's budget",
                f.name
            );
        }
        // The weights come last: the header check runs once the small files are in.
        let last = m.files.last().unwrap().size.unwrap();
        assert!(m.files.iter().all(|f| f.size.unwrap() <= last), "{}", e.key);
    }
    // Every model has its label in each language, naming it; the others' translated.
    for e in catalogue::ENTRIES {
        let id = e.label_id();
        assert_eq!(catalogue::label_id(e.key).as_deref(), Some(id.as_str()));
        let en = crate::i18n::tr(crate::i18n::Lang::En).get(&id);
        for lang in crate::i18n::Lang::ALL {
            let tr = crate::i18n::tr(lang);
            assert!(tr.has(&id), "{} lacks {id}", lang.name());
            let label = tr.get(&id);
            assert!(label.starts_with(e.key), "{} {id}: {label:?}", lang.name());
            assert!(
                lang == crate::i18n::Lang::En || label != en,
                "{} {id}: still the English {en:?}",
                lang.name()
            );
        }
    }
    assert_eq!(catalogue::label_id("a/b"), None);
    // The page's own model from the hub is byte for byte the one the set-up copies (its
    // README's table, checked by scripts/fetch-models.sh).
    let own = catalogue::by_key("stories260K").unwrap();
    assert_eq!(own.size(), 1_056_540 + 6_227);
}

#[test]
fn the_hubs_listing_chooses_a_gguf_or_a_checkpoints_three_files() {
    let sha = "a".repeat(64);
    let listing = format!(
        r#"[{{"type":"directory","path":"sub","oid":"x","size":0}},
            {{"type":"file","path":"README.md","oid":"r","size":10}},
            {{"type":"file","path":"m-Q4_K_M.gguf","oid":"1","size":134,"lfs":{{"oid":"{sha}","size":105000000,"pointerSize":134}}}},
            {{"type":"file","path":"m-Q8_0.gguf","oid":"2","size":134,"lfs":{{"oid":"{}","size":145000000,"pointerSize":134}}}},
            {{"type":"file","path":"m-Q2_K.gguf","oid":"3","size":134,"lfs":{{"oid":"{sha}","size":60000000,"pointerSize":134}}}}]"#,
        "B".repeat(64)
    );
    let m = hub::choose("o/m", "hf-o--m", "/hub", listing.as_bytes()).unwrap();
    assert_eq!(m.files.len(), 1);
    assert_eq!(m.files[0].url, "/hub/o/m/resolve/main/m-Q8_0.gguf");
    assert_eq!(m.files[0].size, Some(145_000_000));
    assert_eq!(m.files[0].sha256.as_deref(), Some("b".repeat(64).as_str()));
    assert_eq!(m.link, "o/m");
    // Without Q8_0 or Q4_K_M or F16: the smallest.
    let only = listing
        .replace("m-Q8_0", "m-Q6_K")
        .replace("m-Q4_K_M", "m-Q5_K_S");
    let m = hub::choose("o/m", "k", "/hub", only.as_bytes()).unwrap();
    assert_eq!(m.files[0].name, "m-Q2_K.gguf");
    // A transformers checkpoint: its three files, the weights last.
    let hf = r#"[{"type":"file","path":"model.safetensors","size":134,"lfs":{"oid":"c","size":500}},
                 {"type":"file","path":"tokenizer.json","size":2000},
                 {"type":"file","path":"config.json","size":700}]"#;
    let m = hub::choose("o/hf", "k", "/hub", hf.as_bytes()).unwrap();
    let names: Vec<&str> = m.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["config.json", "tokenizer.json", "model.safetensors"]
    );
    assert_eq!(m.files[2].size, Some(500));
    assert_eq!(
        m.files[2].sha256, None,
        "an oid that is not a sha256 is not checked against"
    );
    // Sharded, empty, not a listing.
    let sharded = r#"[{"type":"file","path":"config.json"},{"type":"file","path":"tokenizer.json"},{"type":"file","path":"model.safetensors.index.json"}]"#;
    assert!(hub::choose("o/s", "k", "/hub", sharded.as_bytes())
        .unwrap_err()
        .contains("several safetensors files"));
    assert!(hub::choose("o/e", "k", "/hub", b"[]")
        .unwrap_err()
        .contains("no GGUF file"));
    assert!(hub::choose("o/x", "k", "/hub", b"<!doctype html>")
        .unwrap_err()
        .contains("not a list of files"));
}

/// A binary response of `status`, its length and its Content-Range.
fn ok(status: u16, len: Option<u64>, range: Option<&str>) -> Got {
    Got {
        status,
        content_type: Some("application/octet-stream".into()),
        content_length: len,
        content_range: range.map(String::from),
    }
}

/// The rules on a response to a request from byte `asked`, a budget of 1,000 bytes.
fn r(asked: u64, got: &Got, want: Option<u64>) -> Result<Start, DownloadError> {
    check_response("u", "f", asked, got, want, 1_000)
}

#[test]
fn responses_are_taken_or_refused_by_status_type_range_and_size() {
    assert_eq!(
        r(0, &ok(200, Some(500), None), Some(500)),
        Ok(Start {
            from: 0,
            total: Some(500)
        })
    );
    // A resumed download: the 206 starts where it stopped, with the whole length after '/'.
    assert_eq!(
        r(
            200,
            &ok(206, Some(300), Some("bytes 200-499/500")),
            Some(500)
        ),
        Ok(Start {
            from: 200,
            total: Some(500)
        })
    );
}

#[test]
fn a_resumed_or_odd_response_is_followed_or_refused() {
    // The server ignored the range (or the file changed): start again.
    assert_eq!(
        r(200, &ok(200, Some(500), None), None),
        Ok(Start {
            from: 0,
            total: Some(500)
        })
    );
    // A range that does not start where asked, or unasked for.
    assert!(matches!(
        r(200, &ok(206, Some(300), Some("bytes 100-499/500")), None),
        Err(DownloadError::BadRange { .. })
    ));
    assert!(matches!(
        r(0, &ok(206, Some(300), Some("bytes 0-299/500")), None),
        Err(DownloadError::BadRange { .. })
    ));
    assert!(matches!(
        r(0, &ok(404, None, None), None),
        Err(DownloadError::NotFound { .. })
    ));
    assert!(matches!(
        r(0, &ok(403, None, None), None),
        Err(DownloadError::Refused { status: 403, .. })
    ));
    assert!(matches!(
        r(0, &ok(500, None, None), None),
        Err(DownloadError::Status { status: 500, .. })
    ));
    let html = Got {
        content_type: Some("text/html; charset=utf-8".into()),
        ..ok(200, Some(20), None)
    };
    assert!(r(0, &html, None)
        .unwrap_err()
        .to_string()
        .contains("/resolve/"));
    let over = r(0, &ok(200, Some(1_001), None), None).unwrap_err();
    assert_eq!(
        over.to_string(),
        "f is 1001 bytes: more than the page's memory budget of 1000 bytes"
    );
    assert!(matches!(
        r(0, &ok(200, Some(600), None), Some(500)),
        Err(DownloadError::WrongSize {
            got: 600,
            want: 500,
            ..
        })
    ));
    // Shorter than the list's: perhaps a compressed body's length; judged once it has arrived.
    assert_eq!(
        r(0, &ok(200, Some(400), None), Some(500)),
        Ok(Start {
            from: 0,
            total: Some(400)
        })
    );
    // A resumed range's whole length is the file's, compressed or not.
    assert!(matches!(
        r(
            200,
            &ok(206, Some(200), Some("bytes 200-399/400")),
            Some(500)
        ),
        Err(DownloadError::WrongSize {
            got: 400,
            want: 500,
            ..
        })
    ));
    // No length said: taken, checked when finished.
    assert_eq!(
        r(0, &ok(200, None, None), Some(500)),
        Ok(Start {
            from: 0,
            total: None
        })
    );
}

#[test]
fn content_ranges_and_html_bodies_are_read_strictly() {
    assert_eq!(
        parse_content_range("bytes 0-99/100"),
        Some((0, 99, Some(100)))
    );
    assert_eq!(parse_content_range("bytes 5-9/*"), Some((5, 9, None)));
    for bad in [
        "bytes 9-5/100",
        "bytes 0-100/100",
        "items 0-1/2",
        "bytes 0-/10",
        "bytes x-1/2",
        "",
    ] {
        assert_eq!(parse_content_range(bad), None, "{bad}");
    }
    assert!(looks_like_html(b"\n  <!DOCTYPE html><html>"));
    assert!(looks_like_html(b"<HTML><body>502 Bad Gateway"));
    assert!(!looks_like_html(b"GGUF\x03\x00\x00\x00"));
    assert!(!looks_like_html(b""));
}

#[test]
fn finished_files_are_checked_by_length_and_sha256() {
    // The sha256 of "abc" (FIPS 180-2's example).
    let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    assert_eq!(
        check_finished("f", 3, abc, Some(3), Some(&abc.to_uppercase())),
        Ok(())
    );
    assert_eq!(check_finished("f", 3, abc, None, None), Ok(()));
    assert!(matches!(
        check_finished("f", 4, abc, Some(3), Some(abc)),
        Err(DownloadError::WrongSize { .. })
    ));
    let e = check_finished("f", 3, abc, Some(3), Some(&"0".repeat(64))).unwrap_err();
    assert!(e.to_string().starts_with("f's sha256 is ba7816bf"), "{e}");
    // What is not worth keeping: a file that is not the one named; a drop or a cancel is.
    assert!(e.is_content());
    assert!(DownloadError::Html { url: "u".into() }.is_content());
    assert!(!DownloadError::Cancelled.is_content());
    assert!(!DownloadError::NotFound { url: "u".into() }.is_content());
    // The quota, with its figures.
    assert_eq!(check_quota("f", 10, 80, 100), Ok(()));
    assert_eq!(
        check_quota("f", 30, 80, 100).unwrap_err().to_string(),
        "the browser's storage has 20 bytes free of its quota of 100: f needs 30"
    );
    assert!(check_quota("f", 1, 200, 100).is_err());
}
