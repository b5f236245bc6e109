#!/usr/bin/env bash
# The trainer's quality and speed next to PyTorch 1.13, in one run: LeNet on Fashion-MNIST, batch 64,
# SGD lr 0.01 momentum 0.9, the same seeds and thread count for both. Prints each run's test accuracy
# per epoch and training images/s, then the mean final accuracy of each and the speed ratio.
#   bash bench/compare_train.sh [--epochs 3] [--threads 1] [--seeds "0 1 2"] [--build build]
# Needs python3-torch (bash scripts/install-deps.sh --oracle). PyTorch reads the data pre-normalised
# from memory; cohort converts and normalises every sample in its DataLoader, in the training thread
# (--workers 0), so both use exactly `--threads` cores and the data path favours PyTorch.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

epochs=3 threads=1 seeds="0 1 2" build=build
while (($#)); do
  case $1 in
    --epochs) epochs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "compare_train.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x $build/cohort ]] || { echo "compare_train.sh: $build/cohort not built (cmake --build $build --target cohort_cli)" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "compare_train.sh: python3-torch missing (scripts/install-deps.sh --oracle)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/compare-train.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for seed in $seeds; do
  echo "== seed $seed, $threads thread(s), $epochs epochs"
  OMP_NUM_THREADS=$threads "$build/cohort" train --model lenet --dataset fashion-mnist --epochs "$epochs" --workers 0 \
    --batch-size 64 --lr 0.01 --momentum 0.9 --seed "$seed" --threads "$threads" --no-progress \
    --out "$tmp/cohort-$seed" 2>/dev/null | sed 's/^/cohort /'
  OMP_NUM_THREADS=$threads /usr/bin/python3 bench/train_fashion_torch.py --epochs "$epochs" --seed "$seed" \
    --threads "$threads" > "$tmp/torch-$seed.txt"
  grep '^torch' "$tmp/torch-$seed.txt"
done

/usr/bin/python3 - "$tmp" "$seeds" <<'PY'
import json, statistics, sys
tmp, seeds = sys.argv[1], sys.argv[2].split()
def cohort_epochs(seed):
    with open(f"{tmp}/cohort-{seed}/metrics.jsonl") as f:
        return [r for r in map(json.loads, f) if r["kind"] == "epoch"]
def torch_epochs(seed):
    with open(f"{tmp}/torch-{seed}.txt") as f:
        return json.loads(f.read().splitlines()[-1])["epochs"]
c = [cohort_epochs(s) for s in seeds]
t = [torch_epochs(s) for s in seeds]
for name, runs in (("cohort", c), ("torch", t)):
    finals = [100 * r[-1]["test_acc"] for r in runs]
    per_epoch = [statistics.mean(100 * r[e]["test_acc"] for r in runs) for e in range(len(runs[0]))]
    print(f"{name:6s} test accuracy per epoch (mean of {len(seeds)} seeds): "
          + ", ".join(f"{a:.2f}%" for a in per_epoch)
          + f"; final per seed: " + ", ".join(f"{a:.2f}%" for a in finals))
speed = lambda runs: statistics.median(e["images_per_s"] for r in runs for e in r)
print(f"images/s (median over epochs and seeds): cohort {speed(c):.0f}, torch {speed(t):.0f}, "
      f"ratio cohort/torch {speed(c) / speed(t):.2f}")
PY
