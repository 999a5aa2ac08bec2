#!/usr/bin/env bash
# For a lesson with the class on their phones: sets up whatever is missing, builds the page
# and the CLI, and runs `decoding-explorer classroom` on port 8080 (PORT=... to change).
# Arguments go to it: `scripts/classroom.sh --lan` lets phones on the local network join.
# It prints the address the presenter opens and the one students open. Ctrl-C stops it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/setup.sh"
export PATH="$ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
cargo fetch --locked
trunk build
cargo build --release --locked --bin decoding-explorer
exec target/release/decoding-explorer classroom --port "${PORT:-8080}" --dist dist "$@"
