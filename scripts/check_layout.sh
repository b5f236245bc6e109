#!/usr/bin/env bash
# The house's layout rules, checked on the sources (run by scripts/test.sh):
#  1. no file of code is longer than 600 lines (a longer one has more than one job);
#  2. an area of src/ includes only public headers (cohort/...), its own private ones, and, inside the
#     tensor layer (core, ops, autograd: one layer of three folders, ARCHITECTURE.md), each other's;
#  3. src/nn records no autograd nodes: a differentiable primitive is an op in src/ops/, so nn neither
#     includes a private header of ops nor defines an autograd::Function.
# A private include across areas that is known and being removed is listed in `known` below, each with
# where it should go; a new one fails the check.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

status=0
while IFS= read -r -d '' file; do
  lines=$(wc -l < "$file")
  if ((lines > 600)); then
    echo "check_layout: $file has $lines lines, more than 600: split it by job" >&2
    status=1
  fi
done < <(find src include apps tests bench examples fuzz scripts \( -name '*.cpp' -o -name '*.h' -o -name '*.py' -o -name '*.sh' \) -print0)

tensor_layer=" core ops autograd "
known=(
)
while IFS= read -r -d '' file; do
  area=$(cut -d/ -f2 <<< "$file")
  while IFS= read -r header; do
    [[ $header == cohort/* || $header != */* ]] && continue
    other=${header%%/*}
    [[ $other == "$area" ]] && continue
    [[ $tensor_layer == *" $area "* && $tensor_layer == *" $other "* ]] && continue
    listed=0
    for entry in "${known[@]}"; do [[ $entry == "$file $header" ]] && listed=1; done
    ((listed)) && continue
    echo "check_layout: $file includes $header, a private header of src/$other/: use a public header" >&2
    status=1
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done < <(find src \( -name '*.cpp' -o -name '*.h' \) -print0)

while IFS=: read -r file line _; do
  echo "check_layout: $file:$line defines an autograd node or includes a private ops header in src/nn:" \
       "make the primitive an op in src/ops/ (include/cohort/ops/...) and call it" >&2
  status=1
done < <(grep -rn '#include "ops/\|autograd::Function<' src/nn || true)

((status == 0)) && echo "check_layout: every file within 600 lines; no private include across areas beyond the ${#known[@]} listed; no autograd node in src/nn"
exit $status
