// wgmma_tma: Hopper's warpgroup MMA, fed by the Tensor Memory Accelerator (sm_90a).
//
// The block owns a BM x BN tile of C and has one warpgroup (128 threads) for each 64 rows of it:
// warpgroup w holds rows 64 w .. 64 w + 63 as one 64 x BN accumulator and multiplies with
// wgmma.mma_async: the operands come straight from shared memory through descriptors (no
// ldmatrix, no fragments in registers), 64 x BN x (32 bytes of K) per instruction. The tiles
// arrive by TMA: one thread asks for the BM x BK box of A and the BN x BK box of B (BK = 128 bytes
// of K), which the copy engine writes with the 128-byte swizzle wgmma reads, zero-filling past the
// matrix, and counts the bytes into the stage's mbarrier. STAGES stages are in flight; every
// warpgroup waits on a stage's barrier, multiplies, waits for its wgmmas (wait_group 0), the block
// meets at a barrier, and the stage is refilled STAGES tiles ahead. The ladder's 128 x 256 tile
// does 85 FLOP for each byte it asks of the L2, above the BF16 tensor ridge (a 128 x 128 tile's 64
// is below it: L2-bound). Blocks take their tiles GROUP rows of tiles at a time (hopper.cuh,
// grouped_tile), so the blocks on the GPU at once share A and B in the L2.
//
// Launch: block 2 * BM, grid (ceil(M / BM) * ceil(N / BN)), dynamic smem wgmma_tma_smem_bytes;
// takes the tensor maps of A (box BK x BM) and B (box BK x BN) after C.
#include "hopper.cuh"

template <typename T, int BM, int BN, int BK, int STAGES, int GROUP>
constexpr int wgmma_tma_smem_bytes = 1024 + STAGES * (BM + BN) * BK * static_cast<int>(sizeof(T)) + 8 * STAGES;

template <typename T, int BM, int BN, int BK, int STAGES, int GROUP>
__global__ void __launch_bounds__(2 * BM, 1)
wgmma_tma(int M, int N, int K, float alpha, const T* __restrict__ A, const T* __restrict__ B, float beta,
          float* __restrict__ C, const TensorMap* __restrict__ maps) {
    constexpr int A_BYTES = BM * BK * static_cast<int>(sizeof(T)), B_BYTES = BN * BK * static_cast<int>(sizeof(T));
    constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static_assert(BK * sizeof(T) == 128, "BK must be 128 bytes of K (the swizzle's row)");
    static_assert(BM % 64 == 0 && (BN == 128 || BN == 256), "BM a multiple of 64, BN 128 or 256");
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    unsigned char* smem = aligned_1024(smem_raw);
    unsigned long long* full = reinterpret_cast<unsigned long long*>(smem + STAGES * STAGE_BYTES);

    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    int tile_m, tile_n;
    grouped_tile<GROUP>(blockIdx.x, tiles_m, tiles_n, tile_m, tile_n);
    const int row0 = tile_m * BM, col0 = tile_n * BN;
    const int ktiles = (K + BK - 1) / BK;
    const int warpgroup = threadIdx.x / 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) mbarrier_init(&full[s], 1);
        mbarrier_init_fence();
        tensor_map_acquire(&maps[0]);
        tensor_map_acquire(&maps[1]);
    }
    __syncthreads();
    auto issue = [&](int kt) {
        unsigned char* stage = smem + (kt % STAGES) * STAGE_BYTES;
        mbarrier_expect_bytes(&full[kt % STAGES], STAGE_BYTES);
        tma_load(stage, &maps[0], &full[kt % STAGES], kt * BK, row0);
        tma_load(stage + A_BYTES, &maps[1], &full[kt % STAGES], kt * BK, col0);
    };
    if (threadIdx.x == 0)
        for (int kt = 0; kt < STAGES && kt < ktiles; ++kt) issue(kt);

    float d[BN / 2] = {};
    for (int kt = 0; kt < ktiles; ++kt) {
        const int s = kt % STAGES;
        mbarrier_wait(&full[s], (kt / STAGES) & 1);
        const unsigned a_tile = smem_address(smem + s * STAGE_BYTES) + warpgroup * 64 * 128;
        const unsigned b_tile = smem_address(smem + s * STAGE_BYTES) + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < 4; ++k) Wgmma<BN>::template mma<T>(d, tile_descriptor(a_tile + 32 * k), tile_descriptor(b_tile + 32 * k));
        wgmma_commit();
        wgmma_wait<0>();
        __syncthreads();  // every warpgroup is done with stage s
        if (threadIdx.x == 0 && kt + STAGES < ktiles) issue(kt + STAGES);
    }
    store_warpgroup<BN>(C, M, N, row0 + 64 * warpgroup, col0, d, alpha, beta);
}
