#!/usr/bin/env bash
# One benchmark command against two builds of libcohort, alternated: a change to the library measured
# against the library before it, with the same benchmark binaries (they link libcohort.so dynamically).
#   bash bench/ab_libraries.sh BEFORE_DIR AFTER_DIR ROUNDS -- COMMAND [ARGS...]
# BEFORE_DIR and AFTER_DIR each hold a libcohort.so.0 (copy a build's libcohort.so* aside before
# rebuilding it). Each round runs COMMAND once with each library, in alternating order, and prints
# its output lines (stdout and stderr) prefixed "before <round>" or "after <round>". Say the CPU and the load beside the
# figures.
set -euo pipefail

if (($# < 5)) || [[ $4 != -- ]]; then
  sed -n '2,8p' "$0" >&2
  exit 2
fi
before=$1 after=$2 rounds=$3
shift 4
for dir in "$before" "$after"; do
  [[ -e $dir/libcohort.so.0 ]] || { echo "ab_libraries.sh: no libcohort.so.0 in '$dir'" >&2; exit 2; }
done

run() {  # label round dir
  LD_LIBRARY_PATH=$3${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "${cmd[@]}" 2>&1 | sed "s/^/$1 $2 /"
}
cmd=("$@")
for r in $(seq "$rounds"); do
  if ((r % 2)); then
    run before "$r" "$before"; run after "$r" "$after"
  else
    run after "$r" "$after"; run before "$r" "$before"
  fi
done
