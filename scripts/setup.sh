#!/usr/bin/env bash
# Installs whatever is missing to build, serve and test Decoding Explorer on Debian with
# rustup: apt packages (Chromium + driver for browser tests, Mesa's software Vulkan for
# native GPU tests, Node.js if absent), the wasm32 target, Trunk, wasm-bindgen-cli at the
# version in Cargo.lock, npm tools (wasm-opt from binaryen, playwright-core), and the model
# files. Idempotent: every step checks first and skips what is already present.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

TRUNK_VERSION=0.21.14
say() { printf '\033[1msetup:\033[0m %s\n' "$*"; }

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else echo "error: '$*' needs root (no sudo found)" >&2; exit 1
  fi
}

apt_packages() {
  # fonts-wqy-microhei: Chinese glyphs for the page in Chinese (the browser tests and their
  # screenshots; a user's system has its own).
  local want=(chromium chromium-driver mesa-vulkan-drivers libvulkan1 ca-certificates curl python3 python3-venv gcc libc6-dev fonts-wqy-microhei)
  command -v node >/dev/null || want+=(nodejs)
  command -v npm >/dev/null || want+=(npm)
  local missing=()
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    say "apt: installing ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

rust_target() {
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    say "rustup: adding wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
  fi
  # rust-src: the standard library rebuilt with wasm threads (scripts/build-threads.sh).
  for c in rustfmt clippy rust-src; do
    rustup component list --installed | grep -q "^$c" || rustup component add "$c"
  done
}

trunk_tool() {
  if [[ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]]; then
    say "cargo: installing trunk $TRUNK_VERSION (several minutes)"
    # No TLS / update check: unneeded offline, and half the build time (docs/TOOLCHAIN.md).
    CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
      cargo install trunk --version "$TRUNK_VERSION" --locked --no-default-features
  fi
}

wasm_bindgen_tool() {
  # The CLI must equal the wasm-bindgen crate in Cargo.lock.
  local v
  v=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
  if [[ -z "$v" ]]; then echo "error: wasm-bindgen not found in Cargo.lock" >&2; exit 1; fi
  if [[ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $v" ]]; then
    say "cargo: installing wasm-bindgen-cli $v (a few minutes)"
    # Without --locked: its lockfile wants a webpki-roots version the registry lacks.
    cargo install wasm-bindgen-cli --version "$v" --force
  fi
}

npm_tools() {
  # Every devDependency installed at its pinned version, and wasm-opt the one Trunk pins.
  if [[ -x node_modules/.bin/wasm-opt ]] \
    && [[ "$(node_modules/.bin/wasm-opt --version 2>/dev/null)" == *"version 132"* ]] \
    && node -e '
      const want = require("./package.json").devDependencies;
      for (const [name, v] of Object.entries(want)) {
        if (require(`./node_modules/${name}/package.json`).version !== v) process.exit(1);
      }' 2>/dev/null; then
    return
  fi
  say "npm: installing binaryen (wasm-opt), playwright-core, axe-core, and ws, jsqr, pngjs for the classroom tests"
  npm ci --no-audit --no-fund
}

apt_packages
rust_target
trunk_tool
wasm_bindgen_tool
npm_tools
"$ROOT/scripts/fetch-models.sh"
"$ROOT/scripts/make-fixtures.sh"
say "all tools present"
