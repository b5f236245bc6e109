#!/usr/bin/python3
"""The blitz CIFAR-10 network's training step in PyTorch, timed like bench/blitz_cnn.cpp.
   /usr/bin/python3 bench/blitz_cnn_torch.py [batch=64] [reps=20]"""
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, 400)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def main():
    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    torch.manual_seed(0)
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    images, labels = torch.randn(batch, 3, 32, 32), torch.randint(0, 10, (batch,))

    def step():
        opt.zero_grad()
        F.cross_entropy(net(images), labels).backward()
        opt.step()

    for _ in range(3):
        step()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    print(f"torch blitz_cnn train step, batch {batch}: median {statistics.median(times):.3f} ms")


if __name__ == "__main__":
    main()
