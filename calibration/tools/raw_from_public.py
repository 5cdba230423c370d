#!/usr/bin/env python3
"""Builds an llmsim calibration raw file for the A100 80GB SXM from *public* measurements.

No run of our CUDA programs produced it: every record is converted from a figure transcribed in
../shared/reference (Vidur's measured A100 operator and NCCL timings; the BabelStream, nvbandwidth,
FlashAttention-2 and RRZE launch figures of gpus-and-efficiency.md Part B; Vidur's A100 decode-attention
timings, transcribed below) and says where it came from
in its "origin" field. Times are those reported, or bytes/flops divided by the reported rate where the
source gives a rate.

usage: /usr/bin/python3 calibration/tools/raw_from_public.py [--reference DIR] [-o OUT.json]
"""
import argparse
import json
import os
import re
import sys

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_REF = os.path.normpath(os.path.join(ROOT, "..", "shared", "reference"))
DEFAULT_OUT = os.path.join(ROOT, "data", "profiles", "raw", "a100-80gb-sxm-public.json")

# The calibration M grid (calibration/bench/gemm.cu); Vidur's token counts are subsampled to it.
M_GRID = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
# Vidur models: (path, hidden, heads, kv_heads, ffn). head_dim = hidden / heads; MLPs are gated.
VIDUR_MODELS = [
    ("meta-llama/Llama-2-7b-hf", 4096, 32, 32, 11008),
    ("meta-llama/Meta-Llama-3-8B", 4096, 32, 8, 14336),
    ("codellama/CodeLlama-34b-Instruct-hf", 8192, 64, 8, 22016),
    ("meta-llama/Meta-Llama-3-70B", 8192, 64, 8, 28672),
]
VIDUR_COMMIT = "microsoft/vidur@7d47513"
BABEL_ARRAY_BYTES = 2**25 * 8  # BabelStream's default: 2^25 doubles per array


def die(msg):
    sys.exit("raw_from_public: " + msg)


def find(pattern, text, what):
    m = re.search(pattern, text)
    if not m:
        die("could not find %s in gpus-and-efficiency.md (pattern %r)" % (what, pattern))
    return m


