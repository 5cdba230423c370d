#!/usr/bin/env python3
"""ShareGPT lengths as the benchmark client measured them vs llmsim's draw at the same means (issue 27).

    scripts/sharegpt_lengths.py build [FILE ...]

For each `vllm bench serve --save-result` / benchmark_serving.py file that lists `input_lens` and `output_lens`
(default: the two LambdaLabs 1,280-prompt ShareGPT runs in tests/data/vllm_results, Llama-3 and Mistral v0.3
tokenizers), prints

* the quantiles of the prompt and output lengths, their spread and prompt-output correlation, the share of outputs
  under the client's 4-token filter (the model stopped before the reference reply: no ignore_eos) - measured, and
  for llmsim's draw at the file's mean lengths (the requests `llmsim check` simulates for the same file without its
  lists: spec/dataset_lengths.cpp, read back through `check --scenario-out`, so the rule stays in C++);
* the simulated burst (all requests at t = 0, H100 SXM, vLLM V1 defaults, `--max-model-len 2048`) with the measured
  lengths and with the drawn ones: duration, output throughput, mean TTFT, mean and p99 TPOT.

Nothing here is fitted; the files are development sources (not the blind corpus).
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = [ROOT / "tests/data/vllm_results/lambdalabs-h100-llama3-8b-np1280.json",
           ROOT / "tests/data/vllm_results/lambdalabs-h100-mistral7b-v0.3-np1280.json"]
MODELS = {"llama": "llama-3.1-8b", "mistral": "mistral-7b"}
QS = [10, 25, 50, 75, 90, 95, 99, 99.9, 100]


def scenario(cli, run, model, tmp, name):
    path, out = Path(tmp) / f"{name}.json", Path(tmp) / f"{name}.scenario.json"
    path.write_text(json.dumps(run))
    subprocess.run([cli, "check", str(path), "--gpu", "h100-80gb-sxm", "--model", model, "--vllm-args",
                    "vllm serve m --max-model-len 2048", "--scenario-out", str(out)], check=True, capture_output=True)
    return out


def simulate(cli, scn):
    d = json.loads(subprocess.run([cli, "simulate", str(scn), "--json"], check=True, capture_output=True, text=True).stdout)
    return d


def describe(tag, i, o):
    rank = lambda x: np.argsort(np.argsort(x))
    print(f"  {tag:8s} prompt q{QS} {np.percentile(i, QS).round().astype(int).tolist()} sd {i.std():.0f}")
    print(f"  {tag:8s} output q{QS} {np.percentile(o, QS).round().astype(int).tolist()} sd {o.std():.0f} "
          f"(cv {o.std() / o.mean():.2f})")
    print(f"  {tag:8s} corr pearson {np.corrcoef(i, o)[0, 1]:+.2f} spearman {np.corrcoef(rank(i), rank(o))[0, 1]:+.2f}; "
          f"output < 4 tokens {np.mean(o < 4):.1%}; prompt > 900 {np.mean(i > 900):.1%}")


def main(argv):
    if not argv:
        sys.exit(__doc__)
    cli = str(Path(argv[0]) / "bin/llmsim")
    files = [Path(f) for f in argv[1:]] or DEFAULT
    for f in files:
        run = json.loads(f.read_text())
        model = next((m for k, m in MODELS.items() if k in run.get("model_id", "").lower()), "llama-3.1-8b")
        run["dataset_name"] = "sharegpt"
        i, o = np.array(run["input_lens"]), np.array(run["output_lens"])
        drawn_run = {k: v for k, v in run.items() if k not in ("input_lens", "output_lens")}
        with tempfile.TemporaryDirectory() as tmp:
            real = scenario(cli, run, model, tmp, "real")
            drawn = scenario(cli, drawn_run, model, tmp, "drawn")
            req = np.array(json.loads(drawn.read_text())["workload"]["arrival"]["requests"])
            print(f"== {f.name}: {len(i)} requests, means {i.mean():.1f} / {o.mean():.1f}, model {model}")
            describe("measured", i, o)
            describe("drawn", req[:, 1], req[:, 2])
            rows = {"measured": simulate(cli, real), "drawn": simulate(cli, drawn)}
        for tag, d in rows.items():
            print(f"  burst {tag:8s} duration {d['duration_s']:.2f} s, output {d['output_throughput']:.0f} tok/s, "
                  f"TTFT mean {d['mean_ttft_ms']:.0f} ms, TPOT mean {d['mean_tpot_ms']:.1f} / p99 {d['p99_tpot_ms']:.1f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
