#!/bin/bash
# The grade's confusion matrix (docs/grade.md) made again on whatever card the device machine lends, with one
# tree: the cheat corpus (both problems), the KernelBench candidates of three levels, and the honest problems
# each graded against itself (bench/honest_visit.sh), in that order until BUDGET seconds are spent. Every grade
# file goes under $OUT/matrix (tarred into $OUT/matrix.tgz after each step), named for the card
# (grades-h100-..., honest-h100/...); then `python bench/corpus_matrix.py` over them gives the matrix.
#   KERNELBENCH=.whl/kb bash bench/matrix_visit.sh [corpus] [kernelbench] [honest]   (default: all three)
# (after the set-up of bench/gpu_visit.sh: pydantic, typer and cupti-python importable; KERNELBENCH: a checkout
# of ScalingIntelligence/KernelBench). HFROM=N starts the honest list at its line N (bench/honest_problems.txt),
# FIXTURES=0 leaves out the fixture problems ahead of it.
set -u
export PYTHONUNBUFFERED=1
t0=$SECONDS
kb=${KERNELBENCH:-../KernelBench}
card=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case "$card" in *H200*) gpu=h200 ;; *H100*) gpu=h100 ;; *) gpu=$(echo "${card:-gpu}" | tr 'A-Z ' 'a-z-') ;; esac
out=/tmp/matrix; mkdir -p $out/honest-$gpu
echo "$card; git $(git rev-parse --short HEAD 2>/dev/null); $(date -u +%FT%TZ)" > $out/visit.txt
left() { echo $(( ${BUDGET:-540} - (SECONDS - t0) )); }
pack() { tar czf "$OUT/matrix.tgz" -C /tmp matrix; }
step() {  # step NAME COMMAND...: run it within the time left, its output and seconds logged
  local name=$1; shift
  [ "$(left)" -gt 60 ] || { echo "stopped before $name: $(left) s left" >> $out/visit.txt; return 1; }
  local s=$SECONDS
  timeout $(( $(left) - 20 )) "$@" > "$out/$name.log" 2>&1
  echo "$name: rc=$? in $((SECONDS - s)) s" >> $out/visit.txt
  pack
}
R="python3 -m roofline"
for part in ${*:-corpus kernelbench honest}; do
  case $part in
    corpus)
      step corpus-matmul $R run tests/fixtures/problems/small_matmul.py tests/fixtures/problems/candidates/matmul_*.py \
        --budget 0.3 --out $out/grades-$gpu-corpus-matmul.json || break
      step corpus-clamp $R run tests/fixtures/problems/clamp.py tests/fixtures/problems/candidates/clamp_*.py \
        --budget 0.3 --out $out/grades-$gpu-corpus-clamp.json || break ;;
    kernelbench)
      step kb-level1 $R run "$kb/KernelBench/level1/19_ReLU.py" examples/kernelbench/level1_19_ReLU_triton.py \
        examples/kernelbench/level1_19_ReLU_cuda.py --out $out/grades-$gpu-kernelbench-level1.json || break
      step kb-level2 $R run "$kb/KernelBench/level2/12_Gemm_Multiply_LeakyReLU.py" \
        examples/kernelbench/level2_12_Gemm_Multiply_LeakyReLU_triton.py \
        --out $out/grades-$gpu-kernelbench-level2.json || break
      step kb-level3 $R run "$kb/KernelBench/level3/1_MLP.py" examples/kernelbench/level3_1_MLP_triton.py \
        --out $out/grades-$gpu-kernelbench-level3.json || break
      step kb-prompts $R run "$kb/src/kernelbench/prompts/few_shot/model_ex_tiled_matmul.py" \
        "$kb/src/kernelbench/prompts/few_shot/model_new_ex_tiled_matmul.py" \
        --out $out/grades-$gpu-kernelbench-prompts.json || break ;;
    honest)
      if [ "${FIXTURES:-1}" != 0 ]; then
        step honest-conv_relu_new $R run tests/fixtures/problems/conv_relu.py tests/fixtures/problems/conv_relu_new.py \
          --budget 0.2 --out $out/honest-$gpu/fixture-conv_relu_new.json || break
      fi
      problems=()
      [ "${FIXTURES:-1}" = 0 ] || problems+=(tests/fixtures/problems/{small_matmul,clamp,row_sums,matmul_bf16,cuda_written,embedding_rows,conv_relu,attention_causal_fp16}.py)
      problems+=($(sed -n "${HFROM:-1},\$p" bench/honest_problems.txt | sed "s|^|$kb/|"))
      for p in "${problems[@]}"; do
        step "honest-$(basename "$p" .py)" env LIMIT=150 bash bench/honest_visit.sh $out/honest-$gpu "$p" || break
      done ;;
  esac
done
shopt -s nullglob
graded=($out/grades-$gpu-*.json $out/honest-$gpu/*.json)
[ ${#graded[@]} -eq 0 ] || python3 bench/corpus_matrix.py "${graded[@]}" > $out/matrix.txt 2>&1
echo "done in $((SECONDS - t0)) s" >> $out/visit.txt; pack
