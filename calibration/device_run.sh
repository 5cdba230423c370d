#!/usr/bin/env bash
# The one script a session with a GPU runs (issue 7's validation): build, calibrate, fit, and compare
# `llmsim step` (default and calibrated profile) with real PyTorch forward passes on the same card.
#   calibration/device_run.sh [GPU_ID] [--quick]      (GPU_ID default h200-141gb-sxm)
# Everything lands in ${OUT:-out/device}: raw results, the fitted profile, the fit report, forward-pass
# timings and the error table (also printed). Commit raw + profile as data/profiles/{raw/,}GPU_ID.json.
set -euo pipefail
gpu_id=h200-141gb-sxm; quick=""
for a in "$@"; do if [ "$a" = "--quick" ]; then quick="--quick"; else gpu_id=$a; fi; done
out=${OUT:-out/device}; mkdir -p "$out"
build=${BUILD:-build-device}
model=${MODEL:-llama-3.1-8b}
PY=${PYTHON:-python3}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DLLMSIM_BUILD_PYTHON=OFF -DLLMSIM_BUILD_BENCH=OFF \
      -DLLMSIM_BUILD_TESTS=OFF -DLLMSIM_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 || { cat "$out/configure.log"; exit 1; }
cmake --build "$build" --target llmsim_cli calibration_programs -j "$(nproc)" > "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
time calibration/run_all.sh "$build" "$gpu_id" "$out/raw-$gpu_id.json" $quick
"$build/bin/llmsim" calibrate-fit "$out/raw-$gpu_id.json" -o "$out/$gpu_id.json" --report "$out/fit-report.json" | tee "$out/fit.txt"
$PY calibration/tools/torch_forward.py "data/models/$model.json" $quick | tee "$out/forward.jsonl"
# Predictions: the same batch shapes through `llmsim step` with the default and the calibrated profile.
$PY - "$build/bin/llmsim" "$model" "$gpu_id" "$out/$gpu_id.json" "$out/forward.jsonl" <<'PYEOF' | tee "$out/errors.md"
import json, statistics, subprocess, sys
cli, model, gpu, prof, fwd = sys.argv[1:6]
def step(extra, row):
    args = [cli, "step", "--model", model, "--gpu", gpu, "--quant", "bf16", "--json"] + extra
    if row["kind"] == "prefill":
        args += ["--prefill-tokens", str(row["tokens"])]  # one prompt (torch_forward.py times batch 1)
    else:
        args += ["--decode-seqs", str(row["batch"]), "--context", str(row["context"])]
    r = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return r["time_ms"]
rows = [json.loads(l) for l in open(fwd) if l.strip()]
errs = {"default": [], "calibrated": []}
print("| kind | batch | tokens/context | measured ms | default ms | err | calibrated ms | err |")
print("|---|---|---|---|---|---|---|---|")
for row in rows:
    d, c = step([], row), step(["--gpu-profile", prof], row)
    m = row["time_ms_median"]
    ed, ec = (d - m) / m, (c - m) / m
    errs["default"].append(abs(ed)); errs["calibrated"].append(abs(ec))
    print(f"| {row['kind']} | {row['batch']} | {row.get('tokens', row.get('context'))} | {m:.2f} | {d:.2f} | {ed:+.1%} | {c:.2f} | {ec:+.1%} |")
print()
print(f"median |error|: default {statistics.median(errs['default']):.1%}, calibrated {statistics.median(errs['calibrated']):.1%}")
PYEOF
