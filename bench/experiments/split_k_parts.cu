// Experiment: where split_k's time goes, block by block.
//
// split_k_stamped is split_k (roofline/kernels/split_k.cu) with a clock on it: thread 0 of every
// block writes the global timer (ns) when the block starts, when its main loop ends, when it has
// counted itself in (partials written, fenced, arrival counted) and when it ends, and the SM it ran
// on. MODE cuts the kernel short to weigh its parts:
//   0  all of split_k (partials, the last block's sum, C written);
//   1  the partials written and counted in, no sum, C not written;
//   2  the main loop alone (the accumulators stored only where `keep` is set, which the host never
//      sets, so the FMAs stay and nothing is written).
// (A third mode, the sum spread over the tile's blocks, became split_k's REDUCERS = SPLITS: the
// script times the library's kernel that way beside these.)
// SCALAR writes the partials as four 4-byte stores per float4 rather than one 16-byte store (a
// 16-byte store of the accumulators themselves makes ptxas keep them in aligned register quads,
// which puts all three operands of some FFMAs in one register bank).
// Launch as split_k, with `stamps` holding 4 unsigned long longs and `sms` one unsigned per block.
#include "pipeline.cuh"

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned sm_id() {
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int SPLITS, int MODE, int SCALAR>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
split_k_stamped(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                float beta, float* __restrict__ C, float* __restrict__ partials, unsigned* __restrict__ arrivals,
                unsigned long long* __restrict__ stamps, unsigned* __restrict__ sms, int keep) {
    constexpr int NT = (BM / WM) * (BN / WN) * 32, PIECES = TM * TN / 4, GROUP = PIECES < 32 ? PIECES : 32;
    extern __shared__ __align__(16) float smem[];
    __shared__ bool last;
    const unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    if (threadIdx.x == 0) {
        stamps[4 * block] = global_ns();
        sms[block] = sm_id();
    }
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int ktiles = (K + BK - 1) / BK;
    const int kt_begin = static_cast<int>(static_cast<long long>(blockIdx.z) * ktiles / SPLITS);
    const int kt_end = static_cast<int>(static_cast<long long>(blockIdx.z + 1) * ktiles / SPLITS);
    float acc[TM][TN] = {};
    if (row0 + BM <= M && col0 + BN <= N && kt_end * BK <= K && N % 4 == 0)
        pipelined_mainloop<false, BM, BN, BK, WM, WN, TM, TN, STAGES>(acc, smem, A, B, M, N, K, row0, col0,
                                                                        kt_begin, kt_end);
    else
        pipelined_mainloop<true, BM, BN, BK, WM, WN, TM, TN, STAGES>(acc, smem, A, B, M, N, K, row0, col0,
                                                                       kt_begin, kt_end);
    __syncthreads();
    if (threadIdx.x == 0) stamps[4 * block + 1] = global_ns();
    if (MODE == 2) {
        if (keep) store_warp_tiled<BM, BN, WM, WN, TM, TN>(C, M, N, row0, col0, acc, alpha, beta);
        if (threadIdx.x == 0) stamps[4 * block + 2] = stamps[4 * block + 3] = global_ns();
        return;
    }
    const unsigned tile = blockIdx.y * gridDim.x + blockIdx.x;
    float4* slabs = reinterpret_cast<float4*>(partials) + static_cast<long long>(tile) * SPLITS * (BM * BN / 4);
    float4* mine = slabs + blockIdx.z * (BM * BN / 4);
#pragma unroll
    for (int e = 0; e < PIECES; ++e) {
        const int i = e / (TN / 4), j = e % (TN / 4) * 4;
        if (SCALAR) {
            float* m = reinterpret_cast<float*>(mine + e * NT + threadIdx.x);
            m[0] = acc[i][j]; m[1] = acc[i][j + 1]; m[2] = acc[i][j + 2]; m[3] = acc[i][j + 3];
        } else {
            mine[e * NT + threadIdx.x] = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
        }
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&arrivals[tile], 1u) == SPLITS - 1;
    __syncthreads();
    if (threadIdx.x == 0) stamps[4 * block + 2] = global_ns();
    if (MODE == 1 || !last) {
        if (MODE == 1 && last && threadIdx.x == 0) arrivals[tile] = 0;
        if (threadIdx.x == 0) stamps[4 * block + 3] = global_ns();
        return;
    }
    __threadfence();
#pragma unroll
    for (int g = 0; g < PIECES; g += GROUP) {
#pragma unroll
        for (int e = g; e < g + GROUP; ++e) {
            const int i = e / (TN / 4), j = e % (TN / 4) * 4;
            acc[i][j] = acc[i][j + 1] = acc[i][j + 2] = acc[i][j + 3] = 0.0f;
        }
#pragma unroll 1
        for (int z = 0; z < SPLITS; ++z) {
            float4 v[GROUP];
            const float4* slab = slabs + z * (BM * BN / 4) + g * NT + threadIdx.x;
#pragma unroll
            for (int e = 0; e < GROUP; ++e) v[e] = __ldcg(slab + e * NT);
#pragma unroll
            for (int e = 0; e < GROUP; ++e) {
                const int i = (g + e) / (TN / 4), j = (g + e) % (TN / 4) * 4;
                acc[i][j] += v[e].x; acc[i][j + 1] += v[e].y; acc[i][j + 2] += v[e].z; acc[i][j + 3] += v[e].w;
            }
        }
    }
    if (threadIdx.x == 0) arrivals[tile] = 0;
    store_warp_tiled<BM, BN, WM, WN, TM, TN>(C, M, N, row0, col0, acc, alpha, beta);
    __syncthreads();
    if (threadIdx.x == 0) stamps[4 * block + 3] = global_ns();
}
