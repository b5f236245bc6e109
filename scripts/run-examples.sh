#!/usr/bin/env bash
# Builds (in build/) and runs every example from examples/*.cpp, in build/.
# Temporary main job until the `cohort` trainer exists.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

shopt -s nullglob
sources=(examples/*.cpp)
if ((${#sources[@]} == 0)); then
  echo "run-examples: no examples/*.cpp" >&2
  exit 1
fi
names=()
for src in "${sources[@]}"; do names+=("$(basename "$src" .cpp)"); done

bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCOHORT_BUILD_EXAMPLES=ON
cmake --build build -j2 --target "${names[@]}"

passed=0 failed=0 failures=()
for name in "${names[@]}"; do
  echo "== $name"
  if (cd build && "./$name"); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); failures+=("$name")
  fi
done
((failed == 0)) || echo "failed: ${failures[*]}"
echo "examples: $passed passed, $failed failed"
((failed == 0))
