#!/usr/bin/env bash
# Speculative decoding against plain decoding, in one run: for each model, draft and γ,
# `decoding-explorer speculate --json` times the draft-and-verify cycles and then plain decoding
# of as many tokens on the same backend, and reports tokens per target pass (against
# (1 − α^(γ+1)) / (1 − α) at the measured α), acceptance and the wall-clock ratio.
#
#   scripts/bench-speculative.sh [tokens]
#
# Models: stories260K (the real one), and random-weight files of the 15M and 110M shapes
# (`bench --random-weights ... --write`): random weights give near one-hot distributions,
# so a quantized self-draft agrees with the target almost always there (acceptance near 1),
# which says nothing about a trained model's. Sampling at T = 1, seed 1; the CPU backend,
# and the GPU backend (Mesa's lavapipe here: a software adapter) on stories260K.
set -euo pipefail
N=${1:-96}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/bench-speculative.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
(cd "$ROOT" && cargo build --release --quiet)
OURS="$ROOT/target/release/decoding-explorer"
"$OURS" bench --random-weights 288,768,6,6,6,32000,256 --write "$WORK/15M" >/dev/null
"$OURS" bench --random-weights 768,2048,12,12,12,32000,1024 --write "$WORK/110M" >/dev/null

echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $(date -u +%Y-%m-%d); $N tokens a run, T = 1, seed 1"
echo
echo "| model | backend | draft | γ | tokens / target pass | formula at α | α (mean Σ min(p,q)) | accepted | speculative tok/s | plain tok/s | speed-up |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
run() { # label backend model-args draft gamma
  local label=$1 backend=$2 args=$3 draft=$4 gamma=$5
  # shellcheck disable=SC2086
  "$OURS" --backend "$backend" $args speculate --prompt "Once upon a time" --max-tokens "$N" \
    --seed 1 --draft "$draft" --gamma "$gamma" --json 2>/dev/null >"$WORK/j"
  python3 - "$label" "$backend" "$draft" "$gamma" "$WORK/j" <<'PY'
import json, sys
label, backend, draft, gamma, path = sys.argv[1:]
t = json.load(open(path))["totals"]
print(f"| {label} | {backend} | {draft} | {gamma} | {t['tokens_per_cycle']:.2f} | {t['formula_tokens_per_cycle']:.2f} | "
      f"{t['mean_overlap']:.3f} | {t['accepted']} / {t['drafted']} | {t['tokens_per_second']:.1f} | "
      f"{t['plain_tokens_per_second']:.1f} | {t['speedup']:.2f} |")
PY
}
for model in stories260K 15M 110M; do
  case $model in
    stories260K) args=""; exit=exit:3 ;;
    15M) args="--model $WORK/15M/model.bin --tokenizer $WORK/15M/tokenizer.bin"; exit=exit:4 ;;
    110M) args="--model $WORK/110M/model.bin --tokenizer $WORK/110M/tokenizer.bin"; exit=exit:8 ;;
  esac
  for draft in quant:q8 quant:q4 $exit ngram:2; do
    for gamma in 2 4 6; do
      run "$model" cpu "$args" "$draft" "$gamma"
    done
  done
done
for draft in quant:q8 quant:q4 ngram:2; do
  run stories260K gpu "" "$draft" 4
done
