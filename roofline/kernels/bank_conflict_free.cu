// bank_conflict_free: the vectorized kernel with its shared-memory bank conflicts removed.
//
// Two sources of conflicts in `vectorized`: (1) a thread's TN columns are contiguous, so the 8
// threads of one 128-bit load phase read B at a stride of TN floats and pairs of them land in the
// same banks; (2) the transposing store of A puts the two float4 halves of one row, written by
// neighbouring threads, into the same bank. Here a thread's TM x TN tile is split into 4 x 4
// pieces spaced BM / (TM / 4) rows and BN / (TN / 4) columns apart, so that neighbouring threads
// read neighbouring float4s (each phase covers 128 contiguous bytes), and the transposed A tile
// has a pitch of BM + 4 floats, which spreads the transposing store over all 32 banks at BK = 8
// (the ladder's tile). At BK = 16 (the tile `roofline tune` picks on the H200) the stores conflict
// again: the fragment loads stay conflict-free, the transposing stores do not.
// Same bytes, same instructions as `vectorized`.
//
// The body is a device function so that `autotuned` can run it at other tile sizes.
//
// Launch: block (BM * BN / (TM * TN)), grid (ceil(N / BN), ceil(M / BM)).
#include "common.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__device__ __forceinline__ void bank_conflict_free_tile(int M, int N, int K, float alpha, const float* __restrict__ A,
                                                        const float* __restrict__ B, float beta, float* __restrict__ C) {
    constexpr int NT = BM * BN / (TM * TN);
    constexpr int AP = BM + 4;               // pitch of the transposed A tile
    constexpr int RSTEP = BM / (TM >= 4 ? TM / 4 : 1);  // distance between a thread's 4-row pieces
    constexpr int CSTEP = BN / (TN >= 4 ? TN / 4 : 1);  // between its 4-column pieces (TM, TN < 4: the assert says)
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "tiles must be whole float4s");
    static_assert(NT >= 32 && NT <= 1024, "a block holds 32 to 1024 threads");
    __shared__ __align__(16) float As[BK * AP];
    __shared__ __align__(16) float Bs[BK * BN];

    const bool a_vec = K % 4 == 0, b_vec = N % 4 == 0;
    const int tcol = threadIdx.x % (BN / TN), trow = threadIdx.x / (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_a_transposed4<BM, BK, NT, AP>(As, A, M, K, row0, k0, a_vec);
        load_b4<BK, BN, NT>(Bs, B, K, N, k0, col0, b_vec);
        __syncthreads();
        outer_products_from_pieces<BK, AP, BN, RSTEP, CSTEP>(acc, a, b, As + trow * 4, Bs + tcol * 4);
        __syncthreads();
    }
    store_pieces<TM, TN, RSTEP, CSTEP>(C, M, N, row0 + trow * 4, col0 + tcol * 4, acc, alpha, beta);
}

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(BM * BN / (TM * TN))
bank_conflict_free(int M, int N, int K, float alpha, const float* __restrict__ A,
                   const float* __restrict__ B, float beta, float* __restrict__ C) {
    bank_conflict_free_tile<BM, BN, BK, TM, TN>(M, N, K, alpha, A, B, beta, C);
}
