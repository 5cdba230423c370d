#!/usr/bin/env bash
# Installs the Debian packages llmsim needs, once. Quiet and quick when all are present.
#   scripts/setup.sh          what `make build` and `make run` need
#   scripts/setup.sh test     plus what only the tests use (`make test`)
#   scripts/setup.sh fuzz     plus clang and its sanitizer runtimes (libFuzzer) for `make fuzz`
set -euo pipefail
# What building and `make run` need (the CLI, the Python module and the main job's plots) ...
# (libboost-dev carries the header-only libraries, Boost.Math among them: the capacity CI's Student t quantile.)
packages=(
  build-essential cmake make g++ pkg-config ccache
  catch2 libeigen3-dev libboost-dev libboost-random-dev libboost-program-options-dev
  nlohmann-json3-dev pybind11-dev python3-dev python3-pybind11
  python3-numpy python3-pandas python3-matplotlib
)
# ... and what only the tests use (`make test`: notebooks, Dask, property tests, the report page in a browser, the
# pip-install check), installed by `scripts/setup.sh test` so that `make run` does not wait for them (issue 30).
if [ "${1:-}" = test ] || [ "${1:-}" = fuzz ]; then
  packages+=(python3-tqdm python3-dask python3-distributed python3-nbclient python3-ipykernel jupyter-nbconvert
             python3-pytest python3-hypothesis python3-venv python3-pip python3-setuptools python3-wheel chromium)
fi
if [ "${1:-}" = fuzz ]; then packages+=(clang libclang-rt-14-dev); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "llmsim setup: installing ${missing[*]}" >&2
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
