#!/usr/bin/env bash
# The fidelity report (`make validate`, docs/trust.md "Fidelity against public measurements"): llmsim's
# predictions of every public measurement in data/validation (always) and in ../shared/reference (when present),
# one line per measurement and a grouped table — by batch size, context, TP, GPU, weight format, KV dtype, set,
# engine and metric — with n, median |error|, p90 |error| and signed median per group. It fails when a group with
# >= 10 points is biased by more than 5 % (signed median), when the engine rows' overall median / p90 exceed
# 10 % / 25 %, when a reference set leaves its stated tolerance, or when a calibration run in data/profiles/raw is
# not reproduced by its fitted profile (tests/trust/test_validate.cpp). Without ../shared/reference the
# reference comparisons print a WARN and pass.
#   scripts/validate.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
[ -f "$BUILD/CMakeCache.txt" ] || cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release > "$BUILD.configure.log" 2>&1
cmake --build "$BUILD" --target test_validation test_trust -j "${JOBS:-$(nproc)}" -- --no-print-directory -s
status=0
# Catch2 v2 takes one test spec; commas separate alternatives. "[validate]" is the hidden report itself.
"$BUILD/bin/test_validation" "[validation],[validate]" || status=1
"$BUILD/bin/test_trust" "[validate]" || status=1
[ $status -eq 0 ] && echo "validate: all comparisons within their stated bounds" || echo "validate: BOUNDS VIOLATED (see above)"
exit $status
