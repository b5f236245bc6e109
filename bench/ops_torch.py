#!/usr/bin/python3
"""PyTorch timings of the workloads in bench/ops_bench.cpp, under the same names.

Prints one line per workload: "<name>\t<median wall ns>\t<median process-CPU ns>" per iteration.
Each workload is calibrated to run about --min-time seconds per repetition; the medians over
--repetitions are reported, as Google Benchmark's median aggregate is. Run single-threaded (bench/compare_ops.sh does):
    OMP_NUM_THREADS=1 /usr/bin/python3 bench/ops_torch.py
"""
import argparse
import statistics
import sys
import time

import torch

MILLION = 1 << 20


def workloads():
    torch.manual_seed(0)
    a1m, b1m = torch.randn(MILLION), torch.randn(MILLION)
    g1m, y1m = torch.randn(MILLION), torch.randn(MILLION).relu()
    big, row = torch.randn(1000, 1000), torch.randn(1000)
    s = torch.randn(256, 1000)
    m1, m2 = torch.randn(512, 512), torch.randn(512, 512)
    t1, t2 = torch.randn(4), torch.randn(4)
    x = torch.randn(64, 64, requires_grad=True)
    w = (torch.randn(64, 64) * 0.1).requires_grad_()
    k1, k2 = torch.randn(2048, 2048), torch.randn(2048, 2048)
    k1b, k2b = k1.bfloat16(), k2.bfloat16()

    def conv_layer(dtype, backward):
        cx = torch.randn(8, 64, 56, 56).to(dtype).requires_grad_(backward)
        cw = (torch.randn(64, 64, 3, 3) * 0.05).to(dtype).requires_grad_(backward)
        cg = torch.randn(8, 64, 56, 56).to(dtype)

        def step():
            y = torch.nn.functional.conv2d(cx, cw, None, 1, 1)
            if backward:
                cx.grad = None
                cw.grad = None
                y.backward(cg)
        return step

    def autograd_10ops():
        x.grad = None
        w.grad = None
        a = x * w           # 1
        b = a + x           # 2
        c = b.relu()        # 3
        d = c.mm(w)         # 4
        e = d.tanh()        # 5
        f = e * e           # 6
        g = f - x           # 7
        h = g.sigmoid()     # 8
        i = h * w           # 9
        loss = i.sum()      # 10
        loss.backward()

    return [
        ("add_1M", lambda: a1m + b1m),
        ("add_broadcast_1000x1000_1000", lambda: big + row),
        ("relu_1M", lambda: a1m.relu()),
        ("threshold_backward_1M", lambda: torch.ops.aten.threshold_backward(g1m, y1m, 0)),
        ("clamp_1M", lambda: a1m.clamp(-0.5, 0.5)),
        ("exp_1M", lambda: a1m.exp()),
        ("sum_1M", lambda: a1m.sum()),
        ("sum_dim0_1000x1000", lambda: big.sum(0)),
        ("softmax_256x1000_dim1", lambda: s.softmax(1)),
        ("mm_512x512", lambda: m1.mm(m2)),
        ("mm_2048x2048", lambda: k1.mm(k2)),
        ("mm_2048x2048_bf16", lambda: k1b.mm(k2b)),
        ("conv2d_3x3_64_fwd", conv_layer(torch.float32, False)),
        ("conv2d_3x3_64_fwd_bwd", conv_layer(torch.float32, True)),
        ("conv2d_3x3_64_bf16_fwd", conv_layer(torch.bfloat16, False)),
        ("conv2d_3x3_64_bf16_fwd_bwd", conv_layer(torch.bfloat16, True)),
        ("add_tiny_4", lambda: t1 + t2),
        ("autograd_10ops_64x64", autograd_10ops),
    ]


def time_per_iter(fn, n):
    """(wall ns, process CPU ns) per call, over n calls."""
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    for _ in range(n):
        fn()
    return (time.perf_counter_ns() - wall) / n, (time.process_time_ns() - cpu) / n


def median_ns(fn, repetitions, min_time):
    fn()  # warm up (first-call allocations, oneDNN/MKL initialisation)
    n = 1
    while True:  # grow n until one repetition takes min_time, as Google Benchmark does
        t, _ = time_per_iter(fn, n)
        if t * n >= min_time * 1e9 or n >= 1 << 30:
            break
        n = max(n * 2, int(min_time * 1e9 / max(t, 1.0) * 1.2))
    runs = [time_per_iter(fn, n) for _ in range(repetitions)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--min-time", type=float, default=0.1, help="seconds per repetition")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--filter", default="", help="only workloads whose name contains this")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    print(f"# torch {torch.__version__}, {torch.get_num_threads()} thread(s)", file=sys.stderr)
    for name, fn in workloads():
        if args.filter in name:
            wall, cpu = median_ns(fn, args.repetitions, args.min_time)
            print(f"{name}\t{wall:.1f}\t{cpu:.1f}", flush=True)


if __name__ == "__main__":
    main()
