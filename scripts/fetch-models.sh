#!/usr/bin/env bash
# Fills assets/models/stories260K/ (never committed): copies the files from ../shared/models/
# when that folder exists, otherwise downloads them from the canonical URLs in the model's
# README; checks the sha256 either way. Idempotent: files already present and correct are kept.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/assets/models/stories260K"
SHARED="$ROOT/../shared/models/stories260K"
BASE_URL="https://huggingface.co/karpathy/tinyllamas/resolve/main/stories260K"

# name  sha256  (from ../shared/models/stories260K/README.md)
FILES=(
  "stories260K.bin b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696"
  "tok512.bin 037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312"
)

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

mkdir -p "$DEST"
for entry in "${FILES[@]}"; do
  name=${entry%% *}
  want=${entry##* }
  target="$DEST/$name"
  if [[ -f "$target" && "$(sha_of "$target")" == "$want" ]]; then
    continue
  fi
  tmp="$target.partial"
  if [[ -f "$SHARED/$name" ]]; then
    cp "$SHARED/$name" "$tmp"
    from="$SHARED/$name"
  else
    command -v curl >/dev/null || { echo "error: curl is needed to download $name" >&2; exit 1; }
    curl -fL --retry 3 -o "$tmp" "$BASE_URL/$name"
    from="$BASE_URL/$name"
  fi
  got="$(sha_of "$tmp")"
  if [[ "$got" != "$want" ]]; then
    rm -f "$tmp"
    echo "error: sha256 mismatch for $name from $from" >&2
    echo "       expected $want" >&2
    echo "       got      $got" >&2
    echo "       (other files named $name circulate with different weights)" >&2
    exit 1
  fi
  chmod 644 "$tmp"
  mv "$tmp" "$target"
  echo "model: $name <- $from (sha256 ok)"
done
if [[ -f "$SHARED/LICENSE.llama2c-MIT" ]]; then
  cp -f "$SHARED/LICENSE.llama2c-MIT" "$DEST/"
fi
