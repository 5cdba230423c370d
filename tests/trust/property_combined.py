#!/usr/bin/env python3
"""Property test of the engine where features meet (issue 29): hypothesis draws scenarios that combine prefix
caching × client timeouts × LoRA × several engines (replicas, pipeline parallel, a heterogeneous fleet) × an autoscaler ×
replica failures × a daily profile × disaggregation × sessions (multi-turn conversations) × scheduling policies, and
runs each through the CLI. Each run must:

* not crash: exit 0, or exit 2 naming a scenario field for a combination the engine refuses (never exit 3, a signal
  or a hang);
* conserve requests, measured and warm-up apart: offered.arrivals = rejected + completed + failed + timed out +
  unfinished, and the same for the `warmup` counts; the sum of both = the requests issued;
* conserve session turns: the per-turn table's completed and lost turns = the measured completed requests and the
  measured failed + timed out + rejected ones; finished + in-progress sessions >= the measured sessions started;
* bill what was simulated: `cost.period` = the GPU-hour price × GPUs per replica × `fleet.replica_hours`, over
  `cost.period_hours` = the run's end, and a fixed deployment (no autoscaler) holds every replica and hot spare
  the whole period; a heterogeneous fleet and a disaggregated pair bill each member's GPUs at its own price;
* record every request that entered (`--requests-csv`): one row each, the outcome counts equal to the summary's;
* leave no KV block in use when complete, and flag a run whose clients mostly timed out as unstable;
* give the same rows whatever `sweep --jobs` (every few examples: a two-seed sweep with 1 and 2 threads);
* give the same summary from Python's `llmsim.simulate` as from the CLI (every few examples, when `--python DIR`
  names the built module's directory);
* hold all of this where the last sessions' features meet the others: a vLLM release's own front (0.5.4, 0.6.3,
  0.11.0, some on the chat endpoint), an uneven `hardware.pp_layer_partition`, closed-loop clients that start apart;
* give the same run whether a setting is written by llmsim's field or by vLLM's name in `--set` (every few examples:
  `engine.kv_cache_dtype` / `quant.kv_cache`, `max_num_seqs` / `engine.max_num_seqs`; an alias under a section it
  maps out of once replaced that section, dropping the engine's max_model_len, LoRA and prefix caching).

    tests/trust/property_combined.py LLMSIM [--examples N] [--timeout S] [--python DIR]

Deterministic (derandomized, no database). Exits 1 and prints each failing scenario when one misbehaves.
"""
import argparse
import csv
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NAMED = re.compile(r"error: ((?:model|quant|hardware|engine|workload|slo|cost|autoscaler|failures|disaggregation)"
                   r"[\w.\[\]<>]*): ")


