#!/usr/bin/env bash
# Sets up whatever is missing, builds the page and serves it on http://127.0.0.1:8080/
# (PORT=... to change). Ctrl-C stops it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/setup.sh"
export PATH="$ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
cargo fetch --locked
echo "serving on http://127.0.0.1:${PORT:-8080}/"
exec trunk serve --release --address 127.0.0.1 --port "${PORT:-8080}"
