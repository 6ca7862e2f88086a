// split_k: full_tiles with K cut into SPLITS slices, for problems with too few output tiles to
// fill the GPU.
//
// At 1024^3 the 128x256 block tile gives 32 blocks for 132 SMs: the whole product runs on a
// quarter of the machine however fast each block is. Cutting K into SPLITS slices makes
// tiles x SPLITS blocks, each computing the tile's partial sum over its slice of K with the
// full_tiles pipeline (the check-free copies where the tile lies inside C and its slice of K
// holds no partial k-tile).
//
// The partial sums are added in a fixed order, slices 0, 1, ..., SPLITS - 1, so the result is the
// same bits every run and whichever way they are added:
//   1. every block of a split tile writes its TM x TN partial results to its own slab of the
//      workspace (`partials`: tile, then slice, then float4 e of thread t at e * threads + t, so
//      a warp's 128-bit stores cover 512 contiguous bytes);
//   2. __threadfence, then one thread counts the block in with atomicAdd on the tile's arrival
//      counter (the CUDA samples' threadFenceReduction pattern);
//   3. with REDUCERS = 1, the block that arrives last adds the slices' slabs, its own included,
//      reading them through L2 (__ldcg) up to 32 float4s per thread at a time (one at a time, the
//      sum ran latency-bound on a quarter of the SMs: 1024^3 in four slices took 115 us against
//      71), resets the counter to zero for the next launch and writes C = alpha * sum + beta * C;
//      with REDUCERS = SPLITS, every block of the tile waits until all have arrived, then adds a
//      SPLITS-th of the tile's float4s (each thread's pieces lo .. lo + R - 1) and writes them to C,
//      and the last to leave (the tile's second counter) puts both counters back to zero. The
//      sum then runs on every SM of the tile rather than one: at 1024^3 in four slices on an
//      H100, 4 us rather than 18. Its blocks wait for each other, so they must all be resident at
//      once: the host launches it cooperatively (cuLaunchCooperativeKernel), which the driver
//      refuses rather than let it hang where they would not fit.
// Which block arrives last varies run to run; the order of the additions does not.
// With SPLITS = 1 no workspace is touched: the kernel is full_tiles.
//
// Launch: block ((BM / WM) * (BN / WN) * 32), grid (ceil(N / BN), ceil(M / BM), SPLITS),
// STAGES * BK * (BM + 4 + BN) * 4 bytes of dynamic shared memory; `partials` holds
// ceil(M / BM) * ceil(N / BN) * SPLITS * BM * BN floats and `arrivals` one zeroed unsigned per
// tile, two with REDUCERS = SPLITS (zero again after every launch).
#include "pipeline.cuh"

// Dynamic shared memory of one block, in bytes (roofline reads it through the compiler).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int SPLITS, int REDUCERS>
constexpr int split_k_smem_bytes = pipeline_smem_bytes<BM, BN, BK, STAGES>;

