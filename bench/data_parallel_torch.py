#!/usr/bin/python3
"""The peer of bench/data_parallel_bench.cpp in PyTorch: training throughput (forward, cross-entropy,
backward, SGD step) of the blitz CNN or a CIFAR-stem ResNet-18 on random 3x32x32 images, single
process with `threads` intra-op threads (torch.nn.DataParallel is CUDA-only, so there is no CPU
data-parallel setup to compare with).
   /usr/bin/python3 bench/data_parallel_torch.py <blitz-cnn|resnet18> <batch> <threads> [reps=10] [warmup=2]"""
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blitz_cnn_torch import Net as BlitzCnn  # noqa: E402


class Block(nn.Module):
    """Two 3x3 convolutions with batch norm and a shortcut (a 1x1 projection when the shape changes)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(out + (x if self.shortcut is None else self.shortcut(x)))


class ResNet18(nn.Module):
    """cohort's models::create("resnet18"): a 3x3 stem without pooling, 2 blocks per stage."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        stages, cin = [], 64
        for i, width in enumerate([64, 128, 256, 512]):
            stages += [Block(cin, width, 1 if i == 0 else 2), Block(width, width, 1)]
            cin = width
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.stages(F.relu(self.bn1(self.conv1(x))))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def main():
    arch, batch, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    warmup = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    net = {"blitz-cnn": BlitzCnn, "resnet18": ResNet18}[arch]()
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    images, labels = torch.randn(batch, 3, 32, 32), torch.randint(0, 10, (batch,))

    def step():
        opt.zero_grad()
        F.cross_entropy(net(images), labels).backward()
        opt.step()

    for _ in range(warmup):
        step()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    m = statistics.median(times)
    print(f"torch {arch} batch {batch} 1x{threads}: median {m:.3f} ms/step, {batch * 1000 / m:.1f} images/s ({reps} reps)")


if __name__ == "__main__":
    main()
