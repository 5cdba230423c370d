#!/usr/bin/env bash
# Every simulation output, byte for byte: run before and after a speed-only change and compare the two folders.
#   bench/identical_outputs.sh BUILD OUTDIR            writes one file per case into OUTDIR
#   bench/identical_outputs.sh --compare DIR_A DIR_B   exit 1 (and the differing cases) unless identical
# Cases: every example scenario through `llmsim simulate --json` (policies, TP/PP, replicas, quantization,
# preemption by recompute and swap, prefix caching, speculative decoding, timeouts, failures, autoscaling, daily
# profile, disaggregation) with per-request and per-iteration CSVs and a time series; a capacity search; a sweep; and
# `llmsim step` on varied models, GPUs, TP, formats and long contexts. Wall-clock fields are dropped.
set -euo pipefail

if [[ ${1:-} == --compare ]]; then
  a=$2 b=$3 bad=0
  for f in "$a"/*; do
    n=$(basename "$f")
    if ! cmp -s "$f" "$b/$n"; then echo "DIFFERS: $n"; bad=1; fi
  done
  [[ $(ls "$a" | wc -l) == $(ls "$b" | wc -l) ]] || { echo "DIFFERS: case count"; bad=1; }
  [[ $bad == 0 ]] && echo "identical: $(ls "$a" | wc -l) cases"
  exit $bad
fi

build=${1:?usage: $0 BUILD OUTDIR}
out=${2:?usage: $0 BUILD OUTDIR}
cli=$(cd "$build" && pwd)/bin/llmsim
root=$(cd "$(dirname "$0")/.." && pwd)
sc=$root/examples/scenarios
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

strip_wall() { grep -v -E '"(wall|elapsed|cpu)[a-z_]*"' || true; }

# simulate NAME SCENARIO [ARGS...]: the summary JSON, the two CSVs and the time series, into one file.
simulate() {
  local name=$1 file=$2
  shift 2
  {
    "$cli" simulate "$file" --json --time-series 0 --requests-csv "$tmp/r.csv" --iterations-csv "$tmp/i.csv" "$@" 2>&1 |
      strip_wall
    echo "--- requests.csv"
    cat "$tmp/r.csv" 2>/dev/null || true
    echo "--- iterations.csv"
    cat "$tmp/i.csv" 2>/dev/null || true
  } > "$out/sim_$name.txt"
  rm -f "$tmp/r.csv" "$tmp/i.csv"
}

for f in "$sc"/*.json; do
  n=$(basename "$f" .json)
  case $n in grid-*) continue ;; esac
  if [[ $n == month-autoscale ]]; then  # a day: summary only (the CSVs would be ~100 MB)
    "$cli" simulate "$f" --json 2>&1 | strip_wall > "$out/sim_$n.txt"
  else
    simulate "$n" "$f"
  fi
done

chat=$sc/chat-8b.json
small="--gpu rtx4090-24gb --set engine.max_model_len=4096 --set engine.max_num_seqs=256 --set engine.gpu_memory_utilization=0.8"
simulate v0-swap "$chat" $small --set engine.policy=vllm-v0 --set engine.preemption=swap --rate 3
simulate v0-recompute "$chat" $small --set engine.policy=vllm-v0 --rate 4
simulate chunked "$chat" --set engine.policy=chunked --set engine.max_num_batched_tokens=1024 --rate 8
simulate chunked-swap "$chat" $small --set engine.policy=chunked --set engine.preemption=swap --rate 4
simulate static "$chat" --set engine.policy=static --set engine.max_num_seqs=32 --rate 3
simulate v1-preempt "$chat" $small --rate 3
simulate v1-preempt-overload "$chat" $small --rate 6
simulate v1-prefix "$chat" --set workload.prefix_tokens=512 --set workload.prefix_groups=4 --rate 6
simulate v1-gamma-tp2 "$chat" --set 'workload.arrival={"process":"gamma","rate":9,"cv":3}' --set hardware.tp=2
simulate v1-pp2 "$chat" --set hardware.pp=2 --rate 8
simulate v1-replicas "$chat" --set hardware.replicas=3 --set hardware.router=least_outstanding --rate 14
simulate v1-closed "$chat" --set 'workload.arrival={"process":"closed","concurrency":64,"think_time_s":1}'
simulate v1-timeout "$chat" --set workload.timeout_s=5 --rate 12
simulate v1-failures "$chat" --set hardware.replicas=2 --set 'failures={"outages":[[60,30,0]]}' --rate 8
simulate v1-4090-awq "$chat" --gpu rtx4090-24gb --quant awq-int4 --set engine.max_model_len=4096 --rate 3
simulate v1-2x4090 "$chat" --gpu 2xrtx4090-24gb --set engine.max_model_len=4096 --rate 3
simulate v1-70b-h100 "$chat" --set model=llama-3.1-70b --gpu h100-80gb-sxm --set hardware.tp=4 --quant fp8 --rate 4
simulate v1-moe "$chat" --set model=mixtral-8x7b --gpu a100-80gb-sxm --set hardware.tp=2 --rate 3
simulate v1-fp8kv "$chat" --set quant.kv_cache=fp8 --gpu h100-80gb-sxm --rate 10
simulate v1-long "$chat" --set engine.max_model_len=32768 \
  --set 'workload.input_tokens={"dist":"lognormal","mean":12000,"sigma":0.6}' --rate 0.6 --num-requests 300
simulate v1-eager "$chat" --set engine.cuda_graphs=false --rate 5
simulate v1-spec-draft "$chat" --set 'engine.speculative={"method":"draft","draft_model":"llama-3.2-1b","num_speculative_tokens":4}' --rate 5
simulate v1-mixed-classes "$chat" --set 'workload.classes=[{"name":"a","arrival":{"process":"poisson","rate":3}},{"name":"b","arrival":{"process":"poisson","rate":2},"input_tokens":{"dist":"fixed","value":4000},"output_tokens":{"dist":"uniform","min":10,"max":600}}]'
simulate synthetic "$chat" --set 'engine.synthetic_service={"kind":"lognormal","mean_s":0.2,"cv":1.5}' --rate 4

"$cli" capacity "$chat" --json --replications 2 --requests 400 2>&1 | strip_wall > "$out/capacity_chat.txt"
"$cli" throughput --help > /dev/null 2>&1 && "$cli" throughput "$chat" --json 2>&1 | strip_wall > "$out/throughput_chat.txt" || true
(cd "$sc" && "$cli" sweep grid-engine-knobs.json --json --jobs 1 2>&1 | strip_wall) > "$out/sweep_knobs.txt"

# step: the cost model alone (--json carries every op's time).
i=0
while read -r args; do
  [[ -z $args ]] && continue
  "$cli" step $args --json > "$out/step_$(printf %02d $i).txt" 2>&1 || true
  i=$((i + 1))
done <<'EOF'
--model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 1 --context 100
--model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 64 --context 2000 --prefill-tokens 512 --prefill-context 0
--model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 64 --context 7000
--model llama-3.1-8b --gpu rtx4090-24gb --quant awq-int4 --decode-seqs 16 --context 1500
--model llama-3.1-8b --gpu rtx4090-24gb --quant gguf-q4_k_m --decode-seqs 1 --context 4000
--model llama-3.1-8b --gpu 2xrtx4090-24gb --decode-seqs 32 --context 1000
--model llama-3.1-8b --gpu h100-80gb-sxm --quant fp8 --kv-dtype fp8 --decode-seqs 32 --context 30000
--model llama-3.1-8b --gpu a100-80gb-sxm --prefill-tokens 8192 --prefill-context 100000
--model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 3 --context 120000 --engine vllm-v0
--model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 8 --context 3000 --engine vllm-v0-paged
--model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 24 --context 3000 --engine lmdeploy-turbomind
--model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 4 --context 3000 --engine llama.cpp
--model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 4 --context 3000 --engine sglang --eager
--model llama-3.1-70b --gpu h100-80gb-sxm --tp 4 --quant fp8 --decode-seqs 48 --context 4000 --prefill-tokens 1024
--model llama-3.1-70b --gpu a100-80gb-sxm --tp 4 --pp 2 --decode-seqs 100 --context 9000
--model llama-3.1-70b --gpu 2xa100-80gb-pcie+nvlink --decode-seqs 12 --context 2000
--model mixtral-8x7b --gpu rtx4090-24gb --tp 2 --quant awq-int4 --decode-seqs 20 --context 2500
--model deepseek-v3 --gpu h200-141gb-sxm --tp 8 --quant fp8 --decode-seqs 32 --context 16000 --prefill-tokens 2048
--model gemma-3-27b --gpu h100-80gb-sxm --decode-seqs 1 --context 30000
--model qwen2.5-7b --gpu a100-40gb-pcie --quant int8 --decode-seqs 100 --context 5000
--model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 16 --context 2000 --speculative draft --draft-model llama-3.2-1b --num-speculative-tokens 4
--model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 16 --context 2000 --speculative eagle --num-speculative-tokens 3
--model llama-3.1-8b --gpu rtx4090-24gb --cpu-offload-gb 6 --decode-seqs 4 --context 1000
--model llama-3.1-8b --gpu a100-80gb-sxm:mig-3g.40gb --decode-seqs 12 --context 1000
EOF
echo "wrote $(ls "$out" | wc -l) cases to $out"
