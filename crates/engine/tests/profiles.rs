//! Where the peers disagree, the profiles give the peers' different answers. Each test
//! names the rule and the peers' code it follows (see `sampling/profile.rs`).

use decoding_engine::sampling::chain::process_f64;
use decoding_engine::sampling::{History, RawSettings, Settings};

fn settings(profile: &str, pairs: &[(&str, &str)]) -> Settings {
    let mut raw = RawSettings::from_pairs(pairs.iter().copied());
    raw.put(decoding_engine::sampling::Knob::Profile, profile);
    raw.validate(100).unwrap()
}

/// Final probabilities for `probs` (as logits ln p) under a profile and knobs.
fn run(profile: &str, probs: &[f64], pairs: &[(&str, &str)], history: History) -> Vec<f64> {
    let z: Vec<f64> = probs.iter().map(|p| p.ln()).collect();
    process_f64(&settings(profile, pairs), &z, history, 0.5, false)
        .unwrap()
        .probs
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
        let s = settings(p, &knobs);
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
