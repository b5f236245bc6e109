#!/usr/bin/env bash
# Data-parallel training throughput: cohort's nn::DataParallel on 2 devices (1 thread each), called
# as a module (forward, then backward) and through forward_backward (as `cohort train --devices`
# steps), against one device with 2 and with 1 intra-op thread, and PyTorch 1.13 single-process with
# 1 and 2 threads (torch.nn.DataParallel is CUDA-only), all in one run; prints images/s and the ratios.
#   cmake -S . -B /tmp/build-dpbench -DCMAKE_BUILD_TYPE=Release -DCOHORT_BUILD_BENCH=ON -DCOHORT_BUILD_TESTS=OFF \
#         -DCOHORT_BUILD_EXAMPLES=OFF -DCOHORT_BUILD_APPS=OFF
#   cmake --build /tmp/build-dpbench -j2 --target data_parallel_bench
#   bench/compare_data_parallel.sh [build-dir=/tmp/build-dpbench] [models="blitz-cnn resnet18"] [batches="64 256"] [rounds=5]
# Steps per measurement (median of reps after warm-up): blitz CNN 30 after 3; ResNet-18 2 after 1 at
# batch 64 and 1 after 1 at batch 256 (a step there takes seconds); RESNET_REPS=N overrides ResNet-18's.
# Every setup runs once per round, the setups one after the other, and each cell is the median over
# the rounds: a 2-thread setup loses a third of its speed whenever the hypervisor takes one of the two
# vCPUs for a while, and alternating lets such moments hit every setup alike. The ratios take the
# 2-device forward_backward column, the path training takes; "2dev / 1x2 range" is the lowest and
# highest per-round ratio. About 7 minutes with the defaults.
set -euo pipefail
build="${1:-/tmp/build-dpbench}"
models="${2:-blitz-cnn resnet18}"
batches="${3:-64 256}"
rounds="${4:-5}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin="$build/data_parallel_bench"
[ -x "$bin" ] || { echo "compare_data_parallel.sh: no $bin; see the top of this script" >&2; exit 2; }

ips() { awk '{ for (i = 1; i <= NF; ++i) if ($i == "images/s") print $(i - 1) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc); $(date -u +%FT%TZ); $rounds rounds"
printf '| model | batch | cohort 2 dev x 1 thr | cohort 2 dev forward_backward | cohort 1 dev x 2 thr | cohort 1 dev x 1 thr | torch 1 thr | torch 2 thr | 2dev / 1x1 | 2dev / 1x2 | 2dev / 1x2 range | 2dev / torch 2 thr |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
for model in $models; do
  for batch in $batches; do
    reps=30 warmup=3
    if [ "$model" = resnet18 ]; then
      reps=2 warmup=1
      [ "$batch" -ge 256 ] && reps=1
      reps="${RESNET_REPS:-$reps}"
    fi
    dp2="" step="" c12="" c11="" t1="" t2="" per_round=""
    for ((round = 0; round < rounds; ++round)); do
      a=$("$bin" "$model" "$batch" dp2 "$reps" "$warmup" | ips)
      s=$("$bin" "$model" "$batch" dp2-step "$reps" "$warmup" | ips)
      b=$("$bin" "$model" "$batch" 1x2 "$reps" "$warmup" | ips)
      c11+=" $("$bin" "$model" "$batch" 1x1 "$reps" "$warmup" | ips)"
      t1+=" $(OMP_NUM_THREADS=1 /usr/bin/python3 bench/data_parallel_torch.py "$model" "$batch" 1 "$reps" "$warmup" | ips)"
      t2+=" $(OMP_NUM_THREADS=2 /usr/bin/python3 bench/data_parallel_torch.py "$model" "$batch" 2 "$reps" "$warmup" | ips)"
      dp2+=" $a" step+=" $s" c12+=" $b" per_round+=" $(ratio "$s" "$b")"
    done
    m_dp2=$(median <<<"$dp2") m_step=$(median <<<"$step")
    m_c12=$(median <<<"$c12") m_c11=$(median <<<"$c11")
    m_t1=$(median <<<"$t1") m_t2=$(median <<<"$t2")
    range=$(tr ' ' '\n' <<<"$per_round" | grep . | sort -g | sed -n '1p;$p' | paste -sd- -)
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$model" "$batch" "$m_dp2" "$m_step" "$m_c12" \
      "$m_c11" "$m_t1" "$m_t2" "$(ratio "$m_step" "$m_c11")" "$(ratio "$m_step" "$m_c12")" "$range" "$(ratio "$m_step" "$m_t2")"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "images/s (higher is better), medians over rounds; targets: 2dev / 1x1 >= 1.8 at batch 256, 2dev / 1x2 >= 1.0"
