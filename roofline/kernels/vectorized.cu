// vectorized: register_tiling_2d with 128-bit loads from global and from shared memory.
//
// The A tile is stored transposed (As[k][m]), so that the TM values of A a thread needs for one k
// are consecutive in shared memory, like its TN values of B: each is read with TM/4 and TN/4
// 128-bit loads instead of TM and TN 32-bit ones. Global tiles are read as float4 (one load
// instruction per four elements). The bytes moved are those of register_tiling_2d; the number of
// load instructions issued falls by four. Shapes whose rows are not a multiple of four floats
// take the element-by-element path of load4/store4 (same results, slower). The outer product is
// issued column by column (outer_product_by_column): for this kernel ptxas then assigns the
// accumulators to registers that run 2 % faster on the H200 (32.0 vs 31.3 TFLOP/s at 4096^3).
//
// Launch: block (BM * BN / (TM * TN)), grid (ceil(N / BN), ceil(M / BM)).
#include "common.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(BM * BN / (TM * TN))
vectorized(int M, int N, int K, float alpha, const float* __restrict__ A,
           const float* __restrict__ B, float beta, float* __restrict__ C) {
    constexpr int NT = BM * BN / (TM * TN);
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "tiles must be whole float4s");
    __shared__ __align__(16) float As[BK * BM];  // As[k * BM + m] = A[row0 + m][k0 + k]
    __shared__ __align__(16) float Bs[BK * BN];

    const bool a_vec = K % 4 == 0, b_vec = N % 4 == 0;
    const int tcol = threadIdx.x % (BN / TN), trow = threadIdx.x / (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_a_transposed4<BM, BK, NT, BM>(As, A, M, K, row0, k0, a_vec);
        load_b4<BK, BN, NT>(Bs, B, K, N, k0, col0, b_vec);
        __syncthreads();
        outer_products_from_pieces<BK, BM, BN, 4, 4, true>(acc, a, b, As + trow * TM, Bs + tcol * TN);
        __syncthreads();
    }
    store_pieces<TM, TN, 4, 4>(C, M, N, row0 + trow * TM, col0 + tcol * TN, acc, alpha, beta);
}
