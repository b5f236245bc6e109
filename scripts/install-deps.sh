#!/usr/bin/env bash
# Installs cohort's dependencies (Debian 12 packages). Idempotent: does nothing when everything is
# installed. Without options: what building and installing the library and the `cohort` program
# need, and what `scripts/train.sh` (the main job) and the program's default data sets read.
#   --tests   also what only the test command (scripts/test.sh) needs: GoogleTest, clang (libFuzzer,
#             the headers check), libtorch (tests/compat), Redis and iproute2, Doxygen
#   --oracle  also PyTorch (fixtures, the tests that hand files to torch.load, the benchmark peer),
#             the ONNX checkers and Google Benchmark (bench/ops_bench)
set -euo pipefail

usage="usage: $0 [--tests] [--oracle]"

# Everything here is found by the library's or the program's CMake configure step, or read at run time
# by `cohort train` with its defaults; CMakeLists.txt finds none of the --tests packages unless
# COHORT_BUILD_TESTS=ON.
packages=(
  build-essential cmake pkg-config
  ccache                           # scripts/train.sh and test.sh compile through it: a rebuild hits its cache
  libdnnl-dev ocl-icd-opencl-dev   # oneDNN's CMake config needs OpenCL (only "Recommended")
  zlib1g-dev nlohmann-json3-dev libcli11-dev libstb-dev
  libzip-dev                       # io: reading PyTorch's torch.save files (zip archives)
  libturbojpeg0-dev                # io::read_image: JPEG (TurboJPEG API, DCT-domain downscaling)
  libgloo-dev                      # distributed: the Gloo process group (TCP transport, file/Redis store)
  dataset-fashion-mnist            # scripts/train.sh's data; `cohort train --dataset fashion-mnist`
  fortunes                         # the default corpus of `cohort train --dataset text` (a char-level model)
  python3-pil python3-numpy        # scripts/make_shapes_dataset.py (README: "Your own images"); decoder fixtures
)

tests=(
  libgtest-dev libgmock-dev        # cohort_tests (COHORT_BUILD_TESTS=ON)
  clang-14 libclang-rt-14-dev      # scripts/fuzz.sh (libFuzzer targets, fuzz/); scripts/check_headers.sh
  libtorch-dev                     # tests/compat: the same programs built against libtorch
  redis-server iproute2            # tests/apps/two_machines_test: a Redis store, network namespaces
  doxygen                          # the `docs` target (the API reference), checked by scripts/test.sh
)

# OpenBLAS: without it Debian's torch runs matmuls on the reference BLAS, 40x slower, an unfair peer.
# python3-onnx and python3-opencv: tests/fixtures/check_onnx.py checks io::export_onnx's models.
# libbenchmark-dev: COHORT_BUILD_BENCH=ON (bench/ops_bench), which the benchmarks' scripts configure.
oracle=(python3-torch python3-torchvision libopenblas0-pthread python3-onnx python3-opencv libbenchmark-dev)

for arg in "$@"; do
  case $arg in
    --tests) packages+=("${tests[@]}") ;;
    --oracle) packages+=("${oracle[@]}") ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; echo "$usage"; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$arg'; $usage" >&2; exit 2 ;;
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
