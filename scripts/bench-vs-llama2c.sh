#!/usr/bin/env bash
# Decode speed, whole-process time and peak memory against llama2.c's run.c, in one run on
# the same files (issue 11). The anchor is built here, in a temporary folder outside the
# repository, from a run.c you give: never commit its code or a binary of it.
#
#   scripts/bench-vs-llama2c.sh /path/to/llama2.c/run.c [rounds]
#
# For each shape (stories260K's, 15M, 110M; random weights written by `bench --write`) and
# 1 and 2 threads it alternates run.c and `decoding-explorer bench`, `rounds` times (default
# 3), and prints the medians and ours / run.c as a Markdown table, then the whole process
# (256 positions on the 15M shape) under /usr/bin/time -v. Run it on an idle machine.
set -euo pipefail
RUN_C=${1:?usage: scripts/bench-vs-llama2c.sh /path/to/run.c [rounds]}
ROUNDS=${2:-3}
[ -f "$RUN_C" ] || { echo "no such file: $RUN_C" >&2; exit 1; }
command -v gcc >/dev/null || { echo "gcc is needed to build run.c (apt install gcc)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed (apt install time)" >&2; exit 1; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/bench-vs-llama2c.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

cp "$RUN_C" "$WORK/run.c"
gcc -Ofast -march=native -fopenmp -o "$WORK/run" "$WORK/run.c" -lm
(cd "$ROOT" && cargo build --release --quiet)
OURS="$ROOT/target/release/decoding-explorer"

# name, shape (dim,hidden,layers,heads,kv_heads,vocab,seq_len), positions decoded
SHAPES=(
  "stories260K-shape 64,172,5,8,4,512,512 512"
  "15M 288,768,6,6,6,32000,256 256"
  "110M 768,2048,12,12,12,32000,1024 256"
)

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs;" \
  "$(lscpu | grep -o 'avx512f\|avx2' | sort -u | tr '\n' ' ')"
echo "run.c: gcc -Ofast -march=native -fopenmp ($(gcc -dumpversion)); ours: $("$OURS" --version)"
echo "Date: $(date -u +%Y-%m-%d), $ROUNDS alternating rounds, medians"
echo
echo "| shape | positions | threads | run.c decode tok/s | ours decode tok/s | ours / run.c |"
echo "|---|---|---|---|---|---|"
for s in "${SHAPES[@]}"; do
  read -r name shape n <<<"$s"
  dir="$WORK/$name"
  "$OURS" bench --random-weights "$shape" --write "$dir" >/dev/null
  for t in 1 2; do
    : >"$WORK/c" ; : >"$WORK/o"
    for _ in $(seq "$ROUNDS"); do
      # Greedy from a one-byte prompt: random weights never choose BOS this way, so every
      # position runs (sampling may end the run at once).
      OMP_NUM_THREADS=$t "$WORK/run" "$dir/model.bin" -z "$dir/tokenizer.bin" -n "$n" -t 0 -i x \
        2>&1 >/dev/null | sed -n 's/^achieved tok\/s: //p' >>"$WORK/c"
      "$OURS" --threads "$t" bench --model "$dir/model.bin" --tokenizer "$dir/tokenizer.bin" \
        --tokens "$n" --repeat 1 --json | sed -n 's/.*"median_tokens_per_s": \([0-9.]*\).*/\1/p' \
        | sed -n 2p >>"$WORK/o"
    done
    c=$(median <"$WORK/c"); o=$(median <"$WORK/o")
    printf '| %s | %s | %s | %.1f | %.1f | %.2f |\n' "$name" "$n" "$t" "$c" "$o" "$(echo "$o / $c" | bc -l)"
  done
done

echo
echo "Whole process, 256 positions on the 15M shape (greedy), 2 threads:"
echo
echo "| program | wall s | peak RSS MiB | model file MiB |"
echo "|---|---|---|---|"
dir="$WORK/15M"
mib() { echo "$1 / 1048576" | bc -l; }
file=$(stat -c %s "$dir/model.bin")
measure() { # label command...
  local label=$1; shift
  /usr/bin/time -v "$@" >/dev/null 2>"$WORK/time" || { cat "$WORK/time" >&2; exit 1; }
  local wall rss
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time" | awk -F: '{print $(NF-1)*60 + $NF}')
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time")
  printf '| %s | %.2f | %.1f | %.1f |\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)" "$(mib "$file")"
}
for _ in 1 2; do
  measure "run.c -n 256" env OMP_NUM_THREADS=2 "$WORK/run" "$dir/model.bin" -z "$dir/tokenizer.bin" -n 256 -t 0 -i x
  # The prompt "x" is BOS, the dummy-prefix space and "x" here: 253 more make 256 positions.
  measure "ours generate" "$OURS" --threads 2 --model "$dir/model.bin" --tokenizer "$dir/tokenizer.bin" \
    generate --prompt x --temperature 0 --max-tokens 253
done
