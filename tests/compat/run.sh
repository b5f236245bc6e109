#!/usr/bin/env bash
# The libtorch-port promise: builds each program in tests/compat/ twice, against Debian's libtorch
# (libtorch-dev) and against cohort (-DCOMPAT_COHORT switches the include and the namespace alias),
# runs both, and fails if either build or run fails. Usage: run.sh <cohort-build-dir>
# Environment: CXX (default g++), TORCH_PREFIX (default /usr; headers in include/, libraries in
# lib/<multiarch>/ or lib/), COMPAT_STD (default c++17, libtorch 1.13's; libtorch 2.x needs c++20).
set -euo pipefail

build=$(cd "${1:?usage: run.sh <cohort-build-dir>}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cxx=${CXX:-g++}
std=${COMPAT_STD:-c++17}
torch_prefix=${TORCH_PREFIX:-/usr}

# ---- libtorch: headers, libraries, and the libstdc++ ABI it was built with ----------------------
torch_inc=$torch_prefix/include
torch_api_inc=$torch_inc/torch/csrc/api/include
[[ -f $torch_api_inc/torch/torch.h ]] || {
  echo "compat: libtorch headers not found ($torch_api_inc/torch/torch.h); install libtorch-dev" \
       "(scripts/install-deps.sh --tests) or set TORCH_PREFIX" >&2
  exit 1
}
torch_libdir=
multiarch=$("$cxx" -print-multiarch 2>/dev/null || true)
for d in "$torch_prefix/lib/$multiarch" "$torch_prefix/lib"; do
  if [[ -e $d/libtorch.so && -e $d/libc10.so ]]; then torch_libdir=$d; break; fi
done
[[ -n $torch_libdir ]] || { echo "compat: libtorch.so/libc10.so not found under $torch_prefix/lib" >&2; exit 1; }

# The ABI the libraries were built with (std::__cxx11 in their symbols), checked against what
# TorchConfig.cmake asks dependents to use.
cxx11_symbols=$(nm -D --defined-only "$torch_libdir/libc10.so" | grep -c '__cxx11' || true)
if ((cxx11_symbols > 0)); then abi=1; else abi=0; fi
torch_config=$(find "$torch_libdir/cmake/Torch" "$torch_prefix/share/cmake/Torch" -name TorchConfig.cmake \
                 -print -quit 2>/dev/null || true)
if [[ -n $torch_config ]]; then
  config_abi=$(sed -n 's/.*-D_GLIBCXX_USE_CXX11_ABI=\([01]\).*/\1/p' "$torch_config" | head -n1)
  if [[ -n $config_abi && $config_abi != "$abi" ]]; then
    echo "compat: $torch_config says -D_GLIBCXX_USE_CXX11_ABI=$config_abi but libc10.so has ABI $abi" >&2
    exit 1
  fi
fi

# ---- cohort: the build tree's library ------------------------------------------------------------
cohort_libs=("-L$build" -lcohort "-Wl,-rpath,$build" -pthread)
if [[ ! -e $build/libcohort.so && -e $build/libcohort.a ]]; then
  cohort_libs+=(-ldnnl -fopenmp -lz)  # a static libcohort needs its private dependencies
fi
[[ -e $build/libcohort.so || -e $build/libcohort.a ]] || { echo "compat: no libcohort in $build" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cohort-compat.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# -O0: the programs are small; libtorch's headers dominate the compile time, so compat.h (which includes
# them) is precompiled once for the libtorch builds, and each program is compiled from a copy beside it
# (a quoted include resolves next to the source first, where the .gch then is).
# -pthread here too: it defines _REENTRANT, and a header precompiled without it is not used.
torch_flags=(-std=$std -O0 -pthread -D_GLIBCXX_USE_CXX11_ABI=$abi -I"$torch_inc" -I"$torch_api_inc")
mkdir "$tmp/libtorch-src"
cp "$here"/compat.h "$here"/*.cpp "$tmp/libtorch-src/"
pch_start=$SECONDS
if "$cxx" "${torch_flags[@]}" -x c++-header "$tmp/libtorch-src/compat.h" -o "$tmp/libtorch-src/compat.h.gch"; then
  echo "ok    precompiled compat.h against libtorch ($((SECONDS - pch_start)) s)"
else
  echo "compat: could not precompile compat.h against libtorch; building without it" >&2
fi

status=0
step() {  # step <description> <command...>: runs it, reports, and records a failure
  local what=$1; shift
  local start=$SECONDS
  if "$@"; then
    echo "ok    $what ($((SECONDS - start)) s)"
  else
    echo "FAIL  $what ($((SECONDS - start)) s)"
    status=1
    return 1
  fi
}

for src in "$here"/*.cpp; do
  name=$(basename "$src" .cpp)
  echo "== $name"
  # cohort first: it compiles in seconds, so API gaps show up before the slow libtorch build.
  if step "build against cohort" \
       "$cxx" -std=$std -O0 -DCOMPAT_COHORT -I"$repo/include" "$src" -o "$tmp/$name-cohort" "${cohort_libs[@]}"; then
    step "run against cohort" "$tmp/$name-cohort" || true
  fi
  if step "build against libtorch (ABI $abi)" \
       "$cxx" "${torch_flags[@]}" -Winvalid-pch "$tmp/libtorch-src/$name.cpp" \
       -o "$tmp/$name-libtorch" -L"$torch_libdir" -Wl,-rpath,"$torch_libdir" \
       -Wl,--no-as-needed -ltorch -ltorch_cpu -lc10 -Wl,--as-needed -pthread; then
    step "run against libtorch" "$tmp/$name-libtorch" || true
  fi
done

((status == 0)) && echo "compat: all programs build and pass against libtorch and cohort"
exit $status
