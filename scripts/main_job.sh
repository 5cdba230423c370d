#!/usr/bin/env bash
# The main job (`make run`): which card should serve llama-3.1-8b chat traffic (examples/scenarios/chat-8b.json:
# Poisson 4 QPS, P95 TTFT <= 2 s, P95 TPOT <= 100 ms) at the lowest cost? Prints the comparison table — $/Mtok and
# the monthly bill at that load first, the winner marked, owned cards beside rented ones — and writes
# out/compare.json, out/latency_vs_load*.csv, two PNG plots and out/report.html (the same comparison as one page to
# share: the answer, the options, the winner and why, costs and latency plots, placeholder prices flagged). Takes seconds.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
llmsim="$build/bin/llmsim"
[ -x "$llmsim" ] || { echo "main_job: $llmsim not built (run make build)" >&2; exit 1; }
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p out

# Owning instead of renting needs an electricity price, which depends on where the cards run: the example assumes
# 0.15 per kWh at PUE 1.5, placeholders for yours (set cost.electricity_per_kwh and cost.pue in your scenario).
# Purchase prices: the catalogue's (the 4090's launch MSRP); other cards have none unless --purchase-prices gives them.
/usr/bin/python3 -c '
import json
s = json.load(open("examples/scenarios/chat-8b.json"))
s.setdefault("cost", {}).update({"electricity_per_kwh": 0.15, "pue": 1.5, "depreciation_years": 3})
json.dump(s, open("out/chat-8b-owned.json", "w"), indent=2)
'
"$llmsim" compare --scenario out/chat-8b-owned.json \
  --gpus rtx4090-24gb,rtx4090-48gb,2xrtx4090-24gb,2xrtx4090-24gb@pp,a100-80gb-pcie,a100-80gb-sxm \
  --quants fp16,awq-int4 --jobs "$jobs" -q --out out/compare.json

# The same options as a self-contained HTML page for whoever decides (prints its headline sentence).
"$llmsim" report out/chat-8b-owned.json \
  --gpus rtx4090-24gb,rtx4090-48gb,2xrtx4090-24gb,2xrtx4090-24gb@pp,a100-80gb-pcie,a100-80gb-sxm \
  --quants fp16,awq-int4 --jobs "$jobs" -q -o out/report.html

# Latency against offered load for the same options (the second plot).
"$llmsim" sweep --grid examples/scenarios/grid-latency-vs-load.json --jobs "$jobs" -q --out out/latency_vs_load.csv
"$llmsim" sweep --grid examples/scenarios/grid-2xrtx4090.json --jobs "$jobs" -q --out out/latency_vs_load_2x.csv

PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/python3 scripts/plot_compare.py out/compare.json \
  out/latency_vs_load.csv out/latency_vs_load_2x.csv --scenario examples/scenarios/chat-8b.json --outdir out
