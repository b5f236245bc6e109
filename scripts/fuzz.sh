#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, with clang: ASan + UBSan) in build-fuzz/ and runs each for
# SECONDS (default 30), one after the other. The corpus of each target grows in
# build-fuzz/corpus/<target> (seeded by make_seeds and tests/fixtures/io); an input that crashes
# is saved as build-fuzz/crashes/<target>/crash-<sha1>, and the script then exits 1 naming it.
# Reproduce one:  build-fuzz/fuzz_npy build-fuzz/crashes/npy/crash-...
#   usage: scripts/fuzz.sh [SECONDS] [TARGET...]      (targets: idx idx_gz cifar10 npy ...)
# Environment: COHORT_FUZZ_BUILD (build dir, default build-fuzz), CXX_FUZZ (default clang++-14).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=30
if (($#)) && [[ $1 =~ ^[0-9]+$ ]]; then seconds=$1; shift; fi
if (($#)) && [[ $1 == -h || $1 == --help ]]; then sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
build=${COHORT_FUZZ_BUILD:-build-fuzz}
cxx=${CXX_FUZZ:-clang++-14}
command -v "$cxx" >/dev/null || { echo "fuzz.sh: $cxx not found; hint: apt-get install clang-14" >&2; exit 1; }

export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S fuzz -B "$build" -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" >/dev/null
cmake --build "$build" -j2

targets=("$@")
if ((${#targets[@]} == 0)); then
  for src in fuzz/fuzz_*.cpp; do t=${src#fuzz/fuzz_}; targets+=("${t%.cpp}"); done
fi

rm -rf "$build/seeds"
"$build/make_seeds" "$build/seeds"
# Files PyTorch itself wrote (torch.save of the zoo's state dicts, a pickled module) seed the unpickler too.
cp tests/fixtures/torch/pytorch_*.pt tests/fixtures/torch/pickled_module.pt "$build/seeds/torch_file/"
# Each fuzz process writes its inputs under here (tmpfs when /dev/shm exists).
tmp=$(mktemp -d "$([[ -d /dev/shm ]] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/cohort-fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export COHORT_FUZZ_TMP=$tmp
# halt_on_error: the first report ends the run; allocator_may_return_null: an absurd allocation
# reaches our OutOfMemoryError (libFuzzer's -malloc_limit_mb still flags any malloc over 2 GB).
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

failed=()
for t in "${targets[@]}"; do
  bin=$build/fuzz_$t
  [[ -x $bin ]] || { echo "fuzz.sh: no target '$t' ($bin)" >&2; exit 2; }
  corpus=$build/corpus/$t crashes=$build/crashes/$t
  mkdir -p "$corpus" "$crashes"
  extra=()
  case $t in
    npy) extra=(-dict=fuzz/npy.dict) ;;
    safetensors|checkpoint|train_config|run_checkpoint) extra=(-dict=fuzz/json.dict) ;;
  esac
  seeds=("$build/seeds/$t")
  [[ $t == npy || $t == safetensors ]] && seeds+=(tests/fixtures/io)   # the io tests' files, read-only
  [[ $t == torch_file ]] && seeds+=(tests/fixtures/torch)   # files of Python's and libtorch's torch.save
  echo "== fuzz_$t for ${seconds}s"
  log=$build/fuzz_$t.log
  # -max_len 16 KiB: big enough for several CIFAR-10 records and a checkpoint of the tiny model.
  if "$bin" "$corpus" "${seeds[@]}" "${extra[@]}" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
       -rss_limit_mb=2048 -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1; then
    grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true
    grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$log" | tr '\n' ' '; echo
  else
    tail -40 "$log"
    failed+=("$t")
  fi
done

if ((${#failed[@]})); then
  echo "fuzz.sh: FAILED: ${failed[*]}; inputs in $build/crashes/<target>/, logs in $build/fuzz_<target>.log" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${seconds}s each, no crash"
