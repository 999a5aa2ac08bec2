//! Settings from raw knobs: every rule's message, the peers' defaults, the round trips.

use super::*;
use crate::decode::sampling::raw::RawSettings;

fn raw(pairs: &[(&str, &str)]) -> RawSettings {
    RawSettings::from_pairs(pairs.iter().copied())
}

fn err(pairs: &[(&str, &str)]) -> SettingsErrors {
    raw(pairs).validate(512).unwrap_err()
}

#[test]
fn defaults_are_neutral() {
    let s = RawSettings::default().validate(512).unwrap();
    assert_eq!(s, Settings::default());
    for st in Stage::all() {
        assert!(s.is_neutral(st), "{st}");
    }
}

/// A DRY sequence breaker one byte over llama.cpp's limit.
static BREAKER_41: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| "x".repeat(41));

#[test]
fn each_rule_has_its_own_message() {
    let cases: &[(&str, &str, &str)] = &[
        ("temperature", "-0.5", "must be ≥ 0"),
        ("temperature", "NaN", "not a finite number"),
        ("temperature", "inf", "not a finite number"),
        ("temperature", "banana", "not a number"),
        ("top_k", "-1", "must be ≥ 0"),
        ("top_k", "2.5", "not a whole number"),
        ("top_p", "0", "must be in (0, 1]"),
        ("top_p", "1.01", "must be in (0, 1]"),
        ("min_p", "-0.1", "must be in [0, 1]"),
        ("typical_p", "0", "must be in (0, 1]"),
        ("repetition_penalty", "0", "must be > 0"),
        ("frequency_penalty", "-inf", "not a finite number"),
        ("presence_penalty", "x", "not a number"),
        ("penalty_window", "-3", "must be ≥ 0"),
        ("no_repeat_ngram", "-1", "must be ≥ 0"),
        ("max_tokens", "0", "must be at least 1"),
        ("seed", "-1", "must be ≥ 0"),
        ("logit_bias", "600:1", "outside the vocabulary"),
        ("logit_bias", "5", "not id:value"),
        ("logit_bias", "5:nan", "not a finite number"),
        ("stop", "", "cannot be empty"),
        ("profile", "gpt", "not a profile"),
        ("order", "top_k,bogus", "not a stage"),
        ("order", "top_k,top_k", "appears twice"),
        ("strategy", "random", "not sample, greedy or beam"),
        // The samplers of 2026, each refused with its rule.
        ("dry_multiplier", "-0.5", "must be in [0, 10000] (0 = off)"),
        ("dry_base", "0.5", "must be in [1, 100]"),
        ("dry_allowed_length", "-1", "must be ≥ 0"),
        ("dry_penalty_last_n", "-1", "must be ≥ 0 (0 = off)"),
        (
            "dry_sequence_breaker",
            &BREAKER_41,
            "at most 40 bytes (llama.cpp's limit)",
        ),
        ("dry_sequence_breaker", "", "cannot be empty"),
        ("xtc_probability", "1.5", "must be in [0, 1]"),
        ("xtc_threshold", "1.01", "must be in [0, 1]"),
        ("top_n_sigma", "101", "must be at most 100 (≤ 0 = off)"),
        ("dynatemp_range", "-0.1", "must be in [0, 10000] (0 = off)"),
        ("dynatemp_exponent", "0", "must be in (0, 100]"),
        ("mirostat", "3", "must be 0 (off), 1 or 2"),
        (
            "mirostat_tau",
            "0",
            "must be in (0, 100] (the target surprise, bits)",
        ),
        ("mirostat_tau", "-1", "must be in (0, 100]"),
        ("mirostat_eta", "0", "must be in (0, 1] (the learning rate)"),
        ("mirostat_m", "1", "must be in 2..=100000"),
        (
            "adaptive_p_target",
            "1.5",
            "must be in [0, 1], or negative (≥ -1) for off",
        ),
        (
            "adaptive_p_decay",
            "1",
            "must be in [0, 0.99] (llama.cpp's range)",
        ),
        ("epsilon_cutoff", "1", "must be in [0, 1) (0 = off)"),
        ("eta_cutoff", "-0.1", "must be in [0, 1) (0 = off)"),
        ("top_h", "1.5", "must be in [0, 1] (0 = off)"),
    ];
    for (field, value, needle) in cases {
        let e = err(&[(field, value)]);
        assert_eq!(e.0.len(), 1, "{field}={value}: {e}");
        assert_eq!(e.0[0].field, *field);
        assert!(
            e.0[0].message.contains(needle),
            "{field}={value}: {}",
            e.0[0].message
        );
    }
}

