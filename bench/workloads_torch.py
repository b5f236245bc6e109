#!/usr/bin/python3
"""The benchmark workloads W1-W8 in PyTorch (W7: bfloat16 under torch.autocast("cpu")), under the names of
bench/workloads.cpp (same shapes, same recipe), timed the same way: warm-up steps, then the median of `reps`
steps. Prints one line: "<name> threads <t> median_ms <m> reps <r> peak_rss_kb <k>".
   python bench/workloads_torch.py <name> <threads> [reps=10] [warmup=2] [--compile]   (or: list)
Runs under PyTorch 1.13 (Debian's /usr/bin/python3 with python3-torch) and 2.x (the venv that
bench/setup_peers.sh makes), with OMP_NUM_THREADS=<threads>.

--compile (PyTorch 2.x) puts each workload's step through torch.compile: the whole training step, so that
dynamo compiles the forward and backward graphs and the optimizer's update, with graph breaks at backward()
(the epoch workload compiles its per-batch step, DCGAN its networks and updates one by one). At least 3
warm-up steps run: the first compiles, and the next ones recompile where the optimizer's state appears. The
line then ends with "graphs <g> timed_compiles <c> vec_isa <isa>": the graphs dynamo compiled, how many of
them it compiled during the timed steps (should be 0), and the vector ISA of inductor's kernels ("none":
scalar; see prepare_inductor). Where compiling cannot apply (torch 1.13, a bare matmul) or
fails, the line is "<name> threads <t> skipped <reason>" instead."""
import glob
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

# What each workload's step goes through: torch.compile under --compile, else nothing.
compiled = lambda fn: fn  # noqa: E731

# The workloads --compile leaves alone, and why: inductor hands a lone matmul to the same BLAS call eager
# makes, so the column would only time dynamo's guards.
NOT_COMPILED = {name: "a single matmul, nothing to fuse"
                for name in ("W5_sgemm_512", "W5_sgemm_1024", "W5_sgemm_2048", "W7_bf16_sgemm_2048")}


def train_step(net, shape, classes=10, autocast=False):
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(*shape), torch.randint(0, classes, (shape[0],))

    def step():
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
    return compiled(step)


def resnet_inference(batch, autocast=False):
    net = ResNet18().eval()
    x = torch.randn(batch, 3, 32, 32)

    def step():
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            net(x)
    return compiled(step)


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
    return compiled(lambda: net(x).sum().backward())


def einsum_group_linear():
    w = torch.randn(12, 64, 32, requires_grad=True)
    x = torch.randn(8, 12, 64)
    return compiled(lambda: torch.einsum("bgi,gio->bgo", x, w).sum().backward())


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
        return compiled(forward)
    return compiled(lambda: conv(x).sum().backward())


def lstm_train():
    lstm = nn.LSTM(512, 512, num_layers=2)
    x = torch.randn(64, 32, 512)
    return compiled(lambda: lstm(x)[0].sum().backward())


def transformer_layer_train():
    layer = nn.TransformerEncoderLayer(512, 8, dim_feedforward=2048, dropout=0.0)
    x = torch.randn(64, 32, 512)
    mask = nn.Transformer.generate_square_subsequent_mask(64)
    return compiled(lambda: layer(x, mask).sum().backward())


def lenet_epoch():
    data = load("/usr/share/datasets/fashion-mnist", True)
    loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True)
    net = LeNet()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    @compiled
    def train_batch(x, y):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()

    def epoch():
        for x, y in loader:
            train_batch(x, y)
    return epoch


