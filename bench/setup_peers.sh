#!/usr/bin/env bash
# Installs bench/compare's PyTorch 2.x peer: a virtual environment outside the repository with PyTorch 2.x
# for CPU and numpy, whose torch.compile works (its inductor backend compiles C++ with OpenMP at run time,
# so it needs g++ and Python's headers: checked by compiling and running a small function). Idempotent:
# does nothing when the environment already works. Nothing else calls it; the library and its tests do
# not need it.
#
#   bash bench/setup_peers.sh
#
# COHORT_BENCH_VENV   where the environment goes (default $HOME/.cache/cohort/bench-venv); bench/compare
#                     reads the same variable
# COHORT_BENCH_TORCH  the pip requirement (default 'torch>=2,<3')
#
# The wheel comes from PyTorch's CPU-only index when it answers; otherwise from PyPI, whose Linux wheel
# pulls in several GiB of CUDA libraries that a CPU run loads but never uses.
set -euo pipefail

bench=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${COHORT_BENCH_VENV:-$HOME/.cache/cohort/bench-venv}
requirement=${COHORT_BENCH_TORCH:-torch>=2,<3}
base_python=/usr/bin/python3  # Debian's: python3-dev gives it the headers inductor compiles against
cpu_index=https://download.pytorch.org/whl/cpu
pypi_index=${PIP_INDEX_URL:-https://pypi.org/simple}

# A compiled function that inductor turns into C++ (the fused add, mul and relu), built with g++ and run,
# set up as workloads_torch.py --compile sets inductor up. Prints torch's version and the vector ISA of
# inductor's kernels.
check_venv() {
  "$venv/bin/python" - "$bench" <<'EOF'
import sys
import torch
assert int(torch.__version__.split(".")[0]) >= 2, f"torch {torch.__version__} is not 2.x"
import numpy  # noqa: F401  (bench/train_fashion_torch.py reads the data set with it)
sys.path.insert(0, sys.argv[1])
from workloads_torch import prepare_inductor

isa = prepare_inductor()

def f(x):
    return torch.relu(x * 2 + 1)

x = torch.randn(1000)
torch.testing.assert_close(torch.compile(f)(x), f(x))
print(torch.__version__, isa)
EOF
}

reachable() {
  "$base_python" - "$1" <<'EOF' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=20).read(1)
EOF
}

# "none": inductor found no vector ISA it can build and load, and its kernels are scalar; workloads_torch.py
# notes it on every compiled row.
report() {
  local version=$1 isa=$2
  echo "setup_peers: $venv: torch $version, torch.compile works, its kernels vectorised for: $isa"
  [[ $isa != none ]] || echo "setup_peers: warning: inductor generates scalar kernels here, which makes torch.compile slower than it is elsewhere" >&2
}

if [[ -x $venv/bin/python ]] && found=$(check_venv 2>/dev/null | tail -n1); then
  report $found
  echo "setup_peers: nothing to do"
  exit 0
fi

# What inductor needs besides torch: a C++ compiler and Python.h for the interpreter the venv is made from.
include=$("$base_python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
missing=()
command -v g++ >/dev/null || missing+=(g++)
[[ -f $include/Python.h ]] || missing+=(python3-dev)
"$base_python" -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
if ((${#missing[@]})); then
  if ((EUID == 0)) && command -v apt-get >/dev/null; then
    echo "setup_peers: installing ${missing[*]} (Debian packages torch.compile and the venv need)"
    env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup_peers: torch.compile and the venv need ${missing[*]}; install them (apt-get install ${missing[*]}) and rerun" >&2
    exit 1
  fi
fi

if ! reachable "$pypi_index/pip/"; then
  echo "setup_peers: cannot reach $pypi_index (no network to PyPI?); nothing installed" >&2
  exit 1
fi

[[ -x $venv/bin/python ]] || "$base_python" -m venv "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
if reachable "$cpu_index/torch/"; then
  source="the CPU-only index $cpu_index"
  index=(--index-url "$cpu_index" --extra-index-url "$pypi_index")
else
  source="PyPI ($cpu_index is unreachable; this wheel brings CUDA libraries, several GiB)"
  index=(--index-url "$pypi_index")
fi
echo "setup_peers: installing '$requirement' and numpy into $venv from $source"
before=$("${pip[@]}" list --format=freeze)
"${pip[@]}" install --quiet "${index[@]}" "$requirement" numpy
after=$("${pip[@]}" list --format=freeze)

if ! found=$(check_venv | tail -n1); then
  echo "setup_peers: torch is installed in $venv but the torch.compile check above failed" >&2
  exit 1
fi
echo "setup_peers: installed (package==version):"
comm -13 <(sort <<<"$before") <(sort <<<"$after") | sed 's/^/  /'
report $found
echo "setup_peers: bench/compare now fills the torch 2.x columns"
