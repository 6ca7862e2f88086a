#!/bin/bash
# The honest half of the grade's confusion matrix on a GPU (docs/grade.md): the first N problems of
# KernelBench's level 1, each graded through `roofline run` with its own reference as its candidate
# (the file with `ModelNew = Model` added): every one must be verified and graded with no flag. Each
# grade file goes under OUT as it finishes, then bench/corpus_matrix.py counts them.
#   bash bench/honest_visit.sh KERNELBENCH OUT [N]   (a checkout of ScalingIntelligence/KernelBench; N = 32)
set -u
kb=${1:?give a KernelBench checkout}; out=${2:?give a folder for the grade files}; n=${3:-32}
tmp=$(mktemp -d)
mkdir -p "$out"
for p in $(ls "$kb"/KernelBench/level1/*.py | sort -V | head -n "$n"); do
  stem=$(basename "$p" .py)
  { echo "# honest: KernelBench's $stem graded against itself (its reference as its candidate)"; cat "$p"
    printf '\n\nModelNew = Model\n'; } > "$tmp/${stem}_self.py"
  t0=$SECONDS
  timeout "${LIMIT:-150}" ${PYTHON:-python3} -m roofline run "$p" "$tmp/${stem}_self.py" --budget 0.2 \
    --out "$out/honest-$stem.json" >> "$out/honest.log" 2>&1
  echo "rc=$? $((SECONDS - t0)) s: $stem" >> "$out/honest.log"
done
${PYTHON:-python3} bench/corpus_matrix.py "$out"/honest-*.json > "$out/honest-matrix.txt" 2>&1
rm -rf "$tmp"
