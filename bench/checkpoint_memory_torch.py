#!/usr/bin/env python3
"""PyTorch's side of bench/checkpoint_memory.sh: the same training step (forward, cross entropy,
backward) with activation checkpointing off or on, one mode per process, printed in
checkpoint_memory's format. PyTorch has no allocator statistics on the CPU, so peak_mib is "-" and
rss_mib (the resident set's growth from before the first step to its peak) is the comparison.
Checkpointing is torch.utils.checkpoint (use_reentrant=False), placed as cohort places it: torchvision's
ResNet by block (its stem too) but the last, the transformer by residual step but the last.
    /usr/bin/python3 bench/checkpoint_memory_torch.py MODEL off|on [batch] [size] [steps] [threads]
"""
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


def vm(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return float(line.split()[1]) / 1024.0
    return -1.0


class CharTransformer(nn.Module):
    """cohort's char-transformer: width 128, 4 heads, feed-forward 512, GELU, pre-norm, 2 layers."""

    def __init__(self, vocab, context, on):
        super().__init__()
        self.embedding, self.position = nn.Embedding(vocab, 128), nn.Embedding(context, 128)
        layer = nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm, self.fc, self.on = nn.LayerNorm(128), nn.Linear(128, vocab), on

    def forward(self, x):
        t = x.shape[1]
        h = self.embedding(x) + self.position(torch.arange(t))
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        for i, layer in enumerate(self.encoder.layers):
            if not self.on:
                h = layer(h, mask)
                continue
            # By residual step, as cohort: self-attention with its norm, then the feed-forward with its norm.
            def attention(x, layer=layer):
                return x + layer._sa_block(layer.norm1(x), mask, None)

            def feed_forward(x, layer=layer):
                return x + layer._ff_block(layer.norm2(x))

            h = checkpoint(attention, h, use_reentrant=False)
            last = i + 1 == len(self.encoder.layers)
            h = feed_forward(h) if last else checkpoint(feed_forward, h, use_reentrant=False)
        return self.fc(self.norm(h).reshape(-1, 128))


class CheckpointedResNet(nn.Module):
    def __init__(self, net, on):
        super().__init__()
        self.net, self.on = net, on

    def forward(self, x):
        n = self.net
        stem = nn.Sequential(n.conv1, n.bn1, n.relu, n.maxpool)
        if not self.on:
            return n(x)
        x = checkpoint(stem, x, use_reentrant=False)
        blocks = [b for layer in (n.layer1, n.layer2, n.layer3, n.layer4) for b in layer]
        for i, block in enumerate(blocks):
            x = block(x) if i + 1 == len(blocks) else checkpoint(block, x, use_reentrant=False)
        return n.fc(torch.flatten(n.avgpool(x), 1))


def main():
    model, mode = sys.argv[1], sys.argv[2]
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 32
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    if len(sys.argv) > 6 and int(sys.argv[6]) > 0:
        torch.set_num_threads(int(sys.argv[6]))
    on = mode == "on"
    torch.manual_seed(0)
    if model == "char-transformer":
        net = CharTransformer(96, size, on)
        x, y = torch.randint(0, 96, (batch, size)), torch.randint(0, 96, (batch * size,))
    else:
        import torchvision
        net = CheckpointedResNet(getattr(torchvision.models, model)(num_classes=10), on)
        x, y = torch.randn(batch, 3, size, size), torch.randint(0, 10, (batch,))
    net.train()
    before = vm("VmRSS")
    times = []
    for s in range(steps + 1):
        for p in net.parameters():
            p.grad = None
        t0 = time.perf_counter()
        F.cross_entropy(net(x), y).backward()
        if s > 0:
            times.append((time.perf_counter() - t0) * 1000)
    rss = vm("VmHWM") - before
    times.sort()
    print(f"model {model} batch {batch} size {size} checkpoint {mode} peak_mib - rss_mib {rss:.1f} "
          f"step_ms {times[len(times) // 2]:.1f} grad_diff -")


if __name__ == "__main__":
    main()