def dcgan_train(batch):
    """The libtorch DCGAN example's networks and training step on 28x28 single-channel images, with a fixed
    random "real" batch in [-1, 1] in place of MNIST: the discriminator's update on the real batch (labels
    drawn in [0.8, 1]) and a generated one (labels 0), then the generator's (labels 1), each with Adam
    (lr 2e-4, betas 0.5, 0.999) on binary cross-entropy. No convolution has a bias, as there.

    torch.compile takes the two networks and the two updates one by one, not the whole step: there, the
    generator's forward and the discriminator's on the fake batch land in one compiled autograd node, whose
    saved tensors the discriminator's backward frees before the generator's backward needs them."""
    generator = nn.Sequential(
        nn.ConvTranspose2d(100, 256, 4, bias=False), nn.BatchNorm2d(256), nn.ReLU(),  # 4x4
        nn.ConvTranspose2d(256, 128, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(128), nn.ReLU(),  # 7x7
        nn.ConvTranspose2d(128, 64, 4, stride=2, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),  # 14x14
        nn.ConvTranspose2d(64, 1, 4, stride=2, padding=1, bias=False), nn.Tanh())  # 28x28
    discriminator = nn.Sequential(
        nn.Conv2d(1, 64, 4, stride=2, padding=1, bias=False), nn.LeakyReLU(0.2),  # 14x14
        nn.Conv2d(64, 128, 4, stride=2, padding=1, bias=False), nn.BatchNorm2d(128), nn.LeakyReLU(0.2),  # 7x7
        nn.Conv2d(128, 256, 4, stride=2, padding=1, bias=False), nn.BatchNorm2d(256), nn.LeakyReLU(0.2),  # 3x3
        nn.Conv2d(256, 1, 3, bias=False), nn.Sigmoid())  # 1x1
    g_opt = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    d_opt = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = torch.rand(batch, 1, 28, 28) * 2 - 1
    generator, discriminator = compiled(generator), compiled(discriminator)
    g_update, d_update = compiled(g_opt.step), compiled(d_opt.step)

    def d(images):
        return discriminator(images).reshape(batch)

    def step():
        d_opt.zero_grad()
        F.binary_cross_entropy(d(real), torch.empty(batch).uniform_(0.8, 1.0)).backward()
        fake = generator(torch.randn(batch, 100, 1, 1))
        F.binary_cross_entropy(d(fake.detach()), torch.zeros(batch)).backward()
        d_update()
        g_opt.zero_grad()
        F.binary_cross_entropy(d(fake), torch.ones(batch)).backward()
        g_update()
    return step


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
    "W8_dcgan_train_b64": lambda: dcgan_train(64),
}


def prepare_inductor():
    """Makes inductor link its C++ kernels against this torch, and returns the vector ISA it will generate
    code for ("none": scalar code). Inductor puts Python's LIBDIR ahead of torch's own directory on the link
    line; Debian's python3 has LIBDIR /usr/lib/x86_64-linux-gnu, where libtorch-dev installs libtorch 1.13,
    so the kernels link against that torch, inductor's probe of the ISA fails to load, and every kernel is
    scalar (the blitz CNN step at batch 64 took 24 ms instead of 14). Naming this torch's directory first
    fixes it. Inductor's cache moves into the venv: the default one may hold the probe linked the wrong way,
    under the same key."""
    import sysconfig
    import torch._inductor.config as inductor
    from torch.utils.cpp_extension import TORCH_LIB_PATH
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(sys.prefix, "inductor-cache")
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    if (glob.glob(os.path.join(libdir, "libtorch_cpu.so*"))
            and os.path.realpath(libdir) != os.path.realpath(TORCH_LIB_PATH)):
        cxx = inductor.cpp.cxx[-1] if isinstance(inductor.cpp.cxx, tuple) else inductor.cpp.cxx
        inductor.cpp.cxx = (None, f"{cxx} -L{TORCH_LIB_PATH}")
    try:
        from torch._inductor.cpu_vec_isa import pick_vec_isa
    except ImportError:  # before 2.4
        from torch._inductor.codecache import pick_vec_isa
    isa = pick_vec_isa()
    return str(isa).replace(" ", "+") if isa else "none"


def compiled_graphs():
    """The graphs dynamo has compiled in this process so far."""
    from torch._dynamo.utils import counters
    return counters["stats"]["unique_graphs"]


def main():
    global compiled
    args = [a for a in sys.argv[1:] if a != "--compile"]
    compile_ = len(args) < len(sys.argv) - 1
    if args == ["list"]:
        print("\n".join(sorted(WORKLOADS)))
        return
    if len(args) < 2 or args[0] not in WORKLOADS:
        sys.exit("usage: workloads_torch.py <name> <threads> [reps=10] [warmup=2] [--compile]; `list` names them")
    name, threads = args[0], int(args[1])
    reps = int(args[2]) if len(args) > 2 else 10
    warmup = int(args[3]) if len(args) > 3 else 2
    if compile_:
        reason = (f"torch {torch.__version__} has no torch.compile" if not hasattr(torch, "compile")
                  else NOT_COMPILED.get(name))
        if reason:
            print(f"{name} threads {threads} skipped {reason}")
            return
        compiled = torch.compile
        warmup = max(warmup, 3)
        vec_isa = prepare_inductor()
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    step = WORKLOADS[name]()
    try:
        for _ in range(warmup):
            step()
    except Exception as e:
        if not compile_:
            raise
        # bench/compare puts the reason in its table's note column: one short line.
        reason = (str(e).strip().splitlines() or [""])[0][:160]
        print(f"{name} threads {threads} skipped torch.compile failed: {type(e).__name__}: {reason}")
        sys.exit(1)
    graphs_before = compiled_graphs() if compile_ else 0
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1000)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    line = f"{name} threads {threads} median_ms {statistics.median(times):.4f} reps {reps} peak_rss_kb {rss}"
    if compile_:
        graphs = compiled_graphs()
        line += f" graphs {graphs} timed_compiles {graphs - graphs_before} vec_isa {vec_isa}"
    print(line)


if __name__ == "__main__":
    main()
