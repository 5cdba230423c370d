"""The package as Python users expect it: `python -m llmsim` runs the command line, tqdm is optional, the typing
marker and stubs ship with it (issue 30)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import llmsim
from conftest import SMALL


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(llmsim.__file__).resolve().parent.parent)]
                                        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(extra)
    return env


def test_python_m_llmsim_runs_the_command_line(cli):
    # The build tree's package finds the binary CMake put beside it (llmsim/_bin/llmsim) or LLMSIM_CLI.
    out = subprocess.run([sys.executable, "-m", "llmsim", "catalog", "gpus"], env=_env(), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "a100-80gb-sxm" in out.stdout
    help_ = subprocess.run([sys.executable, "-m", "llmsim", "--help"], env=_env(), capture_output=True, text=True,
                           timeout=120)
    assert help_.returncode == 0 and "simulate" in help_.stdout, help_.stderr
    bad = subprocess.run([sys.executable, "-m", "llmsim", "no-such-command"], env=_env(), capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode != 0  # the binary's exit status comes through


def test_sweep_and_compare_work_without_tqdm():
    # tqdm is an optional dependency: hidden, sweep(progress=True) (the default) still runs, with no bar.
    code = f"""
import json, sys
sys.modules["tqdm"] = None  # import tqdm now raises ImportError
import llmsim
base = json.loads({json.dumps(SMALL)!r})
base["workload"]["num_requests"] = 30
base["workload"]["warmup_requests"] = 3
frame = llmsim.sweep(base, {{"workload.arrival.rate": [1, 2]}}, jobs=1)
assert len(frame) == 2 and frame["fits"].all(), frame
cmp = llmsim.compare(base, gpus=["a100-80gb-sxm"], progress=True, num_requests=30, warmup_requests=3,
                     replications=1, jobs=1)
assert len(cmp) == 1
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_import_llmsim_loads_no_pandas_until_a_frame_is_built():
    # `import llmsim` (every `python -m llmsim`, every test process) cost ~250 ms of CPU loading pandas up front;
    # frames and plots import pandas/numpy where they build them (issue 30). A summary needs neither.
    code = f"""
import json, sys
import llmsim
heavy = [m for m in ("pandas", "numpy", "matplotlib", "tqdm", "distributed") if m in sys.modules]
assert not heavy, heavy
base = json.loads({json.dumps(SMALL)!r})
base["workload"]["num_requests"] = 20
r = llmsim.simulate(base)
done = r.summary["completed_requests"]
assert done > 0 and "pandas" not in sys.modules, r
frame = r.to_frame()
assert "pandas" in sys.modules and len(frame) == 1 and frame["completed_requests"].iloc[0] == done
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_without_pandas_import_works_and_a_frame_names_pandas():
    # pandas is a dependency, but a missing one now surfaces where a frame is built, as Python's own ImportError
    # naming pandas (what `import llmsim` raised before), not as a failed import of the whole package.
    code = """
import sys
sys.modules["pandas"] = None  # import pandas now raises ImportError
import llmsim
assert llmsim.memory(model="llama-3.1-8b", gpu="a100-80gb-sxm")["fits"]
try:
    llmsim.catalog.gpus()
except ImportError as e:
    assert "pandas" in str(e), e
    print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_typing_marker_and_stubs_cover_the_compiled_module():
    # PEP 561: py.typed beside the package, and _core.pyi naming every area and function the module has.
    import ast
    here = Path(llmsim.__file__).resolve().parent
    assert (here / "py.typed").is_file()
    tree = ast.parse((here / "_core.pyi").read_text())
    declared = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            declared[node.name] = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for area in llmsim._core.areas:
        module = getattr(llmsim._core, area)
        names = {n for n in dir(module) if not n.startswith("_")}
        assert area in declared, f"_core.pyi lacks the area {area}"
        assert names <= declared[area], f"_core.pyi lacks {sorted(names - declared[area])} of _core.{area}"
    for error in ("Error", "ConfigError", "CalibrationDataError", "InternalError"):
        assert error in declared


def _pybind_parameters(doc: str) -> list:
    """(name, has_default) of each parameter in pybind11's signature line "f(a: str, b: int = 0) -> str"."""
    inner = doc[doc.index("(") + 1:doc.rindex(") ->")]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += ch in "[({"
        depth -= ch in "])}"
        if ch == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    return [(p.split(":")[0].strip(), "=" in p) for p in parts if p.strip()]


def test_stubs_match_the_compiled_signatures():
    # What editors complete from _core.pyi is what the module takes: every function's parameters by name, in order,
    # with a default exactly where the compiled function has one (pybind11's signature line, from its py::arg names).
    import ast
    tree = ast.parse((Path(llmsim.__file__).resolve().parent / "_core.pyi").read_text())
    stubs = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for f in node.body:
                if isinstance(f, ast.FunctionDef):
                    args = f.args.args
                    if args and args[0].arg == "self":
                        continue
                    first_default = len(args) - len(f.args.defaults)
                    stubs[(node.name, f.name)] = [(a.arg, i >= first_default) for i, a in enumerate(args)]
    checked = 0
    for area in llmsim._core.areas:
        module = getattr(llmsim._core, area)
        for name in dir(module):
            fn = getattr(module, name)
            if name.startswith("_") or isinstance(fn, type):
                continue
            doc = (fn.__doc__ or "").split("\n")[0]
            assert doc.startswith(name + "("), f"_core.{area}.{name}: no signature line ({doc!r})"
            assert stubs.get((area, name)) == _pybind_parameters(doc), (
                f"_core.pyi {area}.{name} declares {stubs.get((area, name))}, the module takes {doc}")
            checked += 1
    assert checked >= 40
