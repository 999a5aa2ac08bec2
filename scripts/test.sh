#!/usr/bin/env bash
# Sets up whatever is missing, then runs every test: formatting and lints, the native tests
# (engine, CLI, the page's logic), the release build of the page, and the end-to-end tests in
# headless Chromium against the built page.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/setup.sh"
export PATH="$ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# Mesa's software Vulkan (lavapipe) warns without a runtime dir; give it a private one.
if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
  export XDG_RUNTIME_DIR="$(mktemp -d)"
fi
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# A test run builds each crate once: incremental caches would only add gigabytes to target/.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
disk() { df -h --output=avail,target "$ROOT" | tail -1 | awk -v w="$1" '{print "disk free " w ": " $1}'; du -sh "$ROOT/target" 2>/dev/null || true; }
disk "before the build"

step "cargo fetch"
cargo fetch --locked

step "format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo clippy -p decoding-page -p decoding-worker -p decoding-app -p decoding-gpu --target wasm32-unknown-unknown --locked -- -D warnings

step "the code's shape: sizes, and the UI thread without the GPU crate"
python3 scripts/check-sizes.py
for crate in decoding-page decoding-app; do
  if cargo tree -p "$crate" --target all -e normal,build --prefix none --locked | grep -Eq '^(wgpu|decoding-gpu) '; then
    echo "$crate depends on wgpu: the page's UI thread must not link the GPU backend" >&2
    exit 1
  fi
done

step "native tests (engine, WebGPU backend on Vulkan, CLI, page logic)"
# The set-up installs Mesa's lavapipe, so the GPU tests require an adapter here too: one
# that finds none fails. DECODING_EXPLORER_REQUIRE_GPU=0 lets them skip (each skip is printed).
export DECODING_EXPLORER_REQUIRE_GPU="${DECODING_EXPLORER_REQUIRE_GPU:-1}"
cargo test --workspace --locked

step "wasm tests (wasm-bindgen-test in Node): seeded sampling gives the native text"
cargo test -p decoding-engine --target wasm32-unknown-unknown --locked --test wasm_seeded

step "WebGPU backend in headless Chromium (wasm-bindgen-test, SwiftShader adapter)"
# SwiftShader runs every kernel on the CPU: on a slow machine (AVX2, 2.4 GHz) the quantized
# kernels' test outlasts the runner's default 20 s per test, so it gets 10 minutes.
WASM_BINDGEN_TEST_TIMEOUT=600 CHROMEDRIVER=/usr/bin/chromedriver cargo test -p decoding-gpu --target wasm32-unknown-unknown --locked --test browser

step "build the page (trunk build --release)"
trunk build

step "end-to-end tests in headless Chromium"
# One file at a time: the page tests, the WebGPU (SwiftShader) tests and the speed report
# must not compete for the two cores.
node --test --test-concurrency=1 tests/e2e/

disk "after the tests"
step "all tests passed"
