// wgmma_ws: warp specialisation. A producer warpgroup only moves data, two consumer warpgroups
// only multiply (sm_90a).
//
// The block (3 warpgroups, 384 threads) owns a 128 x BN tile of C; consumer c holds rows
// 64 c .. 64 c + 63 as one 64 x BN accumulator (wgmma m64nBN). One producer thread keeps STAGES
// stages of TMA loads in flight: it waits on a stage's `empty` barrier until both consumers have
// released it, then asks for the next A and B boxes on the stage's `full` barrier. A consumer
// waits on `full`, issues its wgmmas, and releases the previous stage as soon as the wgmmas
// reading it are done (wait_group 1), so the tensor cores are never idle waiting for a copy the
// producer could have started. setmaxnreg moves registers from the producer (40) to the consumers
// (232), whose accumulators take BN / 2 of them. Blocks take their tiles GROUP rows of tiles at a
// time (hopper.cuh, grouped_tile), so the blocks on the GPU at once share A and B in the L2.
//
// Launch: block 384, grid (ceil(M / 128) * ceil(N / BN)), dynamic smem wgmma_ws_smem_bytes;
// takes the tensor maps of A (box BK x 128) and B (box BK x BN) after C.
#include "hopper.cuh"

template <typename T, int BN, int BK, int STAGES, int GROUP>
constexpr int wgmma_ws_smem_bytes = 1024 + STAGES * (128 + BN) * BK * static_cast<int>(sizeof(T)) + 16 * STAGES;

template <typename T, int BN, int BK, int STAGES, int GROUP>
__global__ void __launch_bounds__(384, 1)
wgmma_ws(int M, int N, int K, float alpha, const T* __restrict__ A, const T* __restrict__ B, float beta,
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

    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    int tile_m, tile_n;
    grouped_tile<GROUP>(blockIdx.x, tiles_m, tiles_n, tile_m, tile_n);
    const int row0 = tile_m * BM, col0 = tile_n * BN;
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
            for (int kt = 0; kt < ktiles; ++kt) {
                const int s = kt % STAGES;
                if (kt >= STAGES) mbarrier_wait(&empty[s], (kt / STAGES - 1) & 1);
                unsigned char* stage = smem + s * STAGE_BYTES;
                mbarrier_expect_bytes(&full[s], STAGE_BYTES);
                tma_load(stage, &maps[0], &full[s], kt * BK, row0);
                tma_load(stage + A_BYTES, &maps[1], &full[s], kt * BK, col0);
            }
        }
        return;
    }
    registers_increase<232>();
    const int consumer = warpgroup - 1;
    float d[BN / 2] = {};
    for (int kt = 0; kt < ktiles; ++kt) {
        const int s = kt % STAGES;
        mbarrier_wait(&full[s], (kt / STAGES) & 1);
        const unsigned a_tile = smem_address(smem + s * STAGE_BYTES) + consumer * 64 * 128;
        const unsigned b_tile = smem_address(smem + s * STAGE_BYTES) + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < 4; ++k) Wgmma<BN>::template mma<T>(d, tile_descriptor(a_tile + 32 * k), tile_descriptor(b_tile + 32 * k));
        wgmma_commit();
        wgmma_wait<1>();  // the previous tile's wgmmas are done: release its stage
        if (kt > 0 && threadIdx.x % 128 == 0) mbarrier_arrive(&empty[(kt - 1) % STAGES]);
    }
    wgmma_wait<0>();
    store_warpgroup<BN>(C, M, N, row0 + 64 * consumer, col0, d, alpha, beta);
}
