#!/usr/bin/env bash
# Builds the C++ library, CLI and tests with AddressSanitizer + UndefinedBehaviorSanitizer in the sanitizer tree
# (scripts/san_tree.sh: clang, shared with `make fuzz`) and runs them; any sanitizer report fails the run
# (-fno-sanitize-recover, halt_on_error).
#   scripts/test_sanitize.sh [ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$(scripts/san_tree.sh)
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" -- --no-print-directory -s
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$BUILD" && ctest --output-on-failure -j "${JOBS:-$(nproc)}" "$@"
