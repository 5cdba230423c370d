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
