#!/usr/bin/env bash
# Decode speed, whole-process time and peak memory against llama2.c's run.c, in one run on the
# same files. The anchor is built here, in a temporary folder outside the repository, from a
# run.c you give: never commit its code or a binary of it.
#
#   scripts/bench-vs-llama2c.sh /path/to/llama2.c/run.c [rounds]
#
# For each shape (stories260K's, 15M, 110M; random weights written by `bench --write`) and
# 1 and 2 threads it alternates run.c and `decoding-explorer bench`, `rounds` times (default
# 3), and prints the medians and ours / run.c as a Markdown table, the machine's read
# bandwidth over buffers of the files' sizes (the ceiling of a decode that streams its
# weights), then the whole process (256 positions on the 15M shape) under /usr/bin/time -v.
# Run it on an idle machine.
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
echo "Ours: $("$OURS" bench --json --tokens 2 --repeat 1 | sed -n 's/.*"cpu_kernel": "\(.*\)".*/\1/p') kernels;" \
  "the f32 rows' variant (streams × rows prefetched ahead + lead bytes in the row) chosen over the first decode steps of each run ('chosen': each round's)"
echo
echo "| shape | positions | threads | run.c decode tok/s | ours decode tok/s | ours / run.c | chosen (streams×ahead+lead bytes) |"
echo "|---|---|---|---|---|---|---|"
for s in "${SHAPES[@]}"; do
  read -r name shape n <<<"$s"
  dir="$WORK/$name"
  "$OURS" bench --random-weights "$shape" --write "$dir" >/dev/null
  for t in 1 2; do
    : >"$WORK/c" ; : >"$WORK/o" ; : >"$WORK/chosen"
    for _ in $(seq "$ROUNDS"); do
      # Greedy from a one-byte prompt: random weights never choose BOS this way, so every
      # position runs (sampling may end the run at once).
      OMP_NUM_THREADS=$t "$WORK/run" "$dir/model.bin" -z "$dir/tokenizer.bin" -n "$n" -t 0 -i x \
        2>&1 >/dev/null | sed -n 's/^achieved tok\/s: //p' >>"$WORK/c"
      "$OURS" --threads "$t" bench --model "$dir/model.bin" --tokenizer "$dir/tokenizer.bin" \
        --tokens "$n" --repeat 1 --json >"$WORK/json"
      sed -n 's/.*"median_tokens_per_s": \([0-9.]*\).*/\1/p' "$WORK/json" | sed -n 2p >>"$WORK/o"
      # the f32 loop's choice: the second "chosen" of cpu_variants (int8, then f32)
      tr -d ' \n' <"$WORK/json" | grep -o '"chosen":{"streams":[0-9]*,"ahead":[0-9]*,"lead":[0-9]*}' | sed -n '2s/.*"streams":\([0-9]*\),"ahead":\([0-9]*\),"lead":\([0-9]*\).*/\1×\2+\3/p' >>"$WORK/chosen"
    done
    c=$(median <"$WORK/c"); o=$(median <"$WORK/o")
    echo "$c" >"$WORK/runc_${name}_$t"
    printf '| %s | %s | %s | %.1f | %.1f | %.2f | %s |\n' "$name" "$n" "$t" "$c" "$o" "$(echo "$o / $c" | bc -l)" \
      "$(tr '\n' ' ' <"$WORK/chosen" | sed 's/ $//')"
  done
done

# The machine's read bandwidth, measured the way the fastest decode reads (our own probe,
# built here like the anchor): every thread sums its share of a buffer of the file's size,
# as 1 stream, as 4 streams side by side, and as 4 streams with a software prefetch 2 KiB
# ahead; the best of the three is the peak. A decode step reads every weight once, so a
# shape that does not fit in the cache cannot decode faster than peak / file size. Beside
# it, what run.c achieved (its median tok/s above × the file's bytes): a probe below that
# would not be a ceiling.
cat >"$WORK/bw.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
/* Sum of a[lo, hi) as `streams` runs side by side, prefetching `ahead` bytes ahead (0: none). */
static float sum(const float *a, size_t lo, size_t hi, int streams, size_t ahead) {
  size_t len = (hi - lo) / streams / 64 * 64; float s = 0;
  float l[4][64] = {{0}};
  for (size_t i = 0; i < len; i += 64)
    for (int k = 0; k < streams; k++) {
      const float *p = a + lo + k * len + i;
      if (ahead) __builtin_prefetch((const char *)p + ahead);
      for (int j = 0; j < 64; j++) l[k][j] += p[j];
    }
  for (int k = 0; k < streams; k++) for (int j = 0; j < 64; j++) s += l[k][j];
  return s;
}
int main(int argc, char **argv) {
  size_t n = (size_t)atol(argv[1]) / 4; int passes = atoi(argv[2]);
  float *a = aligned_alloc(64, (n * 4 + 63) / 64 * 64);
  for (size_t i = 0; i < n; i++) a[i] = (float)(i & 1023) * 1e-3f;
  int streams[3] = {1, 4, 4}; size_t ahead[3] = {0, 0, 2048};
  double sink = 0;
  for (int v = 0; v < 3; v++) {
    double best = 1e9;
    for (int p = 0; p < passes; p++) {
      double t0 = now(); float s = 0;
      #pragma omp parallel reduction(+:s)
      {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        s += sum(a, n / nt * t, n / nt * (t + 1), streams[v], ahead[v]);
      }
      double t = now() - t0; if (t < best) best = t; sink += s;
    }
    printf("%.1f ", n * 4 / best / 1e9);
  }
  printf("\n"); return sink == 1234.5;
}
C
sed -i '1i #include <omp.h>' "$WORK/bw.c"
gcc -Ofast -march=native -fopenmp -o "$WORK/bw" "$WORK/bw.c"
echo
echo "Read bandwidth (GB/s, best of 20 passes over a buffer of the file's size: 1 stream, 4" \
  "streams, 4 streams with a prefetch) against run.c's achieved bandwidth in the table above:"
echo
echo "| buffer | threads | 1 stream | 4 streams | 4 + prefetch | peak: tok/s at most | run.c achieved GB/s | run.c / peak |"
echo "|---|---|---|---|---|---|---|---|"
for name in 15M 110M; do
  bytes=$(stat -c %s "$WORK/$name/model.bin")
  for t in 1 2; do
    read -r g1 g4 gp <<<"$(OMP_NUM_THREADS=$t "$WORK/bw" "$bytes" 20)"
    peak=$(printf '%s\n%s\n%s\n' "$g1" "$g4" "$gp" | sort -g | tail -1)
    runc=$(echo "$(cat "$WORK/runc_${name}_$t") * $bytes / 1000000000" | bc -l)
    printf '| %s file (%.0f MB) | %s | %s | %s | %s | %.1f | %.1f | %.2f |\n' "$name" \
      "$(echo "$bytes / 1000000" | bc -l)" "$t" "$g1" "$g4" "$gp" \
      "$(echo "$peak * 1000000000 / $bytes" | bc -l)" "$runc" "$(echo "$runc / $peak" | bc -l)"
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
