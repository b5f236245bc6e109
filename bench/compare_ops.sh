#!/usr/bin/env bash
# Runs bench/ops_bench (cohort, Google Benchmark) and bench/ops_torch.py (PyTorch) single-threaded,
# alternately for ROUNDS rounds, and prints a table: workload, cohort and torch (the median over
# rounds of each round's median), torch/cohort (a ratio above 1 means cohort is faster) with the
# lowest and highest per-round ratio (how noisy the machine was), and for the rows that count flops
# (mm_2048x2048*, conv2d_3x3_64*) the GFLOP/s of each and cohort's share of the peak per core that
# bench/fma_peak measures (float32 rows: its FMA peak; bf16 rows: the AMX tdpbf16ps peak where the
# CPU has AMX, else the vdpbf16ps one), when fma_peak is built. The table is of wall time; a second
# one gives process CPU time, which a busy machine disturbs less.
#
#   cmake -S . -B /tmp/benchbuild -DCMAKE_BUILD_TYPE=Release -DCOHORT_BUILD_BENCH=ON -DCOHORT_BUILD_TESTS=OFF
#   cmake --build /tmp/benchbuild -j2 --target ops_bench fma_peak
#   bench/compare_ops.sh [build-dir]        # default /tmp/benchbuild
#
# Caveat: Debian's python3-torch computes float32 mm through whatever libblas.so.3 the system's
# alternatives point at (BLAS_INFO=generic); when that is netlib's reference BLAS, torch's mm_512x512
# measures the reference BLAS, not a tuned one. `python3 -c "import torch; print(torch.__config__.show())"`
# and `ls -l /etc/alternatives/libblas.so.3*` tell which.
#
# Environment: ROUNDS (default 3), REPETITIONS (default 10), MIN_TIME (seconds per repetition, default 0.1),
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
rounds="${ROUNDS:-3}"

if [[ ! -x "$bench" ]]; then
  echo "compare_ops.sh: no $bench; build it with -DCOHORT_BUILD_BENCH=ON (see the top of this script)" >&2
  exit 2
fi

# One thread everywhere: OpenMP in cohort and oneDNN, intra-op threads in torch.
export OMP_NUM_THREADS=1

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

: >"$tmp/peaks"
if [[ -x "$build/fma_peak" ]]; then
  echo "running $build/fma_peak ..." >&2
  "$build/fma_peak" >"$tmp/peaks"
fi
for ((r = 1; r <= rounds; ++r)); do
  echo "round $r/$rounds: cohort ($bench) ..." >&2
  "$bench" --benchmark_repetitions="$reps" --benchmark_min_time="$min_time" \
           --benchmark_report_aggregates_only=true --benchmark_filter="${filter:-.}" \
           --benchmark_format=json >"$tmp/cohort.$r.json"
  echo "round $r/$rounds: torch ($python $here/ops_torch.py) ..." >&2
  "$python" "$here/ops_torch.py" --repetitions="$reps" --min-time="$min_time" --threads=1 \
            --filter="$filter" >"$tmp/torch.$r.tsv"
done

"$python" - "$tmp" "$rounds" <<'EOF'
import json, statistics, sys

tmp, rounds = sys.argv[1], int(sys.argv[2])
to_ns = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
per_round = {"cohort": [], "torch": []}  # per round: name -> (wall ns, cpu ns)
for r in range(1, rounds + 1):
    c = {}
    for b in json.load(open(f"{tmp}/cohort.{r}.json"))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            scale = to_ns[b["time_unit"]]
            name = b["run_name"].removesuffix("/process_time")  # MeasureProcessCPUTime's suffix
            c[name] = (b["real_time"] * scale, b["cpu_time"] * scale)
    per_round["cohort"].append(c)
    t = {}
    for line in open(f"{tmp}/torch.{r}.tsv"):
        name, wall, cpu = line.split("\t")
        t[name] = (float(wall), float(cpu))
    per_round["torch"].append(t)

def across(side, name, k):
    v = [r[name][k] for r in per_round[side] if name in r]
    return statistics.median(v) if v else None

names = list(per_round["cohort"][0]) + [n for n in per_round["torch"][0] if n not in per_round["cohort"][0]]
cohort = {n: (across("cohort", n, 0), across("cohort", n, 1)) for n in names if n in per_round["cohort"][0]}
torch = {n: (across("torch", n, 0), across("torch", n, 1)) for n in names if n in per_round["torch"][0]}

peaks = {}
for line in open(f"{tmp}/peaks"):
    f = line.split()
    if len(f) >= 2:
        peaks[f[0]] = float(f[1])
conv = 2.0 * 8 * 64 * 56 * 56 * 64 * 9
flops = {"mm_2048x2048": 2.0 * 2048 ** 3, "mm_2048x2048_bf16": 2.0 * 2048 ** 3,
         "conv2d_3x3_64_fwd": conv, "conv2d_3x3_64_fwd_bwd": 3 * conv,
         "conv2d_3x3_64_bf16_fwd": conv, "conv2d_3x3_64_bf16_fwd_bwd": 3 * conv}
bf16_peak = peaks.get("amx_bf16_peak_gflops") or peaks.get("bf16_peak_gflops")
if peaks:
    print(f"peaks per core (bench/fma_peak): float32 FMA {peaks.get('fma_peak_gflops', 0):.0f}, "
          f"vdpbf16ps {peaks.get('bf16_peak_gflops', 0):.0f}, AMX tdpbf16ps {peaks.get('amx_bf16_peak_gflops', 0):.0f} GFLOP/s; "
          f"{rounds} rounds, cohort and torch alternately\n")

def fmt(ns):
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}" if ns / scale < 1000 else f"{ns / scale:.0f} {unit}"
    return f"{ns:.0f} ns"

def ratio_range(n, k):
    v = [t[n][k] / c[n][k] for c, t in zip(per_round["cohort"], per_round["torch"]) if n in c and n in t and c[n][k]]
    return f"{min(v):.2f}-{max(v):.2f}" if v else "-"

for k, title in ((0, "wall time"), (1, "process CPU time")):
    rows = [("workload", "cohort median", "torch median", "torch/cohort", "range", "cohort GFLOP/s", "torch GFLOP/s",
             "cohort % of peak")]
    for n in names:
        c = cohort[n][k] if n in cohort else None
        t = torch[n][k] if n in torch else None
        ratio = f"{t / c:.2f}" if c and t else "-"
        gc = gt = share = "-"
        if n in flops:
            gc = f"{flops[n] / c:.0f}" if c else "-"
            gt = f"{flops[n] / t:.0f}" if t else "-"
            peak = bf16_peak if "bf16" in n else peaks.get("fma_peak_gflops")
            share = f"{100 * flops[n] / c / peak:.0f}%" if c and peak else "-"
        rows.append((n, fmt(c), fmt(t), ratio, ratio_range(n, k), gc, gt, share))
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print(f"{'' if k == 0 else chr(10)}median {title} per iteration, 1 thread")
    for i, r in enumerate(rows):
        print("  ".join(f"{x:<{w[j]}}" if j == 0 else f"{x:>{w[j]}}" for j, x in enumerate(r)))
        if i == 0:
            print("  ".join("-" * x for x in w))
EOF
