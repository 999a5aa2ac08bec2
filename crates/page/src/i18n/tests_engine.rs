//! The engine's messages, from its own validator: every knob of `KNOBS` given bad values
//! (not a number, not finite, out of range on each side, negative, huge, empty entries, a
//! stage or a strategy that is not one, a value wider than a profile takes…), each message
//! read back. A new engine message without a translation fails here.

use super::*;
use decoding_engine::decode::constraint::ConstraintError;
use decoding_engine::decode::sampling::knobs::Kind;
use decoding_engine::decode::sampling::{Knob, KnobSpec, RawSettings, Stage, KNOBS};
use std::collections::BTreeSet;

const VOCAB: usize = 512;

/// Values any knob may be given.
const VALUES: [&str; 27] = [
    "",
    "abc",
    "NaN",
    "inf",
    "-inf",
    "1.5",
    "-1",
    "-2",
    "-0.5",
    "0",
    "0.5",
    "1",
    "2",
    "3",
    "17",
    "100",
    "101",
    "1e5",
    "100001",
    "-100001",
    "1e9",
    "-1e9",
    "99999999999",
    "-99999999999",
    "340282366920938463463374607431768211456",
    "maybe",
    "banana",
];

/// The knob's own bad values: its kind's, then its bounds under a profile.
fn own_values(spec: &KnobSpec) -> Vec<Vec<(Knob, Vec<String>)>> {
    let mut out = Vec::new();
    let one = |k: Knob, v: &str| vec![(k, vec![v.to_string()])];
    let lists: Vec<Vec<String>> = match spec.kind {
        Kind::Bias => [
            "x",
            "a:1",
            "999:1",
            "1:x",
            "1:1e9",
            "1:inf",
            "1:2,a",
            "1:2,x,600:1",
        ]
        .iter()
        .map(|v| vec![v.to_string()])
        .collect(),
        Kind::Texts(_) | Kind::General => vec![
            vec![String::new()],
            vec!["x".repeat(41)],
            vec!["ok".into(), String::new()],
            vec!["regex:".into()],
            vec!["foo:bar".into()],
            vec!["nokind".into()],
            vec![format!("regex:{}", "x".repeat(70_000))],
        ],
        _ => Vec::new(),
    };
    for entries in lists {
        out.push(vec![(spec.knob, entries)]);
    }
    for (p, bound) in spec.bounds {
        let v = match spec.kind {
            Kind::Bias => format!("1:{}", bound * 2.0),
            _ => (bound * 2.0).to_string(),
        };
        let mut given = one(spec.knob, &v);
        given.push((Knob::Profile, vec![p.name().to_string()]));
        out.push(given);
    }
    out
}

/// The orders that break a rule: a stage that is not one, twice, a stage set but left
/// out, a stage that runs last placed before another.
fn orders() -> Vec<Vec<(Knob, Vec<String>)>> {
    let mut out = vec![
        vec![(Knob::Order, vec!["banana".into()])],
        vec![(Knob::Order, vec!["temperature,temperature".into()])],
    ];
    for st in Stage::all() {
        let main = Knob::of_stage(st);
        let other = Stage::all().find(|o| *o != st).unwrap();
        for order in [format!("{st},{other}"), other.to_string()] {
            out.push(vec![
                (main, vec![main.spec().example.to_string()]),
                (Knob::Order, vec![order]),
            ]);
        }
    }
    out
}

/// Every distinct message the validator gives for the knobs' bad values.
fn engine_messages() -> BTreeSet<String> {
    let mut cases: Vec<Vec<(Knob, Vec<String>)>> = Vec::new();
    for spec in KNOBS.iter() {
        for v in VALUES {
            cases.push(vec![(spec.knob, vec![v.to_string()])]);
        }
        cases.extend(own_values(spec));
    }
    cases.extend(orders());
    let mut out = BTreeSet::new();
    for case in cases {
        let mut raw = RawSettings::default();
        // The beam's knobs are read only when the strategy is beam search.
        if case
            .iter()
            .any(|(k, _)| k.spec().with_strategy && *k != Knob::Strategy)
        {
            raw.put(Knob::Strategy, "beam");
        }
        for (k, entries) in case {
            raw.put_all(k, entries);
        }
        if let Err(e) = raw.validate(VOCAB) {
            out.extend(e.0.into_iter().map(|e| e.message));
        }
    }
    out
}

