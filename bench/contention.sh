#!/usr/bin/env bash
# Speed beside other work: each workload with one thread, with cohort's default (adaptive threads,
# Note [Threads on a busy machine] in src/core/free_cores.cpp) and with the fixed thread count that
# was the default before, and PyTorch's one and default thread counts, on an idle machine, beside one
# CPU-bound process, and inside a cgroup CPU quota of one core. Prints a markdown table of
# images (or samples) per second; the ratios are to one thread of the same library in the same
# condition: at least 0.9 is the target for cohort's default.
#
#   bash bench/contention.sh                       # all workloads and conditions, 2 rounds
#   bash bench/contention.sh --only 'main|dp2' --conditions 'hog' --rounds 3 --build build
#
# Workloads: main (LeNet on Fashion-MNIST, cohort train --limit 19200 --epochs 1: the README's main
# job), dp2 (the same with DataParallel over cpu:0,cpu:1), ddp2 (the same in 2 processes through
# cohort launch), resnet18 (bench/workloads W4_resnet18_train_b32: a ResNet-18 training step at batch
# 32), transformer (W6_transformer_layer_d512_s64_b32: one encoder layer, forward and backward).
# The hog is `python3 -c 'while True: pass'`, started before each measurement and stopped after it;
# hog2 is two of them (every core busy, as beside a parallel build).
# dp2 and ddp2 are compared with themselves at --threads 1 (the thread policy's effect); main says how
# fast one process with one thread is in the same condition.
# The quota condition needs root and a writable cgroup cpu controller (v1 or v2); it is skipped with a
# message otherwise. PyTorch 1.13 columns need Debian's python3-torch (scripts/install-deps.sh --oracle),
# PyTorch 2.x columns the venv of bench/setup_peers.sh (eager: torch.compile's minutes of compiling
# per process would swamp these runs).
# Needs build/cohort (the README's build) and the bench programs (built here into --bench-build).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

only="" conditions="idle hog hog2 quota" rounds=2 build=build bench_build=/tmp/build-bench
while (($#)); do
  case $1 in
    --only) only=$2; shift 2 ;;
    --conditions) conditions=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --bench-build) bench_build=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "contention.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done
[[ -x $build/cohort ]] || { echo "contention.sh: $build/cohort is not built (bash scripts/train.sh builds it)" >&2; exit 1; }
[[ -d /usr/share/datasets/fashion-mnist ]] || { echo "contention.sh: needs dataset-fashion-mnist" >&2; exit 1; }

export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$bench_build" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DCOHORT_BUILD_BENCH=ON \
      -DCOHORT_BUILD_TESTS=OFF -DCOHORT_BUILD_EXAMPLES=OFF -DCOHORT_BUILD_APPS=OFF >/dev/null
cmake --build "$bench_build" -j2 --target workloads >/dev/null

python=/usr/bin/python3
have_torch=1
"$python" -c 'import torch' 2>/dev/null || { have_torch=0; echo "contention.sh: no python3-torch; no PyTorch 1.13 columns" >&2; }
# PyTorch 2.x from bench/setup_peers.sh's venv, when it is there (this script installs nothing).
python2=${COHORT_BENCH_VENV:-$HOME/.cache/cohort/bench-venv}/bin/python
have_torch2=1
"$python2" -c 'import torch' 2>/dev/null || { have_torch2=0; echo "contention.sh: no PyTorch 2.x venv (bash bench/setup_peers.sh); no PyTorch 2.x columns" >&2; }
cpus=$(nproc)
tmp=$(mktemp -d /tmp/contention.XXXXXX)
cgroup=""
hog=""
cleanup() {
  [[ -n $hog ]] && kill $hog 2>/dev/null
  [[ -n $cgroup ]] && rmdir "$cgroup" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# A cgroup with a CPU quota of one core (quota = period), v1 or v2, as a container runtime makes it.
make_cgroup() {
  local v1 v2 dir
  v1=$(awk '{ for (i = 1; i <= NF; ++i) if ($i == "-") { if ($(i+1) == "cgroup" && ("," $(i+3) ",") ~ /,cpu,/) print $5; break } }' /proc/self/mountinfo | head -1)
  v2=$(awk '{ for (i = 1; i <= NF; ++i) if ($i == "-") { if ($(i+1) == "cgroup2") print $5; break } }' /proc/self/mountinfo | head -1)
  if [[ -n $v1 ]] && dir=$v1/cohort-contention-$$ && mkdir -p "$dir" 2>/dev/null &&
     echo 100000 > "$dir/cpu.cfs_period_us" 2>/dev/null && echo 100000 > "$dir/cpu.cfs_quota_us" 2>/dev/null; then
    cgroup=$dir; echo "cgroup v1 $dir"; return
  fi
  if [[ -n $v2 ]] && grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null && echo +cpu > "$v2/cgroup.subtree_control" 2>/dev/null &&
     dir=$v2/cohort-contention-$$ && mkdir -p "$dir" && echo "100000 100000" > "$dir/cpu.max" 2>/dev/null; then
    cgroup=$dir; echo "cgroup v2 $dir"; return
  fi
  return 1
}

# Runs a command in the current condition: as is, beside a hog, or inside the quota cgroup.
run_in() {
  local condition=$1; shift
  case $condition in
    idle) "$@" ;;
    hog|hog2)
      local n=1; [[ $condition == hog2 ]] && n=2
      for ((i = 0; i < n; ++i)); do "$python" -c 'while True: pass' & hog+=" $!"; done
      sleep 0.5  # the hogs are running when the measured program starts
      "$@"; local rc=$?
      kill $hog 2>/dev/null; wait $hog 2>/dev/null || true; hog=""
      return $rc ;;
    quota) sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cgroup" "$@" ;;
  esac
}

