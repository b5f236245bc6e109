#!/usr/bin/env bash
# Installs cohort's build and test dependencies (Debian 12 packages). Idempotent: does nothing
# when everything is installed. --oracle also installs PyTorch (fixtures, benchmark peer) and the ONNX checkers.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  ccache                           # rebuilds of the same sources (CI re-runs, the two builds) hit its cache
  libdnnl-dev ocl-icd-opencl-dev   # oneDNN's CMake config needs OpenCL (only "Recommended")
  zlib1g-dev nlohmann-json3-dev libcli11-dev libstb-dev
  libzip-dev                       # io: reading PyTorch's torch.save files (zip archives)
  libturbojpeg0-dev                # io::read_image: JPEG (TurboJPEG API, DCT-domain downscaling)
  python3-pil python3-numpy        # scripts/make_shapes_dataset.py; decoder fixtures (tests/fixtures)
  libgloo-dev                      # distributed: the Gloo process group (TCP transport, file/Redis store)
  redis-server iproute2            # tests/apps/two_machines_test: a Redis store, network namespaces
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-14 libclang-rt-14-dev      # scripts/fuzz.sh: the libFuzzer targets (fuzz/) build with clang
  libtorch-dev                     # tests/compat: the same programs built against libtorch
  dataset-fashion-mnist
  fortunes                         # a text corpus for the char-level language model (--dataset text:)
)

for arg in "$@"; do
  case $arg in
    # OpenBLAS: without it Debian's torch runs matmuls on the reference BLAS, 40x slower, an unfair peer.
    # python3-onnx and python3-opencv: tests/fixtures/check_onnx.py checks io::export_onnx's models.
    --oracle) packages+=(python3-torch python3-torchvision libopenblas0-pthread python3-onnx python3-opencv) ;;
    -h|--help) echo "usage: $0 [--oracle]"; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$arg'; usage: $0 [--oracle]" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ $status == installed ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=()
if ((EUID != 0)); then
  command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
