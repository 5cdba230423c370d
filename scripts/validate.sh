#!/usr/bin/env bash
# The fidelity report (`make validate`): predictions against the public measurements in ../shared/reference
# and the calibration runs in data/, one row per measurement with its relative error and the median.
# The comparisons are the cost-model engineer's reference tests (tests/perf/test_reference.cpp: Vidur
# operator timings, llama.cpp single-stream F16 and GGUF rows, end-to-end vLLM/gpt-fast figures) plus the trust layer's
# calibration-data check (tests/trust/test_validate.cpp); each asserts its stated tolerance, so a regression
# fails this script. Without the reference folder the comparisons print a WARN and pass.
#   scripts/validate.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
[ -f "$BUILD/CMakeCache.txt" ] || cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release > "$BUILD.configure.log" 2>&1
cmake --build "$BUILD" --target test_perf test_trust -j "${JOBS:-$(nproc)}" -- --no-print-directory -s
status=0
# Catch2 v2 takes one test spec; commas separate the names.
"$BUILD/bin/test_perf" "per-operator times vs Vidur's A100/H100 profiles,single-stream decode and prefill vs llama.cpp measurements,GGUF Q4_K_M prefill and decode vs llama.cpp measurements,end-to-end batch-1..16 speeds of vLLM and gpt-fast from the reference notes" || status=1
"$BUILD/bin/test_trust" "[validate]" || status=1
[ $status -eq 0 ] && echo "validate: all comparisons within their stated tolerances" || echo "validate: REGRESSION (see above)"
exit $status
