#!/usr/bin/env bash
# The test command: checks the layout rules (scripts/check_layout.sh), installs dependencies (the test
# ones too), checks that every public header compiles alone with g++ and clang without a warning
# (scripts/check_headers.sh) and that the API reference builds without one (target docs), builds and runs
# the whole suite in build/ (Release), then the threaded suites (data loader, data parallelism, autograd
# engine, device executor) under ThreadSanitizer in build-tsan/. About 16 minutes on a fresh 2-core machine.
#   --full     also a short libFuzzer run of every file parser (scripts/fuzz.sh, build-fuzz/) and the
#              whole suite under AddressSanitizer + UBSan (build-asan/): what CI runs, about an hour
#   --release  the Release suite only, without the headers check (a few minutes once built)
# The last line printed is the summary of the last suite run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage="usage: $0 [--release | --full]"
level=default
for arg in "$@"; do
  case $arg in
    --release) level=release ;;
    --full) level=full ;;
    -h|--help) sed -n '2,10p' "$0"; echo "$usage"; exit 0 ;;
    *) echo "test.sh: unknown option '$arg'; $usage" >&2; exit 2 ;;
  esac
done

jobs=2
# ctest runs two test processes at once, each with OpenMP threads: libgomp's default spin-waiting then
# burns the cores the other process needs (a char-LSTM test: 26 s spinning, 2.3 s passive). Tests
# measure no speed, so their threads sleep while they wait.
export OMP_WAIT_POLICY=PASSIVE

# The layout rules first: a second, and a failure names the file.
bash scripts/check_layout.sh

# --tests: what only the tests need (GoogleTest, clang, libtorch, Redis, Doxygen, ...); --oracle: PyTorch
# too, which the tests that hand cohort's files to Python's torch.load run.
bash scripts/install-deps.sh --tests --oracle

# Each public header alone, as a user's C++17 program includes it: a few minutes of CPU, no build.
if [[ $level != release ]]; then
  bash scripts/check_headers.sh
fi

# ccache keys on paths relative to the checkout, so another clone of the same sources hits the cache.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

echo "== Release build (build/)"
cmake -S . -B build "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCOHORT_BUILD_TESTS=ON -DCOHORT_BUILD_EXAMPLES=ON -DCOHORT_SANITIZE=OFF
# The API reference (a few seconds, no compiling): any Doxygen warning fails it.
cmake --build build --target docs
cmake --build build -j"$jobs"
if [[ $level == release ]]; then
  exec ctest --test-dir build --output-on-failure -j"$jobs"
fi
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== ThreadSanitizer: data loader, data parallelism, autograd engine, device executor, profiler, allocator (build-tsan/)"
# Only those suites are built (COHORT_SANITIZE_THREAD filters cohort_tests). One core and one OpenMP
# thread: libgomp is not instrumented, so TSan must not see its threads (tests/tsan.supp says more).
cmake -S . -B build-tsan "${launcher[@]}" -DCMAKE_BUILD_TYPE=Debug -DCOHORT_SANITIZE_THREAD=ON \
      -DCOHORT_BUILD_TESTS=ON -DCOHORT_BUILD_EXAMPLES=OFF -DCOHORT_BUILD_APPS=OFF
cmake --build build-tsan -j"$jobs" --target cohort_tests
tsan_run=(env OMP_NUM_THREADS=1 COHORT_ADAPTIVE_THREADS=0 TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1"
          taskset -c 0 build-tsan/cohort_tests --gtest_brief=1)
if [[ $level == default ]]; then
  exec "${tsan_run[@]}"
fi
"${tsan_run[@]}"

echo "== Fuzzing: 20 s per target (build-fuzz/)"
bash scripts/fuzz.sh 20

echo "== Sanitizer build (build-asan/)"
cmake -S . -B build-asan "${launcher[@]}" -DCMAKE_BUILD_TYPE=Debug \
      -DCOHORT_BUILD_TESTS=ON -DCOHORT_BUILD_EXAMPLES=ON -DCOHORT_SANITIZE=ON
cmake --build build-asan -j"$jobs"

# allocator_may_return_null: an absurd allocation must reach our OutOfMemoryError, not abort.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# compat.libtorch2 runs the programs compat.libtorch already runs against this build (in C++20, against
# another libtorch): under the sanitizers it would add time, not coverage of cohort.
exec ctest --test-dir build-asan --output-on-failure -j"$jobs" -E '^(install\.consumer|compat\.libtorch2)$'
