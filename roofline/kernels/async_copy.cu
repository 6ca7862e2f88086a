// async_copy: the warp-tiled kernel fed by a STAGES-deep pipeline of asynchronous copies.
//
// Until now every block loaded a tile, waited for it (__syncthreads), computed, and only then
// asked for the next one: the memory latency sat on the critical path. Here global-to-shared
// copies are issued with cp.async (sm_80+) STAGES - 1 tiles ahead of the computation, which runs
// on the oldest complete stage while the newer ones are in flight. The copies bypass registers:
// B rows travel as 16-byte copies; A is transposed on the way (4-byte copies, each to its column
// of the pitch-(BM + 4) tile: the global reads stay sector-efficient, and the shared stores are
// conflict-free at BK = 8 and two-way at the ladder's BK = 16, off the FMA path). Out-of-matrix elements are zero-filled by the copy itself (src-size 0).
// Each thread computes its copy addresses once and advances them by a constant per tile; the
// stages rotate by byte offset (pipeline.cuh). Every block takes the checked copy path.
// Shared memory is dynamic: STAGES * BK * (BM + 4 + BN) * 4 bytes, above 48 KB by opt-in.
//
// Launch: block ((BM / WM) * (BN / WN) * 32), grid (ceil(N / BN), ceil(M / BM)), dynamic smem above.
#include "pipeline.cuh"

// Dynamic shared memory of one block, in bytes (roofline reads it through the compiler).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
constexpr int async_copy_smem_bytes = pipeline_smem_bytes<BM, BN, BK, STAGES>;

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
async_copy(int M, int N, int K, float alpha, const float* __restrict__ A,
           const float* __restrict__ B, float beta, float* __restrict__ C) {
    extern __shared__ __align__(16) float smem[];
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int ktiles = (K + BK - 1) / BK;
    float acc[TM][TN] = {};
    pipelined_mainloop<true, BM, BN, BK, WM, WN, TM, TN, STAGES>(acc, smem, A, B, M, N, K, row0, col0, 0, ktiles);
    store_warp_tiled<BM, BN, WM, WN, TM, TN>(C, M, N, row0, col0, acc, alpha, beta);
}
