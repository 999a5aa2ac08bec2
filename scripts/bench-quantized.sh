#!/usr/bin/env bash
# Decode and prefill speed of f32, q8 and q4 weights in one run, beside llama2.c's runq.c on the
# same Q8_0 file. The anchor is built here, in a temporary folder outside the repository, from a
# runq.c you give: never commit its code or a binary of it.
#
#   scripts/bench-quantized.sh /path/to/llama2.c/runq.c [rounds]
#
# For each shape (stories260K's, 15M, 110M; random weights written by `bench --write`, the
# q8 file by `quantize --out`) and 1 and 2 threads, it alternates runq.c on the q8 file and
# `decoding-explorer bench` at f32 (the f32 file), q8 (the same q8 file) and q4 (the f32 file
# quantized in memory), `rounds` times (default 3), and prints medians and ratios as a
# Markdown table. Run it on an idle machine. On the stories260K shape runq.c computes w2 with
# 128 of its 172 inputs (llama2.c PRs #532/#533): its figure there is for less work.
#
# With LLAMA_CPP_PY set to a Python that has llama-cpp-python and gguf (PyPI; e.g. a venv:
# `pip install gguf numpy llama-cpp-python==0.3.36`, which builds llama.cpp here), the same
# weights are also written as GGUF f32 and Q8_0 (scripts/llama2c-to-gguf.py) and llama.cpp's
# decode is timed beside them (scripts/llama-cpp-decode.py), in the same rounds.
set -euo pipefail
RUNQ_C=${1:?usage: scripts/bench-quantized.sh /path/to/runq.c [rounds]}
ROUNDS=${2:-3}
[ -f "$RUNQ_C" ] || { echo "no such file: $RUNQ_C" >&2; exit 1; }
command -v gcc >/dev/null || { echo "gcc is needed to build runq.c (apt install gcc)" >&2; exit 1; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/bench-quantized.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

cp "$RUNQ_C" "$WORK/runq.c"
gcc -Ofast -march=native -fopenmp -o "$WORK/runq" "$WORK/runq.c" -lm
(cd "$ROOT" && cargo build --release --quiet)
OURS="$ROOT/target/release/decoding-explorer"

SHAPES=(
  "stories260K-shape 64,172,5,8,4,512,512 256"
  "15M 288,768,6,6,6,32000,256 256"
  "110M 768,2048,12,12,12,32000,1024 256"
)

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# bench's JSON: the prefill figure comes first, then decode.
rate() { sed -n 's/.*"median_tokens_per_s": \([0-9.]*\).*/\1/p' | sed -n "$1p"; }

echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs;" \
  "$(lscpu | grep -o 'avx512f\|avx2' | sort -u | tr '\n' ' ')"
echo "runq.c: gcc -Ofast -march=native -fopenmp ($(gcc -dumpversion)); ours: $("$OURS" --version)"
echo "Ours: $("$OURS" bench --json --tokens 2 --repeat 1 | sed -n 's/.*"cpu_kernel": "\(.*\)".*/\1/p') kernels;" \
  "q8's int8 variant (streams × rows prefetched ahead) measured at start-up in each run (the 'chosen' column: each round's)"
echo "Date: $(date -u +%Y-%m-%d), $ROUNDS alternating rounds, medians (tokens/s)"
echo
LCPP=${LLAMA_CPP_PY:-}
if [ -n "$LCPP" ]; then
  echo "llama.cpp: llama-cpp-python $("$LCPP" -c 'import llama_cpp; print(llama_cpp.__version__)') through Python, GGUF from scripts/llama2c-to-gguf.py"
  echo
  echo "| shape | threads | f32 decode | q8 decode | q4 decode | q8 / f32 | q4 / f32 | runq.c q8 decode | ours q8 / runq.c | llama.cpp f32 / Q8_0 decode | ours q8 / llama.cpp Q8_0 | f32 / q8 / q4 prefill | weight MB f32 / q8 / q4 | chosen (streams×ahead+lead) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
else
  echo "| shape | threads | f32 decode | q8 decode | q4 decode | q8 / f32 | q4 / f32 | runq.c q8 decode | ours q8 / runq.c | f32 / q8 / q4 prefill | weight MB f32 / q8 / q4 | chosen (streams×ahead+lead) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
fi
for s in "${SHAPES[@]}"; do
  read -r name shape n <<<"$s"
  dir="$WORK/$name"
  "$OURS" bench --random-weights "$shape" --write "$dir" >/dev/null
  "$OURS" --model "$dir/model.bin" --tokenizer "$dir/tokenizer.bin" quantize --out "$dir/q80.bin" >/dev/null
  # GGML's Q8_0 needs rows of a multiple of 32: stories260K's w2 (172 wide) is refused, as
  # llama.cpp refuses to quantize that model; llama.cpp is left out of that row.
  lcpp_ok=
  if [ -n "$LCPP" ] && "$LCPP" "$ROOT/scripts/llama2c-to-gguf.py" "$dir/model.bin" "$dir/tokenizer.bin" "$dir/q8_0.gguf" q8_0 2>"$WORK/gguf.err"; then
    "$LCPP" "$ROOT/scripts/llama2c-to-gguf.py" "$dir/model.bin" "$dir/tokenizer.bin" "$dir/f32.gguf" f32
    lcpp_ok=1
  fi
  for t in 1 2; do
    for f in runq.rate f32 q8 q4 pf32 pq8 pq4 lf32 lq8 chosen; do : >"$WORK/$f"; done
    for _ in $(seq "$ROUNDS"); do
      OMP_NUM_THREADS=$t "$WORK/runq" "$dir/q80.bin" -z "$dir/tokenizer.bin" -n "$n" -t 0 -i x \
        2>&1 >/dev/null | sed -n 's/^achieved tok\/s: //p' >>"$WORK/runq.rate"
      if [ -n "$lcpp_ok" ]; then
        "$LCPP" "$ROOT/scripts/llama-cpp-decode.py" "$dir/f32.gguf" "$t" "$n" 2>/dev/null >>"$WORK/lf32"
        "$LCPP" "$ROOT/scripts/llama-cpp-decode.py" "$dir/q8_0.gguf" "$t" "$n" 2>/dev/null >>"$WORK/lq8"
      fi
      for p in f32 q8 q4; do
        file="$dir/model.bin"; [ "$p" = q8 ] && file="$dir/q80.bin"
        "$OURS" --threads "$t" --precision "$p" bench --model "$file" --tokenizer "$dir/tokenizer.bin" \
          --tokens "$n" --repeat 1 --json >"$WORK/json"
        rate 2 <"$WORK/json" >>"$WORK/$p"
        rate 1 <"$WORK/json" >>"$WORK/p$p"
        sed -n 's/.*"weight_bytes": \([0-9]*\).*/\1/p' "$WORK/json" >"$WORK/bytes_$p"
        if [ "$p" = q8 ]; then
          tr -d ' \n' <"$WORK/json" | grep -o '"chosen":{"streams":[0-9]*,"ahead":[0-9]*,"lead":[0-9]*}' | sed -n '1s/.*"streams":\([0-9]*\),"ahead":\([0-9]*\),"lead":\([0-9]*\).*/\1×\2+\3/p' >>"$WORK/chosen"
        fi
      done
    done
    r=$(median <"$WORK/runq.rate"); a=$(median <"$WORK/f32"); b=$(median <"$WORK/q8"); c=$(median <"$WORK/q4")
    mb() { echo "$(cat "$WORK/bytes_$1") / 1000000" | bc -l; }
    prefill=$(printf '%.0f / %.0f / %.0f' "$(median <"$WORK/pf32")" "$(median <"$WORK/pq8")" "$(median <"$WORK/pq4")")
    bytes=$(printf '%.1f / %.1f / %.1f' "$(mb f32)" "$(mb q8)" "$(mb q4)")
    row=$(printf '| %s | %s | %.1f | %.1f | %.1f | %.2f | %.2f | %.1f | %.2f |' \
      "$name" "$t" "$a" "$b" "$c" "$(echo "$b / $a" | bc -l)" "$(echo "$c / $a" | bc -l)" "$r" \
      "$(echo "$b / $r" | bc -l)")
    if [ -n "$lcpp_ok" ]; then
      lf=$(median <"$WORK/lf32"); lq=$(median <"$WORK/lq8")
      row="$row $(printf ' %.1f / %.1f | %.2f |' "$lf" "$lq" "$(echo "$b / $lq" | bc -l)")"
    elif [ -n "$LCPP" ]; then
      row="$row refused: $(tail -1 "$WORK/gguf.err" | sed 's/.*QuantError: //') | — |"
    fi
    echo "$row $prefill | $bytes | $(tr '\n' ' ' <"$WORK/chosen" | sed 's/ $//') |"
  done
done
