//! The link's reading and writing, checked.

use super::*;

#[test]
fn query_round_trips() {
    let r = from_query(
        "?prompt=The+cat&temperature=0.7&top_k=5&steps=10&panels=beam,kv,quant,spec&scale=logprob&seed=3&profile=llama.cpp&precision=q4&spec=exit:2,3,match,7",
        512,
    );
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert_eq!(r.page.prompt, "The cat");
    assert_eq!(r.page.steps, 10);
    assert_eq!(
        r.settings
            .count(decoding_engine::decode::sampling::Knob::TopK),
        5
    );
    assert_eq!(r.page.precision, Some(Precision::Q4));
    assert_eq!(
        r.page.spec,
        Some(SpecLink {
            draft: Draft::Exit(2),
            gamma: 3,
            rule: Rule::Match,
            cycles: 7
        })
    );
    let q = to_query(&r.page, &r.settings);
    let again = from_query(&q, 512);
    assert_eq!(again.page, r.page);
    assert_eq!(again.settings, r.settings);
    // back to a GGUF file's own blocks: the link says nothing of the precision (the file's
    // default), and reads back without a problem
    let mut ggml = r.page.clone();
    ggml.precision = Some(Precision::Ggml);
    let q = to_query(&ggml, &r.settings);
    assert!(!q.contains("precision"), "{q}");
    let again = from_query(&q, 512);
    assert!(again.problems.is_empty(), "{:?}", again.problems);
    assert_eq!(again.page.precision, None);
}

#[test]
fn nonsense_is_reported_and_replaced_by_defaults() {
    let r = from_query(
        "temperature=banana&top_k=3&steps=-2&scale=huge&zzz=1&top_p=7&precision=q5&spec=quant:q8,17,rejection,1",
        512,
    );
    let fields: Vec<&str> = r.problems.iter().map(|p| p.field.as_str()).collect();
    for f in [
        "temperature",
        "steps",
        "scale",
        "zzz",
        "top_p",
        "precision",
        "spec",
    ] {
        assert!(fields.contains(&f), "{f} not reported in {fields:?}");
    }
    assert_eq!(
        r.settings
            .num(decoding_engine::decode::sampling::Knob::Temperature),
        1.0
    );
    assert_eq!(
        r.settings
            .num(decoding_engine::decode::sampling::Knob::TopP),
        1.0
    );
    // The good values survive.
    assert_eq!(
        r.settings
            .count(decoding_engine::decode::sampling::Knob::TopK),
        3
    );
    assert_eq!(r.page.steps, 0);
}

/// A comparison and a lesson step survive the link; nonsense in either is reported and
/// dropped, never half-read.
#[test]
fn the_comparison_and_the_lesson_step_travel_in_the_link() {
    let mut page = PageState::default();
    let columns: Vec<Settings> = COMPARE_PRESETS[1]
        .columns
        .iter()
        .map(|c| parse_column(c, 512).unwrap())
        .collect();
    page.compare = Some(CompareLink {
        columns: columns.clone(),
        steps: 20,
    });
    page.panels.insert(Panel::Compare);
    page.lesson = Some(4);
    page.class = true;
    page.room = Some("K7QM2XYZ".into());
    let q = to_query(&page, &Settings::default());
    assert!(q.contains("class=1") && q.contains("room=K7QM2XYZ"), "{q}");
    let r = from_query(&q, 512);
    assert!(r.problems.is_empty(), "{q}: {:?}", r.problems);
    assert_eq!(r.page, page, "{q}");
    // The two profiles differ in their rules, their order and llama.cpp's hidden
    // penalty window (its last 64 tokens), not in the knobs set.
    assert_eq!(differing(&columns), ["penalty_window", "profile", "order"]);
    // A column reads back as it was written.
    for c in &columns {
        assert_eq!(&parse_column(&column_text(c), 512).unwrap(), c);
    }
    for (bad, field) in [
        ("cmp=strategy%3Dgreedy", "cmp"),
        ("cmp=a;b;c;d;e", "cmp"),
        ("cmp=temperature%3D-1%3Btop_k%3D3", "cmp"),
        ("cmp=strategy%3Dbeam%3Btop_k%3D3", "cmp"),
        ("cmp=nonsense%3D1%3Btop_k%3D3", "cmp"),
        ("cmp_steps=99999", "cmp_steps"),
        ("lesson=0", "lesson"),
        ("lesson=x", "lesson"),
        ("room=K7QM2XY0", "room"),
    ] {
        let r = from_query(bad, 512);
        assert_eq!(r.problems.len(), 1, "{bad}: {:?}", r.problems);
        assert_eq!(r.problems[0].field, field, "{bad}");
        assert_eq!(r.page.compare, None, "{bad}");
        assert_eq!(r.page.lesson, None, "{bad}");
    }
    // A column's own errors say which column and which rule.
    let e = parse_column("temperature=abc&top_k=-2", 512).unwrap_err();
    assert_eq!(e.len(), 2, "{e:?}");
}

