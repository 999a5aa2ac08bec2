//! The three languages' files, checked: each parses clean, Chinese and Spanish have every
//! message, each translation uses its English message's
//! arguments, every id the page asks for is in English; numbers as CLDR writes them.

use super::*;
use fluent_bundle::FluentResource;

/// A file's ids and each one's arguments (`{ $name }`), read from its text.
fn messages(src: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in src.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let Some((id, value)) = line.split_once(" = ") else {
            panic!("a line that is not `id = value`: {line:?}")
        };
        let mut args: Vec<String> = value
            .split("{ $")
            .skip(1)
            .map(|a| a.split(' ').next().unwrap_or("").to_string())
            .collect();
        args.sort();
        out.push((id.trim().to_string(), args));
    }
    out
}

#[test]
fn every_file_parses_clean_and_names_each_message_once() {
    for lang in Lang::ALL {
        let res = FluentResource::try_new(lang.source());
        assert!(
            res.is_ok(),
            "{}: {:?}",
            lang.name(),
            res.err().map(|(_, e)| e)
        );
        let mut b = FluentBundle::new(vec![lang.name().parse().unwrap()]);
        assert!(
            b.add_resource(res.unwrap()).is_ok(),
            "{}: an id twice",
            lang.name()
        );
    }
}

#[test]
fn chinese_and_spanish_are_complete_and_arguments_match() {
    let en = messages(&Lang::En.source());
    assert!(en.len() >= 70, "{} messages", en.len());
    for lang in [Lang::ZhCn, Lang::Es] {
        let theirs = messages(&lang.source());
        for (id, args) in &en {
            match theirs.iter().find(|(i, _)| i == id) {
                Some((_, a)) => assert_eq!(a, args, "{} {id}: its arguments", lang.name()),
                None => panic!("{} lacks {id}", lang.name()),
            }
        }
        for (id, _) in &theirs {
            assert!(
                en.iter().any(|(i, _)| i == id),
                "{} has {id}, which English does not",
                lang.name()
            );
        }
    }
}

/// Every `.rs` file under `dir`, with its path (tests excluded: they may name ids that do
/// not exist, to check the fallback).
fn sources(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        let name = path.to_string_lossy().to_string();
        if path.is_dir() {
            sources(&path, out);
        } else if name.ends_with(".rs") && !name.contains("test") {
            out.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The ids the code asks for: `ui.t("id")` and `ui.tf("id", …)` in the page's views,
/// `.msg("id", …)` in the page crate (the lesson's captions), `tr(lang).fmt("id", …)` (the
/// figures' words, the captions' units).
fn asked_ids() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("../app/src"), &mut files);
    sources(&root.join("src"), &mut files);
    let mut ids = Vec::new();
    for (name, src) in &files {
        // The id may start the call's next line (rustfmt's wrapping of a long call).
        for call in [".t(", ".tf(", ".msg(", ".fmt("] {
            for (i, _) in src.match_indices(call) {
                let rest = src[i + call.len()..].trim_start();
                if let Some(id) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
                    ids.push((name.clone(), id.to_string()));
                }
            }
        }
    }
    ids
}

#[test]
fn every_id_the_page_asks_for_is_in_english() {
    let en = messages(&Lang::En.source());
    let ids = asked_ids();
    for (file, id) in &ids {
        assert!(
            en.iter().any(|(e, _)| e == id),
            "{file} asks for {id:?}, which en/*.ftl lacks"
        );
    }
    assert!(
        ids.len() >= 40,
        "only {} ids read: the scan is broken",
        ids.len()
    );
}

/// A translation that is its English message word for word is a message not translated
/// (names of things, a word or two, are the same in every language).
#[test]
fn no_translation_is_its_english_copied() {
    let en = messages(&Lang::En.source());
    let en_tr = Tr::new(Lang::En);
    for lang in [Lang::ZhCn, Lang::Es] {
        let tr = Tr::new(lang);
        for (id, _) in &en {
            if !tr.has(id) {
                continue;
            }
            let (theirs, ours) = (tr.get(id), en_tr.get(id));
            let words = ours
                .split_whitespace()
                .filter(|w| w.chars().filter(|c| c.is_ascii_lowercase()).count() >= 3)
                .count();
            assert!(
                theirs != ours || words < 3,
                "{} {id}: still the English {ours:?}",
                lang.name()
            );
        }
    }
}

