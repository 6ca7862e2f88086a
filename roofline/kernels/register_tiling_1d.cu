// register_tiling_1d: each thread computes a column of TM results of a BM x BN block tile.
//
// Per step of K the block stages a BM x BK tile of A and a BK x BN tile of B in shared memory.
// A thread then reads one B value and reuses it, from a register, across its TM results; the TM
// A values it needs are read once each. SMEM accesses per result fall from 2*K to K*(1 + 1/TM)
// (4608 at K = 4096, TM = 8) and GMEM accesses to K*(1/BM + 1/BN) (128 at 64 x 64).
//
// Launch: block (BM * BN / TM), grid (ceil(N / BN), ceil(M / BM)).
#include "common.cuh"

template <int BM, int BN, int BK, int TM>
__global__ void __launch_bounds__(BM * BN / TM)
register_tiling_1d(int M, int N, int K, float alpha, const float* __restrict__ A,
                   const float* __restrict__ B, float beta, float* __restrict__ C) {
    constexpr int NT = BM * BN / TM;
    static_assert(BM % TM == 0, "TM must divide BM");
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];

    const int tcol = threadIdx.x % BN;  // column of C within the block tile
    const int trow = threadIdx.x / BN;  // which TM-tall column segment
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float acc[TM] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile<BM, BK, NT, BK, false>(As, A, K, row0, k0, M, K);
        load_tile<BK, BN, NT, BN, false>(Bs, B, N, k0, col0, K, N);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float b = Bs[k * BN + tcol];
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i] += As[(trow * TM + i) * BK + k] * b;
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + trow * TM + i, col = col0 + tcol;
        if (row < M && col < N) store_result(C, row * N + col, acc[i], alpha, beta);
    }
}
