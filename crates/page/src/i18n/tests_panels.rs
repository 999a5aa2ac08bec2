//! The panels area's translations checked: the ids the views make from the page's tables
//! (`compare-preset-<name>`, `constraint-preset-<name>`, the constraint's captions) are in
//! every language, their English the table's own.

#[allow(unused_imports)]
use super::*;
use crate::page::{constraint_caption_message, COMPARE_PRESETS, CONSTRAINT_PRESETS};
use crate::protocol::SweepModel;

/// `id` in English is `english`, and Chinese and Spanish have it, translated.
fn held(id: &str, english: &str) {
    let en = Tr::new(Lang::En);
    assert!(en.has(id), "en/panels.ftl lacks {id}");
    assert_eq!(en.get(id), english, "{id}: English is not the table's");
    for lang in [Lang::ZhCn, Lang::Es] {
        let tr = Tr::new(lang);
        assert!(tr.has(id), "{} lacks {id}", lang.name());
        assert_ne!(
            tr.get(id),
            english,
            "{} {id}: still the English",
            lang.name()
        );
    }
}

#[test]
fn every_compare_preset_has_its_label_in_every_language() {
    for p in COMPARE_PRESETS {
        held(&format!("compare-preset-{}", p.name), p.label);
    }
}

#[test]
fn every_constraint_preset_has_its_label_in_every_language() {
    for p in CONSTRAINT_PRESETS {
        held(&format!("constraint-preset-{}", p.name), p.label);
    }
}

#[test]
fn the_sweep_model_reads_as_the_protocol_words_it() {
    held("batch-model-15m", SweepModel::Random15M.words());
}

/// Every caption the constraint panel can show is in every language, with its figures in
/// the language's separators.
#[test]
fn every_constraint_caption_is_in_every_language() {
    let cases = [
        (0.0, 0, 512),
        (0.9999, 3, 512),
        (0.8, 3, 512),
        (0.2, 3, 512),
    ];
    let cases = cases
        .into_iter()
        .chain([(0.01, 2, 512), (0.0001, 2, 32_000)]);
    for (z, allowed, vocab) in cases {
        for lang in Lang::ALL {
            let (id, args) = constraint_caption_message(lang, z, allowed, vocab);
            let tr = Tr::new(lang);
            assert!(tr.has(id), "{} lacks {id}", lang.name());
            let text = tr.fmt(id, &args);
            assert!(!text.contains("{ $"), "{} {id}: {text}", lang.name());
        }
    }
    let (_, args) = constraint_caption_message(Lang::Es, 0.2, 3, 512);
    assert_eq!(args[0], ("z", "0,200".to_string()));
    let (_, args) = constraint_caption_message(Lang::Es, 0.0001, 2, 32_000);
    assert_eq!(args[0], ("z", "1,00e-4".to_string()));
    assert!(args.contains(&("vocab", "32.000".to_string())), "{args:?}");
    let (_, args) = constraint_caption_message(Lang::En, 0.0001, 2, 32_000);
    assert!(args.contains(&("vocab", "32000".to_string())), "{args:?}");
    assert!(args.contains(&("factor", "10000".to_string())), "{args:?}");
}

/// The figures the panels quote in a sentence are the language's (a decimal comma in
/// Spanish), the English as the page always wrote it.
#[test]
fn a_panel_sentence_takes_its_figures() {
    let es = Tr::new(Lang::Es);
    let text = es.fmt(
        "spec-acceptance",
        &[
            ("accepted", "7".into()),
            ("drafted", "9".into()),
            ("share", number(Lang::Es, 77.777, 1)),
        ],
    );
    assert!(text.contains("77,8"), "{text}");
    let en = Tr::new(Lang::En);
    assert_eq!(
        en.fmt("panel-bytes", &[("n", integer(Lang::En, 1280))]),
        "1,280 bytes"
    );
}
