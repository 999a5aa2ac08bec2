#!/usr/bin/env bash
# Each CPU path of the engine against anchors built for the same instruction set, in one run:
# issue 50's table of "every machine" measured on whichever machine this is.
#
#   scripts/bench-isa.sh /path/to/llama2.c/run.c /path/to/llama.cpp [rounds]
#
# The engine's kernels are chosen when it is built (crates/engine/build.rs: `cfg(kernel)` from
# the target's features), so a path is forced by building for an older CPU, as llama.cpp and
# run.c are:
#
#   path      ours (rustc -C target-cpu)   run.c (gcc -march)   llama.cpp's ggml-cpu (cmake)
#   avx512    native                       native               GGML_NATIVE=ON
#   avx2      x86-64-v3                    x86-64-v3            AVX, AVX2, FMA, F16C, BMI2, SSE4.2
#   portable  x86-64-v2                    x86-64-v2            SSE4.2 only
#
# (the avx512 row only where the CPU has AVX-512F; its int8 products use VNNI where the CPU
# has it). Ours: `target/isa-<cpu>` beside the usual target (the native one is
# `target/release`). run.c: built in a temporary folder from the file you give. llama.cpp:
# from the source tree you give (a clone, or the llama-cpp-python sdist's vendor/llama.cpp),
# built under $LLAMA_CPP_BUILD (default /tmp/bench-isa-llama.cpp, kept between runs): one
# native build of llama-bench and llama-quantize with shared libraries, then only ggml-cpu for
# each lower level, whose libggml-cpu.so is put first by LD_LIBRARY_PATH (the header prints
# which library each level loads). Never commit their code or binaries.
#
# For the 110M shape (SHAPES="15M 110M" adds the 15M; random weights from `bench --write`,
# as GGUF by scripts/llama2c-to-gguf.py, which needs a Python with `gguf` and `numpy`:
# $GGUF_PY, default python3; Q4_K_M by llama.cpp's own llama-quantize), at 1 and 2 threads,
# each level alternates, `rounds` times (default 3): run.c and ours on the llama2.c f32 file;
# llama-bench and ours on the same Q8_0 and Q4_K_M files (decode: llama-bench's tg, ours
# after a prefill of the same length; prefill: pp against ours). Medians, and ours / anchor.
set -euo pipefail
RUN_C=${1:?usage: scripts/bench-isa.sh /path/to/run.c /path/to/llama.cpp [rounds]}
LCPP_SRC=${2:?usage: scripts/bench-isa.sh /path/to/run.c /path/to/llama.cpp [rounds]}
ROUNDS=${3:-3}
N=${TOKENS:-64}
PY=${GGUF_PY:-python3}
SHAPES=${SHAPES:-110M}
LCPP_BUILD=${LLAMA_CPP_BUILD:-/tmp/bench-isa-llama.cpp}
[ -f "$RUN_C" ] || { echo "no such file: $RUN_C" >&2; exit 1; }
[ -f "$LCPP_SRC/CMakeLists.txt" ] || { echo "not a llama.cpp source tree: $LCPP_SRC" >&2; exit 1; }
for tool in gcc g++ cmake ninja bc; do
  command -v $tool >/dev/null || { echo "$tool is needed (apt install gcc g++ cmake ninja-build bc)" >&2; exit 1; }
