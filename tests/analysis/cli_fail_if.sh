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
# Gates that used to pass vacuously (issue 17).
cat >"$tmp/mixed.json" <<JSON
{"base": "$src/examples/scenarios/chat-8b.json",
 "grid": {"workload.num_requests": [200], "workload.warmup_requests": [0],
          "workload.horizon_s": [1e6, 0.01]}}
JSON
expect 1 "--capacity fills max_qps, so a bound on it is checked" \
  "$llmsim" sweep -q --grid "$tmp/calm.json" --capacity --replications 1 --requests 200 --fail-if 'max_qps < 1000'
grep -q "max_qps < 1000 (got" "$tmp/err" || { echo "FAIL: the max_qps bound did not report the row's value"; fail=1; }
expect 0 "--capacity max_qps within a bound" \
  "$llmsim" sweep -q --grid "$tmp/calm.json" --capacity --replications 1 --requests 200 --fail-if 'max_qps < 0.001'
expect 2 "a bound on a field no row has (max_qps without --capacity)" \
  "$llmsim" sweep -q --grid "$tmp/calm.json" --fail-if 'max_qps < 1000'
grep -q "has no value in any row" "$tmp/err" || { echo "FAIL: no 'no value in any row' message"; fail=1; }
expect 2 "fits == maybe" "$llmsim" sweep -q --grid "$tmp/calm.json" --fail-if 'fits == maybe'
expect 2 "fits == FALSE" "$llmsim" sweep -q --grid "$tmp/calm.json" --fail-if 'fits == FALSE'
expect 1 "a point that completed nothing (10 ms horizon) violates a latency bound" \
  "$llmsim" sweep -q --grid "$tmp/mixed.json" --fail-if 'ttft_ms.p95 > 1e9'
grep -q "row 1 .*got no value" "$tmp/err" || { echo "FAIL: the empty row is not the one reported"; fail=1; }
grep -q "row 0" "$tmp/err" && { echo "FAIL: the calm row was reported"; fail=1; }
expect 0 "--allow-missing lets rows without the value pass" \
  "$llmsim" sweep -q --grid "$tmp/mixed.json" --fail-if 'ttft_ms.p95 > 1e9' --allow-missing
expect 0 "CSV output" "$llmsim" sweep -q --grid "$tmp/grid.json" --out "$tmp/rows.csv"
[ "$(wc -l <"$tmp/rows.csv")" -eq 3 ] || { echo "FAIL: expected a header and 2 rows in the CSV"; fail=1; }
head -1 "$tmp/rows.csv" | grep -q '^workload.num_requests,workload.warmup_requests,workload.arrival.rate,' ||
  { echo "FAIL: grid columns do not lead the CSV header"; fail=1; }
exit $fail
