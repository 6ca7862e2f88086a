// register_tiling_2d: each thread computes a TM x TN tile of C as a sum of outer products.
//
// Per step of K the block stages a BM x BK tile of A and a BK x BN tile of B in shared memory.
// For each k a thread reads a column of TM values of A and a row of TN values of B into registers
// and accumulates all TM*TN products: TM + TN shared-memory reads feed TM*TN FMAs. SMEM accesses
// per result are K*(1/TM + 1/TN) (1024 at K = 4096, 8 x 8), GMEM accesses K*(1/BM + 1/BN)
// (64 at 128 x 128). The price is registers: TM*TN accumulators per thread for the whole kernel.
//
// Launch: block (BM * BN / (TM * TN)), grid (ceil(N / BN), ceil(M / BM)).
#include "common.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(BM * BN / (TM * TN))
register_tiling_2d(int M, int N, int K, float alpha, const float* __restrict__ A,
                   const float* __restrict__ B, float beta, float* __restrict__ C) {
    constexpr int NT = BM * BN / (TM * TN);
    static_assert(BM % TM == 0 && BN % TN == 0, "the thread tile must divide the block tile");
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];

    const int tcol = threadIdx.x % (BN / TN);  // thread tile position within the block tile
    const int trow = threadIdx.x / (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile<BM, BK, NT, BK, false>(As, A, K, row0, k0, M, K);
        load_tile<BK, BN, NT, BN, false>(Bs, B, N, k0, col0, K, N);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[(trow * TM + i) * BK + k];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k * BN + tcol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + trow * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int col = col0 + tcol * TN + j;
            if (row < M && col < N) store_result(C, row * N + col, acc[i][j], alpha, beta);
        }
    }
}
