#!/usr/bin/python3
"""The peer of bench/ddp_bench.cpp in PyTorch: training throughput (forward, cross-entropy, backward, SGD
step) of the blitz CNN or ResNet-18 (random 3x32x32 images) or LeNet (1x28x28), with torch
DistributedDataParallel on Gloo when started as several ranks (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set), else one process.
Each rank trains on global batch / world size images per step; rank 0 prints global images/s.
   /usr/bin/python3 bench/ddp_torch.py <blitz-cnn|resnet18|lenet> <global batch> <threads> [reps=10] [warmup=2]"""
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blitz_cnn_torch import Net as BlitzCnn  # noqa: E402
from data_parallel_torch import ResNet18  # noqa: E402
from train_fashion_torch import LeNet  # noqa: E402


def main():
    arch, global_batch, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    warmup = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    torch.set_num_threads(threads)
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group("gloo")
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    torch.manual_seed(0)
    net = {"blitz-cnn": BlitzCnn, "resnet18": ResNet18, "lenet": LeNet}[arch]()
    net.train()
    model = torch.nn.parallel.DistributedDataParallel(net) if distributed else net
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    batch = global_batch // world
    torch.manual_seed(1 + rank)
    shape = (batch, 1, 28, 28) if arch == "lenet" else (batch, 3, 32, 32)  # Fashion-MNIST's, else CIFAR's
    images, labels = torch.randn(*shape), torch.randint(0, 10, (batch,))

    times = []
    for i in range(warmup + reps):
        start = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        opt.step()
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1000)
    m = statistics.median(times)
    if rank == 0:
        print(f"torch {arch} batch {global_batch} {world}x{threads}: median {m:.3f} ms/step, "
              f"{batch * world * 1000 / m:.1f} images/s ({reps} reps)")
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