#[test]
fn a_message_falls_back_to_english_and_takes_its_arguments() {
    let zh = Tr::new(Lang::ZhCn);
    assert_eq!(zh.get("cancel"), "取消");
    assert_eq!(
        zh.fmt(
            "lesson-position",
            &[("n", integer(Lang::ZhCn, 3)), ("total", "15".into())]
        ),
        "第 3 步，共 15 步"
    );
    let es = Tr::new(Lang::Es);
    assert_eq!(
        es.fmt("fetching-file", &[("file", "m.gguf".into())]),
        "Descargando m.gguf"
    );
    assert_eq!(es.get("step-loop"), "El bucle de generación");
    // A language that lacks a message says it in English.
    let partial = Tr::of_source(Lang::Es, "cancel = Cancelar\n");
    assert!(!partial.has("step-loop"));
    assert_eq!(partial.get("cancel"), "Cancelar");
    assert_eq!(
        partial.get("step-loop"),
        "The generation loop",
        "English behind Spanish"
    );
    assert_eq!(Tr::new(Lang::En).get("no-such-id"), "no-such-id");
}

#[test]
fn numbers_are_written_as_cldr_writes_them() {
    // CLDR's `latn` symbols and minimumGroupingDigits (en 1; es 2): what the browser's
    // Intl.NumberFormat writes (also checked against it in tests/e2e/reach.test.mjs).
    assert_eq!(number(Lang::En, 1_234_567.891, 2), "1,234,567.89");
    assert_eq!(number(Lang::ZhCn, 1_234_567.891, 2), "1,234,567.89");
    assert_eq!(number(Lang::Es, 1_234_567.891, 2), "1.234.567,89");
    assert_eq!(number(Lang::Es, 1234.5, 1), "1234,5");
    assert_eq!(number(Lang::Es, 12_345.6, 1), "12.345,6");
    assert_eq!(number(Lang::En, 1234.0, 0), "1,234");
    assert_eq!(number(Lang::En, 999.0, 0), "999");
    assert_eq!(number(Lang::En, -1234.5, 1), "-1,234.5");
    assert_eq!(number(Lang::En, -0.001, 2), "0.00", "no negative zero");
    assert_eq!(integer(Lang::Es, 260_032), "260.032");
    assert_eq!(number(Lang::En, f64::NAN, 2), "NaN");
}

#[test]
fn the_browsers_languages_choose_the_pages() {
    let l = |v: &[&str]| Lang::negotiate(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(l(&["fr-FR", "zh-TW", "en"]), Lang::ZhCn);
    assert_eq!(l(&["es-419", "en"]), Lang::Es);
    assert_eq!(l(&["de", "ja"]), Lang::En);
    assert_eq!(l(&[]), Lang::En);
    assert_eq!(Lang::parse("ZH-cn"), Ok(Lang::ZhCn));
    assert!(Lang::parse("fr").unwrap_err().contains("en, zh-CN, es"));
}

/// The track's headings are its steps' titles: English's `step-<key>` is each step's own.
#[test]
fn every_step_has_its_title_in_english_and_chinese() {
    let (en, zh) = (Tr::new(Lang::En), Tr::new(Lang::ZhCn));
    for step in crate::lesson::STEPS {
        let id = format!("step-{}", step.key);
        assert_eq!(en.get(&id), step.title, "{id}");
        assert!(zh.has(&id), "zh-CN lacks {id}");
    }
}

/// The header's words for what the engine names: each precision's label and the backend's
/// usual reasons, in English exactly the engine's and the GPU crate's own (which the CLI
/// prints), and in every language.
#[test]
fn the_headers_precisions_are_the_engines_words() {
    let en = Tr::new(Lang::En);
    for p in decoding_engine::Precision::ALL {
        let id = format!("weights-{}", p.name());
        assert_eq!(en.get(&id), p.label(), "{id}");
        for lang in [Lang::ZhCn, Lang::Es] {
            assert!(Tr::new(lang).has(&id), "{} lacks {id}", lang.name());
        }
    }
}
