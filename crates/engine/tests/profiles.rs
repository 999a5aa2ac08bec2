//! Where the peers disagree, the profiles give the peers' different answers. Each test
//! names the rule and the peers' code it follows (see `sampling/profile.rs`).

mod common;

// The tests' own softmax, independent of the engine's.
use common::softmax::softmax;
use decoding_engine::decode::sampling::chain::process_f64;
use decoding_engine::decode::sampling::{History, Knob, RawSettings, Settings};

/// A profile's settings with `pairs` given, and the peer's defaults for the rest.
fn settings(profile: &str, pairs: &[(&str, &str)]) -> Settings {
    let mut raw = RawSettings::from_pairs(pairs.iter().copied());
    raw.put(decoding_engine::decode::sampling::Knob::Profile, profile);
    raw.validate(100).unwrap()
}

/// The same with the peer's defaults turned off, to test one boundary rule alone.
fn rules_only(profile: &str, pairs: &[(&str, &str)]) -> Settings {
    let mut pairs = pairs.to_vec();
    for (knob, off) in [
        ("temperature", "1"),
        ("top_k", "0"),
        ("top_p", "1"),
        ("min_p", "0"),
        ("penalty_window", "0"),
    ] {
        if !pairs.iter().any(|(k, _)| *k == knob) {
            pairs.insert(0, (knob, off));
        }
    }
    let s = settings(profile, &pairs);
    assert!(s.defaulted.is_empty());
    s
}

/// Final probabilities for `probs` (as logits ln p) under a profile's rules and knobs.
fn run(profile: &str, probs: &[f64], pairs: &[(&str, &str)], history: History) -> Vec<f64> {
    final_probs(&rules_only(profile, pairs), probs, history)
}

/// The same under everything the peer does, its defaults included.
fn run_peer(profile: &str, probs: &[f64], pairs: &[(&str, &str)], history: History) -> Vec<f64> {
    final_probs(&settings(profile, pairs), probs, history)
}

fn final_probs(s: &Settings, probs: &[f64], history: History) -> Vec<f64> {
    let z: Vec<f64> = probs.iter().map(|p| p.ln()).collect();
    process_f64(s, &z, history, 0.5, false).unwrap().probs
}

fn kept(p: &[f64]) -> usize {
    p.iter().filter(|&&x| x > 0.0).count()
}

#[test]
fn temperature_before_or_after_truncation() {
    // p = [0.5, 0.3, 0.2], T = 2, top-p 0.75.
    // hf/openai temper first: p ∝ √p = [0.415, 0.322, 0.263]; 0.415 + 0.322 = 0.737 < 0.75,
    // so all three stay. llama.cpp truncates first: 0.5 + 0.3 = 0.8 ≥ 0.75 keeps two, and
    // tempers them afterwards: [0.563, 0.437, 0].
    let probs = [0.5, 0.3, 0.2];
    let knobs = [("temperature", "2"), ("top_p", "0.75")];
    let hf = run("hf", &probs, &knobs, History::default());
    let oa = run("openai", &probs, &knobs, History::default());
    let lc = run("llama.cpp", &probs, &knobs, History::default());
    assert_eq!((kept(&hf), kept(&oa), kept(&lc)), (3, 3, 2));
    let (a, b) = (0.5f64.sqrt(), 0.3f64.sqrt());
    assert!((lc[0] - a / (a + b)).abs() < 1e-12);
}

#[test]
fn ties_at_the_top_k_boundary() {
    // p = [0.4, 0.2, 0.2, 0.2], top-k 2: the 2nd-best logit is shared by three tokens.
    // hf (torch.topk threshold, `scores < kth` removed) and vLLM keep all tied tokens;
    // llama.cpp keeps exactly k.
    let probs = [0.4, 0.2, 0.2, 0.2];
    let knobs = [("top_k", "2")];
    assert_eq!(kept(&run("hf", &probs, &knobs, History::default())), 4);
    assert_eq!(kept(&run("openai", &probs, &knobs, History::default())), 4);
    let lc = run("llama.cpp", &probs, &knobs, History::default());
    assert_eq!(kept(&lc), 2);
    assert!((lc[0] - 2.0 / 3.0).abs() < 1e-12 && (lc[1] - 1.0 / 3.0).abs() < 1e-12);
}

