#!/usr/bin/env bash
# Remake every file in plots/ (tests/test_plots.py holds this list to the folder, draws each chart
# again from its JSON and compares it with tests/golden/charts/ by what it draws: texts, lines,
# points, colours, scales; not by its bytes). Run from the repository root with roofline installed.
#   bash bench/plots.sh [gpu|charts|all]      (default all)
# gpu: the results and profiles, on a CUDA machine with Nsight Compute and PyTorch (about an
# hour on an H200): the FP32 ladder's files through bench/ladder.sh (tune, ladder, sweep, shapes,
# user, profile), the tensor-core ladders, their counters, and three more profiled programs.
# charts: every chart from the JSON files alone (no GPU needed).
set -euo pipefail
part="${1:-all}"
case "$part" in gpu|charts|all) ;; *) echo "bench/plots.sh: give gpu, charts or all" >&2; exit 2 ;; esac
py="${PYTHON:-python3}"
if [ "$part" != charts ]; then
    for step in tune ladder sweep shapes user profile; do bash bench/ladder.sh h200 "$step"; done
    roofline run --ladder tensor --sweep 2048,4096,8192 --out plots/results-h200-bf16.json
    roofline run --ladder tensor --dtype tf32 --sweep 2048,4096,8192 --out plots/results-h200-tf32.json
    # the BF16 ladder at 8192^3 three times, one run after another (timed in rounds with cuBLAS:
    # each file's as-run and full-clock %cuBLAS agree across them), and once with --energy
    roofline run --ladder tensor --size 8192 --out plots/results-h200-bf16-8192-run1.json
    roofline run --ladder tensor --size 8192 --out plots/results-h200-bf16-8192-run2.json
    roofline run --ladder tensor --size 8192 --out plots/results-h200-bf16-8192-run3.json
    roofline run --ladder tensor --size 8192 --energy --out plots/results-h200-bf16-8192-energy.json
    # the energy ceilings (device --measure fits them; cached), then the FP32 ladder's energy under them
    roofline device --measure >/dev/null
    roofline run --all --size 4096 --energy --out plots/results-h200-energy.json
    roofline run --ladder tensor --kernel mma_sync --kernel mma_ldmatrix --kernel mma_pipeline --kernel wgmma_ws \
        --kernel wgmma_persistent --size 4096 --profile --out plots/counters-h200-bf16.json
    # the model against Nsight Compute's counts (docs/model.md): the tensor ladders at 8192^3, FP32 at 4096^3
    roofline run --ladder tensor --size 8192 --profile --out plots/counters-h200-bf16-8192.json
    roofline run --ladder tensor --dtype tf32 --size 8192 --profile --out plots/counters-h200-tf32-8192.json
    roofline run --all --size 4096 --profile --out plots/counters-h200-fp32-4096.json
    # the FP32 ladder counted at the other eight of the nine sizes (docs/model.md: the DRAM model's tolerance)
    roofline run --all --size 512 --profile --out plots/counters-h200-fp32-512.json
    roofline run --all --size 1024 --profile --out plots/counters-h200-fp32-1024.json
    roofline run --all --size 2048 --profile --out plots/counters-h200-fp32-2048.json
    roofline run --all --size 3000 --profile --out plots/counters-h200-fp32-3000.json
    roofline run --all --size 8192 --profile --out plots/counters-h200-fp32-8192.json
    roofline run --all --size M=4096 --size N=4096 --size K=512 --profile --out plots/counters-h200-fp32-4096x4096x512.json
    roofline run --all --size M=1024 --size N=1024 --size K=16384 --profile \
        --out plots/counters-h200-fp32-1024x1024x16384.json
    roofline run --all --size M=8192 --size N=1024 --size K=4096 --profile \
        --out plots/counters-h200-fp32-8192x1024x4096.json
    # the size-aware FP32 steps at the nine sizes, paired with cuBLAS (docs/h200-results.md)
    roofline run --kernel full_tiles --kernel tile_by_shape --kernel split_k \
        --sweep 512,1024,2048,4096,8192,8192x1024x4096,1024x1024x16384,4096x4096x512,3000x3000x3000 \
        --out plots/sweep-h200-nine.json
    # the cheat corpus graded on the H200 (docs/grade.md: the confusion matrix)
    roofline run tests/fixtures/problems/small_matmul.py tests/fixtures/problems/candidates/matmul_*.py \
        --budget 0.3 --out plots/grades-h200-corpus-matmul.json || true
    roofline run tests/fixtures/problems/clamp.py tests/fixtures/problems/candidates/clamp_*.py --budget 0.3 \
        --out plots/grades-h200-corpus-clamp.json || true
    roofline run tests/fixtures/problems/small_matmul.py tests/fixtures/problems/candidates/matmul_empty_replay.py \
        tests/fixtures/problems/candidates/matmul_patches_sync.py tests/fixtures/problems/candidates/matmul_patches_roofline.py \
        tests/fixtures/problems/candidates/matmul_honest.py --budget 0.3 --out plots/grades-h200-corpus-newest.json || true
    # a Hugging Face Llama training step, each kernel owned by its PyTorch op and module (docs/profiling.md)
    # (and a torchvision ResNet-18 and a PyTorch Geometric GCN step beside it)
    roofline profile --no-profile-from-start --out plots/profile-h200-llama-ops.json -- "$py" examples/ops/step.py llama
    roofline profile --no-profile-from-start --out plots/profile-h200-resnet-ops.json -- "$py" examples/ops/step.py resnet
    roofline profile --no-profile-from-start --out plots/profile-h200-gcn-ops.json -- "$py" examples/ops/step.py gcn
    # a JAX step, each kernel owned by its jax op and named_scope from XLA's HLO (made on an H100, the
    # card that visit had)
    roofline profile --no-profile-from-start --out plots/profile-h100-jax-ops.json -- "$py" examples/ops/jax_step.py
    # the same on the H200 (bench/jax_visit.sh, 2026-12-07, which also dumps XLA's HLO beside it)
    roofline profile --no-profile-from-start --out plots/profile-h200-jax-ops.json -- "$py" examples/ops/jax_step.py
    roofline profile --no-profile-from-start --out plots/profile-h200-adamw-foreach.json \
        -- "$py" examples/transformer_bf16.py
    roofline profile --no-profile-from-start --out plots/profile-h200-adamw-fused.json \
        -- "$py" examples/transformer_bf16.py --fused-adamw
    roofline profile --no-profile-from-start --launch-count 2000 --out plots/profile-h200-gpt2.json \
        -- "$py" examples/gpt2_step.py
    # kernels of any signature and callables graded against their speed of light (examples/grade),
    # counted under Nsight Compute, each workload scored against its first, plainest version
    roofline run examples/grade/softmax_naive.cu examples/grade/softmax_online.cu \
        examples/grade/softmax_triton.toml examples/grade/layer_norm.cu examples/grade/torch_layer_norm.toml \
        examples/grade/reduce_sum.cu examples/grade/scan_rows.cu examples/grade/scan_rows_vec4.cu \
        examples/grade/attention_fwd.cu examples/grade/torch_attention_bf16.toml \
        --baseline softmax_naive --baseline torch_ops.layer_norm --baseline scan_rows --profile \
        --out plots/grades-h200.json
    # the BF16 wgmma rungs and cuBLAS at 8192^3 over their runs (docs/timeline.md): one PM-sampled report each
    PM_REPORTS=1 OUT=/tmp bash bench/pm_visit.sh "bf16 8192"
    python3 bench/timeline_profile.py --out plots/timeline-h200-bf16-8192.json \
        "the BF16 tensor ladder's wgmma rungs and cuBLAS at 8192^3 on the H200 (bench/pm_visit.sh, 2026-12-05)" \
        /tmp/pm-bf16-8192/wgmma_tma.ncu-rep /tmp/pm-bf16-8192/wgmma_ws.ncu-rep \
        /tmp/pm-bf16-8192/wgmma_persistent.ncu-rep /tmp/pm-bf16-8192/cublas.ncu-rep
    # kernel-benchmark problems graded (docs/grade.md; made on an H100, 2026-12-05, the matmul corpus again on
    # 2026-12-06): the cheat corpus and KernelBench's 12_Gemm_Multiply_LeakyReLU and 19_ReLU (a checkout of
    # ScalingIntelligence/KernelBench in KERNELBENCH)
    roofline run tests/fixtures/problems/small_matmul.py tests/fixtures/problems/candidates/matmul_*.py \
        --budget 0.3 --out plots/grades-h100-corpus-matmul.json || true
    roofline run tests/fixtures/problems/clamp.py tests/fixtures/problems/candidates/clamp_*.py --budget 0.3 \
        --out plots/grades-h100-corpus-clamp.json || true
    # the corpus again on an H100 on 2026-12-07 (CUPTI's kernel records alone, the L2 flushed by reading)
    roofline run tests/fixtures/problems/small_matmul.py tests/fixtures/problems/candidates/matmul_*.py \
        --budget 0.3 --out plots/grades-h100-corpus-matmul-20261207.json || true
    roofline run tests/fixtures/problems/clamp.py tests/fixtures/problems/candidates/clamp_*.py --budget 0.3 \
        --out plots/grades-h100-corpus-clamp-20261207.json || true
    roofline run tests/fixtures/problems/small_matmul.py tests/fixtures/problems/candidates/matmul_empty_replay.py \
        tests/fixtures/problems/candidates/matmul_patches_sync.py tests/fixtures/problems/candidates/matmul_patches_roofline.py \
        tests/fixtures/problems/candidates/matmul_honest.py --budget 0.3 --out plots/grades-h100-corpus-newest-20261207.json || true
    # GPU MODE's tasks on an H100 on 2026-12-07 (bench/gpumode_visit.sh; a checkout of gpu-mode/reference-kernels,
    # f83cb92, in REFERENCE_KERNELS): each task's submission and the right and wrong solutions it keeps, every case
    G="${REFERENCE_KERNELS:-../reference-kernels}/problems/pmpp_v2"
    roofline run "$G/grayscale_py/reference.py" "$G/grayscale_py/submission.py" "$G/grayscale_py/solutions/correct/ref.py" \
        "$G/grayscale_py/solutions/wrong/empty.py" --budget 0.2 --out plots/grades-h100-gpumode-grayscale-20261207.json || true
    roofline run "$G/matmul_py/reference.py" "$G/matmul_py/submission.py" "$G/matmul_py/solutions/correct/ref.py" \
        "$G/matmul_py/solutions/wrong/low-precision.py" --budget 0.2 --out plots/grades-h100-gpumode-matmul-20261207.json
    roofline run "${KERNELBENCH:-../KernelBench}/KernelBench/level2/12_Gemm_Multiply_LeakyReLU.py" \
        examples/kernelbench/level2_12_Gemm_Multiply_LeakyReLU_triton.py --out plots/grades-h100-kernelbench-level2.json
    roofline run "${KERNELBENCH:-../KernelBench}/KernelBench/level1/19_ReLU.py" examples/kernelbench/level1_19_ReLU_triton.py \
        examples/kernelbench/level1_19_ReLU_cuda.py --out plots/grades-h100-kernelbench-level1.json
    # later the same day, on an H100: the three cheats written after that visit beside an honest one, KernelBench's
    # level3/1_MLP, and the inline-CUDA tiled matmul of its few-shot prompt examples
    roofline run tests/fixtures/problems/small_matmul.py tests/fixtures/problems/candidates/matmul_empty_replay.py \
        tests/fixtures/problems/candidates/matmul_patches_sync.py tests/fixtures/problems/candidates/matmul_patches_roofline.py \
        tests/fixtures/problems/candidates/matmul_honest.py --budget 0.3 --out plots/grades-h100-corpus-newest.json || true
    roofline run "${KERNELBENCH:-../KernelBench}/KernelBench/level3/1_MLP.py" examples/kernelbench/level3_1_MLP_triton.py \
        --out plots/grades-h100-kernelbench-level3.json
    roofline run "${KERNELBENCH:-../KernelBench}/src/kernelbench/prompts/few_shot/model_ex_tiled_matmul.py" \
        "${KERNELBENCH:-../KernelBench}/src/kernelbench/prompts/few_shot/model_new_ex_tiled_matmul.py" \
        --out plots/grades-h100-kernelbench-prompts.json
    # the honest half of the confusion matrix (docs/grade.md; made on an H100, 2026-12-06): a fixture's own
    # candidate, then fixture problems and KernelBench's smallest level-2 and level-1 problems (by the bytes
    # they move: bench/honest_problems.txt), each graded against itself
    mkdir -p plots/honest-h100
    roofline run tests/fixtures/problems/conv_relu.py tests/fixtures/problems/conv_relu_new.py --budget 0.2 \
        --out plots/honest-h100/fixture-conv_relu_new.json
    bash bench/honest_visit.sh /tmp/honest tests/fixtures/problems/{small_matmul,clamp,row_sums,matmul_bf16}.py \
        tests/fixtures/problems/{embedding_rows,cuda_written,conv_relu,attention_causal_fp16}.py \
        $(sed "s|^|${KERNELBENCH:-../KernelBench}/|" bench/honest_problems.txt)
    cp /tmp/honest/honest-*.json plots/honest-h100/
    # the same on the H200 (2026-12-07, the tree at d0f89bf, one visit of 470 s): the four KernelBench gradings above,
    # the fixture's own candidate, then the honest list in order until the visit's time ran out (its first sixteen)
    roofline run "${KERNELBENCH:-../KernelBench}/KernelBench/level1/19_ReLU.py" examples/kernelbench/level1_19_ReLU_triton.py \
        examples/kernelbench/level1_19_ReLU_cuda.py --out plots/grades-h200-kernelbench-level1.json
    roofline run "${KERNELBENCH:-../KernelBench}/KernelBench/level2/12_Gemm_Multiply_LeakyReLU.py" \
        examples/kernelbench/level2_12_Gemm_Multiply_LeakyReLU_triton.py --out plots/grades-h200-kernelbench-level2.json
    roofline run "${KERNELBENCH:-../KernelBench}/KernelBench/level3/1_MLP.py" examples/kernelbench/level3_1_MLP_triton.py \
        --out plots/grades-h200-kernelbench-level3.json
    roofline run "${KERNELBENCH:-../KernelBench}/src/kernelbench/prompts/few_shot/model_ex_tiled_matmul.py" \
        "${KERNELBENCH:-../KernelBench}/src/kernelbench/prompts/few_shot/model_new_ex_tiled_matmul.py" \
        --out plots/grades-h200-kernelbench-prompts.json
    mkdir -p plots/honest-h200
    roofline run tests/fixtures/problems/conv_relu.py tests/fixtures/problems/conv_relu_new.py --budget 0.2 \
        --out plots/honest-h200/fixture-conv_relu_new.json
    bash bench/honest_visit.sh /tmp/honest-h200 tests/fixtures/problems/{small_matmul,clamp,row_sums,matmul_bf16}.py \
        tests/fixtures/problems/{embedding_rows,cuda_written,conv_relu,attention_causal_fp16}.py \
        $(sed "s|^|${KERNELBENCH:-../KernelBench}/|" bench/honest_problems.txt | head -15)
    cp /tmp/honest-h200/honest-*.json plots/honest-h200/
    # what grading costs against do_bench (docs/grade.md; made on an H100, 2026-12-06, this tree at aab28bc, BEFORE
    # at 49d6e8d: git archive 49d6e8d roofline | tar x -C /tmp/before)
    bash bench/grade_cost.sh "${KERNELBENCH:-../KernelBench}" /tmp/before plots/grade-cost-h100.txt
    # the same on an H100, 2026-12-07, this tree at 5409116, BEFORE at 98ebd35 (git archive 98ebd35 roofline | tar x -C /tmp/before)
    bash bench/grade_cost.sh "${KERNELBENCH:-../KernelBench}" /tmp/before plots/grade-cost-h100-20261207.txt
    # again later that day, this tree at 37e3a4b (the check's memory fix; its timed code is 2603daa's), BEFORE at
    # 98ebd35; and what CUPTI's three record kinds cost against kernel records alone
    bash bench/grade_cost.sh "${KERNELBENCH:-../KernelBench}" /tmp/before plots/grade-cost-h100-20261207b.txt
    for p in 1_Square_matrix_multiplication_ 88_MinGPTNewGelu 19_ReLU; do
        python3 bench/experiments/cupti_cost.py "${KERNELBENCH:-../KernelBench}/KernelBench/level1/$p.py"
    done > /tmp/cupti-cost.txt
    cp /tmp/cupti-cost.txt plots/cupti-cost-h100.txt
    # the next session (2026-12-07 04:20 UTC), this tree at c070d61 (CUPTI's kernel records alone), BEFORE at 98ebd35
    bash bench/grade_cost.sh "${KERNELBENCH:-../KernelBench}" /tmp/before plots/grade-cost-h100-20261207c.txt
    # each model's own grade time against do_bench's on it (2026-12-07 08:18 UTC, this tree at c1dfaa8 alone; the
    # first line of the file written by hand)
    kb="${KERNELBENCH:-../KernelBench}/KernelBench/level1"
    for p in 88_MinGPTNewGelu 1_Square_matrix_multiplication_ 40_LayerNorm; do
        { cat "$kb/$p.py"; printf '\n\nModelNew = Model\n'; } > "/tmp/${p}_self.py"
        echo "== $kb/$p.py /tmp/${p}_self.py"; python3 bench/grade_cost.py "$kb/$p.py" "/tmp/${p}_self.py"; echo "rc=$?"
    done > /tmp/grade-cost-d.txt
    { echo "== $kb/19_ReLU.py ..."; python3 bench/grade_cost.py "$kb/19_ReLU.py" examples/kernelbench/level1_19_ReLU_triton.py \
        examples/kernelbench/level1_19_ReLU_cuda.py; echo "rc=$?"; } >> /tmp/grade-cost-d.txt
    cp /tmp/grade-cost-d.txt plots/grade-cost-h100-20261207d.txt
    # the L2 flush's own write-back timed inside the next launch: flushes by writes and by reads (2026-12-07, this
    # tree at 05fe263, whose l2_flush reads)
    python3 bench/experiments/flush_writeback.py --out plots/flush-writeback-h100.txt
    # the public SGEMM ladder (siboehm/SGEMM_CUDA in SGEMM_CUDA) timed beside ours, and two public programs graded
    # as they are (NVIDIA/cuda-samples in CUDA_SAMPLES, karpathy/llm.c in LLM_C): made on an H200, 2026-12-05
    bash bench/public_ladder.sh "${SGEMM_CUDA:-../SGEMM_CUDA}" /tmp/public-ladder 4096
    cp /tmp/public-ladder/public-4096.json plots/public-ladder-h200-4096.json
    bash bench/public_cu.sh "${CUDA_SAMPLES:-../cuda-samples}" "${LLM_C:-../llm.c}" plots/grades-h200-public.json
    # the DRAM model's steps and the L2 ceiling checked on another GPU, and wgmma_tma at its grouped launch
    # order (docs/model.md): made on an H100 80GB HBM3, 2026-12-05
    roofline run --all --size 2048 --profile --out plots/counters-h100-fp32-2048.json
    roofline run --all --size 4096 --profile --out plots/counters-h100-fp32-4096.json
    roofline run --ladder tensor --size 8192 --profile --out plots/counters-h100-bf16-8192.json
    roofline run --ladder tensor --dtype tf32 --size 8192 --profile --out plots/counters-h100-tf32-8192.json
    roofline run --ladder tensor --sweep 2048,4096,8192 --out plots/results-h100-bf16.json
    # the size-aware FP32 steps at the nine sizes, paired with cuBLAS (on an H100)
    roofline run --kernel full_tiles --kernel tile_by_shape --kernel split_k \
        --sweep 512,1024,2048,4096,8192,8192x1024x4096,1024x1024x16384,4096x4096x512,3000x3000x3000 \
        --out plots/sweep-h100.json
    # a WMMA BF16 GEMM (<mma.h>) beside the tensor-core ladder
    roofline run tests/fixtures/kernels/wmma_bf16.cu --all --ladder tensor --size 4096 \
        --out plots/results-h200-bf16-wmma.json