// The acquire load the waiting blocks poll the arrival counter with (REDUCERS = SPLITS).
__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// The minimum of one block per SM in __launch_bounds__ is what keeps NVRTC (12.9 and 13) from
// holding the 64x64 tile of 4x4 threads to 64 registers with 8 bytes spilled: 72 without spills.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int SPLITS, int REDUCERS>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
split_k(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
        float beta, float* __restrict__ C, float* __restrict__ partials, unsigned* __restrict__ arrivals) {
    constexpr int NT = (BM / WM) * (BN / WN) * 32, PIECES = TM * TN / 4, GROUP = PIECES < 32 ? PIECES : 32;
    static_assert(SPLITS >= 1, "at least one slice of K");
    static_assert(REDUCERS == 1 || REDUCERS == SPLITS, "the last block adds the slices, or all of the tile's do");
    static_assert(PIECES % GROUP == 0, "the reduction reads whole groups of float4s");
    extern __shared__ __align__(16) float smem[];
    __shared__ bool last;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    // Slice z takes k-tiles [z * ktiles / SPLITS, (z + 1) * ktiles / SPLITS): sizes differ by one
    // at most, and none is empty while SPLITS <= ktiles.
    const int ktiles = (K + BK - 1) / BK;
    const int kt_begin = static_cast<int>(static_cast<long long>(blockIdx.z) * ktiles / SPLITS);
    const int kt_end = static_cast<int>(static_cast<long long>(blockIdx.z + 1) * ktiles / SPLITS);
    float acc[TM][TN] = {};
    if (row0 + BM <= M && col0 + BN <= N && kt_end * BK <= K && N % 4 == 0)  // no edge, no partial k-tile
        pipelined_mainloop<false, BM, BN, BK, WM, WN, TM, TN, STAGES>(acc, smem, A, B, M, N, K, row0, col0,
                                                                        kt_begin, kt_end);
    else
        pipelined_mainloop<true, BM, BN, BK, WM, WN, TM, TN, STAGES>(acc, smem, A, B, M, N, K, row0, col0,
                                                                       kt_begin, kt_end);
    if (SPLITS > 1) {
        const unsigned tile = blockIdx.y * gridDim.x + blockIdx.x;
        float4* slabs = reinterpret_cast<float4*>(partials) + static_cast<long long>(tile) * SPLITS * (BM * BN / 4);
        float4* mine = slabs + blockIdx.z * (BM * BN / 4);
#pragma unroll
        for (int e = 0; e < PIECES; ++e) {
            const int i = e / (TN / 4), j = e % (TN / 4) * 4;
            mine[e * NT + threadIdx.x] = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
        }
        __threadfence();  // this block's partials are visible to every SM before it is counted in
        __syncthreads();
        if (REDUCERS == SPLITS) {  // every block adds its share once the whole tile has arrived
            constexpr int R = (PIECES + SPLITS - 1) / SPLITS, LM = WM / TM, LN = WN / TN;
            if (threadIdx.x == 0) {
                atomicAdd(&arrivals[tile], 1u);
                while (load_acquire(&arrivals[tile]) < SPLITS) __nanosleep(64);
                __threadfence();
            }
            __syncthreads();
            const int lo = blockIdx.z * R;
            float4 v[SPLITS][R];  // every slice's share of this thread's pieces, loaded at once
#pragma unroll
            for (int z = 0; z < SPLITS; ++z)
#pragma unroll
                for (int r = 0; r < R; ++r)
                    if (lo + r < PIECES) v[z][r] = __ldcg(slabs + z * (BM * BN / 4) + (lo + r) * NT + threadIdx.x);
            const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
            const int row = row0 + warp / (BN / WN) * WM + lane / LN * 4;
            const int col = col0 + warp % (BN / WN) * WN + lane % LN * 4;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                if (lo + r >= PIECES) break;
                float4 sum = v[0][r];
#pragma unroll
                for (int z = 1; z < SPLITS; ++z) {
                    sum.x += v[z][r].x; sum.y += v[z][r].y; sum.z += v[z][r].z; sum.w += v[z][r].w;
                }
                const int i = (lo + r) / (TN / 4), q = (lo + r) % (TN / 4);  // piece (i / 4, q): store_pieces
                store4(C, N, row + (i / 4) * (LM * 4) + i % 4, col + q * (LN * 4), M, N, sum, alpha, beta,
                       N % 4 == 0);
            }
            __syncthreads();  // every thread of this block has read the slabs
            if (threadIdx.x == 0) {
                const unsigned tiles = gridDim.x * gridDim.y;
                if (atomicAdd(&arrivals[tiles + tile], 1u) == SPLITS - 1) arrivals[tile] = arrivals[tiles + tile] = 0;
            }
            return;
        }
        if (threadIdx.x == 0) last = atomicAdd(&arrivals[tile], 1u) == SPLITS - 1;
        __syncthreads();
        if (!last) return;
        __threadfence();
        // The sum, slice by slice from the slabs (this block's own too: in registers it would
        // need a second set of accumulators), GROUP float4s of each issued together so that many
        // L2 reads per thread are in flight rather than one.
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
    }
    store_warp_tiled<BM, BN, WM, WN, TM, TN>(C, M, N, row0, col0, acc, alpha, beta);
}
