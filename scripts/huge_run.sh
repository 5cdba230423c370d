#!/usr/bin/env bash
# Huge runs (issue 8): 10^7 requests with records off must finish promptly in bounded memory. Prints wall time
# and peak RSS of `llmsim simulate` on the synthetic M/M/4 queue and on the full engine (chunked prefill, one
# A100, llama-3.1-8b). Fails when a run errors, is unstable, or peaks above MAX_RSS_MB (default 256).
#   scripts/huge_run.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MAX_RSS_MB=${MAX_RSS_MB:-256}
cmake --build "$BUILD" --target llmsim_cli -j "${JOBS:-$(nproc)}" -- --no-print-directory -s
for s in huge_synthetic huge_engine; do
  out=$(/usr/bin/time -f "TIME %e %M" "$BUILD/bin/llmsim" simulate --scenario "tests/trust/scenarios/$s.json" --json 2>&1)
  read -r wall rss_kb < <(echo "$out" | awk '/^TIME/ {print $2, $3}')
  done_n=$(echo "$out" | grep -o '"completed_requests": [0-9]*' | grep -o '[0-9]*$')
  unstable=$(echo "$out" | grep -o '"unstable": [a-z]*' | awk '{print $2}')
  echo "$s: $done_n requests completed in ${wall} s, peak RSS $((rss_kb / 1024)) MB, unstable=$unstable"
  [ "$unstable" = false ] && [ $((rss_kb / 1024)) -le "$MAX_RSS_MB" ] || { echo "huge_run: $s FAILED"; exit 1; }
done
