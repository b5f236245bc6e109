#!/usr/bin/env bash
# Finds or makes the virtual environment of the tests' Python peers that Debian does not package:
# onnxruntime, which runs cohort's exported ONNX files (tests/io/onnx_runtime_test.cpp through
# tests/fixtures/check_onnxruntime.py), and tensorboard, whose own reader reads cohort's event files
# (tests/io/tensorboard_test.cpp through tests/fixtures/check_tensorboard.py). They come from PyPI, into a
# venv outside the repository; the tests call this script on demand and nothing else needs it.
# Idempotent and safe to run from several tests at once (a lock beside the venv): when the venv already
# imports both it only prints.
#
#   bash scripts/test_peers_venv.sh     # last line of stdout: the venv's python
#
# Exit 0: ready, the last line is the python to run. Exit 3: the peers cannot be had here (PyPI
# unreachable, no venv module, pip failed); stderr says why in one line, and the tests skip with it.
#
# COHORT_TEST_PEERS_VENV  where the environment goes (default $HOME/.cache/cohort/test-peers-venv)
set -euo pipefail

venv=${COHORT_TEST_PEERS_VENV:-$HOME/.cache/cohort/test-peers-venv}
requirements=("onnxruntime>=1.14" "tensorboard>=2.10" numpy)
base_python=/usr/bin/python3
pypi_index=${PIP_INDEX_URL:-https://pypi.org/simple}

unavailable() {
  echo "test_peers_venv: $*" >&2
  exit 3
}

works() {
  "$venv/bin/python" -c 'import numpy, onnxruntime, tensorboard
print("onnxruntime", onnxruntime.__version__, "tensorboard", tensorboard.__version__)' 2>/dev/null
}

mkdir -p "$(dirname "$venv")"
# Tests run two at a time: one makes the venv while the other waits, then finds it made.
exec 9>"$venv.lock"
flock -w 900 9 || unavailable "another process has held $venv.lock for 15 minutes"

if [[ -x $venv/bin/python ]] && version=$(works); then
  echo "test_peers_venv: $venv: $version" >&2
  echo "$venv/bin/python"
  exit 0
fi

"$base_python" -c 'import ensurepip, venv' 2>/dev/null ||
  unavailable "$base_python has no venv module (apt-get install python3-venv)"
"$base_python" - "$pypi_index/onnxruntime/" <<'PY' >/dev/null 2>&1 || unavailable "cannot reach $pypi_index (no network to PyPI?); onnxruntime and tensorboard not installed"
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=20).read(1)
PY

[[ -x $venv/bin/python ]] || "$base_python" -m venv "$venv" >&2 || unavailable "could not make a venv at $venv"
echo "test_peers_venv: installing ${requirements[*]} into $venv from $pypi_index" >&2
"$venv/bin/python" -m pip --disable-pip-version-check install --quiet --index-url "$pypi_index" \
  "${requirements[@]}" >&2 || unavailable "pip could not install ${requirements[*]} into $venv"
version=$(works) || unavailable "onnxruntime and tensorboard are installed in $venv but do not import"
echo "test_peers_venv: $venv: $version" >&2
echo "$venv/bin/python"
