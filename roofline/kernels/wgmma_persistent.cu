// wgmma_persistent: wgmma_ws as a persistent kernel (sm_90a).
//
// One block per SM stays resident for the whole product and walks the C tiles blockIdx.x,
// blockIdx.x + gridDim.x, ... in wgmma_ws's grouped order. The stage ring and its barriers live
// across tiles: the producer goes on into the next tile's K loop as soon as a stage is free, so
// while the consumers write one tile's C the next tile's first stages are already arriving, and
// no block pays a launch, a barrier initialisation or an empty pipeline per tile.
//
// Launch: block 384, grid (min(SMS, ceil(M / 128) * ceil(N / BN))), dynamic smem
// wgmma_persistent_smem_bytes; takes the tensor maps of A (box BK x 128) and B (box BK x BN) after C.
#include "hopper.cuh"

template <typename T, int BN, int BK, int STAGES, int GROUP, int SMS>
constexpr int wgmma_persistent_smem_bytes = 1024 + STAGES * (128 + BN) * BK * static_cast<int>(sizeof(T)) + 16 * STAGES;

template <typename T, int BN, int BK, int STAGES, int GROUP, int SMS>
__global__ void __launch_bounds__(384, 1)
wgmma_persistent(int M, int N, int K, float alpha, const T* __restrict__ A, const T* __restrict__ B, float beta,
                 float* __restrict__ C, const TensorMap* __restrict__ maps) {
    constexpr int BM = 128;
    constexpr int A_BYTES = BM * BK * static_cast<int>(sizeof(T)), B_BYTES = BN * BK * static_cast<int>(sizeof(T));
    constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static_assert(BK * sizeof(T) == 128, "BK must be 128 bytes of K (the swizzle's row)");
    static_assert(BN == 128 || BN == 256, "BN 128 or 256");
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    unsigned char* smem = aligned_1024(smem_raw);
    unsigned long long* full = reinterpret_cast<unsigned long long*>(smem + STAGES * STAGE_BYTES);
    unsigned long long* empty = full + STAGES;

    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, tiles = tiles_m * tiles_n;
    const int ktiles = (K + BK - 1) / BK;
    const int warpgroup = threadIdx.x / 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbarrier_init(&full[s], 1);
            mbarrier_init(&empty[s], 2);
        }
        mbarrier_init_fence();
    }
    __syncthreads();

    if (warpgroup == 0) {
        registers_decrease<40>();
        if (threadIdx.x == 0) {
            tensor_map_acquire(&maps[0]);
            tensor_map_acquire(&maps[1]);
            int it = 0;  // K tiles issued by this block, over all its C tiles: the ring's position
            for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
                int tile_m, tile_n;
                grouped_tile<GROUP>(tile, tiles_m, tiles_n, tile_m, tile_n);
                for (int kt = 0; kt < ktiles; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) mbarrier_wait(&empty[s], (it / STAGES - 1) & 1);
                    unsigned char* stage = smem + s * STAGE_BYTES;
                    mbarrier_expect_bytes(&full[s], STAGE_BYTES);
                    tma_load(stage, &maps[0], &full[s], kt * BK, tile_m * BM);
                    tma_load(stage + A_BYTES, &maps[1], &full[s], kt * BK, tile_n * BN);
                }
            }
        }
        return;
    }
    registers_increase<232>();
    const int consumer = warpgroup - 1;
    int it = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int tile_m, tile_n;
        grouped_tile<GROUP>(tile, tiles_m, tiles_n, tile_m, tile_n);
        float d[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
        for (int kt = 0; kt < ktiles; ++kt, ++it) {
            const int s = it % STAGES;
            mbarrier_wait(&full[s], (it / STAGES) & 1);
            const unsigned a_tile = smem_address(smem + s * STAGE_BYTES) + consumer * 64 * 128;
            const unsigned b_tile = smem_address(smem + s * STAGE_BYTES) + A_BYTES;
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < 4; ++k) Wgmma<BN>::template mma<T>(d, tile_descriptor(a_tile + 32 * k), tile_descriptor(b_tile + 32 * k));
            wgmma_commit();
            wgmma_wait<1>();  // the previous K tile's wgmmas are done: release its stage
            if (kt > 0 && threadIdx.x % 128 == 0) mbarrier_arrive(&empty[(it - 1) % STAGES]);
        }
        wgmma_wait<0>();
        if (threadIdx.x % 128 == 0) mbarrier_arrive(&empty[(it - 1) % STAGES]);  // the tile's last stage
        store_warpgroup<BN>(C, M, N, tile_m * BM + 64 * consumer, tile_n * BN, d, alpha, beta);
    }
}