main_flags=(train --model lenet --dataset fashion-mnist --limit 19200 --epochs 1 --batch-size 64 --workers 0
            --no-progress --overwrite)
epoch_rate() { "$python" -c 'import json,sys
print(round([r for r in map(json.loads, open(sys.argv[1])) if r["kind"] == "epoch"][-1]["images_per_s"]))' "$1/metrics.jsonl"; }

# One measurement: images (or samples) per second of `workload` with `mode` in `condition`.
#   mode: one (1 thread), default (cohort's default), fixed (adaptive off, one thread per CPU: the old
#   default), torch1 / torchN (PyTorch 1.13 with 1 or $cpus threads), t2one / t2N (PyTorch 2.x, eager).
measure() {
  local workload=$1 mode=$2 condition=$3 out=$tmp/run
  local env=(env) threads=()
  case $mode in
    one) threads=(--threads 1) ;;
    fixed) env=(env COHORT_ADAPTIVE_THREADS=0); threads=(--threads "$cpus") ;;
  esac
  case $workload in
    main|dp2|ddp2)
      local cmd=("$build/cohort" "${main_flags[@]}" --out "$out" "${threads[@]}")
      # Two devices even where the quota counts one core (the default would be one device).
      if [[ $workload == dp2 ]]; then env+=(COHORT_CPU_DEVICES=2); cmd+=(--devices cpu:0,cpu:1); fi
      if [[ $workload == ddp2 ]]; then
        # A rank's default is its share of the cores, fixed or not: --threads only for "one".
        [[ $mode == one ]] || threads=()
        cmd=("$build/cohort" launch --nproc-per-node 2 -- "$build/cohort" "${main_flags[@]}" --out "$out" "${threads[@]}")
      fi
      if [[ $mode == torch* || $mode == t2* ]]; then
        local t=1 py=$python; [[ $mode == *N ]] && t=$cpus; [[ $mode == t2* ]] && py=$python2
        run_in "$condition" env OMP_NUM_THREADS=$t "$py" bench/train_fashion_torch.py --epochs 1 --limit 19200 \
          --threads "$t" > "$out.torch" 2>/dev/null
        "$python" -c 'import json,sys; print(round(json.loads(open(sys.argv[1]).read().splitlines()[-1])["epochs"][-1]["images_per_s"]))' "$out.torch"
        return
      fi
      run_in "$condition" "${env[@]}" "${cmd[@]}" > /dev/null 2> "$out.err" || { echo "failed"; return; }
      epoch_rate "$out" ;;
    resnet18|transformer)
      local name=W4_resnet18_train_b32 reps=4 warm=1
      [[ $workload == transformer ]] && name=W6_transformer_layer_d512_s64_b32 reps=6 warm=2
      local t=$cpus; [[ $mode == one || $mode == torch1 || $mode == t2one ]] && t=1
      local line py=$python; [[ $mode == t2* ]] && py=$python2
      if [[ $mode == torch* || $mode == t2* ]]; then
        line=$(run_in "$condition" env OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=1 "$py" bench/workloads_torch.py "$name" "$t" "$reps" "$warm")
      else
        line=$(run_in "$condition" "${env[@]}" "$bench_build/workloads" "$name" "$t" "$reps" "$warm")
      fi
      awk '{ for (i = 1; i < NF; ++i) if ($i == "median_ms") printf "%.0f\n", 32000 / $(i + 1) }' <<<"$line" ;;
  esac
}

median() { tr ' ' '\n' | { grep -E '^[0-9.]+$' || true; } | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2); else print "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }

echo "$(lscpu | sed -n 's/^Model name: *//p'), $cpus CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)"
echo "median images/s (samples/s for transformer) over $rounds rounds; ratios to 1 thread of the same library in the same condition"
echo
echo "| workload | condition | cohort 1 thread | cohort default | default/1 | cohort fixed $cpus (adaptive off) | fixed/1 | torch 1.13 1 thread | torch 1.13 $cpus threads | torch $cpus/1 | torch 2 1 thread | torch 2 $cpus threads | torch 2 $cpus/1 |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for condition in $conditions; do
  if [[ $condition == quota ]] && ! make_cgroup >/dev/null; then
    echo "contention.sh: skipping the quota condition: cannot make a cgroup with a CPU quota (needs root and a writable cpu controller)" >&2
    continue
  fi
  for workload in main dp2 ddp2 resnet18 transformer; do
    [[ -n $only && ! $workload =~ $only ]] && continue
    modes="one default fixed"
    ((have_torch)) && [[ $workload != dp2 && $workload != ddp2 ]] && modes+=" torch1 torchN"
    ((have_torch2)) && [[ $workload != dp2 && $workload != ddp2 ]] && modes+=" t2one t2N"
    declare -A all=()
    for ((r = 0; r < rounds; ++r)); do
      for mode in $modes; do all[$mode]+=" $(measure "$workload" "$mode" "$condition")"; done
    done
    one=$(median <<<"${all[one]}") def=$(median <<<"${all[default]}") fix=$(median <<<"${all[fixed]}")
    t1=$(median <<<"${all[torch1]:-}") tn=$(median <<<"${all[torchN]:-}")
    u1=$(median <<<"${all[t2one]:-}") un=$(median <<<"${all[t2N]:-}")
    echo "| $workload | $condition | $one | $def | $(ratio "$def" "$one") | $fix | $(ratio "$fix" "$one") | $t1 | $tn | $(ratio "$tn" "$t1") | $u1 | $un | $(ratio "$un" "$u1") |"
    unset all
  done
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
