#!/usr/bin/env bash
# Runs every calibration program on one GPU (a few minutes) and writes one raw-results file:
#   calibration/run_all.sh BUILD_DIR GPU_ID [OUT.json] [--quick]
# GPU_ID is the llmsim catalogue id of the card (e.g. h200-141gb-sxm, rtx4090-48gb); the efficiencies are
# fitted relative to that entry's datasheet peaks by `llmsim calibrate-fit OUT.json -o profile.json`.
# Without a GPU it stops with a clear message (exit 3).
set -euo pipefail
usage() { echo "usage: $0 BUILD_DIR GPU_ID [OUT.json] [--quick]" >&2; exit 2; }
quick=""; args=()
for a in "$@"; do
  if [ "$a" = "--quick" ]; then quick="--quick"; else args+=("$a"); fi
done
[ ${#args[@]} -ge 2 ] && [ ${#args[@]} -le 3 ] || usage
build=${args[0]}; gpu_id=${args[1]}; out=${args[2]:-calibration-raw-$gpu_id.json}
bin=$build/calibration
for p in mem_bw gemm attention launch copy; do
  [ -x "$bin/calib_$p" ] || { echo "run_all.sh: $bin/calib_$p not built (cmake --build $build --target calibration_programs)" >&2; exit 2; }
done
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "run_all.sh: no NVIDIA GPU found (nvidia-smi -L failed); calibration must run on the card to profile" >&2
  exit 3
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
smi() { nvidia-smi --query-gpu="$1" --format=csv,noheader,nounits -i "${CALIB_DEVICE:-0}" 2>/dev/null | head -1 | sed 's/^ *//;s/ *$//'; }
# Machine state before the run (clocks and power are sampled again after it).
for f in name driver_version clocks.max.sm clocks.max.mem clocks.sm clocks.mem power.limit ecc.mode.current \
         pcie.link.gen.current pcie.link.width.current temperature.gpu; do
  echo "$f=$(smi "$f")" >> "$tmp/before.txt"
done
status=0
for p in mem_bw gemm attention launch copy; do
  echo "run_all.sh: running $p ..." >&2
  start=$(date +%s)
  if ! "$bin/calib_$p" $quick > "$tmp/$p.jsonl" 2> "$tmp/$p.err"; then
    rc=$?; cat "$tmp/$p.err" >&2
    [ $rc -eq 3 ] && { echo "run_all.sh: no usable CUDA device" >&2; exit 3; }
    echo "run_all.sh: $p failed (exit $rc); its records so far are kept" >&2; status=1
  fi
  echo "run_all.sh: $p took $(( $(date +%s) - start )) s" >&2
done
for f in clocks.sm clocks.mem power.draw temperature.gpu clocks_throttle_reasons.active; do
  echo "$f=$(smi "$f")" >> "$tmp/after.txt"
done
kv_json() {  # key=value lines -> JSON object of strings
  local first=1; printf '{'
  while IFS='=' read -r k v; do
    [ $first -eq 1 ] || printf ', '; first=0
    printf '"%s": "%s"' "$k" "$(printf '%s' "$v" | sed 's/["\\]/_/g')"
  done < "$1"
  printf '}'
}
# The first program's "device" line describes the card; measurements are every other line.
device_line=$(grep -h '"test":"device"' "$tmp"/mem_bw.jsonl | head -1)
grep -hv '"test":"device"' "$tmp"/*.jsonl > "$tmp/all.jsonl" || true
count=$(wc -l < "$tmp/all.jsonl")
name=$(smi name)
{
  printf '{\n  "format": "llmsim-calibration-raw",\n  "version": 1,\n'
  printf '  "gpu_id": "%s",\n' "$gpu_id"
  printf '  "source": "llmsim calibration/run_all.sh%s on %s",\n' "${quick:+ (quick)}" "$name"
  printf '  "date": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  printf '  "device": {"name": "%s", "cuda_device": %s,\n' "$name" "${device_line:-null}"
  printf '             "nvidia_smi_before": %s,\n' "$(kv_json "$tmp/before.txt")"
  printf '             "nvidia_smi_after": %s},\n' "$(kv_json "$tmp/after.txt")"
  printf '  "measurement_count": %d,\n  "measurements": [\n' "$count"
  sed '$!s/$/,/; s/^/    /' "$tmp/all.jsonl"
  printf '  ]\n}\n'
} > "$out"
echo "run_all.sh: wrote $out ($count records); next: llmsim calibrate-fit $out -o profile.json" >&2
exit $status
