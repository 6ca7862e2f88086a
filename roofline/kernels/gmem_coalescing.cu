// gmem_coalescing: the naive kernel with its thread-to-element map turned around.
//
// Consecutive threads of a warp now own consecutive columns of one row of C: their reads of B and
// writes of C fall in the same 128-byte lines (coalesced) and their read of A is one broadcast
// address. The work and the modelled traffic are the naive kernel's (2*K accesses per result);
// only the number of memory transactions carrying it drops.
//
// Blocks are numbered down the rows of C first (grid x walks M), as in `naive`.
//
// Launch: block (BS * BS), grid (ceil(M / BS), ceil(N / BS)).
#include "common.cuh"

template <int BS>
__global__ void __launch_bounds__(BS * BS)
gmem_coalescing(int M, int N, int K, float alpha, const float* __restrict__ A,
                const float* __restrict__ B, float beta, float* __restrict__ C) {
    const int row = blockIdx.x * BS + threadIdx.x / BS;
    const int col = blockIdx.y * BS + threadIdx.x % BS;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_result(C, row * N + col, acc, alpha, beta);
}