#[test]
fn min_p_before_or_after_top_p() {
    // p = [0.4, 0.3, 0.2, 0.1], min-p 0.3 (threshold 0.12), top-p 0.75.
    // openai (vLLM: min-p, then top-k/top-p): min-p drops 0.1, the renormalised
    // [4/9, 3/9, 2/9] reaches 0.75 after two tokens → 2 kept.
    // hf and llama.cpp (top-p, then min-p): 0.4 + 0.3 = 0.7 < 0.75 → three kept, min-p
    // keeps them → 3 kept.
    let probs = [0.4, 0.3, 0.2, 0.1];
    let knobs = [("min_p", "0.3"), ("top_p", "0.75")];
    assert_eq!(kept(&run("openai", &probs, &knobs, History::default())), 2);
    assert_eq!(kept(&run("hf", &probs, &knobs, History::default())), 3);
    assert_eq!(
        kept(&run("llama.cpp", &probs, &knobs, History::default())),
        3
    );
}

#[test]
fn typical_p_boundary_at_an_exact_tie() {
    // p = [½, ¼, ⅛, ⅛]: most typical first ¼, ½, ⅛, ⅛ with cumulative ¼, ¾, ⅞, 1.
    // typical-p 0.75: hf stops at the first cumulative ≥ 0.75 (2 tokens); llama.cpp at the
    // first > 0.75 (3 tokens).
    let probs = [0.5, 0.25, 0.125, 0.125];
    let knobs = [("typical_p", "0.75")];
    assert_eq!(kept(&run("hf", &probs, &knobs, History::default())), 2);
    assert_eq!(
        kept(&run("llama.cpp", &probs, &knobs, History::default())),
        3
    );
    // typical-p 0.8: hf cuts at a ⅛ and keeps its tie in score (4 tokens); llama.cpp 3.
    let knobs = [("typical_p", "0.8")];
    assert_eq!(kept(&run("hf", &probs, &knobs, History::default())), 4);
    assert_eq!(
        kept(&run("llama.cpp", &probs, &knobs, History::default())),
        3
    );
}

#[test]
fn which_tokens_the_penalties_see() {
    // Uniform over 4; the prompt holds token 0, the output token 1; frequency penalty ln 2.
    // openai: output only → token 1 halves. hf and llama.cpp: prompt and output → 0 and 1.
    let probs = [0.25; 4];
    let knobs = [("frequency_penalty", &*std::f64::consts::LN_2.to_string())];
    let h = History {
        prompt: &[0],
        generated: &[1],
        ..History::default()
    };
    let oa = run("openai", &probs, &knobs, h);
    assert!((oa[0] - 2.0 / 7.0).abs() < 1e-12 && (oa[1] - 1.0 / 7.0).abs() < 1e-12);
    for p in ["hf", "llama.cpp"] {
        let r = run(p, &probs, &knobs, h);
        assert!(
            (r[0] - 1.0 / 6.0).abs() < 1e-12 && (r[1] - 1.0 / 6.0).abs() < 1e-12,
            "{p}"
        );
    }
    // The repetition penalty sees the prompt under every profile (vLLM: prompt_mask |
    // output_mask).
    let knobs = [("repetition_penalty", "2")];
    let z = [1.0f64, 1.0, 1.0, 1.0];
    for p in ["hf", "llama.cpp", "openai"] {
        let s = rules_only(p, &knobs);
        let t = process_f64(&s, &z, h, 0.5, false).unwrap();
        assert!(t.probs[0] < t.probs[2] && t.probs[1] < t.probs[2], "{p}");
    }
}

#[test]
fn penalty_window_limits_what_is_seen() {
    // Window 1: only the last token (1) is penalised.
    let probs = [0.25; 4];
    let knobs = [("presence_penalty", "5"), ("penalty_window", "1")];
    let h = History {
        prompt: &[],
        generated: &[0, 1],
        ..History::default()
    };
    let r = run("hf", &probs, &knobs, h);
    assert!((r[0] - r[2]).abs() < 1e-12 && r[1] < r[0]);
}