def build(d) -> dict:
    """A scenario from the drawn feature choices `d` (a dict)."""
    w = {"arrival": {"process": "poisson", "rate": d["rate"]},
         "input_tokens": {"dist": "lognormal", "mean": d["input"], "sigma": 0.6},
         "output_tokens": {"dist": "lognormal", "mean": d["output"], "sigma": 0.6},
         "num_requests": d["n"], "seed": d["seed"]}
    if d["warmup"] is not None:
        w["warmup_requests"] = d["warmup"]
    if d["prefix"] and not d["sessions"]:  # sessions share their system prompts instead
        w["prefix_tokens"], w["prefix_groups"] = d["prefix"]
    if d["timeout"]:
        w["timeout_s"] = d["timeout"]
    if d["sessions"]:
        # Conversations: the rate counts sessions; a short think time keeps the runs short.
        w["sessions"] = {"preset": d["sessions"], "think_time_ms": {"dist": "fixed", "value": 300},
                         "turns": {"dist": "fixed", "value": 3}}
        w["arrival"]["rate"] = d["rate"] / 3
    if d["daily"]:
        w["daily_profile"] = [0.5 + 0.1 * ((h * 7) % 11) for h in range(24)]
        w["days"] = 1
    s = {"model": "llama-3.1-8b", "workload": w,
         "engine": {"max_model_len": 8192, "policy": d["policy"]},
         "hardware": {"gpu": "a100-80gb-sxm", "price_per_gpu_hour": PRICE},
         "slo": {"ttft_ms": {"p95": 2000}, "tpot_ms": {"p95": 100}}}
    if d["lora"]:  # vLLM's LoRA slots and kernels (perf/lora_kernels.hpp): slots, rank, adapters the requests use
        slots, rank, adapters = d["lora"]
        s["engine"].update(enable_lora=True, max_loras=slots, max_lora_rank=rank)
        w["lora_adapters"] = adapters
    if d["policy"] == "vllm" and d["budget"]:
        s["engine"]["max_num_batched_tokens"] = d["budget"]
    layout = d["layout"]
    if layout == "replicas":
        s["hardware"]["replicas"] = d["replicas"]
        s["hardware"]["router"] = d["router"] if not d["sessions"] else "session_affinity"
    elif layout == "pp":
        s["hardware"]["gpu"] = "2xa100-80gb-sxm@pp"
    elif layout == "fleet":
        s["hardware"] = {"router": d["router"],
                         "fleet": [{"gpu": "rtx4090-24gb", "replicas": 1, "price_per_gpu_hour": PRICE_4090},
                                   {"gpu": "a100-80gb-sxm", "replicas": d["replicas"], "price_per_gpu_hour": PRICE}]}
    elif layout == "disagg":
        # Each pool its card and price (a pool reads no `hardware`: docs/disaggregation.md).
        pool = {"gpu": "a100-80gb-sxm", "price_per_gpu_hour": PRICE}
        del s["hardware"]  # hardware beside the pools is refused (docs/disaggregation.md)
        s["disaggregation"] = {"prefill": dict(pool, replicas=1), "decode": dict(pool, replicas=d["replicas"]),
                               "link": {"kind": "ethernet", "bandwidth_gbps": d["link_gbps"]},
                               "transfer": d["transfer"]}
    if d["autoscaler"] and layout != "disagg":
        s["autoscaler"] = {"min_replicas": 1, "max_replicas": 3, "queue_per_replica": 8,
                           "interval_s": d["autoscaler"], "scale_down_delay_s": 30, "scale_up_delay_s": 5}
    # The last sessions' features meet the others (attack11): a release's own front (vLLM before 0.6 tokenises on the
    # engine's loop, 0.6.0-0.6.4 on the API server's, 0.11 parses the chat template per request), an uneven
    # VLLM_PP_LAYER_PARTITION, and closed-loop clients that start apart (workload.arrival.start_offsets_s).
    if d["release"]:
        s["engine"]["runtime"] = d["release"]
        s["engine"].pop("policy")
        s["engine"].pop("max_num_batched_tokens", None)
        if d["chat"]:
            w["endpoint"] = "/v1/chat/completions"
    if layout == "pp" and d["split"]:
        s["hardware"]["pp_layer_partition"] = d["split"]
    if d["offsets"] and not d["sessions"] and not d["daily"]:
        w["arrival"] = {"process": "closed", "concurrency": 6, "start_offsets_s": d["offsets"]}
    if d["failures"] and layout != "disagg":
        mtbf_s, on_failure, retries = d["failures"]
        s["failures"] = {"mtbf_h": mtbf_s / 3600, "mttr_h": 5 / 3600, "on_failure": on_failure,
                         "max_retries": retries, "outages": [[2, 3, 0]]}
        if d["spares"]:
            s["failures"]["spares"] = 1
    return s


PRICE = 2.0  # per GPU-hour of an A100, every layout
PRICE_4090 = 0.5  # per GPU-hour of the fleet's RTX 4090
GPUS_PER_REPLICA = {"single": 1, "replicas": 1, "pp": 2}


def held_price_per_hour(scenario: dict, layout: str):
    """(price per hour, replicas held) of a fleet or disaggregated deployment with no autoscaler, from its members' or
    pools' own cards and prices; None for the other layouts."""
    if "autoscaler" in scenario:
        return None
    if layout == "fleet":
        members = scenario["hardware"]["fleet"]
    elif layout == "disagg":
        members = [scenario["disaggregation"]["prefill"], scenario["disaggregation"]["decode"]]
    else:
        return None
    return (sum(m["price_per_gpu_hour"] * m["replicas"] for m in members), sum(m["replicas"] for m in members))

