#!/usr/bin/env bash
# libtorch's official C++ examples (github.com/pytorch/examples, cpp/), each built against cohort with
# one change, its include (<torch/torch.h> -> <cohort/torch.h>), and run. Their code is not ours to copy
# into the repository, and the CI machine cannot reach GitHub, so this is not part of ctest: give it a
# checkout. The README's claim about these examples is what this script checks.
#
#   bash tests/compat/upstream_examples.sh <pytorch-examples checkout> <cohort build dir> [seconds]
#
# autograd and regression run to their end. mnist and dcgan train on Debian's Fashion-MNIST (MNIST's file
# format; dataset-fashion-mnist) for `seconds` (default 120) and must have logged training progress with
# finite losses (their full runs are 10 and 30 epochs). dcgan includes p-ranav/argparse, which Debian does
# not package: tests/compat/upstream/argparse/ stands in for the calls it makes. Not built:
# custom-dataset (it needs an image data set of its own), transfer-learning (TorchScript), distributed (MPI).
set -euo pipefail

examples=$(cd "${1:?usage: upstream_examples.sh <examples checkout> <build dir> [seconds]}" && pwd)/cpp
build=$(cd "${2:?usage: upstream_examples.sh <examples checkout> <build dir> [seconds]}" && pwd)
seconds=${3:-120}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cxx=${CXX:-g++}
fashion=/usr/share/datasets/fashion-mnist
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cohort-upstream.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

status=0
report() { echo "$1  $2"; [[ $1 == ok ]] || status=1; }

build_example() {  # build_example <name> <source>: the source with cohort's include, built against cohort
  local name=$1 src=$2
  mkdir -p "$tmp/$name"
  sed 's|#include <torch/torch.h>|#include <cohort/torch.h>|' "$src" > "$tmp/$name/$name.cpp"
  if diff -q "$src" "$tmp/$name/$name.cpp" >/dev/null; then report FAIL "$name: no <torch/torch.h> include to replace"; return 1; fi
  if "$cxx" -std=c++17 -O2 -I"$repo/include" -I"$here/upstream" "$tmp/$name/$name.cpp" -o "$tmp/$name/$name" \
       -L"$build" -lcohort -Wl,-rpath,"$build" -pthread 2> "$tmp/$name/build.log"; then
    report ok "$name: builds against cohort with only its include changed"
  else
    report FAIL "$name: does not build against cohort:"; head -20 "$tmp/$name/build.log"; return 1
  fi
}

# MNIST's four files, uncompressed, in <dir>/data (where the examples look: "./data").
mnist_data() {
  [[ -d $fashion ]] || { echo "upstream_examples: $fashion missing (apt-get install dataset-fashion-mnist)" >&2; exit 1; }
  mkdir -p "$1/data"
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    gunzip -c "$fashion/$f.gz" > "$1/data/$f"
  done
}

for name in autograd regression; do
  build_example "$name" "$examples/$name/$name.cpp" || continue
  if (cd "$tmp/$name" && timeout 600 "./$name" > run.log 2>&1); then
    report ok "$name: runs to its end ($(tail -n1 "$tmp/$name/run.log"))"
  else
    report FAIL "$name: run failed:"; tail -20 "$tmp/$name/run.log"
  fi
done

# Trains for `seconds`, then must have logged progress (a line matching `progress`) and no nan.
train_for_a_while() {
  local name=$1 progress=$2; shift 2
  build_example "$name" "$examples/$name/$name.cpp" || return 0
  mnist_data "$tmp/$name"
  local rc=0
  # Unbuffered: the examples print with printf, whose buffer a timeout would otherwise lose.
  (cd "$tmp/$name" && timeout "$seconds" stdbuf -o0 "./$name" "$@" > run.log 2>&1) || rc=$?
  if [[ $rc != 0 && $rc != 124 ]]; then
    report FAIL "$name: exited with $rc:"; tail -20 "$tmp/$name/run.log"
  elif ! grep -Eq "$progress" "$tmp/$name/run.log" || grep -qiw 'nan' "$tmp/$name/run.log"; then
    report FAIL "$name: no training progress with finite losses in ${seconds}s:"; tail -20 "$tmp/$name/run.log"
  else
    # mnist rewrites one line with \r: count the matches, not the lines.
    report ok "$name: trains ($(grep -Eo "$progress" "$tmp/$name/run.log" | wc -l) progress reports in ${seconds}s; last: $(grep -Eo "$progress" "$tmp/$name/run.log" | tail -n1))"
  fi
}
train_for_a_while mnist 'Train Epoch: [0-9]+ \[ *[0-9]+/60000\] Loss: [0-9.]+'
train_for_a_while dcgan 'D_loss: [0-9.]+ \| G_loss: [0-9.]+' --epochs 1

((status == 0)) && echo "upstream_examples: every example built against cohort with only its include changed and ran"
exit $status
