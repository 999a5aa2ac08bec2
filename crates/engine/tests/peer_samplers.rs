//! The samplers against their peers' own outputs: llama.cpp's (`llama_sampler_*` through
//! llama-cpp-python 0.3.36, on llama.cpp's own forward pass of stories260K and its history:
//! `scripts/llama-cpp-samplers-reference.py`) and Hugging Face's warpers (transformers
//! 5.25.0: `scripts/hf-warpers-reference.py`). The fixtures were written by those scripts,
//! run by hand; nothing here produced them. Deterministic cases compare the kept set exactly
//! and each probability within 2e-3; the draws compare the peer's counts over 4,000 seeds
//! with this chain's distribution by a χ² test.

mod common;

use decoding_engine::decode::sampling::chain::process_f64;
use decoding_engine::decode::sampling::{History, RawSettings, Settings, Trace};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Fixture {
    peer: String,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum KnobValue {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
struct Draws {
    n: usize,
    counts: Vec<(u32, usize)>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    logits: Vec<f64>,
    #[serde(default)]
    history: Vec<u32>,
    knobs: BTreeMap<String, KnobValue>,
    #[serde(default)]
    kept: Vec<u32>,
    #[serde(default)]
    probs: Vec<(u32, f64)>,
    #[serde(default)]
    draws: Option<Draws>,
}

fn fixture(name: &str) -> Fixture {
    let path = format!(
        "{}/../../tests/fixtures/samplers/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn settings(case: &Case, vocab: usize) -> Settings {
    let mut raw = RawSettings::default();
    for (k, v) in &case.knobs {
        let values = match v {
            KnobValue::One(s) => vec![s.clone()],
            KnobValue::Many(v) => v.clone(),
        };
        for v in values {
            assert!(raw.set(k, &v), "{}: unknown knob {k}", case.name);
        }
    }
    raw.validate(vocab)
        .unwrap_or_else(|e| panic!("{}: {e}", case.name))
}

fn run(case: &Case, s: &Settings, tokenizer: &decoding_engine::tokenizer::Tokenizer) -> Trace {
    let h = History {
        prompt: &case.history,
        generated: &[],
        state: None,
        vocab: Some(tokenizer),
        allowed: None,
    };
    process_f64(s, &case.logits, h, 0.5, true).unwrap_or_else(|e| panic!("{}: {e}", case.name))
}

fn check_deterministic(f: &Fixture) -> usize {
    let m = common::stories260k();
    let mut n = 0;
    for case in f.cases.iter().filter(|c| c.draws.is_none()) {
        let s = settings(case, case.logits.len());
        let t = run(case, &s, &m.tokenizer);
        // Kept: a finite logit leaving the chain (a DRY penalty of 0.8 · 1.75^19 leaves a
        // token in play whose probability is 0 in floating point, as in the peer).
        let last = match t.stages.iter().rev().find(|st| st.active) {
            Some(st) => &st.logits,
            None => &case.logits,
        };
        let kept: Vec<u32> = (0..last.len() as u32)
            .filter(|&i| last[i as usize].is_finite())
            .collect();
        assert_eq!(kept, case.kept, "{} ({}): kept set", case.name, f.peer);
        for &(id, p) in &case.probs {
            let ours = t.probs[id as usize];
            assert!(
                (ours - p).abs() <= 2e-3,
                "{} ({}): token {id} has {ours}, the peer {p}",
                case.name,
                f.peer
            );
        }
        n += 1;
    }
    n
}

/// The upper 0.1% point of χ² with `df` degrees of freedom (Wilson–Hilferty).
fn chi2_critical(df: f64) -> f64 {
    let z = 3.090_232;
    let a = 2.0 / (9.0 * df);
    df * (1.0 - a + z * a.sqrt()).powi(3)
}

/// Pearson's χ² of the peer's counts against `probs`, bins with an expected count below 5
/// pooled into one; returns (statistic, degrees of freedom).
fn chi2(counts: &[(u32, usize)], n: usize, probs: &[f64]) -> (f64, f64) {
    let observed: BTreeMap<u32, usize> = counts.iter().copied().collect();
    let (mut stat, mut bins) = (0.0, 0usize);
    let (mut pool_e, mut pool_o) = (0.0, 0usize);
    for (id, &p) in probs.iter().enumerate() {
        let e = p * n as f64;
        let o = observed.get(&(id as u32)).copied().unwrap_or(0);
        if e >= 5.0 {
            stat += (o as f64 - e).powi(2) / e;
            bins += 1;
        } else {
            pool_e += e;
            pool_o += o;
        }
    }
    if pool_e > 0.0 || pool_o > 0 {
        assert!(
            pool_e >= 1.0 || pool_o == 0,
            "the peer drew tokens this chain almost never gives"
        );
        stat += (pool_o as f64 - pool_e).powi(2) / pool_e.max(1e-9);
        bins += 1;
    }
    (stat, (bins - 1) as f64)
}

#[test]
fn llama_cpp_samplers_alone_and_in_its_chain_give_llama_cpps_sets() {
    let f = fixture("llama-cpp.json");
    assert!(f.peer.contains("llama-cpp-python 0.3.36"), "{}", f.peer);
    assert!(check_deterministic(&f) >= 30);
}

#[test]
fn hf_warpers_alone_and_in_its_order_give_transformers_sets() {
    let f = fixture("hf.json");
    assert!(f.peer.contains("transformers 5.25.0"), "{}", f.peer);
    assert!(check_deterministic(&f) >= 30);
}

/// XTC at probability 0.5 removes the top choices on half the draws: the peer's counts fit
/// the mixture ½·(XTC's distribution) + ½·(the model's); llama.cpp's default chain's
/// counts fit this chain's final distribution.
#[test]
fn llama_cpp_draws_fit_this_chains_distribution() {
    let f = fixture("llama-cpp.json");
    let m = common::stories260k();
    let mut seen = 0;
    for case in f.cases.iter().filter(|c| c.draws.is_some()) {
        let d = case.draws.as_ref().unwrap();
        let s = settings(case, case.logits.len());
        let xtc = decoding_engine::decode::sampling::Knob::XtcProbability;
        let probs: Vec<f64> = match s.num(xtc) {
            p if p > 0.0 && p < 1.0 => {
                let on = run(case, &s.clone().with(xtc, 1.0), &m.tokenizer).probs;
                let off = run(case, &s.clone().with(xtc, 0.0), &m.tokenizer).probs;
                on.iter()
                    .zip(&off)
                    .map(|(a, b)| p * a + (1.0 - p) * b)
                    .collect()
            }
            _ => run(case, &s, &m.tokenizer).probs,
        };
        let (stat, df) = chi2(&d.counts, d.n, &probs);
        assert!(
            stat < chi2_critical(df),
            "{}: χ² {stat:.1} on {df} degrees of freedom",
            case.name
        );
        seen += 1;
    }
    assert_eq!(seen, 2);
}

/// The test can fail: XTC's draws (the top choices removed half the time) are refused
/// against the model's own distribution, without XTC.
#[test]
fn the_chi2_test_refuses_the_wrong_distribution() {
    let f = fixture("llama-cpp.json");
    let m = common::stories260k();
    let case = f.cases.iter().find(|c| c.name == "xtc 0.5 draws").unwrap();
    let d = case.draws.as_ref().unwrap();
    let xtc = decoding_engine::decode::sampling::Knob::XtcProbability;
    let s = settings(case, case.logits.len()).with(xtc, 0.0);
    let (stat, df) = chi2(&d.counts, d.n, &run(case, &s, &m.tokenizer).probs);
    assert!(stat > chi2_critical(df), "χ² {stat:.1} on {df}");
}

/// The page runs the chain with the token text its model pieces give (`PieceText`), the
/// worker and the CLI with the tokenizer: on llama.cpp's DRY cases both give the same
/// distribution, breakers and all.
#[test]
fn the_pages_token_text_gives_the_tokenizers_dry() {
    use decoding_engine::tokenizer::PieceText;
    let f = fixture("llama-cpp.json");
    let m = common::stories260k();
    let pieces: Vec<String> = (0..m.tokenizer.vocab_size() as u32)
        .map(|id| m.tokenizer.piece(id).unwrap().to_string())
        .collect();
    let page = PieceText::new(&pieces, true);
    let mut seen = 0;
    for case in f
        .cases
        .iter()
        .filter(|c| c.knobs.contains_key("dry_multiplier"))
    {
        let s = settings(case, case.logits.len());
        let with = |vocab: &dyn decoding_engine::decode::sampling::TokenText| {
            let h = History {
                prompt: &case.history,
                generated: &[],
                state: None,
                vocab: Some(vocab),
                allowed: None,
            };
            process_f64(&s, &case.logits, h, 0.5, false).unwrap().probs
        };
        assert_eq!(with(&page), with(&m.tokenizer), "{}", case.name);
        seen += 1;
    }
    assert!(seen >= 8);
}