#[test]
fn the_user_can_reorder_the_chain() {
    // The openai min-p/top-p case again, with hf's rules but min-p moved first: now hf
    // gives openai's answer.
    let probs = [0.4, 0.3, 0.2, 0.1];
    let order = "min_p,top_p,logit_bias,repetition_penalty,frequency_penalty,presence_penalty,no_repeat_ngram,temperature,top_k,typical_p";
    let knobs = [("min_p", "0.3"), ("top_p", "0.75"), ("order", order)];
    assert_eq!(kept(&run("hf", &probs, &knobs, History::default())), 2);
}

/// The smallest prefix of `p` (sorted, descending) whose mass reaches `top_p`.
fn nucleus_len(p: &[f64], top_p: f64) -> usize {
    let mut cum = 0.0;
    for (i, x) in p.iter().enumerate() {
        cum += x;
        if cum >= top_p {
            return i + 1;
        }
    }
    p.len()
}

#[test]
fn hf_sampling_applies_generates_hidden_top_k_50() {
    // 100 nearly flat logits, in descending order: top-p 0.99 alone keeps almost all of
    // them. generate(do_sample=True, top_p=0.99) adds TopKLogitsWarper(50) first, so the
    // nucleus is taken over the 50 best, renormalised.
    let z: Vec<f64> = (0..100).map(|i| -0.01 * i as f64).collect();
    let probs = softmax(&z);
    let knobs = [("top_p", "0.99")];
    let top50 = softmax(&z[..50]);
    let expected = nucleus_len(&top50, 0.99);
    assert!(expected <= 50 && nucleus_len(&probs, 0.99) > 90);
    assert_eq!(
        kept(&run_peer("hf", &probs, &knobs, History::default())),
        expected
    );
    // The lesson profile applies nothing unset; top-k 0 turns HF's default off.
    let all = nucleus_len(&probs, 0.99);
    assert_eq!(
        kept(&run_peer("lesson", &probs, &knobs, History::default())),
        all
    );
    let off = [("top_p", "0.99"), ("top_k", "0")];
    assert_eq!(kept(&run_peer("hf", &probs, &off, History::default())), all);
    // Greedy (do_sample=False) adds no warper.
    let greedy = settings("hf", &[("strategy", "greedy")]);
    assert_eq!((greedy.count(Knob::TopK), greedy.defaulted.len()), (0, 0));
    // The chain says where the 50 came from.
    let s = settings("hf", &knobs);
    let t = process_f64(&s, &z, History::default(), 0.5, true).unwrap();
    let top_k = t
        .stages
        .iter()
        .find(|st| st.stage.name() == "top_k")
        .unwrap();
    assert!(top_k.active && top_k.setting == "50");
    assert_eq!(top_k.default_of.map(|p| p.name()), Some("hf"));
}

#[test]
fn llama_cpp_unset_knobs_take_common_params_sampling_defaults() {
    let s = settings("llama.cpp", &[]);
    assert_eq!(
        [
            Knob::Temperature,
            Knob::TopK,
            Knob::TopP,
            Knob::MinP,
            Knob::PenaltyWindow
        ]
        .map(|k| s.num(k)),
        [0.8, 40.0, 0.95, 0.05, 64.0]
    );
    assert_eq!(
        s.default_of(Knob::MinP).map(|p| p.name()),
        Some("llama.cpp")
    );
    // A link carries only the profile: the defaults come back with it.
    assert_eq!(s.to_pairs(), vec![("profile", "llama.cpp".to_string())]);
    // Each default can be turned off, and the off survives a link.
    let off = settings("llama.cpp", &[("top_k", "0"), ("min_p", "0")]);
    assert_eq!(
        [Knob::TopK, Knob::MinP, Knob::TopP].map(|k| off.num(k)),
        [0.0, 0.0, 0.95]
    );
    assert_eq!(off.default_of(Knob::TopK), None);
    let pairs = off.to_pairs();
    assert!(pairs.contains(&("top_k", "0".into())) && pairs.contains(&("min_p", "0".into())));
    let again = RawSettings::from_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())));
    assert_eq!(again.validate(100).unwrap(), off);
    // What llama.cpp does with them on p = [0.5, 0.3, 0.15, 0.04, 0.01]: top-k 40 keeps all,
    // top-p 0.95 keeps the first three (0.95 reached), min-p 0.05 × 0.5 = 0.025 keeps them,
    // then T 0.8 reweights: p ∝ p^(1/0.8).
    let probs = [0.5, 0.3, 0.15, 0.04, 0.01];
    let p = run_peer("llama.cpp", &probs, &[], History::default());
    let w: Vec<f64> = probs[..3].iter().map(|x: &f64| x.powf(1.25)).collect();
    let sum: f64 = w.iter().sum();
    for i in 0..3 {
        assert!((p[i] - w[i] / sum).abs() < 1e-12, "{p:?}");
    }
    assert_eq!(kept(&p), 3);
}

