#!/usr/bin/env python3
"""Property test of the CLI over hostile numbers (issue 17): every scenario either runs (exit 0) or is refused
with exit 2 and a message that names a scenario field — never exit 3 ("a bug"), a signal, or a hang.

Two generators, both deterministic:
* boundary values: every numeric field of a set of scenario variants (each arrival process, each length
  distribution, tenant classes, synthetic service, prefix caching, an inline GPU spec and an inline HF model)
  set, one at a time, to each of 0, -0, tiny, denormal, smallest normal, 0.5, 1, -1, huge, 2^31, 2^53, 2^63,
  2^64, the largest double and the NaN-adjacent literals 1e999 / -1e999 (which JSON parses to infinities);
* hypothesis (derandomized, no database): 1 to 4 fields of one variant changed at once, to boundary values or
  arbitrary finite numbers.

    tests/trust/property_cli.py LLMSIM SOURCE_DIR [--random N] [--timeout S] [--jobs J]

Prints how many scenarios it tried and each failure; exits 1 if any run crashed, hung or gave an unnamed error.
"""
import argparse
import concurrent.futures
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INF_TOKEN = "__LLMSIM_POS_INF__"
NEG_INF_TOKEN = "__LLMSIM_NEG_INF__"

BOUNDARY = [0, -0.0, 5e-324, 2.2250738585072014e-308, 1e-300, 1e-9, 0.5, 1, -1, 2, 3, 1e9, 2**31 - 1, 2**31,
            2**53, 2**63 - 1, 2**63, 2**64, 1e15, 1e300, 1.7976931348623157e308, -1.7976931348623157e308,
            INF_TOKEN, NEG_INF_TOKEN]

# A message names a field when it starts with a dotted scenario path (or a CLI flag) followed by ':'.
NAMED = re.compile(r"error: (?:grid point \d+[^:]*: )?((?:model|quant|hardware|engine|workload|slo|cost|name)"
                   r"[\w.\[\]]*|--[\w-]+): ")


def base_scenario(tmp: Path) -> dict:
    return {
        "model": "llama-3.1-8b",
        "hardware": {"gpu": "a100-80gb-sxm", "tp": 1, "pp": 1, "replicas": 1, "price_per_gpu_hour": 2.0},
        "engine": {"max_num_seqs": 64, "max_num_batched_tokens": 4096, "max_model_len": 4096},
        "workload": {"arrival": {"process": "poisson", "rate": 4.0},
                     "input_tokens": {"dist": "lognormal", "mean": 300, "sigma": 0.5},
                     "output_tokens": {"dist": "lognormal", "mean": 40, "sigma": 0.5},
                     "num_requests": 40, "warmup_requests": 4, "horizon_s": 600, "seed": 5},
        "slo": {"ttft_ms": {"p95": 2000}, "tpot_ms": {"p95": 100}, "min_attainment": 0.9},
        "cost": {"target_qps": 2, "storage_per_month": 10, "network_per_month": 5, "ops_overhead_fraction": 0.1,
                 "spare_fraction": 0.2, "hours_per_month": 730, "network_gbps": 1},
    }