/// Every preset fits the columns and each column is valid settings, different from the
/// others; the 2026 samplers' preset turns on one new stage per column under llama.cpp.
#[test]
fn every_compare_preset_is_valid_and_its_columns_differ() {
    for p in COMPARE_PRESETS {
        assert!((2..=MAX_COLUMNS).contains(&p.columns.len()), "{}", p.name);
        let cols: Vec<Settings> = p
            .columns
            .iter()
            .map(|c| parse_column(c, 512).unwrap_or_else(|e| panic!("{}: {e:?}", p.name)))
            .collect();
        for (i, a) in cols.iter().enumerate() {
            assert!(cols[i + 1..].iter().all(|b| b != a), "{}", p.name);
        }
    }
    let p = COMPARE_PRESETS
        .iter()
        .find(|p| p.name == "samplers-2026")
        .unwrap();
    let active: Vec<Vec<&str>> = p
        .columns
        .iter()
        .map(|c| {
            let s = parse_column(c, 512).unwrap();
            let d =
                Settings::default().with(decoding_engine::decode::sampling::Knob::Temperature, 0.8);
            s.order
                .iter()
                .filter(|st| !s.is_neutral(**st) && d.is_neutral(**st) && st.name() != "top_k")
                .filter(|st| !["top_p", "min_p"].contains(&st.name()))
                .map(|st| st.name())
                .collect()
        })
        .collect();
    assert_eq!(
        active,
        [
            vec!["repetition_penalty"],
            vec!["dry_multiplier"],
            vec!["xtc_probability"],
            vec!["mirostat"]
        ]
    );
}

/// The samplers of 2026 travel in the link under the peers' names (`dry_multiplier=0.8`),
/// and their bad values are reported with the rule and replaced by the default, the good
/// ones kept.
#[test]
fn the_2026_samplers_travel_in_the_link_and_bad_values_are_named() {
    use decoding_engine::decode::sampling::Knob;
    let q =
        "profile=llama.cpp&dry_multiplier=0.8&dry_sequence_breaker=%5Cn&dry_sequence_breaker=%3A\
             &xtc_probability=0.5&mirostat=2&mirostat_tau=3&top_h=0.4&epsilon_cutoff=0.0003";
    let r = from_query(q, 512);
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert_eq!(r.settings.num(Knob::DryMultiplier), 0.8);
    assert_eq!(r.settings.texts(Knob::DrySequenceBreaker), ["\\n", ":"]);
    assert_eq!(r.settings.count(Knob::Mirostat), 2);
    let again = from_query(&to_query(&r.page, &r.settings), 512);
    assert_eq!(again.settings, r.settings);
    let bad = from_query(
        "dry_multiplier=-1&xtc_threshold=1.5&mirostat_tau=0&adaptive_p_decay=1&top_k=3",
        512,
    );
    let said: Vec<(&str, &str)> = bad
        .problems
        .iter()
        .map(|p| (p.field.as_str(), p.message.as_str()))
        .collect();
    for (field, rule) in [
        ("dry_multiplier", "must be in [0, 10000]"),
        ("xtc_threshold", "must be in [0, 1]"),
        ("mirostat_tau", "must be in (0, 100]"),
        ("adaptive_p_decay", "must be in [0, 0.99]"),
    ] {
        assert!(
            said.iter().any(|(f, m)| *f == field && m.contains(rule)),
            "{field}: {said:?}"
        );
    }
    assert_eq!(bad.settings.num(Knob::DryMultiplier), 0.0);
    assert_eq!(bad.settings.count(Knob::TopK), 3);
}

#[test]
fn the_theme_travels_in_the_link_and_absent_follows_the_system() {
    use crate::theme::Scheme;
    let r = from_query("theme=dark&temperature=0.5", 512);
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert_eq!(r.page.theme, Some(Scheme::Dark));
    let q = to_query(&r.page, &r.settings);
    assert!(q.contains("theme=dark"), "{q}");
    assert_eq!(from_query(&q, 512).page, r.page);
    // No key: the system decides, and the link written says nothing of it.
    let none = from_query("", 512);
    assert_eq!(none.page.theme, None);
    assert!(!to_query(&none.page, &none.settings).contains("theme"));
    // Nonsense is named, and the system's scheme is kept.
    let bad = from_query("theme=sepia", 512);
    assert_eq!(bad.page.theme, None);
    assert_eq!(bad.problems.len(), 1);
    assert_eq!(bad.problems[0].field, "theme");
    assert!(
        bad.problems[0].message.contains("light or dark"),
        "{:?}",
        bad.problems
    );
}

#[test]
fn the_language_travels_in_the_link_and_a_lesson_step_keeps_it() {
    use crate::i18n::Lang;
    let r = from_query("lang=zh-CN&prompt=Hi", 512);
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert_eq!(r.page.lang, Some(Lang::ZhCn));
    let q = to_query(&r.page, &r.settings);
    assert!(q.contains("lang=zh-CN"), "{q}");
    let bad = from_query("lang=klingon", 512);
    assert_eq!(
        (bad.page.lang, bad.problems[0].field.as_str()),
        (None, "lang")
    );
    let m = crate::behaviour::PageModel::default();
    let (opened, _) = m.open_view(&r.page, crate::lesson::STEPS[2].query, Some(2), 512);
    assert_eq!(opened.page.lang, Some(Lang::ZhCn));
}