def gemm_records(ref):
    recs = []
    for path, hidden, heads, kv_heads, ffn in VIDUR_MODELS:
        csv = os.path.join(ref, "vidur", "profiling", "compute", "a100", path, "mlp.csv")
        df = pd.read_csv(csv)
        hd = hidden // heads
        for tp in sorted(int(x) for x in df.num_tensor_parallel_workers.unique()):
            ops = {  # op -> (N, K) per GPU under tensor parallelism tp
                "attn_pre_proj": ((heads + 2 * kv_heads) * hd // tp, hidden),
                "attn_post_proj": (hidden, heads * hd // tp),
                "mlp_up_proj": (2 * ffn // tp, hidden),
                "mlp_down_proj": (hidden, ffn // tp),
            }
            sub = df[df.num_tensor_parallel_workers == tp]
            for m in M_GRID:
                rows = sub[sub.num_tokens == m]
                if rows.empty:
                    continue
                for op, (n, k) in ops.items():
                    t_ms = float(rows["time_stats.%s.median" % op].median())
                    if t_ms <= 0:
                        continue
                    recs.append({
                        "test": "gemm", "dtype": "fp16", "shape": "%s.%s.tp%d" % (path.split("/")[1], op, tp),
                        "m": m, "n": n, "k": k, "flops": 2.0 * m * n * k,
                        "bytes": 2.0 * (n * k + m * k + m * n), "time_us_median": t_ms * 1e3,
                        "origin": "%s data/profiling/compute/a100/%s/mlp.csv, %s median (torch profiler kernel time)"
                                  % (VIDUR_COMMIT, path, op),
                    })
    return recs


def peer_records(ref):
    df = pd.read_csv(os.path.join(ref, "vidur", "profiling", "network", "a100_pairwise_nvlink", "send_recv.csv"))
    df = df[(df.num_workers == 2) & (df.devices_per_node == 2)].drop_duplicates("size")
    recs = []
    target = 2048
    for size, t_ms in zip(df["size"], df["time_stats.send_recv.median"]):
        if size < target:  # subsample to roughly ×2 steps
            continue
        target = size * 2
        recs.append({"test": "copy", "kind": "peer", "method": "nccl_send_recv", "bytes": float(size),
                     "time_us_median": float(t_ms) * 1e3,
                     "origin": VIDUR_COMMIT + " data/profiling/network/a100_pairwise_nvlink/send_recv.csv "
                               "(2 GPUs in one node over NVLink), median"})
    return recs


def part_b_records(ref):
    text = open(os.path.join(ref, "gpus-and-efficiency.md"), encoding="utf-8").read()
    recs = []
    m = find(r"\| A100 80GB SXM4 \(2039\) \| BabelStream copy / triad / dot \| ([\d.]+) / ([\d.]+) / ([\d.]+) \|",
             text, "the A100 80GB SXM4 BabelStream row")
    origin = "gpus-and-efficiency.md B1: BabelStream on A100 80GB SXM4 (Azure AI-benchmarking-guide, [S16]); " \
             "time = bytes / reported GB/s at BabelStream's default 2^25-double arrays"
    for kernel, arrays, gbps in (("copy", 2, m.group(1)), ("triad", 3, m.group(2)), ("read", 2, m.group(3))):
        b = arrays * BABEL_ARRAY_BYTES
        recs.append({"test": "mem_bw", "kernel": kernel, "suite_kernel": "dot" if kernel == "read" else kernel,
                     "bytes": b, "footprint_bytes": b, "time_us_median": b / (float(gbps) * 1e9) * 1e6,
                     "origin": origin})
    m = find(r"A100-80GB ≈ ([\d.]+) µs/kernel \(stream\) → ≈ ([\d.]+) µs \(CUDA Graph\)", text, "the RRZE launch figures")
    for mode, us in (("stream", m.group(1)), ("graph", m.group(2))):
        recs.append({"test": "launch", "mode": mode, "kernels": 10000, "time_us_median": 10000 * float(us),
                     "origin": "gpus-and-efficiency.md B6: RRZE gpu-small-kernels, 10,000 back-to-back kernels "
                               "(derived per-kernel time, [S15])"})
    m = find(r"\| A100 SXM4 host \| nvbandwidth H2D \| ([\d.]+) GB/s", text, "the A100 nvbandwidth H2D row")
    b = 512 * 2**20
    recs.append({"test": "copy", "kind": "h2d", "bytes": b, "time_us_median": b / (float(m.group(1)) * 1e9) * 1e6,
                 "origin": "gpus-and-efficiency.md B5: nvbandwidth H2D on A100 SXM4 ([S16]); time = 512 MiB "
                           "(nvbandwidth's default buffer) / reported GB/s"})
    m = find(r"\| FlashAttention-2 fwd \(hdim 64, b=2, s=8192\) \| A100 SXM4 80GB \| ([\d.]+) TF", text,
             "the FlashAttention-2 A100 row")
    seq, batch, hdim, heads = 8192, 2, 64, 32  # FA2's benchmark: model dim 2048 = 32 heads × 64
    flops = 4.0 * hdim * heads * batch * 0.5 * seq * (seq + 1)
    recs.append({"test": "attn_prefill", "impl": "flash_attention_2", "dtype": "fp16", "batch": batch, "seq": seq,
                 "heads": heads, "head_dim": hdim, "causal": True, "flops": flops,
                 "time_us_median": flops / (float(m.group(1)) * 1e12) * 1e6,
                 "origin": "gpus-and-efficiency.md B4: FlashAttention-2 forward on A100 SXM4 80GB ([S16]); time = "
                           "causal flops / reported TFLOPS (assumes the benchmark counted flops the same way)"})
    return recs


# Vidur's measured decode-attention kernel times on an A100 80GB SXM (FlashInfer backend, block size 16,
# Llama-3-8B: 32 query / 8 KV heads of 128, TP 1 and 4), median of 5 kineto timings, transcribed from
# data/profiling/compute/a100/meta-llama/Meta-Llama-3-8B/attention.csv of microsoft/vidur (the file is stored
# through Git LFS; read from its public copies, e.g. sw5sh/cs378-assignment3@7ac2fe9). It is not in
# ../shared/reference, hence the table. Rows: (TP, batch, cached tokens per sequence, time in ms).
VIDUR_A100_DECODE = [
    (4, 59, 16128, 0.744), (4, 64, 16128, 0.771), (4, 108, 16128, 1.073), (4, 109, 16128, 1.231),
    (4, 128, 16128, 1.329), (4, 144, 16128, 1.424),
    (4, 11, 384, 0.019), (4, 32, 384, 0.020), (4, 54, 384, 0.021), (4, 55, 384, 0.027), (4, 64, 384, 0.028),
    (4, 89, 384, 0.034),
    (1, 37, 3392, 0.312), (1, 40, 3392, 0.336), (1, 41, 3392, 0.413), (1, 64, 3392, 0.568), (1, 81, 3392, 0.666),
    (1, 82, 3392, 0.738), (1, 108, 3392, 0.887), (1, 112, 3392, 0.911),
]


def attention_decode_records():
    recs = []
    for tp, batch, cached, ms in VIDUR_A100_DECODE:
        heads, kv_heads, hd = 32 // tp, 8 // tp, 128
        tokens = batch * (cached + 1)  # the new token attends to itself
        kv_bytes = tokens * kv_heads * hd * 2 * 2
        qo_bytes = batch * heads * hd * 2 * 2
        recs.append({"test": "attn_decode", "impl": "flashinfer", "kv_dtype": "fp16", "batch": batch,
                     "context": cached + 1, "mean_context": cached + 1, "heads": heads, "kv_heads": kv_heads,
                     "head_dim": hd, "page_size": 16, "bytes": kv_bytes + qo_bytes, "time_us_median": ms * 1e3,
                     "origin": "Vidur A100 decode attention (FlashInfer), Meta-Llama-3-8B TP%d, %d sequences x %d "
                               "cached tokens (microsoft/vidur attention.csv, transcribed)" % (tp, batch, cached)})
    return recs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", default=DEFAULT_REF)
    ap.add_argument("-o", "--output", default=DEFAULT_OUT)
    args = ap.parse_args()
    if not os.path.isdir(args.reference):
        die("reference folder %s not found" % args.reference)
    measurements = (part_b_records(args.reference) + gemm_records(args.reference) + peer_records(args.reference) +
                    attention_decode_records())
    raw = {
        "format": "llmsim-calibration-raw",
        "version": 1,
        "gpu_id": "a100-80gb-sxm",
        "source": "converted from public measurements (Vidur A100 operator, decode-attention and NCCL profiles; BabelStream, "
                  "nvbandwidth, FlashAttention-2 and RRZE figures of gpus-and-efficiency.md), not a run of "
                  "llmsim's calibration programs",
        "date": "public sources (2023-2025)",
        "device": {"name": "NVIDIA A100-SXM4-80GB (public measurements)",
                   "note": "several machines and suites; no single driver or clock applies"},
        "measurement_count": len(measurements),
        "measurements": measurements,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("{\n")
        keys = [k for k in raw if k != "measurements"]
        for k in keys:
            f.write("  %s: %s,\n" % (json.dumps(k), json.dumps(raw[k], ensure_ascii=False)))
        f.write('  "measurements": [\n')
        f.write(",\n".join("    " + json.dumps(r, ensure_ascii=False) for r in measurements))
        f.write("\n  ]\n}\n")
    print("wrote %s (%d measurements)" % (args.output, len(measurements)))


if __name__ == "__main__":
    main()
