"""Issue 17 from Python: numpy values, inline specs without temp files, strict file reading, one step rule,
Ctrl-C during simulate/sweep, thread limits, and the CLI's sweep --capacity frame equal to Python's."""
import copy
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import llmsim
from conftest import SMALL, need

SOURCE = Path(os.environ.get("LLMSIM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
ENV = dict(os.environ, PYTHONPATH=str(Path(llmsim.__file__).resolve().parents[1]))


def run_python(code: str, timeout: float = 60, max_processes: int = 0) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter with this llmsim; with `max_processes`, under that process (thread)
    limit — as 'nobody' when we are root, since root ignores the limit."""
    def limit():
        import resource
        resource.setrlimit(resource.RLIMIT_NPROC, (max_processes, max_processes))
        if os.getuid() == 0:
            os.setgid(65534)
            os.setuid(65534)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=ENV, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limit if max_processes else None, cwd="/")


def test_numpy_scalars_and_arrays_just_work():
    need("analysis")
    native = copy.deepcopy(SMALL)
    native["workload"]["input_tokens"] = {"dist": "empirical", "values": [100, 200, 300]}
    with_numpy = copy.deepcopy(native)
    with_numpy["workload"]["arrival"]["rate"] = np.float64(2.0)
    with_numpy["workload"]["num_requests"] = np.int64(150)
    with_numpy["workload"]["input_tokens"]["values"] = np.array([100, 200, 300])
    with_numpy["hardware"]["tp"] = np.int32(1)
    assert llmsim.simulate(with_numpy).summary == llmsim.simulate(native).summary
    frame = llmsim.sweep(native, {"workload.arrival.rate": np.array([1.0, 2.0])}, jobs=1, progress=False)
    assert list(frame["workload.arrival.rate"]) == [1.0, 2.0]
    # Not JSON at all: the field is named.
    bad = copy.deepcopy(native)
    bad["workload"]["arrival"]["rate"] = np.float64("nan")
    with pytest.raises(llmsim.ConfigError, match=r"workload\.arrival\.rate: expected a finite number"):
        llmsim.simulate(bad)
    bad["workload"]["arrival"]["rate"] = {1, 2}
    with pytest.raises(llmsim.ConfigError, match=r"workload\.arrival\.rate: a set is not representable"):
        llmsim.simulate(bad)


def test_a_spec_planted_at_the_old_temp_path_changes_nothing(tmp_path):
    """Python used to write inline specs to <tmp>/llmsim-specs-<uid>/<id>-<sha>.json and trust a file already
    there, so another local user could change your results. Inline specs now travel in the scenario text."""
    need("analysis")
    card = llmsim.load_gpu_spec(SOURCE / "data" / "gpus" / "rtx4090-24gb.json")
    card["id"] = f"planted-{os.getpid()}"
    text = json.dumps(card, sort_keys=True, separators=(",", ":"))
    old_dir = Path(tempfile.gettempdir()) / f"llmsim-specs-{os.getuid()}"
    old_path = old_dir / f"{card['id']}-{hashlib.sha256(text.encode()).hexdigest()[:12]}.json"
    old_dir.mkdir(exist_ok=True)
    old_path.write_text(json.dumps(dict(card, memory_bandwidth_gb_per_s=1.0)))  # a card 1000x slower
    try:
        before = set(old_dir.iterdir())
        inline = copy.deepcopy(SMALL)
        inline["hardware"]["gpu"] = card
        by_file = copy.deepcopy(SMALL)
        (tmp_path / "card.json").write_text(json.dumps(card))
        by_file["hardware"]["gpu"] = str(tmp_path / "card.json")
        assert llmsim.simulate(inline).summary == llmsim.simulate(by_file).summary
        assert set(old_dir.iterdir()) == before  # nothing written
        # The normalized scenario holds the object itself.
        assert llmsim.scenario(inline)["hardware"]["gpu"]["id"] == card["id"]
    finally:
        old_path.unlink()


def test_files_are_read_strictly_and_bounded(tmp_path):
    dup = tmp_path / "dup.json"
    dup.write_text('{"model": "llama-3.1-8b", "model": "qwen2.5-14b"}')
    with pytest.raises(ValueError, match="duplicate key 'model'"):
        llmsim.simulate(str(dup))
    with pytest.raises(ValueError, match="is a character device"):
        llmsim.simulate("/dev/zero")
    with pytest.raises(ValueError, match="is a directory"):
        llmsim.load_hf_config(tmp_path)
    with pytest.raises(ValueError, match="no such file"):
        llmsim.simulate(str(tmp_path / "missing.json"))


def test_step_refuses_what_the_cli_refuses(cli):
    """One rule in C++: a batch the memory plan cannot hold is an error in both faces, with the same reason."""
    need("step")
    with pytest.raises(ValueError, match="does not fit") as py_error:
        llmsim.step(model="qwen2.5-14b", gpu="rtx4090-24gb", decode_seqs=1, context=512)
    out = subprocess.run([cli, "step", "--model", "qwen2.5-14b", "--gpu", "rtx4090-24gb", "--decode-seqs", "1",
                          "--context", "512"], capture_output=True, text=True)
    assert out.returncode == 2
    assert str(py_error.value).split("does not fit: ")[1] in out.stderr
    with pytest.raises(ValueError, match="batch: needs"):
        llmsim.step(model="llama-3.1-8b", gpu="rtx4090-24gb", decode_seqs=100000, context=8000)


def test_overlapping_grid_axes_are_refused():
    with pytest.raises(ValueError, match="'workload.arrival' and 'workload.arrival.rate' overlap"):
        llmsim.expand_grid(SMALL, {"workload.arrival.rate": [1, 2],
                                   "workload.arrival": [{"process": "poisson", "rate": 3}]})


def test_sweep_capacity_in_the_cli_equals_python(cli, tmp_path):
    """`llmsim sweep --capacity` used to leave max_qps empty (its options never reached the sweep)."""
    need("analysis")
    base = copy.deepcopy(SMALL)
    grid = {"hardware.gpu": ["a100-80gb-sxm", "rtx4090-24gb"], "workload.arrival.rate": [1, 2]}
    py = llmsim.sweep(base, grid, jobs=2, progress=False, capacity=True, replications=1, num_requests=150,
                      warmup_requests=15)
    (tmp_path / "grid.json").write_text(json.dumps({"base": base, "grid": grid}))
    subprocess.run([cli, "sweep", "-q", "--grid", str(tmp_path / "grid.json"), "--capacity", "--replications", "1",
                    "--requests", "150", "--out", str(tmp_path / "rows.csv")], check=True, capture_output=True)
    cli_frame = pd.read_csv(tmp_path / "rows.csv", float_precision="round_trip", keep_default_na=True)
    assert list(cli_frame.columns) == list(py.columns)
    assert py["max_qps"].notna().all() and (py["max_qps"] > 0).all()
    for column in py.columns:
        if pd.api.types.is_numeric_dtype(py[column]) and not pd.api.types.is_bool_dtype(py[column]):
            np.testing.assert_array_equal(cli_frame[column].to_numpy(dtype=float), py[column].to_numpy(dtype=float),
                                          err_msg=column)
        else:
            # A yes/no column with missing verdicts is pandas' nullable "boolean" (missing = pd.NA): compared as text.
            assert [str(x).lower() for x in cli_frame[column].fillna("")] == \
                   [str(x).lower() for x in py[column].astype(object).where(py[column].notna(), "")], column


LONG = copy.deepcopy(SMALL)
LONG["workload"].update({"num_requests": 5_000_000, "warmup_requests": 0})


def test_ctrl_c_stops_simulate_promptly():
    need("analysis")
    out = run_python(f"""
        import os, signal, threading, time, llmsim
        t0 = time.time()
        threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            llmsim.simulate({LONG!r})
            print("FINISHED")
        except KeyboardInterrupt:
            print("INTERRUPTED %.2f" % (time.time() - t0))
    """)
    assert out.returncode == 0, out.stderr
    words = out.stdout.split()
    assert words[0] == "INTERRUPTED", out.stdout
    assert float(words[1]) < 3.0  # within a second or two of the signal, not minutes


def test_ctrl_c_stops_a_sweep_and_keeps_finished_rows():
    need("analysis")
    out = run_python(f"""
        import json, os, signal, sys, time, llmsim
        sweep_module = sys.modules["llmsim.sweep"]  # the module (llmsim.sweep is the function)
        base = {SMALL!r}
        base["workload"].update(num_requests=20000, warmup_requests=100)
        grid = {{"workload.arrival.rate": [1 + i / 10 for i in range(12)]}}
        sent = []

        class Bar:  # stands in for tqdm: Ctrl-C as soon as the first row is done, however slow the machine
            n = 0
            def update(self, k):
                self.n += k
                if self.n >= 1 and not sent:
                    sent.append(time.time())
                    os.kill(os.getpid(), signal.SIGINT)
            def close(self):
                pass

        sweep_module._tqdm = lambda progress, total, desc: Bar() if progress else None
        try:
            llmsim.sweep(base, grid, jobs=2, progress=True)
            print(json.dumps({{"finished": True}}))
        except KeyboardInterrupt as e:
            stopped = time.time() - sent[0]
            partial = e.partial
            full = llmsim.sweep(base, grid, jobs=2, progress=False)
            same = all(partial.loc[i, "ttft_ms.p95"] == full.loc[i, "ttft_ms.p95"] for i in partial.index)
            print(json.dumps({{"finished": False, "stopped": stopped, "rows": list(map(int, partial.index)),
                               "same": bool(same)}}))
    """, timeout=180)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert not result["finished"]
    assert result["stopped"] < 4.0  # seconds from the signal to the KeyboardInterrupt
    assert 0 < len(result["rows"]) < 12
    assert result["same"]  # the rows it kept are exactly those a full run computes


def test_sweep_with_more_threads_than_the_system_allows_degrades_with_a_warning():
    need("analysis")
    out = run_python(f"""
        import warnings, llmsim
        base = {SMALL!r}
        # Rows long enough (milliseconds) that the first workers are still running when the pool asks for the 40th
        # thread: with 40-request rows an idle machine finished them before the limit was reached (no warning).
        # The pool starts min(jobs, rows) threads up front and a worker leaves only when no row is left, so 96 rows
        # (over twice the limit) ask for the 40th thread as surely as 512 did, at a fifth of the simulation (issue 30).
        base["workload"].update(num_requests=4000, warmup_requests=40)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = llmsim.sweep(base, {{"workload.arrival.rate": [1 + i / 100 for i in range(96)]}}, jobs=512,
                                 progress=False)
        print(len(frame), any("threads" in str(w.message) for w in caught))
    """, max_processes=40, timeout=300)
    assert out.returncode == 0, out.stderr  # the interpreter used to die in std::terminate
    assert out.stdout.split() == ["96", "True"]
