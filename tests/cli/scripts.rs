//! Output scripts can rely on: a closed pipe ends every command quietly, `generate --json`
//! and `--stream` as the README documents them, the prompt from a file or standard input,
//! one seed rule for every command, and `next --json --top N` bounded by N.

use super::*;
use std::io::Write;
use std::process::Stdio;

/// Runs the CLI with its standard output closed before it writes (as `| head` leaves it
/// once satisfied): every write fails with a broken pipe.
fn closed_pipe(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_decoding-explorer"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the CLI runs");
    drop(child.stdout.take());
    child.wait_with_output().expect("it ends")
}

#[test]
fn every_command_ends_quietly_on_a_closed_pipe() {
    for args in [
        &["next", "--prompt", "Once upon a time", "--json"][..],
        &["next", "--prompt", "Once upon a time"],
        &[
            "beam",
            "--prompt",
            "Once upon a time",
            "--beams",
            "4",
            "--max-tokens",
            "20",
            "--json",
        ],
        &["tokenize", "Once upon a time"],
        &["generate", "--prompt", "Once", "--max-tokens", "30"],
        &[
            "generate",
            "--prompt",
            "Once",
            "--max-tokens",
            "30",
            "--json",
            "--stream",
        ],
        &["sample", "--logits", "2,1,0.1"],
    ] {
        let o = closed_pipe(args);
        let err = stderr(&o);
        assert!(o.status.success(), "{args:?}: {:?} {err}", o.status);
        assert!(
            err.is_empty() || !err.contains("panicked") && !err.contains("error"),
            "{args:?}: {err}"
        );
    }
}

fn generate_json(extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["generate", "--prompt", "Once upon a time", "--json"];
    args.extend(extra);
    json(&args)
}

