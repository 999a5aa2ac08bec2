//! The next-token distribution through the chain: `next`, `sample` (the lesson's example), profiles, the probe's attention and logit lens; `tokenize`.

use super::*;
use decoding_engine::decode::sampling::Stage;

#[test]
fn next_json_has_the_known_distribution() {
    // Without --top: the ten most likely, and every array over the whole vocabulary.
    let o = cli(&["next", "--prompt", "Once upon a time", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let top = v["top"].as_array().unwrap();
    assert_eq!(top.len(), 10);
    assert_eq!(top[0]["piece"], ",");
    assert_eq!(top[0]["id"], 432);
    assert!((top[0]["prob"].as_f64().unwrap() - 0.9688).abs() < 1e-4);
    assert_eq!(top[1]["piece"], " there");
    assert!((top[1]["prob"].as_f64().unwrap() - 0.0287).abs() < 1e-4);
    let probs = v["probs"].as_array().unwrap();
    assert_eq!(probs.len(), 512);
    let total: f64 = probs.iter().map(|p| p.as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-9);
    assert_eq!(
        v["prompt_tokens"],
        serde_json::json!([1, 403, 407, 261, 378])
    );
}

#[test]
fn next_table_lists_comma_first() {
    let o = cli(&["next", "--prompt", "Once upon a time", "--top", "3"]);
    let out = stdout(&o);
    let first = out.lines().nth(1).unwrap();
    assert!(
        first.contains("432") && first.contains("\",\"") && first.contains("0.9688"),
        "{out}"
    );
}

#[test]
fn tokenize_prints_ids_and_pieces() {
    let o = cli(&["tokenize", "Once upon a time"]);
    assert!(o.status.success());
    let out = stdout(&o);
    let ids: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(ids, ["1", "403", "407", "261", "378"]);
    assert!(stdout(&o).contains("\" Once\""));
}

#[test]
fn sample_reproduces_the_lesson_example() {
    // z = [2, 1, 0.1]: top mass 0.6590 at T = 1, 0.8638 at T = 0.5 (the lesson's text has
    // "≈ 0.84": its error), 0.5017 at T = 2.
    for (t, want) in [("1", 0.6590), ("0.5", 0.8638), ("2", 0.5017)] {
        let v = json(&[
            "sample",
            "--logits",
            "2,1,0.1",
            "--temperature",
            t,
            "--json",
        ]);
        let p0 = v["probs"][0].as_f64().unwrap();
        assert!((p0 - want).abs() < 1e-4, "T = {t}: {p0}");
        let stages = v["stages"].as_array().unwrap();
        assert_eq!(stages.len(), Stage::all().count());
        let temp = stages.iter().find(|s| s["stage"] == "temperature").unwrap();
        assert_eq!(temp["probs"], v["probs"]);
    }
}

#[test]
fn sample_shows_each_stage_and_what_it_removed() {
    let v = json(&[
        "sample",
        "--logits",
        "3,2,1,0",
        "--top-k",
        "2",
        "--temperature",
        "0.5",
        "--history",
        "0",
        "--repetition-penalty",
        "3",
        "--json",
    ]);
    let stages = v["stages"].as_array().unwrap();
    let names: Vec<&str> = stages
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    // The constraint (off here) first, as in every profile.
    assert_eq!(
        names[..4],
        [
            "constraint",
            "logit_bias",
            "repetition_penalty",
            "frequency_penalty"
        ]
    );
    assert_eq!(stages[0]["active"], false);
    let rep = &stages[2];
    assert_eq!(rep["active"], true);
    // Token 0's logit 3 became 1: tied with token 2, below token 1. Top-k 2 under hf keeps
    // both tokens tied at the boundary (3 kept); only token 3 is removed.
    let top_k = stages.iter().find(|s| s["stage"] == "top_k").unwrap();
    assert_eq!(top_k["kept"], 3);
    assert_eq!(top_k["removed"], serde_json::json!([3]));
    let probs: Vec<f64> = v["probs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_f64().unwrap())
        .collect();
    assert_eq!(probs.iter().filter(|&&p| p > 0.0).count(), 3);
    assert!(probs[1] > probs[0] && probs[0] == probs[2]);
    let total: f64 = probs.iter().sum();
    assert!((total - 1.0).abs() < 1e-12);
}

#[test]
fn next_json_has_the_same_shape_as_sample() {
    let v = json(&[
        "next",
        "--prompt",
        "Once upon a time",
        "--temperature",
        "0.7",
        "--top-k",
        "5",
        "--json",
    ]);
    assert_eq!(v["stages"].as_array().unwrap().len(), Stage::all().count());
    assert_eq!(v["probs"].as_array().unwrap().len(), 512);
    assert_eq!(v["kept"], 5);
    assert_eq!(v["top"][0]["piece"], ",");
}

#[test]
fn profiles_give_different_answers_through_the_cli() {
    let kept = |profile: &str| {
        let v = json(&[
            "sample",
            "--logits",
            "0,-1,-1,-1",
            "--top-k",
            "2",
            "--profile",
            profile,
            "--json",
        ]);
        v["kept"].as_u64().unwrap()
    };
    assert_eq!(kept("hf"), 4);
    assert_eq!(kept("llama.cpp"), 2);
}

#[test]
fn a_peer_profile_shows_its_defaults_and_the_default_profile_applies_none() {
    let stage = |v: &serde_json::Value, name: &str| {
        v["stages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["stage"] == name)
            .cloned()
            .unwrap()
    };
    let lc = json(&[
        "sample",
        "--logits",
        "2,1,0.1",
        "--profile",
        "llama.cpp",
        "--json",
    ]);
    let t = stage(&lc, "temperature");
    assert_eq!(
        (t["setting"].as_str(), t["default_of"].as_str()),
        (Some("0.8"), Some("llama.cpp"))
    );
    assert_eq!(stage(&lc, "min_p")["default_of"], "llama.cpp");
    // The lesson's toy logits under the default profile: the plain softmax, 0.659 on top.
    let plain = json(&["sample", "--logits", "2,1,0.1", "--json"]);
    assert!(plain["stages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["default_of"].is_null() && s["active"] == false));
    assert!((plain["probs"][0].as_f64().unwrap() - 0.659).abs() < 5e-4);
}

/// `next --probe attention,lens --json`: every layer and head's weights over the prompt's 5
/// positions (summing to 1, GQA's K/V head = head / 2 for stories260K's 8 over 4), the lens
/// layer by position, its last layer at the last position the known next token "," (the
/// model README's greedy text); a probe kind that does not exist is a user error.
#[test]
fn next_prints_the_attention_and_the_logit_lens_of_the_prompts_last_step() {
    let v = json(&[
        "next",
        "--prompt",
        "Once upon a time",
        "--probe",
        "attention,lens",
        "--json",
    ]);
    let p = &v["probe"];
    assert_eq!(p["pos"], 4);
    assert_eq!(p["tokens"].as_array().unwrap().len(), 5);
    let heads = p["attention"].as_array().unwrap();
    assert_eq!(heads.len(), 5 * 8);
    for h in heads {
        let w: Vec<f64> = serde_json::from_value(h["weights"].clone()).unwrap();
        assert_eq!(w.len(), 5);
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-5, "{h}");
        assert_eq!(h["kv_head"], h["head"].as_u64().unwrap() / 2);
    }
    let layers = p["lens"]["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 5);
    let last = &layers[4];
    assert_eq!(last["cells"][4]["piece"], ",");
    assert_eq!(last["cells"][4]["id"], v["top"][0]["id"]);
    assert_eq!(last["kl_to_final"], 0.0);
    assert!(layers[0]["kl_to_final"].as_f64().unwrap() > 1.0);
    assert!(p["lens"]["note"]
        .as_str()
        .unwrap()
        .contains("not trained for"));
    // Without --probe, no probe in the output.
    let v = json(&["next", "--prompt", "Once upon a time", "--json"]);
    assert!(v.get("probe").is_none());
    let o = cli(&["next", "--prompt", "Once", "--probe", "heads"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("invalid value 'heads'"),
        "{}",
        stderr(&o)
    );
}

/// DRY's cut in `next --json` on `prompt` with `extra` flags.
fn dry_cut(prompt: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "next",
        "--prompt",
        prompt,
        "--dry-multiplier",
        "0.8",
        "--json",
    ];
    args.extend_from_slice(extra);
    let v = json(&args);
    let stages = v["stages"].as_array().unwrap();
    let dry = stages
        .iter()
        .find(|s| s["stage"] == "dry_multiplier")
        .unwrap();
    dry["cut"].clone()
}

/// DRY through the CLI on a prompt that repeats itself across a `"` breaker: `next --json`
/// says what it penalised. llama.cpp's own DRY sampler on this prompt (llama-cpp-python
/// 0.3.36, `tests/fixtures/samplers/llama-cpp.json`, case "dry alone") penalised token 337
/// (` play`) by 0.8 · 1.75² = 2.45, the repeat capped at 4 by the ` "` breaker.
#[test]
fn next_json_names_what_dry_penalised() {
    let prompt = "Once upon a time, there was a little girl. She said: \"I like to play.\" \
                  Once upon a time, there was a little girl. She said: \"I like to";
    let value = |cut: &serde_json::Value, name: &str| {
        cut["values"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .map(|n| n["value"].as_f64().unwrap())
    };
    let cut = dry_cut(prompt, &[]);
    assert_eq!(value(&cut, "longest repeat"), Some(4.0));
    assert_eq!(cut["token"], 337);
    assert!((value(&cut, "penalty").unwrap() - 2.45).abs() < 1e-9);
    // With no breakers the repeat runs back over the quote: 21 tokens, 0.8 · 1.75^19.
    let cut = dry_cut(prompt, &["--dry-sequence-breaker", "none"]);
    assert_eq!(value(&cut, "longest repeat"), Some(21.0));
    assert!((value(&cut, "penalty").unwrap() - 0.8 * 1.75f64.powi(19)).abs() < 1e-6);
}
