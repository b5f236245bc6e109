#!/usr/bin/env bash
# What the profiler costs the main job (LeNet on Fashion-MNIST, batch 64, SGD momentum, one thread,
# data loaded in the training thread), next to what torch.profiler costs PyTorch 1.13 on the same
# recipe, in one run. Each configuration trains STEPS steps, alternating, REPEATS times; printed:
# the median images/s of each and the ratios.
#   off       cohort train                          (the seam compiled in, no profile taken)
#   on        cohort train --profile 1:STEPS        (every step profiled, trace and table written)
#   baseline  the same without --profile, from --baseline BUILD: a build of a commit before the
#             profiler, for the cost of the seam itself when off (optional)
#   bash bench/profiler_overhead.sh [--steps 200] [--repeats 5] [--build build] [--baseline DIR]
# Needs dataset-fashion-mnist; the PyTorch column needs python3-torch (scripts/install-deps.sh --oracle)
# and is left out with a message without it. Say the CPU and the load beside the figures.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

steps=200 repeats=5 build=build baseline=""
while (($#)); do
  case $1 in
    --steps) steps=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    *) echo "profiler_overhead.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x $build/cohort ]] || { echo "profiler_overhead.sh: $build/cohort not built (cmake --build $build --target cohort_cli)" >&2; exit 1; }
[[ -z $baseline || -x $baseline/cohort ]] || { echo "profiler_overhead.sh: no $baseline/cohort" >&2; exit 1; }

tmp=$(mktemp -d /tmp/profiler-overhead.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
limit=$((steps * 64))
train() {  # binary, run name, extra flags...
  local binary=$1 name=$2; shift 2
  OMP_NUM_THREADS=1 "$binary" train --model lenet --dataset fashion-mnist --epochs 1 --limit "$limit" --workers 0 \
    --batch-size 64 --lr 0.01 --momentum 0.9 --threads 1 --no-progress --out "$tmp/$name" "$@" >/dev/null 2>&1
}
for r in $(seq "$repeats"); do
  train "$build/cohort" "off-$r"
  train "$build/cohort" "on-$r" --profile "1:$steps"
  # A build tree's program finds its libcohort by RUNPATH; LD_LIBRARY_PATH comes first, so the
  # baseline's own library is the one loaded even where its RUNPATH names this build.
  [[ -n $baseline ]] && LD_LIBRARY_PATH="$baseline${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" train "$baseline/cohort" "baseline-$r"
done
torch_json=""
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  torch_json=$(cd bench && /usr/bin/python3 profiler_overhead_torch.py --steps "$steps" --repeats "$repeats")
else
  echo "profiler_overhead.sh: python3-torch missing: no PyTorch column (scripts/install-deps.sh --oracle)"
fi

/usr/bin/python3 - "$tmp" "$repeats" "$torch_json" <<'PY'
import glob, json, statistics, sys
tmp, repeats, torch_json = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def speed(kind):
    runs = sorted(glob.glob(f"{tmp}/{kind}-*/metrics.jsonl"))
    if not runs:
        return None
    return statistics.median([r for r in map(json.loads, open(p)) if r["kind"] == "epoch"][-1]["images_per_s"] for p in runs)
off, on, base = speed("off"), speed("on"), speed("baseline")
print(f"cohort images/s (median of {repeats}): off {off:.0f}, on {on:.0f}; profiling on costs {100 * (off / on - 1):.1f}%")
if base:
    print(f"cohort before the profiler: {base:.0f} images/s; the seam when off costs {100 * (base / off - 1):.1f}%")
if torch_json:
    t = json.loads(torch_json)
    print(f"torch  images/s (median of {repeats}): off {t['off']:.0f}, on {t['on']:.0f}; "
          f"torch.profiler costs {100 * (t['off'] / t['on'] - 1):.1f}%")
    print(f"ratio cohort/torch, no profile: {off / t['off']:.2f}; both profiled: {on / t['on']:.2f}")
PY
