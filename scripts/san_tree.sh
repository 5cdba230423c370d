#!/usr/bin/env bash
# The sanitizer tree that `make test-sanitize` and `make fuzz` share (build-san): clang, -O1 -g1 (line tables for the
# reports' stack traces; the tests' own code at -O0, tests/CMakeLists.txt), ASan + UBSan with -fno-sanitize-recover,
# libFuzzer's coverage instrumentation on everything and the harnesses of fuzz/. One tree, so the library is compiled
# once for the sanitized tests and the fuzzers; the tests compile as unity batches (LLMSIM_UNITY_TESTS), the library
# one object per file (LLMSIM_UNITY=OFF: a missing #include that a unity batch would hide fails here).
# Prints the tree's path; configures it only when it is not configured yet.
#   BUILD=$(scripts/san_tree.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SAN_BUILD:-build-san}
CXX_SAN=${CXX_SAN:-$(command -v clang++-14 || command -v clang++ || true)}
[ -n "$CXX_SAN" ] || { echo "san_tree.sh: clang++ not found (scripts/setup.sh fuzz installs it)" >&2; exit 1; }
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_CXX_COMPILER="$CXX_SAN" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DLLMSIM_SANITIZE=ON -DLLMSIM_FUZZ=ON -DLLMSIM_UNITY_TESTS=ON -DLLMSIM_UNITY=OFF \
    -DLLMSIM_BUILD_PYTHON=OFF -DLLMSIM_BUILD_CALIBRATION=OFF -DLLMSIM_BUILD_BENCH=OFF > "$BUILD.configure.log" 2>&1 \
    || { cat "$BUILD.configure.log" >&2; rm -f "$BUILD/CMakeCache.txt"; exit 1; }
fi
echo "$BUILD"
