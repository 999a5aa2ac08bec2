//! The benchmarks do real work: `bench`, `speculate`'s accounting, `batched-bench`, `serve-sim`.

use super::*;

#[test]
fn bench_reports_real_timings() {
    let o = cli(&[
        "bench", "--tokens", "32", "--repeat", "1", "--naive", "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    for k in ["prefill", "decode", "naive"] {
        assert_eq!(v[k]["tokens"], 32);
        assert!(v[k]["median_tokens_per_s"].as_f64().unwrap() > 0.0);
    }
    assert!(v["naive_over_cached"].as_f64().unwrap() > 1.0);
    let o = cli(&[
        "bench",
        "--tokens",
        "8",
        "--repeat",
        "1",
        "--random-weights",
        "32,48,2,4,2,100,16",
        "--probe",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["config"]["vocab_size"], 100);
    assert_eq!(v["config"]["n_kv_heads"], 2);
    // --probe: the probed passes and the lens timed over the same 8 positions.
    for k in ["probed", "lens"] {
        assert_eq!(v[k]["tokens"], 8);
        assert!(v[k]["median_tokens_per_s"].as_f64().unwrap() > 0.0);
    }
    let (p, both) = (
        v["probed_over_plain"].as_f64().unwrap(),
        v["probed_and_lens_over_plain"].as_f64().unwrap(),
    );
    assert!(p > 0.0 && both > p, "{p} {both}");
}

/// `speculate --json`: under greedy settings the emitted ids are `generate`'s, for a
/// quantized, an early-exit and an n-gram draft; the cycles add up to the totals; a bad
/// draft is refused with the rule.
/// `bench --at`: decode timed from each position against the bandwidth model, the K/V read
/// growing with the position as lesson 10's formula says; positions the context cannot hold
/// refused.
#[test]
fn bench_at_long_positions_sets_decode_against_the_bandwidth_model() {
    let v = json(&[
        "bench",
        "--tokens",
        "8",
        "--repeat",
        "1",
        "--at",
        "64,400",
        "--at-steps",
        "4",
        "--json",
    ]);
    let c = &v["context"];
    assert!(c["bandwidth_gb_s"].as_f64().unwrap() > 0.0);
    let at = c["positions"].as_array().unwrap();
    assert_eq!(at.len(), 2);
    // stories260K: 5 layers, kv_dim 32, f32: 2 × 5 × 32 × 4 bytes a position, read at the
    // run's middle step (position + 2 + 1 positions).
    for (a, p) in at.iter().zip([64u64, 400]) {
        assert_eq!(a["position"], p);
        assert_eq!(
            a["kv_read_bytes"].as_u64().unwrap(),
            2 * 5 * 32 * 4 * (p + 3)
        );
        assert!(a["median_ms"].as_f64().unwrap() > 0.0);
        let ratio = a["median_ms"].as_f64().unwrap() / a["model_ms"].as_f64().unwrap();
        assert!((ratio - a["over_model"].as_f64().unwrap()).abs() < 1e-9);
    }
    assert_user_error(
        &cli(&["bench", "--at", "0"]),
        "each position must be in 1..=496",
    );
    assert_user_error(
        &cli(&["bench", "--at", "509"]),
        "each position must be in 1..=496",
    );
    assert_user_error(&cli(&["bench", "--at", "12,x"]), "--at \"12,x\"");
    // Numbers that would overflow the check are refused, not wrapped.
    let huge = usize::MAX.to_string();
    assert_user_error(&cli(&["bench", "--at", &huge]), "each position must be in");
    let steps = ["bench", "--at", "8", "--at-steps", &huge];
    assert_user_error(&cli(&steps), "each position must be in 1..=0");
}

#[test]
fn speculate_emits_the_greedy_text_and_accounts_for_its_cycles() {
    let o = generate_greedy(&[], "40");
    assert!(o.status.success(), "{}", stderr(&o));
    let want = stdout(&o);
    for draft in ["quant:q8", "exit:3", "ngram:2"] {
        let args = [
            "speculate",
            "--prompt",
            "Once upon a time",
            "--temperature",
            "0",
            "--max-tokens",
            "40",
            "--draft",
            draft,
            "--gamma",
            "3",
        ];
        let o = cli(&[&args[..], &["--json"]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let tokens = v["tokens"].as_array().unwrap();
        assert_eq!(tokens.len(), 40, "{draft}");
        let cycles = v["cycles"].as_array().unwrap();
        let emitted: u64 = cycles
            .iter()
            .map(|c| c["accepted"].as_u64().unwrap() + 1)
            .sum();
        assert_eq!(emitted, v["totals"]["emitted"].as_u64().unwrap(), "{draft}");
        assert_eq!(cycles.len() as u64, v["totals"]["cycles"].as_u64().unwrap());
        let text = cli(&args);
        assert_eq!(stdout(&text), want, "{draft}");
    }
    assert_user_error(
        &cli(&["speculate", "--draft", "exit:9"]),
        "K must be a whole number of layers from 1 to 4",
    );
}

/// `batched-bench --json`: a row per batch size with positive rates and the counts' intensity
/// rising with B for decode, each point under its roof; bad sizes refused.
#[test]
fn batched_bench_reports_each_batch_size_under_the_roof() {
    let o = cli(&[
        "batched-bench",
        "--batch",
        "1,4",
        "--prompt-tokens",
        "8",
        "--gen-tokens",
        "4",
        "--peak-buffer-mib",
        "8",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    // The machine's peaks, measured by the program, and each row's place under them.
    let roof = &v["peaks"]["roof"];
    let (flops, bw) = (
        roof["flops"].as_f64().unwrap(),
        roof["bytes_per_s"].as_f64().unwrap(),
    );
    assert!(flops > 0.0 && bw > 0.0);
    assert!((v["ridge"].as_f64().unwrap() - flops / bw).abs() < 1e-9 * flops / bw);
    assert_eq!(v["peaks"]["buffer_bytes"].as_u64(), Some(8 << 20));
    for r in rows {
        let bound = if r["decode_intensity"].as_f64().unwrap() < flops / bw {
            "memory"
        } else {
            "compute"
        };
        assert_eq!(r["decode_bound"], bound);
        assert!(r["prefill_of_roof"].as_f64().unwrap() > 0.0);
    }
    assert!(rows
        .iter()
        .all(|r| r["decode_tokens_per_s"].as_f64().unwrap() > 0.0));
    assert!(
        rows[1]["decode_intensity"].as_f64().unwrap()
            > 3.0 * rows[0]["decode_intensity"].as_f64().unwrap()
    );
    // The roofs bound every point measured under them: the peaks are the engine's own kernels
    // (decode's streaming over a matrix the size of the weights, an in-cache batched product),
    // not slower loops (a slower probe once had prefill far above 100 % "of roof"). The tests
    // beside this one share the machine: a probe measured while they ran reads low, so a point
    // over its roof is measured again, up to three times in all; a roof that is wrong is over
    // in every run.
    let over = || -> Vec<String> {
        let v = json(&[
            "batched-bench",
            "--batch",
            "1,4,16",
            "--prompt-tokens",
            "32",
            "--gen-tokens",
            "16",
            "--json",
        ]);
        assert_eq!(
            v["peaks"]["buffer_bytes"].as_u64(),
            Some(1 << 20),
            "1 MiB at least"
        );
        let mut over = Vec::new();
        for r in v["rows"].as_array().unwrap() {
            for k in ["prefill_of_roof", "decode_of_roof"] {
                let share = r[k].as_f64().unwrap();
                assert!(share > 0.0, "B = {}: {k} = {share}", r["batch"]);
                if share > 1.0 {
                    over.push(format!("B = {}: {k} = {share:.2}", r["batch"]));
                }
            }
        }
        over
    };
    let runs: Vec<Vec<String>> = (0..3)
        .map(|_| over())
        .take_while(|o| !o.is_empty())
        .collect();
    assert!(
        runs.len() < 3,
        "points over their roof in every run: {runs:?}"
    );
    assert_user_error(&cli(&["batched-bench", "--batch", "0,2"]), "sizes 1 to 256");
    assert_user_error(
        &cli(&["batched-bench", "--peak-buffer-mib", "0"]),
        "--peak-buffer-mib: 1 to 4,096",
    );
}

/// `serve-sim`: the same tokens under both policies, continuous in fewer passes; an unknown
/// policy refused.
#[test]
fn serve_sim_serves_the_same_tokens_in_fewer_passes_continuously() {
    let sim = |policy: &str| -> serde_json::Value {
        let o = cli(&[
            "serve-sim",
            "--policy",
            policy,
            "--slots",
            "3",
            "--requests",
            "10",
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    let (c, s) = (sim("continuous"), sim("static"));
    let tokens = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        v["served"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["tokens"].clone())
            .collect()
    };
    assert_eq!(tokens(&c), tokens(&s));
    assert!(c["passes"].as_u64() < s["passes"].as_u64());
    assert_user_error(
        &cli(&["serve-sim", "--policy", "fifo"]),
        "[possible values: continuous, static]",
    );
}
