#!/usr/bin/python3
"""The benchmark workloads W1-W7 in PyTorch 1.13 (W7: bfloat16 under torch.autocast("cpu")), under the names of bench/workloads.cpp (same shapes,
same recipe), timed the same way: warm-up steps, then the median of `reps` steps. Prints one line:
"<name> threads <t> median_ms <m> reps <r> peak_rss_kb <k>".
   /usr/bin/python3 bench/workloads_torch.py <name> <threads> [reps=10] [warmup=2]   (or: list)
Run with Debian's /usr/bin/python3 (python3-torch) and OMP_NUM_THREADS=<threads>."""
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blitz_cnn_torch import Net as BlitzCnn  # noqa: E402
from data_parallel_torch import ResNet18  # noqa: E402
from train_fashion_torch import LeNet, load  # noqa: E402


def train_step(net, shape, classes=10, autocast=False):
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(*shape), torch.randint(0, classes, (shape[0],))

    def step():
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
    return step


def resnet_inference(batch, autocast=False):
    net = ResNet18().eval()
    x = torch.randn(batch, 3, 32, 32)

    def step():
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            net(x)
    return step


def branch():
    return nn.Sequential(nn.Conv2d(64, 32, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                         nn.Conv2d(32, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                         nn.Conv2d(32, 64, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())


class GroupedBottleneck(nn.Module):
    """The grouped bottleneck of examples/grouped_branches.cpp's blog post: groups 12, group_channels 64."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(64, 384, 1, bias=False), nn.BatchNorm2d(384), nn.ReLU(),
                                  nn.Conv2d(384, 384, 3, padding=1, groups=12, bias=False), nn.BatchNorm2d(384),
                                  nn.ReLU(), nn.Conv2d(384, 768, 1, groups=12, bias=False), nn.BatchNorm2d(768),
                                  nn.ReLU())

    def forward(self, x):
        return self.body(x)


class SerialBranches(nn.Module):
    def __init__(self):
        super().__init__()
        self.branches = nn.ModuleList([branch() for _ in range(12)])

    def forward(self, x):
        return torch.cat([b(x) for b in self.branches], 1)


def block_train(net, batch):
    x = torch.randn(batch, 64, 14, 14)
    return lambda: net(x).sum().backward()


def einsum_group_linear():
    w = torch.randn(12, 64, 32, requires_grad=True)
    x = torch.randn(8, 12, 64)
    return lambda: torch.einsum("bgi,gio->bgo", x, w).sum().backward()


def sgemm(n, dtype=torch.float32):
    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    return lambda: torch.mm(a, b)


def conv3x3(backward):
    conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
    x = torch.randn(8, 64, 56, 56, requires_grad=backward)
    if not backward:
        def forward():
            with torch.no_grad():
                conv(x)
        return forward
    return lambda: conv(x).sum().backward()


def lstm_train():
    lstm = nn.LSTM(512, 512, num_layers=2)
    x = torch.randn(64, 32, 512)
    return lambda: lstm(x)[0].sum().backward()


def transformer_layer_train():
    layer = nn.TransformerEncoderLayer(512, 8, dim_feedforward=2048, dropout=0.0)
    x = torch.randn(64, 32, 512)
    mask = nn.Transformer.generate_square_subsequent_mask(64)
    return lambda: layer(x, mask).sum().backward()


def lenet_epoch():
    data = load("/usr/share/datasets/fashion-mnist", True)
    loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True)
    net = LeNet()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    def epoch():
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(net(x), y).backward()
            opt.step()
    return epoch


WORKLOADS = {
    "W1_blitz_train_b4": lambda: train_step(BlitzCnn(), (4, 3, 32, 32)),
    "W1_blitz_train_b64": lambda: train_step(BlitzCnn(), (64, 3, 32, 32)),
    "W1_blitz_train_b256": lambda: train_step(BlitzCnn(), (256, 3, 32, 32)),
    "W2_lenet_fashion_epoch": lenet_epoch,
    "W3_grouped_bottleneck_b8": lambda: block_train(GroupedBottleneck(), 8),
    "W3_serial_branches_b8": lambda: block_train(SerialBranches(), 8),
    "W3_einsum_group_linear": einsum_group_linear,
    "W4_resnet18_train_b32": lambda: train_step(ResNet18(), (32, 3, 32, 32)),
    "W4_resnet18_infer_b128": lambda: resnet_inference(128),
    "W5_sgemm_512": lambda: sgemm(512),
    "W5_sgemm_1024": lambda: sgemm(1024),
    "W5_sgemm_2048": lambda: sgemm(2048),
    "W5_conv3x3_64_fwd": lambda: conv3x3(False),
    "W5_conv3x3_64_fwd_bwd": lambda: conv3x3(True),
    "W6_lstm_2x512_s64_b32": lstm_train,
    "W6_transformer_layer_d512_s64_b32": transformer_layer_train,
    "W7_bf16_blitz_train_b256": lambda: train_step(BlitzCnn(), (256, 3, 32, 32), autocast=True),
    "W7_bf16_resnet18_train_b32": lambda: train_step(ResNet18(), (32, 3, 32, 32), autocast=True),
    "W7_bf16_resnet18_infer_b128": lambda: resnet_inference(128, autocast=True),
    "W7_bf16_sgemm_2048": lambda: sgemm(2048, torch.bfloat16),
}


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "list":
        print("\n".join(sorted(WORKLOADS)))
        return
    if len(sys.argv) < 3 or sys.argv[1] not in WORKLOADS:
        sys.exit("usage: workloads_torch.py <name> <threads> [reps=10] [warmup=2]; `list` names them")
    name, threads = sys.argv[1], int(sys.argv[2])
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    warmup = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    step = WORKLOADS[name]()
    for _ in range(warmup):
        step()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1000)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{name} threads {threads} median_ms {statistics.median(times):.4f} reps {reps} peak_rss_kb {rss}")


if __name__ == "__main__":
    main()
