#!/usr/bin/env bash
# The main job: installs what is missing, builds the `cohort` program (build/, Release) and trains
# LeNet on Fashion-MNIST (Debian's dataset-fashion-mnist) for 3 epochs into runs/fashion-lenet.
# Any argument is passed on to `cohort train` and overrides the defaults below, e.g.
#   bash scripts/train.sh --epochs 1 --out runs/quick
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The packages the program needs, not the test-only ones (scripts/install-deps.sh --tests).
bash scripts/install-deps.sh
# ccache keys on paths relative to the checkout, so another clone of the same sources hits the cache.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# A new build/ leaves the tests and examples out: configuring them needs GoogleTest. One that exists
# (scripts/test.sh's, say) keeps its options; only the program is built either way.
new_build=()
[[ -f build/CMakeCache.txt ]] || new_build=(-DCOHORT_BUILD_TESTS=OFF -DCOHORT_BUILD_EXAMPLES=OFF)
cmake -S . -B build "${launcher[@]}" "${new_build[@]}" -DCMAKE_BUILD_TYPE=Release -DCOHORT_BUILD_APPS=ON >/dev/null
cmake --build build -j2 --target cohort_cli

# Later flags win, so the caller's arguments override these. The default run directory is this
# script's own: running it again replaces the run there (--overwrite), unless the caller names a
# directory (--out) or continues a run (--resume).
overwrite=(--overwrite)
for arg in "$@"; do
  case $arg in --out|--out=*|--resume|--resume=*) overwrite=() ;; esac
done
exec build/cohort train --model lenet --dataset fashion-mnist --epochs 3 --batch-size 64 \
  --lr 0.01 --momentum 0.9 --out runs/fashion-lenet "${overwrite[@]}" "$@"
