//! `files.ftl` against the code that writes its messages: every error of the engine's
//! loading, the page's downloads and the worker's glue is built (or its format string found
//! in the worker's source), read back to its own template in English word for word, and
//! written in Chinese and Spanish with every figure in it; every template is some error's.

use super::{id_of, read_back};
use crate::i18n::{engine::engine_message, Lang};
use cases::errors;
use decoding_engine::budget::BudgetError;
use std::collections::BTreeSet;

#[test]
fn every_message_is_its_template_word_for_word_in_english() {
    for (m, id) in errors() {
        assert_eq!(id_of(&m).as_deref(), Some(id), "{m}");
        assert_eq!(read_back(Lang::En, &m).as_deref(), Some(m.as_str()), "{id}");
    }
}

#[test]
fn every_template_is_some_message() {
    let used: BTreeSet<&str> = errors().into_iter().map(|(_, id)| id).collect();
    let en = include_str!("../../locales/en/files.ftl");
    let ids: BTreeSet<&str> = en
        .lines()
        .filter_map(|l| l.split_once(" = ").map(|(id, _)| id))
        .filter(|id| id.starts_with("file-"))
        .collect();
    let unused: Vec<_> = ids.difference(&used).collect();
    assert!(unused.is_empty(), "templates no message is: {unused:?}");
}

#[test]
fn every_message_is_translated_with_its_figures() {
    for lang in [Lang::ZhCn, Lang::Es] {
        for (m, id) in errors() {
            let t = read_back(lang, &m).unwrap_or_else(|| panic!("{id}: {m}"));
            assert_ne!(t, m, "{} {id} is English", lang.name());
            let mut have = numbers(&t);
            for n in numbers(&m) {
                let i = have.iter().position(|h| *h == n);
                assert!(i.is_some(), "{} {id} lost {n}: {t}", lang.name());
                have.swap_remove(i.unwrap_or_default());
            }
            // The page's way in (the engine's words tried first) translates it too.
            assert_ne!(engine_message(lang, &m), m, "{id}");
        }
    }
}

/// The numbers in a text, their separators taken out (`1,610` and `1.610` are `1610`).
fn numbers(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run = String::new();
    for c in t.chars().chain([' ']) {
        if c.is_ascii_digit() || (!run.is_empty() && (c == ',' || c == '.')) {
            run.push(c);
        } else if !run.is_empty() {
            out.push(run.trim_end_matches([',', '.']).replace([',', '.'], ""));
            run.clear();
        }
    }
    out
}

#[test]
fn figures_are_written_as_the_language_writes_them() {
    let budget = BudgetError::OverBudget {
        what: "the weights",
        bytes: 3 << 30,
        seq_len: 32768,
        limit: 3 << 29,
    }
    .to_string();
    assert!(
        budget.contains("32,768") && budget.contains("1.50 GiB"),
        "{budget}"
    );
    let es = read_back(Lang::Es, &budget).unwrap();
    assert!(es.contains("32.768") && es.contains("1,50 GiB"), "{es}");
    let zh = read_back(Lang::ZhCn, &budget).unwrap();
    assert!(zh.contains("32,768") && zh.contains("1.50 GiB"), "{zh}");
    // A reason's list and its nested message, each read back.
    let auto = "auto, measured: CPU 0.20 ms a token, WebGPU 12.5 ms a token; the CPU is faster for this model (the CPU backend was chosen)";
    let es = read_back(Lang::Es, auto).unwrap();
    assert!(es.contains("0,20") && es.contains("12,5"), "{es}");
    for lang in [Lang::ZhCn, Lang::Es] {
        let t = read_back(lang, auto).unwrap();
        for english in ["ms a token", "is faster", "was chosen"] {
            assert!(!t.contains(english), "{t}");
        }
    }
    // A message no template reads stays as it came.
    assert_eq!(read_back(Lang::ZhCn, "something else entirely"), None);
    assert_eq!(
        engine_message(Lang::ZhCn, "something else entirely"),
        "something else entirely"
    );
}

#[path = "tests_files_cases.rs"]
mod cases;
