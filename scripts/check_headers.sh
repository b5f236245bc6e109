#!/usr/bin/env bash
# Every public header compiles on its own, as a user's C++17 program includes it: each
# include/cohort/**/*.h alone in a one-line translation unit, with g++ and with clang++-14, under
# -std=c++17 -Wall -Wextra -Werror -fsyntax-only and only include/ on the include path (what the
# installed package gives: the public headers include nothing but the standard library and each
# other). A header that leans on another one it does not include, or that warns in a user's build,
# fails here and is named. Then a C++14 program that includes <cohort/cohort.h> or <cohort/torch.h>
# must stop with exactly one error, the one naming the standard.
#   CHECK_HEADERS_COMPILERS="g++"   compilers to use (default "g++ clang++-14")
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

read -r -a compilers <<<"${CHECK_HEADERS_COMPILERS:-g++ clang++-14}"
for cxx in "${compilers[@]}"; do
  command -v "$cxx" >/dev/null ||
    { echo "check_headers: no $cxx (bash scripts/install-deps.sh --tests installs clang-14)" >&2; exit 1; }
done

start=$SECONDS
mapfile -t headers < <(cd include && find cohort -name '*.h' | sort)

# One job per (compiler, header); a failing job prints the header's name and the compiler's words.
one() {
  local cxx=$1 header=$2 out
  if ! out=$(printf '#include <%s>\n' "$header" |
             "$cxx" -std=c++17 -Wall -Wextra -Werror -fsyntax-only -Iinclude -x c++ - 2>&1); then
    printf 'check_headers: %s fails alone with %s:\n%s\n' "$header" "$cxx" "$out"
    return 1
  fi
}
export -f one

status=0
for cxx in "${compilers[@]}"; do
  for header in "${headers[@]}"; do printf '%s\0%s\0' "$cxx" "$header"; done
done | xargs -0 -P2 -n2 bash -c 'one "$0" "$1"' || status=1

# Older standards: one clear error, not hundreds from the headers after it.
for header in cohort/cohort.h cohort/torch.h; do
  out=$(printf '#include <%s>\n' "$header" | g++ -std=c++14 -fsyntax-only -Iinclude -x c++ - 2>&1 || true)
  errors=$(grep -c 'error:' <<<"$out" || true)
  if ((errors != 1)) || ! grep -q 'error:.*cohort needs C++17 or later' <<<"$out"; then
    printf 'check_headers: <%s> under -std=c++14 must give one error naming C++17; it gave %s:\n%s\n' \
      "$header" "$errors" "$(head -n 20 <<<"$out")"
    status=1
  fi
done

if ((status == 0)); then
  echo "check_headers: ${#headers[@]} public headers compile alone with ${compilers[*]} (-std=c++17 -Wall -Wextra -Werror); C++14 stops with one error ($((SECONDS - start)) s)"
fi
exit $status
