//! Bad input: a clear error, a non-zero exit, no panic or backtrace.

use super::*;

#[test]
fn bad_files_and_shapes_are_clear_errors() {
    assert_user_error(
        &cli(&["--model", "/nonexistent.bin", "next"]),
        "cannot read /nonexistent.bin",
    );
    let empty = temp_file("empty.bin", b"");
    assert_user_error(
        &cli(&["--model", empty.to_str().unwrap(), "next"]),
        "checkpoint is empty",
    );
    let model = std::fs::read(model_path("stories260K.bin")).unwrap();
    let truncated = temp_file("trunc.bin", &model[..1000]);
    assert_user_error(
        &cli(&["--model", truncated.to_str().unwrap(), "next"]),
        "file is 1,000 bytes, header implies 1,056,540",
    );
    let tok = temp_file(
        "tok.bin",
        &std::fs::read(model_path("tok512.bin")).unwrap()[..3000],
    );
    // A tokenizer's error is said under the tokenizer's path, not the model's.
    let o = cli(&["--tokenizer", tok.to_str().unwrap(), "next"]);
    assert_user_error(&o, "truncated");
    assert!(
        stderr(&o).starts_with(&format!("error: {}: ", tok.display())),
        "{}",
        stderr(&o)
    );
    // Random bytes named .gguf: not a GGUF file (not "give its tokenizer").
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    let fake = temp_file("noise.gguf", &noise);
    assert_user_error(
        &cli(&["--model", fake.to_str().unwrap(), "next"]),
        "is not a GGUF file",
    );
    assert_user_error(
        &cli(&["bench", "--tokens", "600"]),
        "--tokens must be in 1..=512",
    );
    assert_user_error(
        &cli(&["bench", "--random-weights", "64,172,5,7,7,512,512"]),
        "not divisible",
    );
    assert_user_error(
        &cli(&["bench", "--random-weights", "1,2,3"]),
        "needs 7 numbers",
    );
}

/// Every knob's rule, and the prompt's length, through the CLI.
#[test]
fn bad_knobs_and_prompts_are_clear_errors() {
    let long = "Once upon a time ".repeat(200);
    assert_user_error(&cli(&["next", "--prompt", &long]), "context holds 512");
    assert_user_error(
        &cli(&["generate", "--temperature", "-1"]),
        "temperature: must be ≥ 0",
    );
    assert_user_error(
        &cli(&["generate", "--temperature", "NaN"]),
        "temperature: NaN is not a finite number",
    );
    assert_user_error(
        &cli(&["generate", "--max-tokens", "0"]),
        "max_tokens: must be at least 1",
    );
    // Every knob's rule, through the CLI (one message each, exit 1, no panic).
    for (flag, value, needle) in [
        ("--top-k", "-3", "top_k: must be ≥ 0"),
        ("--top-p", "0", "top_p: must be in (0, 1]"),
        ("--min-p", "1.5", "min_p: must be in [0, 1]"),
        (
            "--typical-p",
            "inf",
            "typical_p: inf is not a finite number",
        ),
        (
            "--repetition-penalty",
            "0",
            "repetition_penalty: must be > 0",
        ),
        (
            "--frequency-penalty",
            "nan",
            "frequency_penalty: nan is not a finite number",
        ),
        ("--penalty-window", "-1", "penalty_window: must be ≥ 0"),
        (
            "--logit-bias",
            "9999:1",
            "logit_bias: token id 9999 is outside the vocabulary",
        ),
        (
            "--no-repeat-ngram",
            "x",
            "no_repeat_ngram: \"x\" is not a whole number",
        ),
        ("--profile", "gpt5", "profile: \"gpt5\" is not a profile"),
        ("--order", "top_k,top_k", "order: top_k appears twice"),
        ("--seed", "-2", "seed: must be ≥ 0"),
        ("--stop", "", "stop: a stop sequence cannot be empty"),
    ] {
        assert_user_error(&cli(&["next", flag, value]), needle);
        assert_user_error(
            &cli(&["sample", "--logits", "1,2", flag, value]),
            needle.split(':').next().unwrap(),
        );
    }
    assert_user_error(
        &cli(&["sample", "--logits", "1,nan"]),
        "--logits: \"nan\" is not a finite number",
    );
    assert_user_error(
        &cli(&["sample", "--logits", "1,2", "--history", "5"]),
        "outside the 2 logits",
    );
}

#[test]
fn the_memory_limit_is_checked_from_the_header_and_validated() {
    // stories260K: 1,056,512 bytes of weights > 0.5 MiB.
    let o = cli(&["--memory-limit", "0.0005", "next", "--prompt", "Once"]);
    assert_user_error(
        &o,
        "model: the weights would need 1.01 MiB at seq_len 512; the limit is 524.29 KiB",
    );
    let o = cli(&["--memory-limit", "1", "next", "--prompt", "Once"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for bad in ["0", "-2", "NaN", "inf", "lots"] {
        assert_user_error(&cli(&["--memory-limit", bad, "next"]), "--memory-limit");
    }
}

/// The samplers of 2026, spelled as llama.cpp and Hugging Face spell their flags: each bad
/// value refused with its rule, in `next` and `generate`.
#[test]
fn the_2026_samplers_refuse_bad_values_with_their_rule() {
    for (flag, value, needle) in [
        (
            "--dry-multiplier",
            "-1",
            "dry_multiplier: must be in [0, 10000]",
        ),
        (
            "--dry-sequence-breaker",
            "0123456789012345678901234567890123456789x",
            "dry_sequence_breaker: a sequence breaker is at most 40 bytes",
        ),
        ("--xtc-threshold", "1.5", "xtc_threshold: must be in [0, 1]"),
        ("--mirostat", "3", "mirostat: must be 0 (off), 1 or 2"),
        ("--mirostat-tau", "0", "mirostat_tau: must be in (0, 100]"),
        (
            "--adaptive-p-decay",
            "1",
            "adaptive_p_decay: must be in [0, 0.99]",
        ),
        ("--top-n-sigma", "101", "top_n_sigma: must be at most 100"),
        ("--top-h", "2", "top_h: must be in [0, 1]"),
    ] {
        assert_user_error(&cli(&["next", flag, value]), needle);
        assert_user_error(&cli(&["generate", flag, value]), needle);
    }
}

/// Beams and batches count in the memory limit, checked before any cache is opened:
/// stories260K's weights and run state (2.3 MiB) and 17 caches of 0.625 MiB are over
/// 0.006 GiB (6.1 MiB) where three caches fit.
#[test]
fn beams_and_batches_count_in_the_memory_limit() {
    let limit = ["--memory-limit", "0.006"];
    let beam = |k: &str| {
        let mut a = limit.to_vec();
        a.extend([
            "beam",
            "--prompt",
            "Once upon a time",
            "--beams",
            k,
            "--max-tokens",
            "8",
        ]);
        cli(&a)
    };
    assert_user_error(&beam("16"), "--beams: 17 sequences' KV caches do not fit");
    let o = beam("2");
    assert!(o.status.success(), "{}", stderr(&o));
    let mut a = limit.to_vec();
    a.extend([
        "batched-bench",
        "--batch",
        "1,16",
        "--prompt-tokens",
        "8",
        "--gen-tokens",
        "4",
    ]);
    assert_user_error(&cli(&a), "--batch: 16 sequences' KV caches do not fit");
    let mut a = limit.to_vec();
    a.extend(["serve-sim", "--slots", "32", "--requests", "4"]);
    assert_user_error(&cli(&a), "--slots: 32 sequences' KV caches do not fit");
}
