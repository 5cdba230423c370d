#!/usr/bin/env bash
# `llmsim sweep --fail-if`: exit 1 exactly when a row violates a bound, 0 when none does, 2 for bad input.
set -u
llmsim=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {  # expect <status> <description> <command...>
  local want=$1 what=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; cat "$tmp/err"; fail=1
  else
    echo "ok: $what (exit $got)"
  fi
}
cat >"$tmp/grid.json" <<JSON
{"base": "$src/examples/scenarios/chat-8b.json",
 "grid": {"workload.num_requests": [300], "workload.warmup_requests": [30], "workload.arrival.rate": [1, 30]}}
JSON
cat >"$tmp/calm.json" <<JSON
{"base": "$src/examples/scenarios/chat-8b.json",
 "grid": {"workload.num_requests": [300], "workload.warmup_requests": [30], "workload.arrival.rate": [1]}}
JSON
echo '{"base": "x.json", "grid": {}}' >"$tmp/empty.json"
# 30 QPS overloads one A100 (TTFT in seconds); 1 QPS does not.
expect 1 "a violated bound" "$llmsim" sweep -q --grid "$tmp/grid.json" --fail-if 'ttft_ms.p95 > 2000'
grep -q "row 1" "$tmp/err" || { echo "FAIL: the violating row is not named"; fail=1; }
grep -q "row 0" "$tmp/err" && { echo "FAIL: a row within the bound was reported"; fail=1; }
expect 0 "a bound no row violates" "$llmsim" sweep -q --grid "$tmp/calm.json" --fail-if 'ttft_ms.p95 > 2000'
expect 0 "a loose bound" "$llmsim" sweep -q --grid "$tmp/grid.json" --fail-if 'ttft_ms.p95 > 1e12' --fail-if 'fits == false'
expect 1 "one of two bounds violated" "$llmsim" sweep -q --grid "$tmp/grid.json" --fail-if 'fits == false' --fail-if 'slo_met == false'
expect 2 "an unknown field" "$llmsim" sweep -q --grid "$tmp/grid.json" --fail-if 'ttft.p95 > 2000'
grep -q "ttft_ms.p95" "$tmp/err" || { echo "FAIL: the unknown-field error does not list valid fields"; fail=1; }
expect 2 "a malformed condition" "$llmsim" sweep -q --grid "$tmp/grid.json" --fail-if 'ttft_ms.p95 2000'
expect 2 "an empty grid" "$llmsim" sweep -q --grid "$tmp/empty.json"
grep -q "empty grid" "$tmp/err" || { echo "FAIL: no 'empty grid' message"; fail=1; }
expect 0 "CSV output" "$llmsim" sweep -q --grid "$tmp/grid.json" --out "$tmp/rows.csv"
[ "$(wc -l <"$tmp/rows.csv")" -eq 3 ] || { echo "FAIL: expected a header and 2 rows in the CSV"; fail=1; }
head -1 "$tmp/rows.csv" | grep -q '^workload.num_requests,workload.warmup_requests,workload.arrival.rate,' ||
  { echo "FAIL: grid columns do not lead the CSV header"; fail=1; }
exit $fail
