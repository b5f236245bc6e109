#!/usr/bin/env bash
# Installs a cohort build tree into a temp prefix (the licence in share/doc/cohort), runs the installed `cohort` program from it (no
# LD_LIBRARY_PATH), then builds and runs main.cpp against it twice, with find_package(cohort) and
# with pkg-config, and torch/ as a libtorch project through the opt-in find_package(Torch).
# Usage: run.sh <build-dir>
set -euo pipefail

build=$(cd "${1:?usage: run.sh <build-dir>}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cmake=${CMAKE:-cmake}
cxx=${CXX:-g++}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cohort-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

echo "== install $build into $prefix"
"$cmake" --install "$build" --prefix "$prefix" >/dev/null

[[ -f $prefix/share/doc/cohort/LICENSE ]] || { echo "LICENSE was not installed in $prefix/share/doc/cohort" >&2; exit 1; }

pc=$(find "$prefix" -name cohort.pc -print -quit)
[[ -n $pc ]] || { echo "cohort.pc was not installed" >&2; exit 1; }
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")

if [[ -e $build/cohort ]]; then
  echo "== the installed cohort program"
  env -u LD_LIBRARY_PATH "$prefix/bin/cohort" info >/dev/null
  echo "ok"
fi

echo "== CMake consumer: find_package(cohort CONFIG REQUIRED)"
"$cmake" -S "$here" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
         -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release >/dev/null
"$cmake" --build "$tmp/cmake-build"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/cmake-build/consumer"
echo "ok"

echo "== pkg-config consumer"
static=()
[[ -e $libdir/libcohort.so ]] || static=(--static)   # a static libcohort needs Libs.private
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config "${static[@]}" --cflags --libs cohort)
echo "$cxx -std=c++17 main.cpp $flags"
# shellcheck disable=SC2086  # flags are meant to split
"$cxx" -std=c++17 "$here/main.cpp" -o "$tmp/consumer-pc" $flags
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/consumer-pc"
echo "ok"

echo "== libtorch-style consumer: find_package(Torch) with -DTorch_DIR=<prefix>/.../cmake/cohort/torch"
torch_dir=$(dirname "$(find "$prefix" -name TorchConfig.cmake -print -quit)")
"$cmake" -S "$here/torch" -B "$tmp/torch-build" -DTorch_DIR="$torch_dir" \
         -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release >/dev/null
"$cmake" --build "$tmp/torch-build"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/torch-build/torch_consumer"
echo "ok"