#[test]
fn the_lesson_profile_is_the_default_and_applies_nothing_unset() {
    let s = RawSettings::default().validate(100).unwrap();
    assert_eq!(s, Settings::default());
    assert_eq!(s.profile.name(), "lesson");
    let probs = [0.5, 0.3, 0.15, 0.04, 0.01];
    let p = run_peer("lesson", &probs, &[], History::default());
    for (a, b) in p.iter().zip(probs) {
        assert!((a - b).abs() < 1e-12);
    }
}

#[test]
fn the_openai_profile_applies_the_apis_ranges() {
    let err = |profile: &str, pairs: &[(&str, &str)]| {
        let mut raw = RawSettings::from_pairs(pairs.iter().copied());
        raw.put(decoding_engine::decode::sampling::Knob::Profile, profile);
        raw.validate(100).err().map(|e| e.to_string())
    };
    let bias = [("logit_bias", "5:150")];
    assert!(err("openai", &bias).unwrap().contains("[-100, 100]"));
    assert_eq!(err("lesson", &bias), None);
    for knob in ["frequency_penalty", "presence_penalty"] {
        let pen = [(knob, "2.5")];
        assert!(err("openai", &pen).unwrap().contains("[-2, 2]"), "{knob}");
        assert_eq!(err("llama.cpp", &pen), None);
        assert_eq!(err("openai", &[(knob, "-2")]), None);
    }
}

/// Each peer's whole default order as the stages' places give it. llama.cpp
/// (`common_params_sampling::samplers`, 0c1e57098): logit bias, penalties, dry,
/// top_n_sigma, top_k, typ_p, top_p, min_p, xtc, temperature, then dist (mirostat and
/// adaptive-p take the draw's place). transformers 5.25 `_get_logits_processor`: the
/// processors, then temperature → top_h → top_k → top_p → min_p → typical → epsilon → eta.
/// Stages a peer does not have come after its own. The constraint is first in every
/// profile: the peers mask before their warpers (`stages/constraint.rs`).
#[test]
fn each_peers_order_is_its_own() {
    use decoding_engine::decode::sampling::Profile;
    let names = |p: Profile| -> Vec<&str> { p.default_order().iter().map(|s| s.name()).collect() };
    assert_eq!(
        names(Profile::LlamaCpp),
        [
            "constraint",
            "logit_bias",
            "repetition_penalty",
            "frequency_penalty",
            "presence_penalty",
            "no_repeat_ngram",
            "dry_multiplier",
            "top_n_sigma",
            "top_k",
            "typical_p",
            "top_p",
            "min_p",
            "xtc_probability",
            "temperature",
            "top_h",
            "epsilon_cutoff",
            "eta_cutoff",
            "mirostat",
            "adaptive_p_target",
        ]
    );
    let hf = names(Profile::Hf);
    let warpers: Vec<&str> = hf
        .iter()
        .copied()
        .skip_while(|s| *s != "temperature")
        .take(8)
        .collect();
    assert_eq!(
        warpers,
        [
            "temperature",
            "top_h",
            "top_k",
            "top_p",
            "min_p",
            "typical_p",
            "epsilon_cutoff",
            "eta_cutoff"
        ]
    );
    assert_eq!(hf.last(), Some(&"adaptive_p_target"));
    assert_eq!(hf.first(), Some(&"constraint"));
}
