#!/bin/bash
# What grading costs against triton.testing.do_bench (docs/grade.md): bench/grade_cost.py on four KernelBench
# level-1 problems, each with its own Model as a candidate (19_ReLU with the candidates of examples/kernelbench),
# with this tree's roofline and with the one at BEFORE (a folder holding an older `roofline` package, e.g.
# `git archive 49d6e8d roofline | tar x -C OLD`), into OUT.
#     bash bench/grade_cost.sh KERNELBENCH BEFORE OUT
set -u
kb=$1/KernelBench/level1; before=$2; out=$3
tmp=$(mktemp -d)
self() { local s=$tmp/$(basename "$1" .py)_self.py; { cat "$1"; printf '\n\nModelNew = Model\n'; } > "$s"; echo "$s"; }
{
  echo "# python bench/grade_cost.py PROBLEM CANDIDATE... on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  echo "# ($(date -u +%F)), this tree's roofline ('now') and BEFORE's ('before'), in one process each"
  for args in "$kb/19_ReLU.py examples/kernelbench/level1_19_ReLU_triton.py examples/kernelbench/level1_19_ReLU_cuda.py" \
              "$kb/1_Square_matrix_multiplication_.py $(self "$kb/1_Square_matrix_multiplication_.py")" \
              "$kb/40_LayerNorm.py $(self "$kb/40_LayerNorm.py")" "$kb/88_MinGPTNewGelu.py $(self "$kb/88_MinGPTNewGelu.py")"; do
    echo "== now"; python3 bench/grade_cost.py $args 2>/dev/null; echo "rc=$?"
    echo "== before"; PYTHONPATH="$before${PYTHONPATH:+:$PYTHONPATH}" python3 bench/grade_cost.py $args 2>/dev/null; echo "rc=$?"
  done
} > "$out.tmp" && mv "$out.tmp" "$out"
rm -rf "$tmp"