#[test]
fn several_errors_are_all_reported() {
    let e = err(&[("temperature", "-1"), ("top_p", "2"), ("top_k", "x")]);
    assert_eq!(e.0.len(), 3);
    assert!(e.for_field("top_p").is_some());
}

#[test]
fn order_must_include_every_set_stage() {
    let e = err(&[("min_p", "0.1"), ("order", "temperature,top_k")]);
    assert!(
        e.0[0].message.contains("min_p is set (0.1) but missing"),
        "{e}"
    );
    let s = raw(&[("top_k", "3"), ("order", "top_k,temperature")])
        .validate(512)
        .unwrap();
    assert_eq!(
        &s.order[..2],
        &[
            Stage::parse("top_k").unwrap(),
            Stage::parse("temperature").unwrap()
        ]
    );
    assert_eq!(s.order.len(), Stage::all().count());
}

#[test]
fn beam_settings() {
    let s = raw(&[("strategy", "beam"), ("beams", "3"), ("num_return", "2")])
        .validate(512)
        .unwrap();
    assert_eq!(
        s.strategy,
        Strategy::Beam {
            width: 3,
            length_penalty: 1.0,
            early_stopping: true,
            num_return: 2
        }
    );
    assert!(
        err(&[("strategy", "beam"), ("beams", "2"), ("num_return", "3")])
            .to_string()
            .contains("cannot return 3 sequences from 2 beams")
    );
}

#[test]
fn pairs_round_trip() {
    let s = raw(&[
        ("temperature", "0.7"),
        ("top_k", "40"),
        ("logit_bias", "3:-2.5,7:1"),
        ("stop", "."),
        ("profile", "llama.cpp"),
        ("seed", "9"),
        ("order", "top_k,temperature,top_p,min_p,typical_p,logit_bias,repetition_penalty,frequency_penalty,presence_penalty,no_repeat_ngram"),
        ("strategy", "beam"),
        ("beams", "3"),
    ])
    .validate(512)
    .unwrap();
    let pairs = s.to_pairs();
    let back = RawSettings::from_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())))
        .validate(512)
        .unwrap();
    assert_eq!(back, s);
}

/// Hostile links: numbers that overflowed the chain or were truncated to
/// 32 bits on wasm32 are now one error each, the same on every target.
#[test]
fn overflowing_and_oversized_values_are_errors_not_infinities() {
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: &[Case] = &[
        (
            &[("top_k", "4294967299")],
            "top_k",
            "must be at most 1,048,576",
        ),
        (
            &[("no_repeat_ngram", "4294967297")],
            "no_repeat_ngram",
            "at most 1,048,576",
        ),
        (
            &[("max_tokens", "4294967296")],
            "max_tokens",
            "at most 1,048,576",
        ),
        (
            &[("logit_bias", "432:1e308"), ("temperature", "0.5")],
            "logit_bias",
            "[-10000, 10000]",
        ),
        (
            &[("frequency_penalty", "-1e308")],
            "frequency_penalty",
            "[-10000, 10000]",
        ),
        (
            &[("strategy", "beam"), ("length_penalty", "-1e308")],
            "length_penalty",
            "[-10, 10]",
        ),
        (
            &[("temperature", "1e-320")],
            "temperature",
            "0 (greedy) or in [0.0001, 10000]",
        ),
        (
            &[("repetition_penalty", "1e-300")],
            "repetition_penalty",
            "[0.0001, 10000]",
        ),
        (
            &[("strategy", "beam"), ("num_return", "4294967297")],
            "num_return",
            "at most",
        ),
    ];
    for (pairs, field, needle) in cases {
        let e = err(pairs);
        let msg = e
            .for_field(field)
            .unwrap_or_else(|| panic!("{pairs:?}: {e}"));
        assert!(msg.contains(needle), "{pairs:?}: {msg}");
    }
    // The bounds themselves are valid.
    raw(&[
        ("top_k", "1048576"),
        ("logit_bias", "3:-10000"),
        ("temperature", "0.0001"),
    ])
    .validate(512)
    .unwrap();
}