done
"$PY" -c 'import gguf, numpy' 2>/dev/null || { echo "$PY lacks gguf/numpy (pip install gguf numpy; or set GGUF_PY)" >&2; exit 1; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/bench-isa.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# path | rustc target-cpu | gcc -march | ggml's cmake flags
LEVELS=()
if grep -qw avx512f /proc/cpuinfo; then
  LEVELS+=("avx512|native|native|-DGGML_NATIVE=ON")
fi
LEVELS+=(
  "avx2|x86-64-v3|x86-64-v3|-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
  "portable|x86-64-v2|x86-64-v2|-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF"
)

lcpp_cmake() { # build dir, flags, targets…
  local dir=$1 flags=$2; shift 2
  # shellcheck disable=SC2086
  cmake -S "$LCPP_SRC" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
    -DLLAMA_CURL=OFF -DGGML_OPENMP=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=OFF $flags >"$WORK/cmake.log" 2>&1 &&
    cmake --build "$dir" -j "$(nproc)" --target "$@" >>"$WORK/cmake.log" 2>&1 ||
    { tail -20 "$WORK/cmake.log" >&2; exit 1; }
}
NATIVE_BIN="$LCPP_BUILD/build-native/bin"
if [ ! -x "$NATIVE_BIN/llama-bench" ] || [ ! -x "$NATIVE_BIN/llama-quantize" ]; then
  echo "building llama.cpp (native: llama-bench, llama-quantize) in $LCPP_BUILD …" >&2
  lcpp_cmake "$LCPP_BUILD/build-native" "-DGGML_NATIVE=ON" llama-bench llama-quantize
fi

ours_for() { # rustc target-cpu → our binary built for it
  if [ "$1" = native ]; then
    (cd "$ROOT" && cargo build --release --quiet -p decoding-explorer)
    echo "$ROOT/target/release/decoding-explorer"
  else
    (cd "$ROOT" && RUSTFLAGS="-C target-cpu=$1" CARGO_TARGET_DIR="$ROOT/target/isa-$1" \
      cargo build --release --quiet -p decoding-explorer)
    echo "$ROOT/target/isa-$1/release/decoding-explorer"
  fi
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# bench's JSON: prefill's figure first, then decode's.
ours_rate() { sed -n 's/.*"median_tokens_per_s": \([0-9.]*\).*/\1/p' | sed -n "$1p"; }
# llama-bench's JSON lines: the test with n_prompt > 0 is prefill, n_gen > 0 decode.
lcpp_rate() { "$PY" -c '
import json, sys
rows = json.load(sys.stdin)
want = sys.argv[1]
for r in rows:
    if (want == "pp" and r["n_prompt"] > 0) or (want == "tg" and r["n_gen"] > 0):
        print(r["avg_ts"])' "$1"; }
ratio() { echo "$1 / $2" | bc -l | xargs printf '%.2f'; }

echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs;" \
  "$(grep -o -w 'avx512f\|avx512_vnni\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "run.c: gcc $(gcc -dumpversion) -Ofast -march=<level> -fopenmp; llama.cpp $(git -C "$LCPP_SRC" rev-parse --short HEAD 2>/dev/null || echo '(no git)'), llama-bench; ours: $("$ROOT/target/release/decoding-explorer" --version 2>/dev/null || echo '(built below)')"
echo "Date: $(date -u +%Y-%m-%d), $ROUNDS alternating rounds, medians (tokens/s), $N positions"
echo

SHAPE_110M="768,2048,12,12,12,32000,1024"
SHAPE_15M="288,768,6,6,6,32000,256"
OURS_NATIVE=$(ours_for native)
for name in $SHAPES; do
  var="SHAPE_$name"
  dir="$WORK/$name"
  "$OURS_NATIVE" bench --random-weights "${!var}" --write "$dir" >/dev/null
  "$PY" "$ROOT/scripts/llama2c-to-gguf.py" "$dir/model.bin" "$dir/tokenizer.bin" "$dir/f32.gguf" f32
  "$PY" "$ROOT/scripts/llama2c-to-gguf.py" "$dir/model.bin" "$dir/tokenizer.bin" "$dir/q8_0.gguf" q8_0
  "$NATIVE_BIN/llama-quantize" "$dir/f32.gguf" "$dir/q4_k_m.gguf" Q4_K_M >"$WORK/quantize.log" 2>&1 ||
    { tail -5 "$WORK/quantize.log" >&2; exit 1; }
done

echo "| shape | path | threads | run.c f32 | ours f32 | ours / run.c | llama.cpp Q8_0 | ours Q8_0 | ours / llama.cpp | llama.cpp Q4_K_M | ours Q4_K_M | ours / llama.cpp | prefill Q8_0 / Q4_K_M, ours / llama.cpp |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for level in "${LEVELS[@]}"; do
  IFS='|' read -r path cpu march flags <<<"$level"
  gcc -Ofast -march="$march" -fopenmp -o "$WORK/run-$cpu" "$RUN_C" -lm
  OURS=$(ours_for "$cpu")
  kernel=$("$OURS" bench --json --tokens 2 --repeat 1 | sed -n 's/.*"cpu_kernel": "\(.*\)".*/\1/p')
  [ "${kernel%% *}" = "$path" ] || { echo "ours built for $cpu runs the $kernel kernels, not $path" >&2; exit 1; }
  if [ "$path" = avx512 ]; then
    LIB="$NATIVE_BIN"
  else
    LIB="$LCPP_BUILD/build-$cpu/bin"
    [ -e "$LIB/libggml-cpu.so" ] || { echo "building llama.cpp's ggml-cpu for $cpu …" >&2; lcpp_cmake "$LCPP_BUILD/build-$cpu" "$flags" ggml-cpu; }
  fi
  loaded=$(LD_LIBRARY_PATH="$LIB" ldd "$NATIVE_BIN/llama-bench" | sed -n 's/.*libggml-cpu.so.* => \([^ ]*\).*/\1/p')
  [ "$(dirname "$loaded")" = "$LIB" ] || { echo "llama-bench loads $loaded, not $LIB's ggml-cpu" >&2; exit 1; }
  echo "<!-- $path: ours $OURS ($kernel); run.c -march=$march; llama.cpp's ggml-cpu $loaded -->"
  for name in $SHAPES; do
    dir="$WORK/$name"
    for t in 1 2; do
      for f in c of l8 o8 lk ok p8l p8o pkl pko; do : >"$WORK/$f"; done
      for _ in $(seq "$ROUNDS"); do
        OMP_NUM_THREADS=$t "$WORK/run-$cpu" "$dir/model.bin" -z "$dir/tokenizer.bin" -n "$N" -t 0 -i x \
          2>&1 >/dev/null | sed -n 's/^achieved tok\/s: //p' >>"$WORK/c"
        "$OURS" --threads "$t" --model "$dir/model.bin" --tokenizer "$dir/tokenizer.bin" bench \
          --tokens "$N" --repeat 1 --json | ours_rate 2 >>"$WORK/of"
        for q in q8_0:8 q4_k_m:k; do
          file="$dir/${q%%:*}.gguf"; k=${q##*:}
          LD_LIBRARY_PATH="$LIB" "$NATIVE_BIN/llama-bench" -m "$file" -t "$t" -p "$N" -n "$N" -r 1 -o json \
            2>/dev/null >"$WORK/lj"
          lcpp_rate tg <"$WORK/lj" >>"$WORK/l$k"
          lcpp_rate pp <"$WORK/lj" >>"$WORK/p${k}l"
          "$OURS" --threads "$t" --model "$file" bench --tokens "$N" --repeat 1 --json >"$WORK/oj"
          ours_rate 2 <"$WORK/oj" >>"$WORK/o$k"
          ours_rate 1 <"$WORK/oj" >>"$WORK/p${k}o"
        done
      done
      c=$(median <"$WORK/c"); of=$(median <"$WORK/of")
      l8=$(median <"$WORK/l8"); o8=$(median <"$WORK/o8")
      lk=$(median <"$WORK/lk"); ok=$(median <"$WORK/ok")
      p8=$(ratio "$(median <"$WORK/p8o")" "$(median <"$WORK/p8l")")
      pk=$(ratio "$(median <"$WORK/pko")" "$(median <"$WORK/pkl")")
      printf '| %s | %s | %s | %.1f | %.1f | %s | %.1f | %.1f | %s | %.1f | %.1f | %s | %s / %s |\n' \
        "$name" "$path" "$t" "$c" "$of" "$(ratio "$of" "$c")" "$l8" "$o8" "$(ratio "$o8" "$l8")" \
        "$lk" "$ok" "$(ratio "$ok" "$lk")" "$p8" "$pk"
    done
  done
done
