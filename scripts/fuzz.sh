#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ in build-fuzz (clang, ASan + UBSan) and runs each for the given
# number of seconds (default 60) on a scratch copy of its committed seed corpus (fuzz/corpus/<harness>/).
# Fails on the first crash, sanitizer report, leak or timeout; prints executions per harness.
#   scripts/fuzz.sh [seconds] [harness...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
BUILD=${FUZZ_BUILD:-build-fuzz}
CXX_FUZZ=${CXX_FUZZ:-$(command -v clang++-14 || command -v clang++)}
HARNESSES=("$@")
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=(scenario hf_config gpu_spec trace csv sweep_journal calibration_raw profile cli vllm)

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  # -O1 (libFuzzer's recommended level) with line tables (fuzz/CMakeLists.txt): half the build time of -O2 -g.
  cmake -S fuzz -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" \
    -DCMAKE_CXX_COMPILER="$CXX_FUZZ" > "$BUILD.configure.log" 2>&1 \
    || { cat "$BUILD.configure.log"; exit 1; }
fi
targets=()
for h in "${HARNESSES[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$BUILD" --target "${targets[@]}" -j "${JOBS:-$(nproc)}" -- --no-print-directory -s

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
printf '%-16s %12s %8s %s\n' harness executions exec/s result
for h in "${HARNESSES[@]}"; do
  mkdir -p "$work/$h" "$work/$h-artifacts"
  cp -r "fuzz/corpus/$h/." "$work/$h/"
  log="$work/$h.log"
  # -close_fd_mask=3: the CLI harness prints tables and usage; -timeout: one input taking >10 s is a hang.
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$BUILD/bin/fuzz_$h" "$work/$h" \
       -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -close_fd_mask=3 \
       -artifact_prefix="$work/$h-artifacts/" -print_final_stats=1 > "$log" 2>&1; then
    result=ok
  else
    result=FAILED
    status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  printf '%-16s %12s %8s %s\n' "$h" "$execs" "$rate" "$result"
  if [ "$result" = FAILED ]; then
    grep -B2 -A30 -m1 'ERROR\|runtime error\|terminate\|deadly signal' "$log" || tail -40 "$log"
    mkdir -p fuzz-artifacts && cp -r "$work/$h-artifacts/." fuzz-artifacts/ 2>/dev/null || true
    echo "(crashing inputs copied to fuzz-artifacts/)"
  fi
done
exit $status