REFUSED = {}  # field named by a refusal -> count (printed: how much of the draw ran)
RAN = {"sessions": 0, "python": 0, "lora": 0, "aliases": 0, "member_bills": 0}  # runs that exercised these checks (printed)
DRAWN = {"release": 0, "split": 0, "offsets": 0}  # scenarios drawn with these features (printed)


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def check_bill(s: dict, scenario: dict, layout: str, rows: list):
    """None when the run's bill is what it simulated (layouts of one GPU type at PRICE); else the problem."""
    cost, fleet = s.get("cost"), s.get("fleet")
    if not cost or not fleet:
        return None
    hours, period_h = fleet["replica_hours"], cost["period_hours"]
    held = held_price_per_hour(scenario, layout)
    if held is not None:  # a fleet or a P:D pair: every member at its own price, all held the whole period
        per_hour, replicas = held
        if abs(cost["per_hour"] - per_hour) > 1e-9 * per_hour:
            return f"bill: cost.per_hour {cost['per_hour']} != the members' GPUs at their own prices, {per_hour}"
        if abs(cost["period"] - per_hour * period_h) > 1e-6 * per_hour * period_h + 1e-12:
            return f"bill: cost.period {cost['period']} != {per_hour}/h x cost.period_hours {period_h}"
        if abs(hours - replicas * period_h) > 1e-9 + 1e-9 * hours:
            return f"bill: {replicas} replica(s) held billed {hours} replica-h over {period_h} h"
        RAN["member_bills"] += 1
        return None
    if layout not in GPUS_PER_REPLICA:
        return None
    want = PRICE * GPUS_PER_REPLICA[layout] * hours
    if abs(cost["period"] - want) > 1e-6 * max(want, 1e-9) + 1e-12:
        return f"bill: cost.period {cost['period']} != {PRICE}/GPU-h x {GPUS_PER_REPLICA[layout]} GPU(s) x {hours} replica-h"
    last_s = max((float(r["finish_s"]) for r in rows if r["outcome"] != "unfinished"), default=0.0)
    if period_h * 3600 < last_s - 1e-6 - 1e-9 * last_s:  # the CSV's times have 6 decimals
        return f"bill: cost.period_hours {period_h} ends before the last request left ({last_s} s)"
    if "autoscaler" not in scenario:
        held = scenario["hardware"].get("replicas", 1) + scenario.get("failures", {}).get("spares", 0)
        if abs(hours - held * period_h) > 1e-9 + 1e-9 * hours:
            return f"bill: a fixed deployment of {held} replica(s) billed {hours} replica-h over {period_h} h"
    return None


def check_sessions(s: dict):
    """None when every measured session turn is accounted for; else the problem."""
    ss = s.get("sessions")
    if ss is None:
        return "a session workload's summary has no sessions block"
    done = sum(t["completed"] for t in ss["by_turn"])
    lost = sum(t["lost"] for t in ss["by_turn"])
    if done != s["completed_requests"]:
        return f"session turns: {done} completed in the per-turn table, {s['completed_requests']} requests completed"
    want = s["failed_requests"] + s["timed_out_requests"] + s["rejected_requests"]
    if lost != want:
        return f"session turns: {lost} lost in the per-turn table, failed + timed out + rejected = {want}"
    if ss["finished"] + ss["in_progress"] != ss["started"]:
        return f"sessions: finished {ss['finished']} + in progress {ss['in_progress']} != started {ss['started']}"
    return None


VOLATILE = re.compile(r"wall|elapsed|cpu")


def stable(x):
    """`x` without the keys that measure the machine (wall time), for CLI-vs-Python comparisons."""
    if isinstance(x, dict):
        return {k: stable(v) for k, v in x.items() if not VOLATILE.search(k)}
    if isinstance(x, list):
        return [stable(v) for v in x]
    return x


def check_python(scenario: dict, cli_summary: dict):
    import llmsim  # noqa: PLC0415 (only when --python names the module)
    py = llmsim.simulate(scenario).summary
    a, b = stable(cli_summary), stable(json.loads(json.dumps(py)))
    if a != b:
        diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        return f"Python's summary differs from the CLI's in {diff[:8]}"
    return None


def check_aliases(llmsim, f: Path, timeout: float, cli_summary: dict):
    """The same run by vLLM's names in --set as by llmsim's fields."""
    for ours, theirs in ((["--set", "quant.kv_cache=fp16"], ["--set", "engine.kv_cache_dtype=fp16"]),
                         (["--set", "engine.max_num_seqs=48"], ["--set", "max_num_seqs=48"])):
        got = []
        for sets in (ours, theirs):
            code, out, err = run([llmsim, "simulate", str(f), "--json"] + sets, timeout)
            got.append((code, stable(json.loads(out)) if code == 0 else NAMED.search(err) and NAMED.search(err).group(1)))
        if got[0] != got[1]:
            a, b = (g[1] if isinstance(g[1], dict) else {} for g in got)
            diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            return f"{' '.join(theirs)} differs from {' '.join(ours)}: exit {got[1][0]} vs {got[0][0]}, fields {diff[:8]}"
    RAN["aliases"] += 1
    return None


