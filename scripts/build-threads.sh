#!/usr/bin/env bash
# Trunk's post-build hook (Trunk.toml), before release.py: the engine's worker built again
# with shared memory (wasm threads: +atomics, and the standard library rebuilt with it, which
# stable Rust allows with RUSTC_BOOTSTRAP=1 and the rust-src component: scripts/setup.sh).
# Writes worker_mt.js, worker_mt_bg.wasm and worker_mt_loader.js beside Trunk's own worker;
# the page starts this one when it is cross-origin isolated (crates/app/src/ui/mod.rs,
# engine_url) and Trunk's one-thread worker otherwise.
#
# Usage: build-threads.sh [OUT] (default: $TRUNK_STAGING_DIR). Its own target folder
# (target/threads): other flags would otherwise rebuild the page's wasm every time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-${TRUNK_STAGING_DIR:?build-threads.sh: name the output folder}}"
cd "$ROOT"
TARGET="$ROOT/target/threads"
# The linker's part (Rust stopped passing it with +atomics: rust-lang/rust#147225): the memory
# shared and imported (each thread's instance is given the same one), and the thread-local
# storage's symbols exported for wasm-bindgen to set up each thread. --max-memory: shared
# memory declares its most; 4 GiB, all wasm32 addresses (the page's own budget, 1.5 GiB, is
# checked before a model loads).
LINK="--shared-memory --import-memory --max-memory=4294967296 --export=__wasm_init_tls"
LINK="$LINK --export=__tls_size --export=__tls_align --export=__tls_base"
FLAGS="-C target-feature=+simd128,+atomics,+bulk-memory,+mutable-globals"
for a in $LINK; do FLAGS="$FLAGS -C link-arg=$a"; done
RUSTC_BOOTSTRAP=1 RUSTFLAGS="$FLAGS" \
  cargo build --locked -Z build-std=std,panic_abort --target wasm32-unknown-unknown \
  --profile wasm-release -p decoding-worker --bin worker --target-dir "$TARGET"
wasm-bindgen --target no-modules --no-typescript --out-dir "$OUT" --out-name worker_mt \
  "$TARGET/wasm32-unknown-unknown/wasm-release/worker.wasm"
wasm-opt -O3 --enable-threads --enable-bulk-memory --enable-simd --enable-mutable-globals \
  --enable-sign-ext --enable-nontrapping-float-to-int \
  "$OUT/worker_mt_bg.wasm" -o "$OUT/worker_mt_bg.wasm"
printf 'importScripts("./worker_mt.js");wasm_bindgen({module_or_path:"./worker_mt_bg.wasm"});' > "$OUT/worker_mt_loader.js"
echo "build-threads.sh: worker_mt ($(stat -c %s "$OUT/worker_mt_bg.wasm") bytes of wasm)"