#[test]
fn generate_json_has_each_token_with_its_log_probability_and_the_run_s_figures() {
    let v = generate_json(&[
        "--temperature",
        "0",
        "--max-tokens",
        "12",
        "--top-logprobs",
        "3",
    ]);
    assert_eq!(v["prompt"], "Once upon a time");
    assert_eq!(
        v["prompt_tokens"],
        serde_json::json!([1, 403, 407, 261, 378])
    );
    assert_eq!(v["seed"], 0, "the default seed");
    let tokens = v["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 12);
    // stories260K's known answer (its README): after the prompt, "," at 0.9688, " there"
    // at 0.0287; greedy takes the first, rank 1, drawn with p = 1.
    let t = &tokens[0];
    assert_eq!(
        (t["id"].as_u64(), t["piece"].as_str()),
        (Some(432), Some(","))
    );
    assert!(
        (t["logprob"].as_f64().unwrap() - 0.9688f64.ln()).abs() < 1e-4,
        "{t}"
    );
    assert_eq!((t["rank"].as_u64(), t["p"].as_f64()), (Some(1), Some(1.0)));
    let alts = t["top_logprobs"].as_array().unwrap();
    assert_eq!(alts.len(), 3);
    assert_eq!(alts[0]["id"], 432);
    assert_eq!(alts[0]["logprob"], t["logprob"]);
    assert_eq!(alts[1]["piece"], " there");
    assert!(
        (alts[1]["logprob"].as_f64().unwrap() - 0.0287f64.ln()).abs() < 5e-3,
        "{alts:?}"
    );
    for t in tokens {
        let lp = t["logprob"].as_f64().unwrap();
        assert!(lp <= 0.0 && t["rank"].as_u64().unwrap() >= 1, "{t}");
    }
    // The text is the greedy golden text's, as `generate` prints it.
    let text = v["text"].as_str().unwrap();
    assert!(
        GREEDY.starts_with(&format!("Once upon a time{text}")),
        "{text:?}"
    );
    assert_eq!(v["stop"]["reason"], "max_tokens");
    assert_eq!(v["stop"]["max"], 12);
    assert_eq!(v["stop"]["message"], "max tokens (12)");
    let t = &v["timings"];
    assert_eq!(
        (t["prompt_tokens"].as_u64(), t["generated_tokens"].as_u64()),
        (Some(5), Some(12))
    );
    for k in ["prefill_ms", "decode_ms", "decode_tokens_per_second"] {
        assert!(t[k].as_f64().unwrap() > 0.0, "{k}: {t}");
    }
}

#[test]
fn generate_stream_is_a_line_a_token_and_the_same_run() {
    let args = [
        "generate",
        "--prompt",
        "Once upon a time",
        "--json",
        "--stream",
        "--max-tokens",
        "15",
        "--temperature",
        "1",
        "--seed",
        "7",
    ];
    let o = cli(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1 + 15 + 1);
    assert_eq!(
        (lines[0]["event"].as_str(), lines[0]["seed"].as_u64()),
        (Some("start"), Some(7))
    );
    let whole = json(
        &args[..args.len()]
            .iter()
            .filter(|a| **a != "--stream")
            .copied()
            .collect::<Vec<_>>(),
    );
    for (i, t) in whole["tokens"].as_array().unwrap().iter().enumerate() {
        let mut l = lines[1 + i].clone();
        assert_eq!(l["event"], "token");
        l.as_object_mut().unwrap().remove("event");
        assert_eq!(&l, t, "token {i}");
    }
    let end = &lines[16];
    assert_eq!(
        (end["event"].as_str(), &end["text"]),
        (Some("end"), &whole["text"])
    );
    assert_eq!(end["stop"], whole["stop"]);
}

#[test]
fn the_prompt_comes_from_a_file_or_standard_input() {
    let prompt = "Once upon a time, in a big forest";
    let by_text = stdout(&cli(&["next", "--prompt", prompt, "--top", "3", "--json"]));
    let file = temp_file("prompt.txt", prompt.as_bytes());
    let by_file = stdout(&cli(&[
        "next",
        "--prompt-file",
        file.to_str().unwrap(),
        "--top",
        "3",
        "--json",
    ]));
    assert_eq!(by_file, by_text);
    for flag in [["--prompt", "-"], ["--prompt-file", "-"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_decoding-explorer"))
            .args(["next", flag[0], flag[1], "--top", "3", "--json"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(prompt.as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(stdout(&o), by_text, "{flag:?}");
    }
    assert_user_error(
        &cli(&["next", "--prompt-file", "/nonexistent.txt"]),
        "/nonexistent.txt",
    );
    let bad = temp_file("latin1.txt", b"caf\xe9");
    assert_user_error(
        &cli(&["next", "--prompt-file", bad.to_str().unwrap()]),
        "not UTF-8",
    );
}

#[test]
fn one_seed_rule_for_every_command() {
    let text = |seed: Option<&str>| {
        let mut args = vec![
            "generate",
            "--prompt",
            "Once",
            "--max-tokens",
            "20",
            "--temperature",
            "1",
        ];
        if let Some(s) = seed {
            args.extend(["--seed", s]);
        }
        let o = cli(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        (stdout(&o), stderr(&o))
    };
    // No --seed: the default, 0, as next and sample use.
    let (default, _) = text(None);
    assert_eq!(default, text(Some("0")).0);
    assert_ne!(default, text(Some("1")).0);
    let next = |seed: &[&str]| {
        let mut a = vec![
            "next",
            "--prompt",
            "Once",
            "--temperature",
            "1",
            "--json",
            "--top",
            "1",
        ];
        a.extend(seed);
        json(&a)["token"].clone()
    };
    assert_eq!(next(&[]), next(&["--seed", "0"]));
    assert_ne!(next(&[]), serde_json::Value::Null);
    // --seed random: drawn, said, and reproducible with the number said.
    let (random, err) = text(Some("random"));
    let drawn = err
        .lines()
        .find_map(|l| l.strip_prefix("seed: "))
        .expect("the seed is said");
    assert_eq!(text(Some(drawn)).0, random);
}

#[test]
fn next_json_with_top_n_is_bounded_by_n() {
    let full = stdout(&cli(&[
        "next",
        "--prompt",
        "Once upon a time",
        "--json",
        "--top-k",
        "2",
    ]));
    let o = cli(&[
        "next",
        "--prompt",
        "Once upon a time",
        "--json",
        "--top",
        "3",
        "--top-k",
        "2",
    ]);
    let bounded = stdout(&o);
    assert!(
        bounded.len() * 20 < full.len(),
        "{} of {}",
        bounded.len(),
        full.len()
    );
    let v: serde_json::Value = serde_json::from_str(&bounded).unwrap();
    assert_eq!(v["vocab_size"], 512);
    let ids: Vec<u64> = v["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let top: Vec<u64> = v["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_u64().unwrap())
        .collect();
    assert_eq!((ids.len(), &ids), (3, &top));
    let f: serde_json::Value = serde_json::from_str(&full).unwrap();
    for (k, &id) in ids.iter().enumerate() {
        assert_eq!(v["probs"][k], f["probs"][id as usize]);
        assert_eq!(v["input_probs"][k], f["input_probs"][id as usize]);
    }
    // top-k 2 removed 510 tokens: the third shown among them.
    let topk = v["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stage"] == "top_k")
        .unwrap();
    assert_eq!(topk["removed_count"], 510);
    assert_eq!(topk["removed"], serde_json::json!([ids[2]]));
    assert_eq!(topk["probs"].as_array().unwrap().len(), 3);
}