/// A constraint's errors from its compiler (shown under the constraint), and the page's
/// compare columns' own.
fn other_messages() -> Vec<String> {
    let mut out: Vec<String> = vec![
        ConstraintError::Syntax {
            kind: "regex",
            line: 1,
            column: 4,
            rule: None,
            message: "unclosed group".into(),
        },
        ConstraintError::Syntax {
            kind: "Lark grammar",
            line: 2,
            column: 7,
            rule: Some("start".into()),
            message: "expected ':'".into(),
        },
        ConstraintError::Compile {
            kind: "JSON Schema",
            message: "unknown keyword; \"x\"".into(),
        },
        ConstraintError::Rejected {
            token: 17,
            piece: "ab".into(),
        },
        ConstraintError::Matcher("stopped".into()),
        ConstraintError::Stale,
        ConstraintError::Empty {
            kind: "GBNF grammar",
        },
    ]
    .into_iter()
    .map(|e| e.to_string())
    .collect();
    for column in ["banana=1", "strategy=beam"] {
        if let Err(e) = crate::page::parse_column(column, VOCAB) {
            out.extend(e.into_iter().map(|e| e.message));
        }
    }
    out
}

fn is_cjk(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

fn check(m: &str) {
    assert_eq!(
        translate(Lang::En, m).as_deref(),
        Some(m),
        "read back in English"
    );
    assert_eq!(engine_message(Lang::En, m), m);
    let zh = translate(Lang::ZhCn, m).unwrap_or_else(|| panic!("no Chinese for {m:?}"));
    assert!(zh.chars().any(is_cjk), "{m:?} → {zh:?}");
    assert_eq!(engine_message(Lang::ZhCn, m), zh);
    let es = translate(Lang::Es, m).unwrap_or_else(|| panic!("no Spanish for {m:?}"));
    assert_ne!(es, m, "Spanish");
    assert_eq!(engine_message(Lang::Es, m), es);
}

#[test]
fn every_message_of_the_knobs_validation_is_translated() {
    let messages = engine_messages();
    for m in &messages {
        check(m);
    }
    for m in other_messages() {
        check(&m);
    }
    println!(
        "{} distinct engine messages from {} knobs, each in Chinese and Spanish",
        messages.len(),
        KNOBS.len()
    );
    assert!(messages.len() >= 60, "{} messages", messages.len());
}

#[test]
fn numbers_and_names_keep_their_text_and_counts_their_grouping() {
    let m = "must be at most 1,048,576 (got 99999999999)";
    assert_eq!(
        engine_message(Lang::Es, m),
        "debe ser como máximo 1.048.576 (se recibió 99999999999)"
    );
    assert_eq!(
        engine_message(Lang::ZhCn, "must be in [0, 1] (0 = off) (got 1.5)"),
        "必须在 [0, 1] 之内（0 为关闭）（收到 1.5）"
    );
    assert_eq!(
        engine_message(
            Lang::Es,
            "\"x\" is not a profile (lesson, hf, llama.cpp or openai)"
        ),
        "\"x\" no es un perfil (lesson, hf, llama.cpp u openai)"
    );
    assert_eq!(
        engine_message(Lang::ZhCn, "\"x\" is not sample, greedy or beam"),
        "\"x\" 不是 sample、greedy 或 beam 之一"
    );
}

#[test]
fn a_compare_columns_errors_keep_their_fields() {
    let m = "temperature: must be ≥ 0 (0 = greedy) (got -1); top_k: \"x\" is not a whole number";
    assert_eq!(
        engine_message(Lang::Es, m),
        "temperature: debe ser ≥ 0 (0 = voraz) (se recibió -1); top_k: \"x\" no es un número entero"
    );
}

#[test]
fn an_unknown_phrase_stays_english_and_known_parts_are_translated() {
    for lang in Lang::ALL {
        assert_eq!(engine_message(lang, "something new"), "something new");
        assert_eq!(engine_message(lang, "must be purple"), "must be purple");
    }
    assert_eq!(
        engine_message(Lang::Es, "something new; \"a\" is not id:value"),
        "something new; \"a\" no tiene la forma id:value"
    );
}

#[test]
fn every_id_the_reader_asks_for_is_in_english() {
    let en = source(Lang::En);
    let code = include_str!("engine.rs");
    let ids: Vec<&str> = code
        .split('"')
        .filter(|s| s.starts_with("engine-") && !s.contains(' '))
        .collect();
    assert!(ids.len() >= 40, "only {} ids read", ids.len());
    for id in ids {
        assert!(
            en.lines().any(|l| l.starts_with(&format!("{id} = "))),
            "engine.rs asks for {id:?}, which en/engine.ftl lacks"
        );
    }
}
