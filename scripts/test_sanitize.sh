#!/usr/bin/env bash
# Builds the C++ library and tests with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan and runs
# them; any sanitizer report fails the run (-fno-sanitize-recover, halt_on_error).
#   scripts/test_sanitize.sh [ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${ASAN_BUILD:-build-asan}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  # -O1 -g1: line tables for the reports' stack traces at a fraction of -O2 -g's build time (tests build at -O0).
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DLLMSIM_SANITIZE=ON -DLLMSIM_BUILD_PYTHON=OFF \
    -DLLMSIM_BUILD_CALIBRATION=OFF -DLLMSIM_BUILD_BENCH=OFF > "$BUILD.configure.log" 2>&1 \
    || { cat "$BUILD.configure.log"; exit 1; }
fi
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" -- --no-print-directory -s
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$BUILD" && ctest --output-on-failure -j "${JOBS:-$(nproc)}" "$@"