def check_one(llmsim, tmp: Path, scenario: dict, timeout: float, sweep: bool, python: bool = False, layout: str = "",
              aliases: bool = False):
    """None when the run behaved; else the problem."""
    f, rows_csv = tmp / "s.json", tmp / "r.csv"
    f.write_text(json.dumps(scenario))
    rows_csv.unlink(missing_ok=True)
    code, out, err = run([llmsim, "simulate", str(f), "--json", "--requests-csv", str(rows_csv)], timeout)
    if code == "timeout":
        return "hang (timeout)"
    if code != 0:
        if code == 2 and NAMED.search(err):
            REFUSED[NAMED.search(err).group(1)] = REFUSED.get(NAMED.search(err).group(1), 0) + 1
            return None  # a combination the engine refuses, by name
        return f"exit {code}: {err.strip()[:300]}"
    s = json.loads(out)
    m = s["offered"]["arrivals"]
    parts = (s["rejected_requests"], s["completed_requests"], s["failed_requests"], s["timed_out_requests"],
             s["unfinished_requests"])
    if m != sum(parts):
        return f"measured requests not conserved: arrivals {m} != rejected+completed+failed+timed_out+unfinished {parts}"
    if "warmup" not in s:
        return "the summary has no warmup counts"
    wu = s["warmup"]
    if wu["arrivals"] != wu["rejected"] + wu["completed"] + wu["failed"] + wu["timed_out"] + wu["unfinished"]:
        return f"warm-up requests not conserved: {wu}"
    n = scenario["workload"]["num_requests"]
    if s["complete"] and m + wu["arrivals"] != n:
        return f"a complete run issued {m + wu['arrivals']} requests, not num_requests {n}"
    with open(rows_csv) as fh:
        rows = list(csv.DictReader(fh))
    counts = {}
    for r in rows:
        key = (r["warmup"] == "1", r["outcome"])
        counts[key] = counts.get(key, 0) + 1
    want = {(False, "completed"): s["completed_requests"], (False, "failed"): s["failed_requests"],
            (False, "timed_out"): s["timed_out_requests"], (False, "unfinished"): s["unfinished_requests"],
            (True, "completed"): wu["completed"], (True, "failed"): wu["failed"],
            (True, "timed_out"): wu["timed_out"], (True, "unfinished"): wu["unfinished"]}
    for k, v in want.items():
        if counts.get(k, 0) != v:
            return f"request records: {counts.get(k, 0)} rows {k}, the summary says {v}"
    if len({r["id"] for r in rows}) != len(rows):
        return "request records: an id appears twice"
    problem = check_bill(s, scenario, layout, rows)
    if problem:
        return problem
    if scenario["engine"].get("enable_lora"):
        RAN["lora"] += 1
    if "sessions" in scenario["workload"]:
        RAN["sessions"] += 1
        problem = check_sessions(s)
        if problem:
            return problem
    if python:
        RAN["python"] += 1
        problem = check_python(scenario, s)
        if problem:
            return problem
    if aliases:
        problem = check_aliases(llmsim, f, timeout, s)
        if problem:
            return problem
    entered = m + wu["arrivals"] - s["rejected_requests"] - wu["rejected"]
    if s["timed_out_requests"] > 0.5 * max(entered, 1) and s["timed_out_requests"] > 3 * entered ** 0.5 + 8 \
            and not s["unstable"]:
        return f"{s['timed_out_requests']} of {entered} requests timed out and the run is called stable"
    if sweep:
        grid = tmp / "g.json"
        grid.write_text(json.dumps({"base": scenario, "grid": {"workload.seed": [scenario["workload"]["seed"],
                                                                                 scenario["workload"]["seed"] + 1]}}))
        outs = []
        for jobs in (1, 2):
            o = tmp / f"sweep{jobs}.json"
            code, _, err = run([llmsim, "sweep", str(grid), "--out", str(o), "--jobs", str(jobs)], timeout * 3)
            if code != 0:
                return f"sweep --jobs {jobs}: exit {code}: {err.strip()[:300]}"
            text = re.sub(r'"(wall|elapsed|cpu)[a-z_]*": [0-9.eE+-]+,?', "", o.read_text())
            outs.append(text)
        if outs[0] != outs[1]:
            return "sweep rows differ between --jobs 1 and --jobs 2"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("llmsim")
    ap.add_argument("--examples", type=int, default=120, help="hypothesis examples (default 120)")
    ap.add_argument("--timeout", type=float, default=60, help="seconds one run may take (default 60)")
    ap.add_argument("--sweep-every", type=int, default=10, help="a --jobs comparison every N examples (default 10)")
    ap.add_argument("--python", help="the built Python module's directory: compare llmsim.simulate with the CLI")
    ap.add_argument("--python-every", type=int, default=7, help="a CLI-vs-Python comparison every N examples (default 7)")
    args = ap.parse_args()
    if args.python:
        sys.path.insert(0, args.python)
    try:
        from hypothesis import HealthCheck, given, settings, strategies as st
    except ImportError:
        print("property test: python3-hypothesis is missing (scripts/setup.sh installs it)")
        return 1

    features = st.fixed_dictionaries({
        "rate": st.sampled_from([2.0, 8.0, 30.0]),
        "input": st.sampled_from([256, 1024, 3500]),
        "output": st.sampled_from([16, 128, 400]),
        "n": st.integers(min_value=20, max_value=400),
        "warmup": st.one_of(st.none(), st.integers(min_value=0, max_value=19)),
        "seed": st.integers(min_value=1, max_value=1000),
        "prefix": st.one_of(st.none(), st.tuples(st.sampled_from([64, 1000, 3000]), st.integers(1, 4))),
        "timeout": st.one_of(st.none(), st.sampled_from([0.3, 2.0, 10.0])),
        "daily": st.booleans(),
        "policy": st.sampled_from(["vllm", "vllm", "vllm-v0", "chunked", "static"]),
        "budget": st.one_of(st.none(), st.sampled_from([512, 2048])),
        "layout": st.sampled_from(["single", "replicas", "pp", "fleet", "disagg"]),
        "replicas": st.integers(min_value=1, max_value=3),
        "router": st.sampled_from(["round_robin", "least_outstanding", "least_kv", "power_of_two"]),
        "link_gbps": st.sampled_from([1, 100]),
        "transfer": st.sampled_from(["after_prefill", "layerwise"]),
        "sessions": st.one_of(st.none(), st.none(), st.sampled_from(["chat", "agent"])),
        "spares": st.booleans(),
        "autoscaler": st.one_of(st.none(), st.sampled_from([0.05, 1.0, 15.0])),
        "lora": st.one_of(st.none(), st.none(), st.sampled_from([(1, 16, 1), (4, 64, 3)])),
        "failures": st.one_of(st.none(), st.tuples(st.sampled_from([1.0, 30.0]), st.sampled_from(["requeue", "fail"]),
                                                   st.integers(0, 3))),
        "release": st.sampled_from([None, None, "vllm==0.5.4", "vllm==0.6.3", "vllm==0.11.0"]),
        "chat": st.booleans(),
        "split": st.sampled_from([None, [20, 12], "9,23"]),
        "offsets": st.sampled_from([None, None, [0, 3.0], [0.5, 0, 7.0]]),
    })
    started = time.monotonic()
    failures, tried = [], 0
    with tempfile.TemporaryDirectory(prefix="llmsim-combined-") as d:
        tmp = Path(d)

        @settings(max_examples=args.examples, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), print_blob=False)
        @given(features)
        def case(feat):
            nonlocal tried
            tried += 1
            scenario = build(feat)
            DRAWN["release"] += "runtime" in scenario["engine"]
            DRAWN["split"] += "pp_layer_partition" in scenario.get("hardware", {})
            DRAWN["offsets"] += "start_offsets_s" in scenario["workload"]["arrival"]
            problem = check_one(args.llmsim, tmp, scenario, args.timeout, tried % args.sweep_every == 0,
                                bool(args.python) and tried % args.python_every == 0, feat["layout"],
                                tried % args.python_every == 1)
            if problem:
                failures.append((scenario, problem))

        case()
    refused = sum(REFUSED.values())
    print(f"combined property test: {tried} scenarios in {time.monotonic() - started:.0f} s: {tried - refused} ran, "
          f"{refused} refused by name ({', '.join(f'{k}: {v}' for k, v in sorted(REFUSED.items()))}); "
          f"{RAN['sessions']} session workloads, {RAN['lora']} with LoRA, {RAN['python']} compared with Python, "
          f"{RAN['aliases']} by vLLM's names, {RAN['member_bills']} fleet/P:D bills by member; drawn with a release {DRAWN['release']}, a layer split {DRAWN['split']}, "
          f"client start offsets {DRAWN['offsets']}; {len(failures)} misbehaved")
    for scenario, problem in failures:
        print(f"FAIL {problem}\n     {json.dumps(scenario)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