fi
if [ "$part" != gpu ]; then
    # charts
    roofline plot plots/results-h200.json --out plots/roofline-h200.png
    roofline plot plots/results-h200.json --measured --out plots/roofline-measured-h200.png
    roofline plot plots/sweep-h200.json --kind sweep --out plots/sweep-h200.png
    roofline plot plots/sweep-h100.json --kind sweep --out plots/sweep-h100.png
    roofline plot plots/sweep-h200-nine.json --kind sweep --out plots/sweep-h200-nine.png
    roofline plot plots/shapes-h200.json --kind sweep --out plots/shapes-h200.png
    roofline plot plots/tune-h200.json --out plots/tune-h200.png
    roofline plot plots/user-kernel-h200.json --out plots/user-kernel-h200.png
    roofline plot plots/profile-h200-transformer.json --out plots/profile-h200-transformer.png
    roofline plot plots/results-h200-bf16.json --kind sweep --out plots/sweep-h200-bf16.png
    roofline plot plots/results-h200.json plots/results-h200-bf16.json \
        plots/results-h200-tf32.json --out plots/roofline-h200-ladders.png
    roofline plot plots/results-h200-energy.json --kind energy --out plots/energy-h200.png
    roofline whatif plots/profile-h200-transformer.json --chart plots/whatif-h200-transformer.png
    roofline whatif plots/profile-h200-gpt2.json --chart plots/whatif-h200-gpt2.png
    roofline project plots/profile-h200-gpt2.json --gpu h100-sxm --gpu a100-sxm4-80gb --gpu v100-sxm2 \
        --chart plots/project-h200-gpt2.png
    roofline compare plots/profile-h200-adamw-foreach.json plots/profile-h200-adamw-fused.json \
        --chart plots/compare-h200-adamw.png
    roofline plot plots/grades-h200.json --out plots/grades-h200.png
    roofline plot plots/results-h200-bf16-wmma.json --out plots/roofline-h200-bf16-wmma.png
    roofline plot plots/timeline-h200-bf16-8192.json --kind timeline --out plots/timeline-h200-bf16-8192.png
    # the run of `roofline run --ladder tensor --size 8192 --timeline` on an H100 (2026-12-07, the tree at 107505d;
    # tests/fixtures/timeline-h100/README.md)
    roofline plot tests/fixtures/timeline-h100/run-timeline-bf16-8192.json.gz --kind timeline \
        --highlight wgmma_tma --highlight wgmma_ws --out plots/timeline-h100-bf16-8192.png
    roofline plot plots/profile-h200-llama-ops.json --kind op --out plots/ops-h200-llama.png
    roofline plot plots/profile-h200-llama-ops.json --kind module --out plots/modules-h200-llama.png
    roofline plot plots/profile-h200-resnet-ops.json --kind op --out plots/ops-h200-resnet.png
    roofline plot plots/profile-h200-resnet-ops.json --kind module --out plots/modules-h200-resnet.png
    roofline plot plots/profile-h200-gcn-ops.json --kind op --out plots/ops-h200-gcn.png
    roofline plot plots/profile-h200-gcn-ops.json --kind module --out plots/modules-h200-gcn.png
    roofline plot plots/profile-h200-jax-ops.json --kind op --out plots/ops-h200-jax.png
    roofline plot plots/profile-h200-jax-ops.json --kind module --out plots/modules-h200-jax.png
fi
