#!/bin/bash
# The public SGEMM ladder (siboehm/SGEMM_CUDA, the kernels of its worklog) built for this GPU and
# timed beside the ladder steps of the same techniques in one `roofline run`: same inputs, same
# rounds, same L2 flush, cuBLAS as the reference. Each public kernel is taken unmodified from its
# `.cuh` through a small file of `// roofline` lines that includes it, at the launch its own
# runner.cu gives (block tile, threads, grid); an empty cublas_v2.h stands in for the header the
# kernels include but do not use, so no cuBLAS development files are needed.
#   bash bench/public_ladder.sh SGEMM_CUDA_CHECKOUT OUT_DIR [SIZE]
# Writes OUT_DIR/public-SIZE.json and its log; `roofline show` on the file gives the table
# (bench/NOTES.md, "Where it stands"). Needs nvcc (user kernels with host headers).
# Every public kernel computes alpha * acc + beta * C, reading C even with beta = 0, so each is declared
# `reads-c: yes` (checked on a zeroed C, not one of NaN); none checks its bounds, so the run checks them
# at the timed size alone (--no-ragged), which is a multiple of every tile. (On an H100, 2026-12-05,
# before those two existed, roofline's check refused every one of them.)
set -u
src=$(cd "${1:?give a checkout of siboehm/SGEMM_CUDA}" && pwd)/src/kernels
out=${2:?give a folder for the results}
size=${3:-4096}
tmp=$(mktemp -d)
mkdir -p "$tmp/inc" "$out" && : > "$tmp/inc/cublas_v2.h"
wrap() {  # name entry block grid tile thread-tile header
    printf '%s\n' "// roofline entry: $2" "// roofline block: $3" "// roofline grid: $4" "// roofline tile: $5" \
        "// roofline thread-tile: $6" "// roofline name: $1" "// roofline options: -I $tmp/inc" "// roofline reads-c: yes" \
        "#include \"$src/$7.cuh\"" > "$tmp/$1.cu"
}
wrap public_naive "sgemm_naive" 32,32 "cdiv(M,32), cdiv(N,32)" 1x1x1 1x1 1_naive
echo "// roofline thread-x: rows" >> "$tmp/public_naive.cu"  # x = blockIdx.x * 32 + threadIdx.x is C's row
wrap public_coalesce "sgemm_global_mem_coalesce<32>" 1024 "cdiv(M,32), cdiv(N,32)" 1x1x1 1x1 \
    2_kernel_global_mem_coalesce
echo "// roofline thread-x: cols" >> "$tmp/public_coalesce.cu"  # threadIdx.x % 32 is C's column
wrap public_smem "sgemm_shared_mem_block<32>" 1024 "cdiv(M,32), cdiv(N,32)" 32x32x32 1x1 3_kernel_shared_mem_blocking
wrap public_1d "sgemm1DBlocktiling<64,64,8,8>" 512 "cdiv(N,64), cdiv(M,64)" 64x64x8 8x1 4_kernel_1D_blocktiling
wrap public_2d "sgemm2DBlocktiling<128,128,8,8,8>" 256 "cdiv(N,128), cdiv(M,128)" 128x128x8 8x8 5_kernel_2D_blocktiling
wrap public_vectorize "sgemmVectorize<128,128,8,8,8>" 256 "cdiv(N,128), cdiv(M,128)" 128x128x8 8x8 6_kernel_vectorize
wrap public_bank "sgemmResolveBankConflicts<128,128,8,8,8>" 256 "cdiv(N,128), cdiv(M,128)" 128x128x8 8x8 \
    7_kernel_resolve_bank_conflicts
wrap public_autotuned "sgemmAutotuned<128,128,16,8,8>" 256 "cdiv(N,128), cdiv(M,128)" 128x128x16 8x8 9_kernel_autotuned
wrap public_warptiling "sgemmWarptiling<128,128,16,64,64,4,8,4,128>" 128 "cdiv(N,128), cdiv(M,128)" 128x128x16 8x16 \
    10_kernel_warptiling
steps=(naive gmem_coalescing smem_tiling register_tiling_1d register_tiling_2d vectorized bank_conflict_free autotuned
       warptiling)
${PYTHON:-python3} -m roofline run "$tmp"/public_*.cu ${steps[@]/#/--kernel } --size "$size" --compiler nvcc --no-ragged \
    --out "$out/public-$size.json" > "$out/public-$size.log" 2>&1
echo "rc=$?" >> "$out/public-$size.log"
rm -rf "$tmp"
