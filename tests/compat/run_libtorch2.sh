#!/usr/bin/env bash
# The libtorch-port promise against today's libtorch: PyPI's torch 2.x wheel carries libtorch's headers and
# libraries, so run.sh builds every program of tests/compat/ against it (and against cohort) as it does
# against Debian's 1.13. The wheel lives in the PyTorch 2.x environment that bench/ uses
# (bench/setup_peers.sh installs it when it is missing). Usage: run_libtorch2.sh <cohort-build-dir>
# Exits 77 (ctest's skip) with a message where the environment is missing and PyPI cannot be reached.
set -euo pipefail

build=${1:?usage: run_libtorch2.sh <cohort-build-dir>}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${COHORT_BENCH_VENV:-$HOME/.cache/cohort/bench-venv}

torch_dir() {
  "$venv/bin/python" -c 'import os, torch; assert int(torch.__version__.split(".")[0]) >= 2
print(os.path.dirname(torch.__file__), torch.__version__)' 2>/dev/null
}

if ! found=$(torch_dir); then
  echo "compat2: no torch 2.x in $venv; installing it (bench/setup_peers.sh)"
  if ! bash "$here/../../bench/setup_peers.sh" || ! found=$(torch_dir); then
    echo "compat2: skipped: torch 2.x could not be installed (is PyPI reachable?)" >&2
    exit 77
  fi
fi
read -r prefix version <<<"$found"
[[ -f $prefix/include/torch/csrc/api/include/torch/torch.h ]] || {
  echo "compat2: skipped: torch $version in $venv has no libtorch headers ($prefix/include)" >&2
  exit 77
}
echo "compat2: libtorch $version from $prefix"
# libtorch 2.x's headers need C++20; the cohort builds use it too.
TORCH_PREFIX=$prefix COMPAT_STD=c++20 exec bash "$here/run.sh" "$build"
