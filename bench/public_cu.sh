#!/bin/bash
# Two public CUDA programs graded as they are (docs/grade.md, "Public files"): cuda-samples' matrixMul
# (host code, main, the samples' helper headers) and llm.c's BF16 GELU (host code, main, cuBLAS
# headers), each copied unmodified beside its spec in examples/public, built by nvcc, graded together.
#   bash bench/public_cu.sh CUDA_SAMPLES LLM_C OUT.json   (checkouts of NVIDIA/cuda-samples and karpathy/llm.c)
set -eu
samples=${1:?give a cuda-samples checkout}; llmc=${2:?give an llm.c checkout}; out=${3:?give the grade file to write}
d=$(mktemp -d)
cp examples/public/matrixMul.toml examples/public/gelu_forward.toml "$d"/
cp "$samples/Samples/0_Introduction/matrixMul/matrixMul.cu" "$d"/ && cp -r "$samples/Common" "$d"/
cp "$llmc/dev/cuda/gelu_forward.cu" "$llmc/dev/cuda/common.h" "$d"/
python3 -m roofline run "$d/matrixMul.cu" "$d/gelu_forward.cu" --profile --out "$out"
