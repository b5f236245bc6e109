#!/usr/bin/env bash
# Activation checkpointing's memory and time, per model: checkpoint_memory (bench/checkpoint_memory.cpp)
# with checkpointing off and on, each in a process of its own, alternating, REPEATS times, beside
# PyTorch 1.13 doing the same (checkpoint_memory_torch.py; left out with a message without
# python3-torch); printed as a markdown table with the median of each and the ratios (on / off).
#   bash bench/checkpoint_memory.sh [--build DIR] [--repeats 3] [--threads 0] [--quick]
# DIR is a build configured with -DCOHORT_BUILD_BENCH=ON (default /tmp/build-bench, configured and
# built here when it lacks the program). --quick measures only the small models. Say the CPU and the
# load beside the figures: the step times are wall clock.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=/tmp/build-bench repeats=3 threads=0 quick=0
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "checkpoint_memory.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [[ ! -x $build/checkpoint_memory ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCOHORT_BUILD_BENCH=ON -DCOHORT_BUILD_TESTS=OFF \
        -DCOHORT_BUILD_EXAMPLES=OFF -DCOHORT_BUILD_APPS=OFF >/dev/null
  cmake --build "$build" -j2 --target checkpoint_memory >/dev/null
fi

# model batch size steps: the ResNets on 32-pixel (CIFAR stem) and 64- and 224-pixel (ImageNet stem)
# images, the char-transformer on 256-character windows.
configs=("resnet18 32 32 5" "char-transformer 32 256 5" "resnet50 32 64 3")
((quick)) || configs+=("resnet50 32 224 2")
torch=1
if ! /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
  torch=0
  echo "checkpoint_memory.sh: python3-torch or python3-torchvision missing: no PyTorch rows (scripts/install-deps.sh --oracle)"
fi
out=$(mktemp /tmp/checkpoint-memory.XXXXXX)
trap 'rm -f "$out"' EXIT
for r in $(seq "$repeats"); do
  for c in "${configs[@]}"; do
    read -r model batch size steps <<<"$c"
    for mode in off on; do
      echo "impl cohort $("$build/checkpoint_memory" "$model" "$mode" "$batch" "$size" "$steps" "$threads")" >>"$out"
      # Below 64 pixels cohort's ResNets take the CIFAR stem, torchvision's keep ImageNet's: not the same network.
      if ((torch)) && [[ $model == char-* || $size -ge 64 ]]; then
        echo "impl torch $(/usr/bin/python3 bench/checkpoint_memory_torch.py "$model" "$mode" "$batch" "$size" "$steps" \
                           "$threads")" >>"$out"
      fi
    done
  done
done

/usr/bin/python3 - "$out" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    kv = dict(zip(f[0::2], f[1::2]))
    key = (kv["model"], kv["batch"], kv["size"], kv["impl"])
    rows.setdefault(key, {}).setdefault(kv["checkpoint"], []).append(kv)
print("| model | batch | size | library | allocator peak MiB off → on | ratio | RSS growth MiB off → on | ratio | "
      "step ms off → on | ratio |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (model, batch, size, impl), modes in sorted(rows.items()):
    def med(mode, k):
        values = [r[k] for r in modes[mode] if r[k] != "-"]
        return statistics.median(map(float, values)) if values else None
    def pair(k, digits=0):
        a, b = med("off", k), med("on", k)
        if a is None:
            return "-", "-"
        return f"{a:.{digits}f} → {b:.{digits}f}", f"{b / a:.2f}"
    name = "cohort" if impl == "cohort" else "PyTorch 1.13"
    cells = [*pair("peak_mib"), *pair("rss_mib"), *pair("step_ms")]
    print(f"| {model} | {batch} | {size} | {name} | " + " | ".join(cells) + " |")
PY
