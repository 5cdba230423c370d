#!/usr/bin/python3
"""Executes every shipped notebook with nbclient (ctest: notebooks.<name>, one test each) and fails on any error.

The notebooks in git carry no outputs; executed copies go to --out. A notebook that raises, or that draws
no plot, fails the run. Prose is checked against the notebook's own tables: every conclusion a markdown cell draws
from a table is computed again in a code cell tagged "claims" right after it and asserted, so a conclusion that the
numbers stop supporting fails the run (a notebook in CLAIMS without such a cell fails too). Each notebook's wall time is printed (they are meant to take under a minute).

The notebooks named in one call run in one kernel, one after another, its namespace cleared between them (`%reset -f`,
figures closed, the working directory put back): starting a kernel and importing llmsim, pandas and matplotlib in it
was about 1.5 s of CPU of each notebook's 3-4 s (issue 30: `make test` after `make run` in under 2 minutes). A name a
notebook uses without defining or importing it still fails, as the namespace is empty again; a kernel that dies or
times out is replaced before the next notebook. --fresh-kernel starts one kernel per notebook instead.
"""
import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbclient.util import run_sync

NOTEBOOKS = [
    "4090_vs_a100.ipynb",
    "quantization_under_memory_limits.ipynb",
    "multi_gpu_scaling.ipynb",
    "controlled_experiment.ipynb",
    "calibration.ipynb",
    "calibrate_from_runs.ipynb",
    "load_spike.ipynb",
    "a_month_4090_vs_a100.ipynb",
    "cheapest_70b_at_10qps.ipynb",
    "what_48gb_buys.ipynb",
    "vllm_user.ipynb",
]

# Notebooks whose prose draws conclusions from their tables: each must carry "claims" cells that assert them.
CLAIMS = {
    "4090_vs_a100.ipynb",
    "quantization_under_memory_limits.ipynb",
    "multi_gpu_scaling.ipynb",
    "load_spike.ipynb",
    "a_month_4090_vs_a100.ipynb",
    "cheapest_70b_at_10qps.ipynb",
    "what_48gb_buys.ipynb",
    "vllm_user.ipynb",
}


def claim_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and "claims" in c.get("metadata", {}).get("tags", [])]


def count_plots(nb) -> int:
    return sum(1 for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
               if "image/png" in out.get("data", {}))


def reset_code(here: Path) -> str:
    """What runs in the shared kernel between two notebooks: an empty namespace, no open figure, the notebooks' folder
    as the working directory."""
    return (f"import os as _os, sys as _sys\n_os.chdir({str(here)!r})\n"
            "if 'matplotlib.pyplot' in _sys.modules:\n    _sys.modules['matplotlib.pyplot'].close('all')\n"
            "get_ipython().run_line_magic('reset', '-f')\n")


class Kernel:
    """One kernel for several notebooks (NotebookClient(km=...) leaves a kernel it does not own running)."""

    def __init__(self, kernel_name: str, here: Path):
        self.kernel_name, self.here, self.km = kernel_name, here, None

    def client(self, nb) -> NotebookClient:
        if self.km is None:
            self.km = NotebookClient(nbformat.v4.new_notebook(), kernel_name=self.kernel_name).create_kernel_manager()
        return NotebookClient(nb, timeout=300, kernel_name=self.kernel_name, km=self.km,
                              resources={"metadata": {"path": str(self.here)}})

    def reset(self) -> None:
        """Clears the namespace for the next notebook; replaces a kernel that cannot do so (dead, hung)."""
        if self.km is None:
            return
        client = self.client(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(reset_code(self.here))]))
        client.timeout = 60
        try:
            client.execute()
        except Exception:  # noqa: BLE001 - any failure here means the kernel is not fit for the next notebook
            self.shutdown()
        finally:
            if client.kc is not None:
                client.kc.stop_channels()

    def shutdown(self) -> None:
        if self.km is not None:
            try:
                run_sync(self.km.shutdown_kernel)(now=True)
            except Exception:  # noqa: BLE001 - already dead
                pass
            self.km = None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=None, help="folder for the executed copies")
    ap.add_argument("--kernel", default="python3")
    ap.add_argument("--fresh-kernel", action="store_true", help="a new kernel for each notebook")
    ap.add_argument("names", nargs="*", help="notebooks to run (default: all)")
    args = ap.parse_args()
    here = Path(__file__).resolve().parent
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    failed = [f"{name}: not in run_notebooks.py's NOTEBOOKS list" for name in args.names if name not in NOTEBOOKS]
    kernel = Kernel(args.kernel, here)
    for name in [n for n in args.names if n in NOTEBOOKS] or ([] if args.names else NOTEBOOKS):
        path = here / name
        nb = nbformat.read(path, as_version=4)
        if any(c.get("outputs") for c in nb.cells if c.cell_type == "code"):
            failed.append(f"{name}: outputs must be stripped before committing")
        claims = claim_cells(nb)
        if name in CLAIMS and (not claims or any("assert" not in c.source for c in claims)):
            failed.append(f"{name}: its prose's conclusions need a code cell tagged 'claims' that asserts them")
        start = time.perf_counter()
        kernel.reset()
        client = kernel.client(nb)
        try:
            client.execute()
            error = None
        except CellExecutionError as e:
            error = str(e).strip().splitlines()[-1] if str(e).strip() else repr(e)
        except Exception as e:  # kernel died, timeout, missing kernel
            error = f"{type(e).__name__}: {e}"
            kernel.shutdown()  # not fit for the next notebook
        finally:
            if client.kc is not None:
                client.kc.stop_channels()
        if args.fresh_kernel:
            kernel.shutdown()
        seconds = time.perf_counter() - start
        plots = count_plots(nb)
        if out:
            nbformat.write(nb, out / name)
        status = "ok" if error is None and plots > 0 else "FAILED"
        print(f"{status:6} {name:45} {seconds:6.1f} s  {plots} plot(s)" + (f"  {error}" if error else ""),
              flush=True)
        if error is not None:
            failed.append(f"{name}: {error}")
        elif plots == 0:
            failed.append(f"{name}: drew no plot")
        elif seconds > 60:
            print(f"WARN   {name} took {seconds:.0f} s (meant to run in under a minute)")
    kernel.shutdown()
    for f in failed:
        print("error:", f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
