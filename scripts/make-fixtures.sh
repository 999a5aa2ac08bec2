#!/usr/bin/env bash
# Test files written by other projects' own writers (never by our code): llama.cpp's `gguf`
# package from PyPI, in a virtual environment of its own (.venv-fixtures/), writes GGUF
# files of stories260K and of a seeded random Llama into assets/models/fixtures/gguf/
# (scripts/make-gguf-fixtures.py says what each is). Idempotent: nothing runs when the
# files are newer than the script and the pinned requirements.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT=assets/models/fixtures/gguf
VENV=.venv-fixtures
REQ=scripts/requirements-fixtures.txt
SCRIPT=scripts/make-gguf-fixtures.py
SHARED=scripts/llama2c_gguf.py
stamp="$OUT/.made"
if [[ -f "$stamp" && "$stamp" -nt "$SCRIPT" && "$stamp" -nt "$SHARED" && "$stamp" -nt "$REQ" ]]; then
  exit 0
fi
if [[ ! -x "$VENV/bin/python" ]] || ! cmp -s "$REQ" "$VENV/requirements.txt"; then
  echo "fixtures: installing $(grep -v '^#' "$REQ" | tr '\n' ' ')from PyPI into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQ"
  cp "$REQ" "$VENV/requirements.txt"
fi
rm -rf "$OUT"
"$VENV/bin/python" "$SCRIPT" assets/models/stories260K "$OUT"
touch "$stamp"
