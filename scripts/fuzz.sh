#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ in the sanitizer tree (scripts/san_tree.sh: clang, ASan + UBSan, shared
# with `make test-sanitize`) and runs each for the given number of seconds (default 60) on a scratch copy of its
# committed seed corpus (fuzz/corpus/<harness>/), JOBS harnesses at a time (default: one per core; each is one
# single-threaded process, so each still gets its seconds of a whole core).
# Fails on any crash, sanitizer report, leak or timeout; prints executions per harness.
#   scripts/fuzz.sh [seconds] [harness...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
JOBS=${JOBS:-$(nproc)}
HARNESSES=("$@")
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=(scenario hf_config gpu_spec trace csv sweep_journal calibration_raw profile cli vllm)

BUILD=$(scripts/san_tree.sh)
targets=()
for h in "${HARNESSES[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$BUILD" --target "${targets[@]}" -j "$JOBS" -- --no-print-directory -s

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fuzz_one() {  # fuzz_one <harness>: runs it, leaves ok/FAILED in $work/<harness>.result
  local h=$1
  mkdir -p "$work/$h" "$work/$h-artifacts"
  cp -r "fuzz/corpus/$h/." "$work/$h/"
  # -close_fd_mask=3: the CLI harness prints tables and usage; -timeout: one input taking >10 s is a hang.
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$BUILD/bin/fuzz_$h" "$work/$h" \
       -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -close_fd_mask=3 \
       -artifact_prefix="$work/$h-artifacts/" -print_final_stats=1 > "$work/$h.log" 2>&1; then
    echo ok > "$work/$h.result"
  else
    echo FAILED > "$work/$h.result"
  fi
}
running=0
for h in "${HARNESSES[@]}"; do
  if [ "$running" -ge "$JOBS" ]; then wait -n || true; running=$((running - 1)); fi
  fuzz_one "$h" &
  running=$((running + 1))
done
wait

status=0
printf '%-16s %12s %8s %s\n' harness executions exec/s result
for h in "${HARNESSES[@]}"; do
  log="$work/$h.log"
  result=$(cat "$work/$h.result" 2>/dev/null || echo FAILED)
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  printf '%-16s %12s %8s %s\n' "$h" "$execs" "$rate" "$result"
  if [ "$result" = FAILED ]; then
    status=1
    grep -B2 -A30 -m1 'ERROR\|runtime error\|terminate\|deadly signal' "$log" || tail -40 "$log"
    mkdir -p fuzz-artifacts && cp -r "$work/$h-artifacts/." fuzz-artifacts/ 2>/dev/null || true
    echo "(crashing inputs copied to fuzz-artifacts/)"
  fi
done
exit $status
