//! The GPU backend (lavapipe under the test command) through the CLI.

use super::*;

/// The GPU backend through the CLI: the same greedy text and a dispatch count in `bench`.
/// Without an adapter this is skipped, unless DECODING_EXPLORER_REQUIRE_GPU=1 (CI).
#[test]
fn gpu_backend_through_the_cli() {
    let o = generate_greedy(&["--backend", "gpu"], "120");
    if !o.status.success() {
        let required = std::env::var("DECODING_EXPLORER_REQUIRE_GPU").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "GPU required but the gpu backend failed: {}",
            stderr(&o)
        );
        assert_user_error(&o, "GPU");
        eprintln!("skipping: {}", stderr(&o));
        return;
    }
    assert!(stdout(&o).starts_with(GREEDY), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("backend: gpu (WebGPU on "),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("XDG_RUNTIME_DIR"), "{}", stderr(&o));
    let v = json(&[
        "--backend",
        "gpu",
        "bench",
        "--tokens",
        "16",
        "--repeat",
        "1",
        "--json",
    ]);
    assert_eq!(v["backend"], "gpu");
    // Five dispatches a layer (five layers) and three a token: embed, final norm, classifier.
    assert_eq!(v["dispatches_per_token"], 5 * 5 + 3);
    assert!(v["decode"]["median_tokens_per_s"].as_f64().unwrap() > 0.0);
    // Where a decoded token's GPU time goes: lavapipe writes timestamps, so every kernel of
    // the plan is timed and the split adds up (wall = busy + overhead, overhead ≥ 0).
    let g = &v["gpu_times"];
    let names: Vec<&str> = g["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, decoding_gpu::backend::KERNEL_NAMES, "{g}");
    assert_eq!(g["tokens"], 15);
    let s = &g["split"];
    let (wall, busy, over) = (
        s["wall_s"].as_f64().unwrap(),
        s["gpu_busy_s"].as_f64().unwrap(),
        s["overhead_s"].as_f64().unwrap(),
    );
    assert!(
        busy > 0.0 && over >= 0.0 && (over - (wall - busy).max(0.0)).abs() < 1e-9,
        "{g}"
    );
}
