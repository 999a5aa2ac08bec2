#!/usr/bin/env bash
# Sets up whatever is missing, then runs every test: formatting and lints, the native tests
# (engine, CLI, the page's logic), the release build of the page, and the end-to-end tests in
# headless Chromium against the built page.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/setup.sh"
export PATH="$ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "cargo fetch"
cargo fetch --locked

step "format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo clippy -p decoding-web --target wasm32-unknown-unknown --locked -- -D warnings

step "native tests (engine, CLI, page logic)"
cargo test --workspace --locked

step "wasm tests (wasm-bindgen-test in Node): seeded sampling gives the native text"
cargo test -p decoding-engine --target wasm32-unknown-unknown --locked --test wasm_seeded

step "build the page (trunk build --release)"
trunk build

step "end-to-end tests in headless Chromium"
node --test tests/e2e/

step "all tests passed"
