#!/bin/bash
# One visit of the device machine for kernel-benchmark problems (docs/grade.md), after
# bench/gpu_visit.sh's set-up (PYTHONPATH holding the carried wheels and the checkout; ninja on PATH
# for load_inline): KernelBench problems at all three levels graded with the candidates of
# examples/kernelbench (Triton and inline CUDA) and with KernelBench's own prompt examples, the
# cheat corpus of tests/fixtures/problems graded and its confusion matrix, then the GPU test of it.
# Each grade file goes under $OUT as it finishes.
#   bash bench/problems_visit.sh KERNELBENCH   (a checkout of ScalingIntelligence/KernelBench)
set -u
kb=${1:?give a KernelBench checkout}
ex=examples/kernelbench
prompts=$kb/src/kernelbench/prompts
R() { local out=$1; shift; local t0=$SECONDS
  timeout "${LIMIT:-300}" python3 -m roofline run "$@" --out "$OUT/$out.json" >> "$OUT/problems.log" 2>&1
  echo "rc=$? $((SECONDS - t0)) s: $out" >> "$OUT/problems.log"; }
R grades-level1-relu "$kb/KernelBench/level1/19_ReLU.py" $ex/level1_19_ReLU_triton.py $ex/level1_19_ReLU_cuda.py
R grades-level2-gemm-leaky "$kb/KernelBench/level2/12_Gemm_Multiply_LeakyReLU.py" \
  $ex/level2_12_Gemm_Multiply_LeakyReLU_triton.py
R grades-level3-mlp "$kb/KernelBench/level3/1_MLP.py" $ex/level3_1_MLP_triton.py
R grades-prompts-tiled-matmul "$prompts/few_shot/model_ex_tiled_matmul.py" "$prompts/few_shot/model_new_ex_tiled_matmul.py"
R grades-prompts-add "$prompts/model_ex_add.py" "$prompts/model_new_ex_add_triton.py" "$prompts/model_new_ex_add.py"
R corpus-matmul tests/fixtures/problems/small_matmul.py tests/fixtures/problems/candidates/matmul_*.py --budget 0.3
R corpus-clamp tests/fixtures/problems/clamp.py tests/fixtures/problems/candidates/clamp_*.py --budget 0.3
python3 bench/corpus_matrix.py "$OUT"/corpus-*.json > "$OUT/matrix.txt" 2>&1
timeout "${LIMIT:-300}" python3 -m pytest -p no:cacheprovider -o addopts="" -n 0 -q tests/test_gpu_problem.py \
  > "$OUT/gpu_problem.txt" 2>&1
