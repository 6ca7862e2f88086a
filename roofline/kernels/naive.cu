// naive: one thread per element of C, every operand read straight from global memory.
//
// threadIdx.x runs along the rows of C, so the 32 threads of a warp read 32 different rows of A
// (K floats apart: 32 separate transactions per load) and write 32 rows of C. Nothing is reused
// on chip beyond what the caches catch: the model counts 2*K global accesses per result.
//
// Launch: block (BS, BS), grid (ceil(M / BS), ceil(N / BS)).
#include "common.cuh"

template <int BS>
__global__ void __launch_bounds__(BS * BS)
naive(int M, int N, int K, float alpha, const float* __restrict__ A,
      const float* __restrict__ B, float beta, float* __restrict__ C) {
    // Unsigned indices: row * K and k * N stay below 2^31 elements (model.problem checks).
    const unsigned row = blockIdx.x * BS + threadIdx.x;
    const unsigned col = blockIdx.y * BS + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_result(C, row * N + col, acc, alpha, beta);
}
