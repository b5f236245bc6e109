#!/usr/bin/python3
"""The PyTorch side of `cohort train`'s quality and speed claims: the same recipe in PyTorch 1.13.

LeNet on Fashion-MNIST (the Debian package dataset-fashion-mnist), inputs scaled to [0, 1] and
normalised with mean 0.2860 and std 0.3530, batch 64, SGD lr 0.01 momentum 0.9, shuffled every epoch.
Prints one line per epoch (test accuracy, images/s of the training loop) and a JSON summary.

    OMP_NUM_THREADS=2 /usr/bin/python3 bench/train_fashion_torch.py --epochs 3 --threads 2
Run it with Debian's /usr/bin/python3 (python3-torch); the python3 first on PATH may lack torch.
"""
import argparse
import gzip
import json
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(root, train):
    prefix = "train" if train else "t10k"
    images = read_idx(f"{root}/{prefix}-images-idx3-ubyte.gz").astype(np.float32) / 255.0
    labels = read_idx(f"{root}/{prefix}-labels-idx1-ubyte.gz").astype(np.int64)
    x = (torch.from_numpy(images).unsqueeze(1) - 0.2860) / 0.3530
    return torch.utils.data.TensorDataset(x, torch.from_numpy(labels))


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 4 * 4, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0, help="only the first N train/test images")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    train, test = load(args.data_dir, True), load(args.data_dir, False)
    if args.limit:
        # As cohort train --limit: the first N of each set, or all of a set that is smaller.
        train = torch.utils.data.Subset(train, range(min(args.limit, len(train))))
        test = torch.utils.data.Subset(test, range(min(args.limit, len(test))))
    train_loader = torch.utils.data.DataLoader(train, batch_size=args.batch_size, shuffle=True)
    test_loader = torch.utils.data.DataLoader(test, batch_size=256)
    net = LeNet()
    opt = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=args.momentum)

    epochs = []
    for epoch in range(args.epochs):
        net.train()
        start, seen = time.perf_counter(), 0
        for x, y in train_loader:
            opt.zero_grad()
            loss = F.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            seen += len(y)
        seconds = time.perf_counter() - start
        net.eval()
        correct = 0
        with torch.no_grad():
            for x, y in test_loader:
                correct += (net(x).argmax(1) == y).sum().item()
        acc = correct / len(test)
        epochs.append({"epoch": epoch, "test_acc": acc, "seconds": seconds, "images_per_s": seen / seconds})
        print(f"torch epoch {epoch + 1}/{args.epochs}: test acc {100 * acc:.2f}% | {seconds:.1f} s, "
              f"{seen / seconds:.0f} images/s", flush=True)
    print(json.dumps({"framework": "torch " + torch.__version__, "threads": args.threads, "epochs": epochs}))


if __name__ == "__main__":
    main()