def variants(source: Path, tmp: Path) -> dict:
    base = base_scenario(tmp)
    trace = tmp / "trace.csv"
    trace.write_text("arrival_time_s,input_tokens,output_tokens\n0,100,10\n0.5,200,20\n1.5,50,5\n")
    out = {"base": base}

    def with_(name, edit):
        s = copy.deepcopy(base)
        edit(s)
        out[name] = s

    w = lambda s: s["workload"]  # noqa: E731
    with_("gamma", lambda s: w(s).update(arrival={"process": "gamma", "rate": 4.0, "cv": 2.0}))
    with_("constant", lambda s: w(s).update(arrival={"process": "constant", "rate": 4.0}))
    with_("onoff", lambda s: w(s).update(arrival={"process": "onoff", "rate_on": 8.0, "on_s": 5.0, "off_s": 5.0,
                                                  "rate_off": 0.5}))
    with_("closed", lambda s: (w(s).update(arrival={"process": "closed", "concurrency": 4, "think_time_s": 0.5}),
                               s["cost"].pop("target_qps")))
    with_("trace", lambda s: w(s).update(arrival={"process": "trace", "path": str(trace), "time_scale": 1.0}))
    with_("fixed", lambda s: w(s).update(input_tokens={"dist": "fixed", "value": 256},
                                         output_tokens={"dist": "uniform", "min": 10, "max": 50}))
    with_("normal", lambda s: w(s).update(input_tokens={"dist": "normal", "mean": 300, "stddev": 50, "min": 10,
                                                        "max": 1000},
                                          output_tokens={"dist": "empirical", "values": [5, 10, 40]}))
    with_("prefix", lambda s: (w(s).update(prefix_tokens=64, prefix_groups=4),
                               s["engine"].update(enable_prefix_caching=True, swap_space_gb=1.0,
                                                  preemption="swap", watermark=0.02)))
    with_("classes", lambda s: w(s).update(classes=[
        {"name": "chat", "arrival": {"process": "poisson", "rate": 2.0}, "input_tokens": {"dist": "fixed", "value": 200},
         "output_tokens": {"dist": "fixed", "value": 20}, "slo": {"ttft_ms": {"p95": 1500}}, "prefix_tokens": 32,
         "prefix_groups": 2},
        {"name": "batch", "arrival": {"process": "poisson", "rate": 1.0}, "input_tokens": {"dist": "fixed", "value": 800},
         "output_tokens": {"dist": "fixed", "value": 80}}]))
    with_("synthetic", lambda s: s["engine"].update(synthetic_service={"kind": "lognormal", "mean_s": 0.2, "cv": 0.5}))
    with_("parallel", lambda s: (s["hardware"].update(tp=2, replicas=2), s["engine"].update(cpu_offload_gb=1.0)))
    gpu = json.loads((source / "data" / "gpus" / "rtx4090-24gb.json").read_text())
    with_("inline_gpu", lambda s: s["hardware"].update(gpu=gpu))
    model = json.loads((source / "data" / "models" / "llama-3.1-8b.json").read_text())
    with_("inline_model", lambda s: s.update(model=model))
    return out


def numeric_fields(doc, path=()):
    """Paths (tuples of keys/indices) of every number (not bool) in a JSON document."""
    if isinstance(doc, bool):
        return []
    if isinstance(doc, (int, float)):
        return [path]
    if isinstance(doc, dict):
        return [p for k, v in doc.items() for p in numeric_fields(v, path + (k,))]
    if isinstance(doc, list):
        return [p for i, v in enumerate(doc[:2]) for p in numeric_fields(v, path + (i,))]
    return []


def lookup(doc, path):
    """The value at `path`, or a marker when the path does not exist in `doc`."""
    for k in path:
        try:
            doc = doc[k]
        except (KeyError, IndexError, TypeError):
            return lookup
    return doc


def dotted(path) -> str:
    out = ""
    for k in path:
        out += f"[{k}]" if isinstance(k, int) else (("." if out else "") + k)
    return out


def with_values(scenario: dict, changes) -> str:
    s = copy.deepcopy(scenario)
    for path, value in changes:
        node = s
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
    text = json.dumps(s)
    return text.replace(f'"{INF_TOKEN}"', "1e999").replace(f'"{NEG_INF_TOKEN}"', "-1e999")


class Runner:
    def __init__(self, llmsim: str, tmp: Path, timeout: float):
        self.llmsim, self.tmp, self.timeout = llmsim, tmp, timeout
        self.counter = 0

    def run(self, text: str):
        self.counter += 1
        f = self.tmp / f"s{self.counter}-{os.getpid()}-{time.monotonic_ns()}.json"
        f.write_text(text)
        try:
            p = subprocess.run([self.llmsim, "simulate", "--scenario", str(f), "--json"], capture_output=True,
                               timeout=self.timeout)
            return p.returncode, p.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            return "timeout", ""
        finally:
            f.unlink(missing_ok=True)


