#!/bin/bash
# The honest half of the grade's confusion matrix on a GPU (docs/grade.md): each problem given (a
# PyTorch Model with get_inputs, e.g. KernelBench's), graded through `roofline run` with its own
# reference as its candidate (the file with `ModelNew = Model` added, first line "# honest: ..."):
# every one must be verified and graded with no flag. Each grade file goes under OUT as it
# finishes, the candidates under OUT/candidates; then bench/corpus_matrix.py counts them.
#   bash bench/honest_visit.sh OUT PROBLEM.py [PROBLEM.py ...]     (LIMIT: seconds per problem, 150)
set -u
out=${1:?give a folder for the grade files}; shift
[ $# -gt 0 ] || { echo "bench/honest_visit.sh: give the problems to grade" >&2; exit 2; }
mkdir -p "$out/candidates"
for p in "$@"; do
  stem=$(basename "$(dirname "$p")")_$(basename "$p" .py)
  self="$out/candidates/${stem}_self.py"
  { echo "# honest: $(basename "$p") graded against itself (its reference as its candidate)"; cat "$p"
    printf '\n\nModelNew = Model\n'; } > "$self"
  t0=$SECONDS
  timeout "${LIMIT:-150}" ${PYTHON:-python3} -m roofline run "$p" "$self" --budget 0.2 \
    --out "$out/honest-$stem.json" >> "$out/honest.log" 2>&1
  echo "rc=$? $((SECONDS - t0)) s: $stem" >> "$out/honest.log"
done
${PYTHON:-python3} bench/corpus_matrix.py "$out"/honest-*.json > "$out/honest-matrix.txt" 2>&1
