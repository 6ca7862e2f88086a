// register_strip: each thread computes a 1 x TN strip of one row of C; the A values that row
// needs are held in registers and reused across the strip, the B tile is read from shared memory.
//
// Per step of K the block stages a BM x BK tile of A (stored transposed, so that the threads of a
// warp, which own consecutive rows, read consecutive words) and a BK x BN tile of B. A thread
// loads its row's BK values of A into registers once, then multiplies each against TN values of
// B. The threads of a warp share one strip position, so every B read is a broadcast.
// SMEM accesses per result: K/TN for A plus K for B, K*(1 + 1/TN); GMEM: K*(1/BM + 1/BN).
// The transposed A tile has a pitch of BM + 4 words so that the transposing stores hit 32
// different banks.
//
// Launch: block (BM * BN / TN), grid (ceil(N / BN), ceil(M / BM)).
#include "common.cuh"

template <int BM, int BN, int BK, int TN>
__global__ void __launch_bounds__(BM * BN / TN)
register_strip(int M, int N, int K, float alpha, const float* __restrict__ A,
               const float* __restrict__ B, float beta, float* __restrict__ C) {
    constexpr int NT = BM * BN / TN;
    constexpr int A_PITCH = BM + 4;
    static_assert(BN % TN == 0, "TN must divide BN");
    static_assert(BM % 32 == 0, "a warp must share one strip position (BM a multiple of 32)");
    __shared__ float As[BK * A_PITCH];  // As[k * A_PITCH + r] = A[row0 + r][k0 + k]
    __shared__ float Bs[BK * BN];

    const int trow = threadIdx.x % BM;    // row of C within the block tile
    const int tstrip = threadIdx.x / BM;  // which 1 x TN strip of that row
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float a[BK];
    float acc[TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile<BM, BK, NT, A_PITCH, true>(As, A, K, row0, k0, M, K);
        load_tile<BK, BN, NT, BN, false>(Bs, B, N, k0, col0, K, N);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) a[k] = As[k * A_PITCH + trow];
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[j] += a[k] * Bs[k * BN + tstrip * TN + j];
        }
        __syncthreads();
    }
    const int row = row0 + trow;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const int col = col0 + tstrip * TN + j;
        if (row < M && col < N) store_result(C, row * N + col, acc[j], alpha, beta);
    }
}
