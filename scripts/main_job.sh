#!/usr/bin/env bash
# The main job (`make run`): for now the side-by-side memory table of DESIGN.md's worked example —
# llama-3.1-8b on each card option at fp16 and AWQ 4-bit, at an 8k context. Argument 1: the build dir.
set -euo pipefail
BUILD="${1:-build}"
LLMSIM="$BUILD/bin/llmsim"
PYTHON="${PYTHON:-/usr/bin/python3}"
MODEL="${MODEL:-llama-3.1-8b}"
MAX_LEN="${MAX_LEN:-8192}"
[ -x "$LLMSIM" ] || { echo "main_job: $LLMSIM not built (run make build)" >&2; exit 1; }

# option label | gpu | tensor parallel
options=(
  "rtx4090-24gb|rtx4090-24gb|1"
  "rtx4090-48gb|rtx4090-48gb|1"
  "2x rtx4090-24gb (tp 2)|rtx4090-24gb|2"
  "a100-80gb-pcie|a100-80gb-pcie|1"
  "a100-80gb-sxm|a100-80gb-sxm|1"
)
rows=()
for opt in "${options[@]}"; do
  IFS='|' read -r label gpu tp <<<"$opt"
  for quant in fp16 awq-int4; do
    json=$("$LLMSIM" memory --model "$MODEL" --gpu "$gpu" --tp "$tp" --quant "$quant" --max-model-len "$MAX_LEN" --json)
    rows+=("$label"$'\t'"$quant"$'\t'"$(tr -d '\n' <<<"$json")")
  done
done

echo "Memory per GPU: $MODEL, KV cache fp16, max_model_len $MAX_LEN, gpu_memory_utilization 0.90 (GB = 1e9 bytes)"
echo
printf '%s\n' "${rows[@]}" | "$PYTHON" -c '
import json, sys
rows = []
for line in sys.stdin:
    label, quant, text = line.rstrip("\n").split("\t", 2)
    rows.append((label, quant, json.loads(text)))
head = ["option", "weights", "fits", "weights GB", "act GB", "runtime GB", "KV GB", "KV tokens", "8k seqs", "margin GB"]
table = [head]
for label, quant, p in rows:
    g = p["per_gpu"]
    gb = lambda b: "%.2f" % (b / 1e9)
    table.append([label, quant, "yes" if p["fits"] else "NO", gb(g["weights_bytes"]), gb(g["activation_bytes"]),
                  gb(g["runtime_bytes"]), gb(g["kv_cache_bytes"]), str(p["kv_capacity_tokens"]),
                  str(p["max_concurrent_seqs"]), gb(g["free_bytes"])])
w = [max(len(r[i]) for r in table) for i in range(len(head))]
for n, r in enumerate(table):
    print("  ".join(c.ljust(w[i]) if i < 3 else c.rjust(w[i]) for i, c in enumerate(r)).rstrip())
    if n == 0:
        print("-" * (sum(w) + 2 * (len(w) - 1)))
notes = [(l, q, p["reason"]) for l, q, p in rows if not p["fits"]]
if notes:
    print()
    for l, q, reason in notes:
        print(f"{l} {q}: cannot run because {reason}")
'
