#!/usr/bin/env bash
# Test files written by other projects' own writers (never by our code), from PyPI in a
# virtual environment of its own (.venv-fixtures/): llama.cpp's `gguf` package writes GGUF
# files of stories260K and of a seeded random Llama into assets/models/fixtures/gguf/
# (scripts/make-gguf-fixtures.py says what each is), Hugging Face's `safetensors` and
# `tokenizers` write Hugging Face checkpoints into assets/models/fixtures/hf/
# (scripts/make-hf-fixtures.py); the BPE vocabularies and the Qwen2 and Llama 3 RoPE models
# go to assets/models/fixtures/arch/ (scripts/make-arch-fixtures.py), and
# llama.cpp's Q4_K_M, Q5_K_M and Q6_K of a seeded random Llama to
# assets/models/fixtures/kquant/ (scripts/make-kquant-fixtures.py: ggml's quantizer compiled
# from llama.cpp's source on PyPI, each file checked against the SHA-256 of the file
# llama.cpp wrote); vocabularies of 32,000 (SentencePiece) and 49,152 (GPT-2 BPE) tokens
# trained by `tokenizers` go to assets/models/fixtures/vocab/ (scripts/make-vocab-fixtures.py,
# for `bench --mask`). Idempotent: nothing runs when the files are newer than the scripts and
# the pinned requirements.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT=assets/models/fixtures/gguf
VENV=.venv-fixtures
REQ=scripts/requirements-fixtures.txt
HF_OUT=assets/models/fixtures/hf
ARCH_OUT=assets/models/fixtures/arch
KQUANT_OUT=assets/models/fixtures/kquant
VOCAB_OUT=assets/models/fixtures/vocab
SCRIPTS=(scripts/make-gguf-fixtures.py scripts/make-hf-fixtures.py scripts/make-arch-fixtures.py
  scripts/make-kquant-fixtures.py tests/fixtures/kquant/SHA256SUMS scripts/make-vocab-fixtures.py
  scripts/llama2c_gguf.py scripts/hf_reference.py "$REQ")
stamp="assets/models/fixtures/.made"
fresh=1
for f in "${SCRIPTS[@]}"; do
  [[ -f "$stamp" && "$stamp" -nt "$f" ]] || fresh=0
done
if [[ $fresh == 1 ]]; then
  exit 0
fi
if [[ ! -x "$VENV/bin/python" ]] || ! cmp -s "$REQ" "$VENV/requirements.txt"; then
  echo "fixtures: installing $(grep -v '^#' "$REQ" | tr '\n' ' ')from PyPI into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQ"
  cp "$REQ" "$VENV/requirements.txt"
fi
rm -rf "$OUT" "$HF_OUT" "$ARCH_OUT" "$KQUANT_OUT" "$VOCAB_OUT"
"$VENV/bin/python" scripts/make-gguf-fixtures.py assets/models/stories260K "$OUT"
"$VENV/bin/python" scripts/make-hf-fixtures.py assets/models/stories260K "$HF_OUT"
"$VENV/bin/python" scripts/make-arch-fixtures.py "$ARCH_OUT"
"$VENV/bin/python" scripts/make-kquant-fixtures.py assets/models/stories260K "$KQUANT_OUT"
"$VENV/bin/python" scripts/make-vocab-fixtures.py "$VOCAB_OUT"
touch "$stamp"
