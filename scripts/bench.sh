#!/usr/bin/env bash
# Runs every benchmark in bench/ (bench_engine, bench_capacity, bench_sweep, bench_day, bench_search, ...) and prints
# what it measured (not part of `make test`).
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
for b in "$build"/bin/bench_*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")"
  "$b"
done
if [ -f bench/bench_python_sweep.py ]; then
  echo "== bench_python_sweep.py"
  PYTHONPATH="$build/python" /usr/bin/python3 bench/bench_python_sweep.py
fi
