#!/usr/bin/env bash
# Runs bench/ops_bench (cohort, Google Benchmark) and bench/ops_torch.py (PyTorch) single-threaded,
# one after the other, and prints a table of medians: workload, cohort, torch, torch/cohort
# (a ratio above 1 means cohort is faster). The table is of wall time; a second one gives process
# CPU time, which a busy machine disturbs less.
#
#   cmake -S . -B /tmp/benchbuild -DCMAKE_BUILD_TYPE=Release -DCOHORT_BUILD_BENCH=ON -DCOHORT_BUILD_TESTS=OFF
#   cmake --build /tmp/benchbuild -j2 --target ops_bench
#   bench/compare_ops.sh [build-dir]        # default /tmp/benchbuild
#
# Caveat: Debian's python3-torch computes float32 mm through whatever libblas.so.3 the system's
# alternatives point at (BLAS_INFO=generic); when that is netlib's reference BLAS, torch's mm_512x512
# measures the reference BLAS, not a tuned one. `python3 -c "import torch; print(torch.__config__.show())"`
# and `ls -l /etc/alternatives/libblas.so.3*` tell which.
#
# Environment: REPETITIONS (default 10), MIN_TIME (seconds per repetition, default 0.1),
# PYTHON (default /usr/bin/python3), FILTER (substring of workload names). Other variables, such
# as OPENBLAS_CORETYPE, are passed through unchanged.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:-/tmp/benchbuild}"
bench="$build/ops_bench"
python="${PYTHON:-/usr/bin/python3}"
reps="${REPETITIONS:-10}"
min_time="${MIN_TIME:-0.1}"
filter="${FILTER:-}"

if [[ ! -x "$bench" ]]; then
  echo "compare_ops.sh: no $bench; build it with -DCOHORT_BUILD_BENCH=ON (see the top of this script)" >&2
  exit 2
fi

# One thread everywhere: OpenMP in cohort and oneDNN, intra-op threads in torch.
export OMP_NUM_THREADS=1

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "running cohort ($bench) ..." >&2
"$bench" --benchmark_repetitions="$reps" --benchmark_min_time="$min_time" \
         --benchmark_report_aggregates_only=true --benchmark_filter="${filter:-.}" \
         --benchmark_format=json >"$tmp/cohort.json"
echo "running torch ($python $here/ops_torch.py) ..." >&2
"$python" "$here/ops_torch.py" --repetitions="$reps" --min-time="$min_time" --threads=1 \
          --filter="$filter" >"$tmp/torch.tsv"

"$python" - "$tmp/cohort.json" "$tmp/torch.tsv" <<'EOF'
import json, sys

to_ns = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
cohort = {}  # name -> (wall ns, cpu ns)
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") == "median":
        scale = to_ns[b["time_unit"]]
        name = b["run_name"].removesuffix("/process_time")  # MeasureProcessCPUTime's suffix
        cohort[name] = (b["real_time"] * scale, b["cpu_time"] * scale)
torch = {}
for line in open(sys.argv[2]):
    name, wall, cpu = line.split("\t")
    torch[name] = (float(wall), float(cpu))

def fmt(ns):
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}" if ns / scale < 1000 else f"{ns / scale:.0f} {unit}"
    return f"{ns:.0f} ns"

names = list(cohort) + [n for n in torch if n not in cohort]
for k, title in ((0, "wall time"), (1, "process CPU time")):
    rows = [("workload", "cohort median", "torch median", "torch/cohort")]
    for n in names:
        c = cohort[n][k] if n in cohort else None
        t = torch[n][k] if n in torch else None
        ratio = f"{t / c:.2f}" if c and t else "-"
        rows.append((n, fmt(c), fmt(t), ratio))
    w = [max(len(r[i]) for r in rows) for i in range(4)]
    print(f"{'' if k == 0 else chr(10)}median {title} per iteration, 1 thread")
    for i, r in enumerate(rows):
        print(f"{r[0]:<{w[0]}}  {r[1]:>{w[1]}}  {r[2]:>{w[2]}}  {r[3]:>{w[3]}}")
        if i == 0:
            print("  ".join("-" * x for x in w))
EOF
