// Experiment (sm_90): split_k with its slices' partial sums added through distributed shared memory.
//
// The SPLITS blocks of one C tile form a thread block cluster (__cluster_dims__(1, 1, SPLITS): the
// grid's z is the slice of K, as in split_k). Each block runs split_k's main loop over its slice,
// then stores its TM x TN partial results into its own shared memory (the pipeline's buffers, no
// longer needed; BM x BN floats), and the cluster waits for all of them (barrier.cluster). Block r
// then adds, for the r-th SPLITS-th of every thread's float4 pieces, the partials of slices
// 0, 1, ..., SPLITS - 1 in that order, read from each block's shared memory (ld.shared::cluster),
// and writes those pieces of C. A second cluster barrier keeps every block's shared memory alive
// until the others have read it. No workspace in global memory, no fence, no arrival counter;
// the order of the additions is fixed, so the bits are the same every run.
//
// Launch: block ((BM / WM) * (BN / WN) * 32), grid (ceil(N / BN), ceil(M / BM), SPLITS),
// split_k_cluster_smem_bytes of dynamic shared memory.
#include "pipeline.cuh"

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int SPLITS>
constexpr int split_k_cluster_smem_bytes =
    pipeline_smem_bytes<BM, BN, BK, STAGES> > BM * BN * 4 ? pipeline_smem_bytes<BM, BN, BK, STAGES> : BM * BN * 4;

__device__ __forceinline__ void cluster_sync_all() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// The shared-memory address `local` (this block's) in the block of cluster rank `rank`.
__device__ __forceinline__ unsigned map_rank(unsigned local, unsigned rank) {
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
    return remote;
}

__device__ __forceinline__ float4 ld_cluster4(unsigned addr) {
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr) : "memory");
    return v;
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int SPLITS>
__global__ void __cluster_dims__(1, 1, SPLITS) __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
split_k_cluster(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                float beta, float* __restrict__ C) {
    constexpr int NT = (BM / WM) * (BN / WN) * 32, PIECES = TM * TN / 4, LM = WM / TM, LN = WN / TN;
    static_assert(PIECES % SPLITS == 0, "every block adds the same number of pieces");
    constexpr int SHARE = PIECES / SPLITS;
    extern __shared__ __align__(16) float smem[];
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
    __syncthreads();  // every warp is done reading the pipeline's stages
    float4* mine = reinterpret_cast<float4*>(smem);
#pragma unroll
    for (int e = 0; e < PIECES; ++e) {
        const int i = e / (TN / 4), j = e % (TN / 4) * 4;
        mine[e * NT + threadIdx.x] = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
    }
    cluster_sync_all();  // every slice's partials are in its block's shared memory
    const unsigned rank = blockIdx.z;  // the cluster spans z alone
    const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(mine)) + (rank * SHARE * NT + threadIdx.x) * 16;
    float4 sum[SHARE];
#pragma unroll
    for (int e = 0; e < SHARE; ++e) sum[e] = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int z = 0; z < SPLITS; ++z) {
        const unsigned remote = map_rank(base, z);
        float4 v[SHARE];
#pragma unroll
        for (int e = 0; e < SHARE; ++e) v[e] = ld_cluster4(remote + e * NT * 16);
#pragma unroll
        for (int e = 0; e < SHARE; ++e) {
            sum[e].x += v[e].x; sum[e].y += v[e].y; sum[e].z += v[e].z; sum[e].w += v[e].w;
        }
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm0 = warp / (BN / WN) * WM, wn0 = warp % (BN / WN) * WN;
    const int row = row0 + wm0 + lane / LN * 4, col = col0 + wn0 + lane % LN * 4;
    const bool vec = N % 4 == 0;
#pragma unroll
    for (int e = 0; e < SHARE; ++e) {
        const int p = rank * SHARE + e, i = p / (TN / 4), q = p % (TN / 4);
        store4(C, N, row + (i / 4) * (LM * 4) + i % 4, col + q * (LN * 4), M, N, sum[e], alpha, beta, vec);
    }
    cluster_sync_all();  // nobody leaves while another block still reads its shared memory
}
