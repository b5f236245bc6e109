#!/usr/bin/python3
"""The PyTorch side of bench/profiler_overhead.sh: torch.profiler's cost on the main job's step.

LeNet (bench/train_fashion_torch.py's) on Fashion-MNIST batches of 64, SGD lr 0.01 momentum 0.9, one
thread. Times STEPS training steps without a profiler and inside torch.profiler.profile (CPU
activities, record_shapes and profile_memory, as cohort's profile records shapes and bytes),
alternating REPEATS times, and prints one JSON line: the median images/s of each.

    /usr/bin/python3 bench/profiler_overhead_torch.py --steps 200 --repeats 5
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

from train_fashion_torch import LeNet, load


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    data = load(args.data_dir, True)
    loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True, drop_last=True)
    model = LeNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def run(steps):
        it = iter(loader)
        start = time.perf_counter()
        for _ in range(steps):
            x, y = next(it)
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
        return steps * 64 / (time.perf_counter() - start)

    run(20)  # warm-up
    off, on = [], []
    for _ in range(args.repeats):
        off.append(run(args.steps))
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                                    profile_memory=True):
            on.append(run(args.steps))
    print(json.dumps({"off": statistics.median(off), "on": statistics.median(on)}))


if __name__ == "__main__":
    main()
