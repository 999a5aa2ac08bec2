//! The native CLI, run as a user runs it: golden greedy text, the known distribution, token
//! ids, and clear errors (non-zero exit, no panic, no backtrace) on bad input. One module
//! per area; the helpers that run the CLI here.

mod backends;
mod beam;
mod bundle;
mod constraint;
mod distribution;
mod errors;
mod formats;
mod generate;
mod scripts;
mod speed;

use std::path::PathBuf;
use std::process::{Command, Output};

pub const GREEDY: &str = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high.\nLily's mom said, \"Lily, let's go to the park.\" Lily was sad and didn't know what to do.";

pub fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decoding-explorer"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("the CLI runs")
}

/// `generate` greedy from "Once upon a time", `max_tokens` long, after the global options
/// `global` (a backend, a model).
pub fn generate_greedy(global: &[&str], max_tokens: &str) -> Output {
    let mut args = global.to_vec();
    args.extend([
        "generate",
        "--prompt",
        "Once upon a time",
        "--max-tokens",
        max_tokens,
        "--temperature",
        "0",
    ]);
    cli(&args)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A user error: non-zero exit, one line starting with "error:", no panic or backtrace.
pub fn assert_user_error(o: &Output, needle: &str) {
    let err = stderr(o);
    assert!(!o.status.success(), "expected failure, stderr: {err}");
    assert!(err.starts_with("error: "), "stderr: {err}");
    assert!(err.contains(needle), "stderr {err:?} lacks {needle:?}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "stderr: {err}"
    );
}

pub fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("decoding-explorer-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

pub fn model_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets/models/stories260K")
        .join(name)
}

pub fn json(args: &[&str]) -> serde_json::Value {
    let o = cli(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}
