#!/usr/bin/env bash
# The blitz CIFAR-10 CNN train step in cohort and PyTorch, one after the other in one run, with the
# same thread count (default 1), and the ratio torch/cohort (above 1: cohort is faster).
#   cmake -S . -B /tmp/benchbuild -DCMAKE_BUILD_TYPE=Release -DCOHORT_BUILD_BENCH=ON -DCOHORT_BUILD_TESTS=OFF
#   cmake --build /tmp/benchbuild -j2 --target blitz_cnn
#   bench/compare_blitz_cnn.sh [build-dir] [batch=64] [threads=1]
set -euo pipefail
build="${1:-/tmp/benchbuild}"
batch="${2:-64}"
threads="${3:-1}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ -x "$build/blitz_cnn" ] || { echo "compare_blitz_cnn.sh: no $build/blitz_cnn; see the top of this script" >&2; exit 2; }
c=$(OMP_NUM_THREADS=$threads "$build/blitz_cnn" "$batch" 30 | awk '{print $(NF-1)}')
t=$(OMP_NUM_THREADS=$threads /usr/bin/python3 -c "import torch, runpy, sys; torch.set_num_threads($threads); sys.argv=['x', '$batch', '30']; runpy.run_path('bench/blitz_cnn_torch.py', run_name='__main__')" | awk '{print $(NF-1)}')
printf 'blitz CNN train step, batch %s, %s thread(s): cohort %s ms, torch %s ms, torch/cohort %.2f\n' \
  "$batch" "$threads" "$c" "$t" "$(awk -v t="$t" -v c="$c" 'BEGIN { print t / c }')"