/// Settings built without validation (as a bug could) still cannot put +∞ or NaN on
/// the page: the chain names the stage.
#[test]
fn a_stage_that_overflows_is_named() {
    use crate::decode::sampling::chain::{process_f64, SamplingError};
    let s = Settings::default().with(Knob::Temperature, 1e-320);
    let e = process_f64(&s, &[2.0, 1.0, 0.1], Default::default(), 0.5, true).unwrap_err();
    assert_eq!(
        e,
        SamplingError::NonFinite {
            stage: Stage::parse("temperature").unwrap()
        }
    );
}

/// The samplers of 2026's rules between knobs and across the chain: adaptive-p must run
/// last once on (it takes the draw's place); an emptied breaker list stays "none" through
/// the link; under mirostat the temperature is plain (llama.cpp builds `temp → mirostat`).
#[test]
fn the_2026_rules_between_knobs() {
    let e = err(&[
        ("adaptive_p_target", "0.3"),
        ("order", "adaptive_p_target,temperature"),
    ]);
    assert_eq!(e.0[0].field, "order");
    assert!(e.0[0].message.contains("runs last"), "{e}");
    // Off, it may sit anywhere.
    assert!(raw(&[("order", "adaptive_p_target,temperature")])
        .validate(512)
        .is_ok());
    let mut r = RawSettings::default();
    r.put_all(Knob::DrySequenceBreaker, vec![]);
    let s = r.validate(512).unwrap();
    assert_eq!(s.texts(Knob::DrySequenceBreaker), ["none"]);
    let again = RawSettings::from(s.clone()).validate(512).unwrap();
    assert_eq!(again, s);
    let miro = raw(&[
        ("mirostat", "2"),
        ("temperature", "0"),
        ("dynatemp_range", "0.5"),
    ])
    .validate(512)
    .unwrap();
    assert!(miro.is_greedy(), "plain T = 0 under mirostat is greedy");
    let plain = raw(&[("temperature", "0"), ("dynatemp_range", "0.5")])
        .validate(512)
        .unwrap();
    assert!(!plain.is_greedy(), "T in [0, 0.5] with the entropy");
}

/// llama.cpp's and its server's names for knobs and stages are aliases of ours: a link,
/// a flag or an order written with them means the same.
#[test]
fn peers_names_are_aliases() {
    for (alias, ours) in [
        ("adaptive_target", "adaptive_p_target"),
        ("adaptive-decay", "adaptive_p_decay"),
        ("dynatemp_exp", "dynatemp_exponent"),
        ("mirostat_ent", "mirostat_tau"),
        ("mirostat_lr", "mirostat_eta"),
        ("repeat_penalty", "repetition_penalty"),
        ("repeat_last_n", "penalty_window"),
        ("temp", "temperature"),
    ] {
        assert_eq!(Knob::parse(alias).map(Knob::name), Some(ours), "{alias}");
    }
    for (alias, ours) in [
        ("dry", "dry_multiplier"),
        ("xtc", "xtc_probability"),
        ("typ_p", "typical_p"),
        ("temp", "temperature"),
        ("adaptive_p", "adaptive_p_target"),
    ] {
        assert_eq!(Stage::parse(alias).map(Stage::name), Some(ours), "{alias}");
    }
    // No alias is another knob's or stage's name.
    for k in crate::decode::sampling::KNOBS.iter() {
        for a in k.aliases {
            assert!(
                crate::decode::sampling::KNOBS.iter().all(|o| o.name != *a),
                "{a}"
            );
        }
    }
    for st in Stage::all() {
        for a in st.def().aliases {
            assert!(Stage::all().all(|o| o.name() != *a), "{a}");
        }
    }
}
