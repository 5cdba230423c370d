#!/usr/bin/env bash
# The install check of a fresh clone (make check-install): clones the committed tree, then
#   python3 -m venv --system-site-packages v && v/bin/pip install --no-build-isolation . && v/bin/python -c "import llmsim"
# then the venv's `llmsim --help` and `python -m llmsim catalog gpus` (the bundled command line),
# with setup.py's default backend (a fresh CMake build of the module) and no network: in a network namespace
# of its own when unshare allows it, else with pip --no-index. Longer than the 4.5 minutes it took before it built the CLI too (16 min measured on busy shared cores) with a cold
# ccache, 30 s with a warm one. ctest's install.pip_venv checks the same packaging in seconds by reusing the
# build folder (LLMSIM_CMAKE_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-/usr/bin/python3}
[ -z "$(git status --porcelain --untracked-files=no)" ] || echo "check-install: uncommitted changes are not part of the clone" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q . "$tmp/llmsim"
"$PYTHON" -m venv --system-site-packages "$tmp/v"
offline=()
if unshare -rn true 2>/dev/null; then offline=(unshare -rn); elif unshare -n true 2>/dev/null; then offline=(unshare -n); fi
if [ ${#offline[@]} -eq 0 ]; then
  echo "check-install: cannot drop the network (unshare), using pip --no-index instead" >&2
  offline=(env PIP_NO_INDEX=1)
fi
# Paths under the random clone folder hash as relative ones, so a second run hits ccache.
export CCACHE_BASEDIR="$tmp"
start=$(date +%s)
(cd "$tmp/llmsim" && env -u PYTHONPATH -u LLMSIM_CMAKE_BUILD_DIR "${offline[@]}" "$tmp/v/bin/pip" install -q --no-cache-dir --no-build-isolation .)
(cd "$tmp" && env -u PYTHONPATH "${offline[@]}" "$tmp/v/bin/python" -c "
import llmsim
r = llmsim.simulate({'model': 'llama-3.1-8b', 'workload': {'num_requests': 200}})
assert r.summary['completed_requests'] > 0
print('check-install: import llmsim from', llmsim.__file__, 'ok')")
# The console command and `python -m llmsim`: the command line bundled in the package.
help=$(cd "$tmp" && env -u PYTHONPATH -u LLMSIM_CLI "$tmp/v/bin/llmsim" --help)
grep -q simulate <<<"$help" || { echo "check-install: venv/bin/llmsim --help lists no commands" >&2; exit 1; }
gpus=$(cd "$tmp" && env -u PYTHONPATH -u LLMSIM_CLI "$tmp/v/bin/python" -m llmsim catalog gpus)
grep -q a100-80gb-sxm <<<"$gpus" || { echo "check-install: python -m llmsim catalog gpus lists no cards" >&2; exit 1; }
echo "check-install: venv's llmsim --help and python -m llmsim catalog gpus ok"
echo "check-install: fresh clone -> venv -> pip install (offline) -> import in $(( $(date +%s) - start )) s"
