"""``python -m llmsim`` and the ``llmsim`` console command (``pip install .``): the C++ command line.

pip installs the ``llmsim`` binary that setup.py builds (CMake target ``llmsim_cli``) inside the package, as
``llmsim/_bin/llmsim``; ``main()`` replaces this process with it, so arguments, exit status, Ctrl-C and output
are the binary's own. In a build tree (``PYTHONPATH=build/python``) CMake puts the binary in the same place when
the CLI is built. ``LLMSIM_CLI`` names another binary.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Sequence


def _is_binary(path: str) -> bool:
    """True for an executable file that is not a script (a console-script wrapper on PATH would exec us again)."""
    try:
        with open(path, "rb") as f:
            return os.access(path, os.X_OK) and f.read(2) != b"#!"
    except OSError:
        return False


def cli_path() -> str:
    """The llmsim command-line binary: the one bundled in the package, else ``$LLMSIM_CLI``, else an ``llmsim``
    binary on PATH (a cmake --install). RuntimeError when there is none."""
    bundled = Path(__file__).resolve().parent / "_bin" / "llmsim"
    candidates = [str(bundled), os.environ.get("LLMSIM_CLI", ""), shutil.which("llmsim") or ""]
    for c in candidates:
        if c and _is_binary(c):
            return c
    raise RuntimeError(f"llmsim: the command-line binary is not installed ({bundled} is missing): install the "
                       "package with `pip install .`, or build the CMake target llmsim_cli, or set LLMSIM_CLI")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the llmsim command line with ``argv`` (default: this process's arguments)."""
    args: List[str] = list(sys.argv[1:] if argv is None else argv)
    try:
        exe = cli_path()
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 2
    if argv is None and os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(exe, ["llmsim", *args])  # does not return: the binary's exit status is the command's
    return subprocess.call([exe, *args])


if __name__ == "__main__":
    sys.exit(main())