def verdict(code, stderr: str, varied):
    """None when the run behaved; else the problem."""
    if code == "timeout":
        return "hang (timeout)"
    if code < 0:
        return f"killed by signal {-code}"
    if code == 0:
        return None
    if code != 2:
        return f"exit {code}: {stderr.strip()[:300]}"
    if not NAMED.search(stderr):
        return f"exit 2 without a named field: {stderr.strip()[:300]}"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("llmsim")
    ap.add_argument("source")
    ap.add_argument("--random", type=int, default=300, help="hypothesis examples (default 300)")
    ap.add_argument("--timeout", type=float, default=30, help="seconds one run may take (default 30)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    source = Path(args.source)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="llmsim-property-") as d:
        tmp = Path(d)
        runner = Runner(args.llmsim, tmp, args.timeout)
        cases = []  # (variant name, [(path, value), ...])
        fields_total = 0
        scenarios = variants(source, tmp)
        for name, scenario in scenarios.items():
            # The base's fields once; each variant only the fields it adds or changes.
            fields = [p for p in numeric_fields(scenario)
                      if name == "base" or lookup(scenarios["base"], p) != lookup(scenario, p)]
            fields_total += len(fields)
            cases += [(name, [(p, v)]) for p in fields for v in BOUNDARY]
        failures, codes, named_varied = [], {}, 0

        def check(case):
            name, changes = case
            code, err = runner.run(with_values(scenarios[name], changes))
            return case, code, err

        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for (name, changes), code, err in pool.map(check, cases):
                codes[code] = codes.get(code, 0) + 1
                problem = verdict(code, err, changes)
                if problem:
                    failures.append((name, changes, problem))
                elif code == 2 and dotted(changes[0][0]) in err:
                    named_varied += 1
        boundary = len(cases)

        random_tried = 0
        if args.random > 0:
            try:
                from hypothesis import HealthCheck, given, settings, strategies as st
            except ImportError:
                print("property test: python3-hypothesis is missing (scripts/setup.sh installs it)")
                return 1

            names = sorted(scenarios)
            value = st.one_of(st.sampled_from(BOUNDARY), st.floats(allow_nan=False, allow_infinity=False),
                              st.integers(min_value=-2**70, max_value=2**70))

            @st.composite
            def case(draw):
                name = draw(st.sampled_from(names))
                fields = numeric_fields(scenarios[name])
                picked = draw(st.lists(st.sampled_from(fields), min_size=1, max_size=4, unique=True))
                return name, [(p, draw(value)) for p in picked]

            @settings(max_examples=args.random, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck), print_blob=False)
            @given(case())
            def random_case(c):
                nonlocal random_tried
                random_tried += 1
                (name, changes), code, err = check(c)
                codes[code] = codes.get(code, 0) + 1
                problem = verdict(code, err, changes)
                if problem:
                    failures.append((name, changes, problem))

            random_case()

    elapsed = time.monotonic() - started
    summary = ", ".join(f"exit {k}: {v}" for k, v in sorted(codes.items(), key=lambda kv: str(kv[0])))
    print(f"property test: tried {boundary + random_tried} scenarios in {elapsed:.0f} s — {boundary} boundary values "
          f"over {fields_total} numeric fields of {len(scenarios)} variants, {random_tried} random combinations "
          f"(hypothesis); {summary}; {named_varied} refusals named the varied field itself")
    for name, changes, problem in failures:
        what = ", ".join(f"{dotted(p)}={v}" for p, v in changes)
        print(f"FAIL [{name}] {what}: {problem}")
    if failures:
        print(f"property test: {len(failures)} of {boundary + random_tried} scenarios misbehaved")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
