#!/usr/bin/env bash
# The char-LSTM language model next to PyTorch 1.13, in one run: the same corpus, split, windows,
# model and recipe (embedding 64, LSTM 2x256, Adam lr 0.003, batch 32, windows of 64, the state carried
# between batches of 32 streams; validation as 64 streams with the state carried), the same thread
# count. Prints each side's validation bits per character and training characters/s per epoch.
#   bash bench/compare_char_lm.sh [--corpus /usr/share/games/fortunes] [--epochs 1] [--threads 2] [--build build]
# Needs python3-torch (bash scripts/install-deps.sh --oracle) and, for the default corpus, fortunes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

corpus=/usr/share/games/fortunes epochs=1 threads=2 build=build
while (($#)); do
  case $1 in
    --corpus) corpus=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "compare_char_lm.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x $build/cohort ]] || { echo "compare_char_lm.sh: $build/cohort not built" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "compare_char_lm.sh: python3-torch missing (scripts/install-deps.sh --oracle)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/compare-char-lm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
OMP_NUM_THREADS=$threads "$build/cohort" train --model char-lstm --dataset "text:$corpus" --epochs "$epochs" \
  --optimizer adam --lr 0.003 --batch-size 32 --seq-len 64 --threads "$threads" --workers 1 --no-progress \
  --out "$tmp/cohort" 2>/dev/null | grep '^epoch' | sed 's/^/cohort /'
OMP_NUM_THREADS=$threads /usr/bin/python3 bench/char_lm_torch.py "$corpus" --epochs "$epochs" --threads "$threads" \
  | grep '^torch'
