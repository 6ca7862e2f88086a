// warptiling: a warp-level tile between the block tile and the thread tile.
//
// The BM x BN block tile is cut into WM x WN warp tiles, one per warp; inside a warp the 32 lanes
// form an LM x LN grid (LM = WM / TM, LN = WN / TN) and each lane owns TM x TN results as
// (TM/4) x (TN/4) pieces of 4 x 4, spaced LM*4 rows and LN*4 columns apart. Consecutive lanes
// therefore read consecutive float4s of B (a 128-byte phase, no bank conflicts) and a warp's
// shared-memory footprint per k is only WM + WN values, read by all its lanes; the values a lane
// reuses stay in registers across its whole warp tile. Traffic model as before: GMEM
// K(1/BM + 1/BN), SMEM K(1/TM + 1/TN) per result.
//
// Launch: block ((BM / WM) * (BN / WN) * 32), grid (ceil(N / BN), ceil(M / BM)).
#include "common.cuh"

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
warptiling(int M, int N, int K, float alpha, const float* __restrict__ A,
           const float* __restrict__ B, float beta, float* __restrict__ C) {
    constexpr int NT = (BM / WM) * (BN / WN) * 32;
    constexpr int LM = WM / TM, LN = WN / TN;  // lane grid inside a warp
    constexpr int AP = BM + 4;                 // pitch of the transposed A tile
    static_assert(LM * LN == 32, "a warp's lanes must tile its warp tile exactly");
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "tiles must be whole float4s");
    __shared__ __align__(16) float As[BK * AP];
    __shared__ __align__(16) float Bs[BK * BN];

    const bool a_vec = K % 4 == 0, b_vec = N % 4 == 0;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm0 = warp / (BN / WN) * WM, wn0 = warp % (BN / WN) * WN;  // warp tile origin
    const int lm = lane / LN, ln = lane % LN;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_a_transposed4<BM, BK, NT, AP>(As, A, M, K, row0, k0, a_vec);
        load_b4<BK, BN, NT>(Bs, B, K, N, k0, col0, b_vec);
        __syncthreads();
        outer_products_from_pieces<BK, AP, BN, LM * 4, LN * 4>(acc, a, b, As + wm0 + lm * 4, Bs + wn0 + ln * 4);
        __syncthreads();
    }
    store_pieces<TM, TN, LM * 4, LN * 4>(C, M, N, row0 + wm0 + lm * 4, col0 + wn0 + ln * 4, acc, alpha, beta);
}
