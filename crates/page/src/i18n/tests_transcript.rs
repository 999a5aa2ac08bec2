//! The transcript area's translations checked: the tables whose rows the views look up by a
//! made id (the help's shortcuts, the panels' headings, the knobs' labels and help, the
//! charts' export names) have each row's message in English, word for word the table's, and
//! in Chinese.

#[allow(unused_imports)]
use super::*;

/// `id` is English's `english` and Chinese has it too.
fn held(en: &Tr, zh: &Tr, id: &str, english: &str) {
    assert!(en.has(id), "en lacks {id}");
    assert_eq!(en.get(id), english, "en {id}");
    assert!(zh.has(id), "zh-CN lacks {id}");
}

#[test]
fn every_shortcut_of_the_help_has_its_words() {
    let (en, zh) = (Tr::new(Lang::En), Tr::new(Lang::ZhCn));
    for row in crate::page::shortcuts::SHORTCUT_HELP {
        held(&en, &zh, &format!("shortcut-{}", row.key), row.action);
    }
    held(&en, &zh, "shortcut-or", "or");
}

#[test]
fn every_panel_has_its_heading() {
    use strum::VariantArray;
    let (en, zh) = (Tr::new(Lang::En), Tr::new(Lang::ZhCn));
    for &p in crate::page::Panel::VARIANTS {
        held(&en, &zh, &format!("panel-title-{}", p.name()), p.title());
    }
}

#[test]
fn every_knob_has_its_label_and_help() {
    let (en, zh) = (Tr::new(Lang::En), Tr::new(Lang::ZhCn));
    for s in decoding_engine::decode::sampling::knobs::KNOBS.iter() {
        let name = s.name.replace('_', "-");
        held(&en, &zh, &format!("knob-label-{name}"), s.label);
        held(&en, &zh, &format!("knob-help-{name}"), s.help);
    }
}

/// Every chart's export buttons (`export::buttons("name", "what", …)` in the views) name it
/// by `export-what-<name>`, whose English is the caller's `what`.
#[test]
fn every_exported_chart_is_named() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/src/ui");
    let (en, zh) = (Tr::new(Lang::En), Tr::new(Lang::ZhCn));
    let mut seen = 0;
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let src = std::fs::read_to_string(e.path()).unwrap_or_default();
        for (i, _) in src.match_indices("buttons(\"") {
            let mut parts = src[i + "buttons(\"".len()..].split('"');
            let name = parts.next().unwrap();
            assert_eq!(parts.next(), Some(", "), "{name}: its `what` is a literal");
            let what = parts.next().unwrap();
            held(&en, &zh, &format!("export-what-{name}"), what);
            seen += 1;
        }
    }
    assert!(
        seen >= 10,
        "only {seen} export rows read: the scan is broken"
    );
}

/// Ids asked for without a `Ui` (before there is one).
#[test]
fn the_messages_asked_without_a_ui_exist() {
    let (en, zh) = (Tr::new(Lang::En), Tr::new(Lang::ZhCn));
    held(
        &en,
        &zh,
        "layout-no-worker",
        "cannot start the engine worker: {$error}",
    );
    assert_eq!(
        zh.fmt("layout-no-worker", &[("error", "x".into())]),
        "无法启动引擎的 worker：x"
    );
}

/// Spanish: the stop reasons and a chip's words with their arguments.
#[test]
fn spanish_takes_the_transcripts_arguments() {
    let es = Tr::new(Lang::Es);
    assert_eq!(
        es.fmt("transcript-stop-max", &[("max", "40".into())]),
        "Detenido: máximo de tokens (40)."
    );
    assert_eq!(
        es.fmt(
            "dist-entropy",
            &[
                ("h", number(Lang::Es, 0.5, 3)),
                ("effective", number(Lang::Es, 1.17, 2)),
                ("kept", "512".into()),
                ("total", "512".into()),
            ]
        ),
        "Entropía H = 0,500 nats; exp(H) = 1,17 tokens efectivos; se conservan 512 de 512 tokens"
    );
}

/// An export button's accessible name holds its visible text (WCAG 2.5.3, axe's
/// `label-content-name-mismatch`): a speech user says what they see.
#[test]
fn each_export_buttons_name_holds_its_visible_text() {
    for lang in Lang::ALL {
        let tr = Tr::new(lang);
        let what = [("what", "x".to_string())];
        let svg = tr.fmt("export-svg-label", &what);
        assert!(
            svg.contains(&tr.get("export-svg")),
            "{}: {svg}",
            lang.name()
        );
        let png = tr.fmt("export-png-label", &what);
        assert!(png.contains("PNG"), "{}: {png}", lang.name());
    }
}
