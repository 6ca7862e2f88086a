// full_tiles: async_copy with a check-free main loop for the blocks that lie wholly inside C.
//
// In async_copy every copy of every tile carries its bounds checks: row and column tests, the
// zero-fill size operand, the float4-or-element choice for B. At 4096^3 no block needs them.
// Here a block whose BM x BN tile lies inside C, when K is a multiple of BK and N of 4 (16-byte
// B copies stay aligned), runs the same pipeline with unconditional copies; the blocks on the
// right and bottom edges, and every block of a ragged K, keep the checked path. The test is one
// comparison per block, the same for all its threads, so warps never diverge on it. Both loops
// are compiled into the kernel; the traffic is the same as async_copy's, only the instructions
// around the FMAs shrink: at the ladder's tile the main loop's SASS (cuobjdump, sm_90) holds
// 2,418 instructions per 2,048 FFMA on the checked path and 2,211 on the check-free one.
//
// Launch: block ((BM / WM) * (BN / WN) * 32), grid (ceil(N / BN), ceil(M / BM)),
// STAGES * BK * (BM + 4 + BN) * 4 bytes of dynamic shared memory.
#include "pipeline.cuh"

// Dynamic shared memory of one block, in bytes (roofline reads it through the compiler).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
constexpr int full_tiles_smem_bytes = pipeline_smem_bytes<BM, BN, BK, STAGES>;

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
full_tiles(int M, int N, int K, float alpha, const float* __restrict__ A,
           const float* __restrict__ B, float beta, float* __restrict__ C) {
    extern __shared__ __align__(16) float smem[];
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int ktiles = (K + BK - 1) / BK;
    float acc[TM][TN] = {};
    if (row0 + BM <= M && col0 + BN <= N && K % BK == 0 && N % 4 == 0)
        pipelined_mainloop<false, BM, BN, BK, WM, WN, TM, TN, STAGES>(acc, smem, A, B, M, N, K, row0, col0, 0, ktiles);
    else
        pipelined_mainloop<true, BM, BN, BK, WM, WN, TM, TN, STAGES>(acc, smem, A, B, M, N, K, row0, col0, 0, ktiles);
    store_warp_tiled<BM, BN, WM, WN, TM, TN>(C, M, N, row0, col0, acc, alpha, beta);
}
