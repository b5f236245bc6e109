#!/usr/bin/env bash
# Distributed data-parallel training throughput: 2 processes x 1 thread (DistributedDataParallel on Gloo,
# 127.0.0.1) against 1 process x 2 threads and 1 x 1, for cohort (bench/ddp_bench.cpp) and PyTorch 1.13
# (bench/ddp_torch.py, torch DDP on Gloo), all in one run; prints global images/s, the scaling efficiency
# of 2 processes (2x1 / (2 * 1x1)) and cohort's ratio to PyTorch.
#   cmake -S . -B /tmp/build-ddpbench -DCMAKE_BUILD_TYPE=Release -DCOHORT_BUILD_BENCH=ON -DCOHORT_BUILD_TESTS=OFF \
#         -DCOHORT_BUILD_EXAMPLES=OFF -DCOHORT_BUILD_APPS=OFF
#   cmake --build /tmp/build-ddpbench -j2 --target ddp_bench
#   bench/compare_ddp.sh [build-dir=/tmp/build-ddpbench] [models="blitz-cnn resnet18 lenet"] [batches="64 256"]
# Steps per measurement (median after warm-up): blitz CNN 12 after 2; ResNet-18 3 after 1; LeNet 200 after 20.
set -euo pipefail
build="${1:-/tmp/build-ddpbench}"
models="${2:-blitz-cnn resnet18}"
batches="${3:-64 256}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin="$build/ddp_bench"
[ -x "$bin" ] || { echo "compare_ddp.sh: no $bin; see the top of this script" >&2; exit 2; }
work=$(mktemp -d /tmp/compare-ddp-XXXXXX)
trap 'rm -rf "$work"' EXIT

ips() { awk '{ for (i = 1; i <= NF; ++i) if ($i == "images/s") print $(i - 1) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
efficiency() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f%%", 100 * a / (2 * b) }'; }

# Two ranks of a command; prints rank 0's output. A free port per run (PyTorch's store listens on it).
port=29600
two_ranks() {
  port=$((port + 1))
  local store="$work/store-$port" pids=()
  for rank in 0 1; do
    RANK=$rank WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port COHORT_STORE="file:$store" OMP_NUM_THREADS=1 \
      "$@" > "$work/rank$rank.out" &
    pids+=($!)
  done
  wait "${pids[@]}"
  cat "$work/rank0.out"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
printf '| model | batch | cohort 2x1 | cohort 1x2 | cohort 1x1 | cohort eff. | torch 2x1 | torch 1x2 | torch 1x1 | torch eff. | cohort/torch 2x1 |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
for model in $models; do
  for batch in $batches; do
    reps=12 warmup=2
    [ "$model" = resnet18 ] && reps=3 warmup=1
    [ "$model" = lenet ] && reps=200 warmup=20
    c21=$(two_ranks "$bin" "$model" "$batch" 1 "$reps" "$warmup" | ips)
    c12=$("$bin" "$model" "$batch" 2 "$reps" "$warmup" | ips)
    c11=$("$bin" "$model" "$batch" 1 "$reps" "$warmup" | ips)
    t21=$(two_ranks /usr/bin/python3 bench/ddp_torch.py "$model" "$batch" 1 "$reps" "$warmup" | ips)
    t12=$(OMP_NUM_THREADS=2 /usr/bin/python3 bench/ddp_torch.py "$model" "$batch" 2 "$reps" "$warmup" | ips)
    t11=$(OMP_NUM_THREADS=1 /usr/bin/python3 bench/ddp_torch.py "$model" "$batch" 1 "$reps" "$warmup" | ips)
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$model" "$batch" "$c21" "$c12" "$c11" \
      "$(efficiency "$c21" "$c11")" "$t21" "$t12" "$t11" "$(efficiency "$t21" "$t11")" "$(ratio "$c21" "$t21")"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "global images/s (higher is better); eff. = 2x1 / (2 * 1x1); 2x1 = 2 processes x 1 thread, DDP on Gloo"
