#!/usr/bin/env bash
# Mistakes that must fail at compile time with a message that says what to do: each snippet here
# starts with `// flags: <compiler flags>` and `// expect: <text>`; it must fail to compile, and the
# compiler's output must contain the text. Usage: run.sh <repo-include-dir>
set -euo pipefail

include=${1:?usage: run.sh <include-dir>}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cxx=${CXX:-g++}
status=0
for src in "$here"/*.cpp; do
  name=$(basename "$src" .cpp)
  flags=$(sed -n 's|^// flags: ||p' "$src" | head -n1)
  expect=$(sed -n 's|^// expect: ||p' "$src" | head -n1)
  [[ -n $expect ]] || { echo "FAIL  $name: no '// expect:' line" >&2; status=1; continue; }
  # shellcheck disable=SC2086  # flags are meant to split
  if output=$("$cxx" $flags -fsyntax-only -I"$include" "$src" 2>&1); then
    echo "FAIL  $name: compiled, but must not"
    status=1
  elif grep -qF -- "$expect" <<<"$output"; then
    echo "ok    $name"
  else
    echo "FAIL  $name: the compiler did not say \"$expect\"; it said:"
    head -n 20 <<<"$output"
    status=1
  fi
done
exit $status
