#!/usr/bin/env bash
# Data-parallel training throughput: cohort's nn::DataParallel on 2 devices (1 thread each) against
# one device with 2 and with 1 intra-op thread, and PyTorch 1.13 single-process with 1 and 2 threads
# (torch.nn.DataParallel is CUDA-only), all in one run; prints images/s and the ratios.
#   cmake -S . -B /tmp/build-dpbench -DCMAKE_BUILD_TYPE=Release -DCOHORT_BUILD_BENCH=ON -DCOHORT_BUILD_TESTS=OFF \
#         -DCOHORT_BUILD_EXAMPLES=OFF -DCOHORT_BUILD_APPS=OFF
#   cmake --build /tmp/build-dpbench -j2 --target data_parallel_bench
#   bench/compare_data_parallel.sh [build-dir=/tmp/build-dpbench] [models="blitz-cnn resnet18"] [batches="64 256"]
# Steps per measurement (median of reps after warm-up): blitz CNN 12 after 2; ResNet-18 2 after 1 at
# batch 64 and 1 after 1 at batch 256 (a step there takes seconds), so the whole run stays near 5 minutes.
set -euo pipefail
build="${1:-/tmp/build-dpbench}"
models="${2:-blitz-cnn resnet18}"
batches="${3:-64 256}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin="$build/data_parallel_bench"
[ -x "$bin" ] || { echo "compare_data_parallel.sh: no $bin; see the top of this script" >&2; exit 2; }

ips() { awk '{ for (i = 1; i <= NF; ++i) if ($i == "images/s") print $(i - 1) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
printf '| model | batch | cohort 2 dev x 1 thr | cohort 1 dev x 2 thr | cohort 1 dev x 1 thr | torch 1 thr | torch 2 thr | 2dev / 1x1 | 2dev / 1x2 | 2dev / torch 2 thr |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
for model in $models; do
  for batch in $batches; do
    reps=12 warmup=2
    if [ "$model" = resnet18 ]; then
      reps=2 warmup=1
      [ "$batch" -ge 256 ] && reps=1
    fi
    dp2=$("$bin" "$model" "$batch" dp2 "$reps" "$warmup" | ips)
    c12=$("$bin" "$model" "$batch" 1x2 "$reps" "$warmup" | ips)
    c11=$("$bin" "$model" "$batch" 1x1 "$reps" "$warmup" | ips)
    t1=$(OMP_NUM_THREADS=1 /usr/bin/python3 bench/data_parallel_torch.py "$model" "$batch" 1 "$reps" "$warmup" | ips)
    t2=$(OMP_NUM_THREADS=2 /usr/bin/python3 bench/data_parallel_torch.py "$model" "$batch" 2 "$reps" "$warmup" | ips)
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$model" "$batch" "$dp2" "$c12" "$c11" "$t1" "$t2" \
      "$(ratio "$dp2" "$c11")" "$(ratio "$dp2" "$c12")" "$(ratio "$dp2" "$t2")"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "images/s (higher is better); targets: 2dev / 1x1 >= 1.8 at batch 256, 2dev / 1x2 >= 1.0"
