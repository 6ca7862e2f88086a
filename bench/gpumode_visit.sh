#!/bin/bash
# GPU MODE's tasks graded on the GPU as their authors run them: each task's reference.py against its
# own submission.py and the right and wrong solutions the repository keeps beside it, every benchmark
# case of task.yml, no spec written by hand. Usage (on the GPU machine, roofline importable):
#   bash bench/gpumode_visit.sh REFERENCE_KERNELS/problems/pmpp_v2 OUT_DIR [TASK ...]
# One grade file and one log per task in OUT_DIR, each written as its grading ends. SIZE=NAME=VALUE
# grades the cases it picks alone (roofline run --size).
set -u
root=$1 out=$2; shift 2
tasks=("$@"); [ ${#tasks[@]} -eq 0 ] && tasks=(vectoradd_py grayscale_py matmul_py prefixsum_py sort_py)
mkdir -p "$out"
for t in "${tasks[@]}"; do
  d=$root/$t
  [ -f "$d/reference.py" ] || { echo "$d: no reference.py" > "$out/gm-$t.txt"; continue; }
  cands=("$d/submission.py")
  for f in "$d"/solutions/correct/*.py "$d"/solutions/wrong/*.py; do [ -f "$f" ] && cands+=("$f"); done
  start=$SECONDS
  timeout "${LIMIT:-240}" python3 -m roofline run "$d/reference.py" "${cands[@]}" --budget "${BUDGET_S:-0.2}" \
      ${SIZE:+--size "$SIZE"} \
      --out "$out/grades-gpumode-$t.json" > "$out/gm-$t.txt" 2>&1
  echo "rc=$? took $((SECONDS - start)) s" >> "$out/gm-$t.txt"
done
