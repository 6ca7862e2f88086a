// mma_pipeline: mma_ldmatrix fed by a STAGES-deep pipeline of asynchronous copies.
//
// Tiles travel global -> shared with cp.async (16 bytes each, zero-filled past the matrix),
// issued STAGES - 1 K tiles ahead of the tile the warps multiply, so the copy latency hides
// behind the tensor-core work, and no register stages the copy. The block tile is larger
// (BM x BN = 128 x 256 at the ladder's tile, warps of 64 x 64): more mma work per byte copied
// into shared memory. Shared memory is dynamic, STAGES * (BM + BN) * BK * sizeof(element) bytes,
// above 48 KB by opt-in. Tiles keep mma_ldmatrix's swizzle and ldmatrix fragments.
//
// Launch: block ((BM / WM) * (BN / WN) * 32), grid (ceil(N / BN), ceil(M / BM)), dynamic smem above.
#include "tensor.cuh"

// Dynamic shared memory of one block, in bytes (roofline reads it through the compiler).
template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES>
constexpr int mma_pipeline_smem_bytes = STAGES * (BM + BN) * BK * static_cast<int>(sizeof(T));

template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
mma_pipeline(int M, int N, int K, float alpha, const T* __restrict__ A, const T* __restrict__ B, float beta,
             float* __restrict__ C) {
    constexpr int KW = words_of<T, BK>;
    constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
    constexpr int MT = WM / 16, NT = WN / 8;
    constexpr int STAGE_WORDS = (BM + BN) * KW;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "warp tiles must split the block tile");
    static_assert(KW == 8 || KW == 16 || KW == 32, "BK must be 32, 64 or 128 bytes of K");
    static_assert(STAGES >= 2, "a pipeline needs two stages at least");
    static_assert((BM * KW / 4) % THREADS == 0 && (BN * KW / 4) % THREADS == 0,
                  "the block's threads must share the tile copies evenly");
    extern __shared__ __align__(128) unsigned smem[];

    const unsigned* a = reinterpret_cast<const unsigned*>(A);
    const unsigned* b = reinterpret_cast<const unsigned*>(B);
    const int kw = K * static_cast<int>(sizeof(T)) / 4;
    const int ktiles = (kw + KW - 1) / KW;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int warp = threadIdx.x / 32;
    const int wm = (warp / (BN / WN)) * WM, wn = (warp % (BN / WN)) * WN;
    float acc[MT][NT][4] = {};

    // Copy K tile `kt` into stage `kt % STAGES` (one commit group per tile, empty past the end).
    auto issue = [&](int kt) {
        if (kt < ktiles) {
            unsigned* as = smem + (kt % STAGES) * STAGE_WORDS;
            unsigned* bs = as + BM * KW;
            const int k0 = kt * KW;
#pragma unroll
            for (int i = threadIdx.x; i < BM * KW / 4; i += THREADS) {
                const int r = i / (KW / 4), w = (i % (KW / 4)) * 4;
                const bool inside = row0 + r < M && k0 + w < kw;
                cp_async_16(smem_address(as + swizzled_word<KW / 4>(r, w)),
                            inside ? a + static_cast<long long>(row0 + r) * kw + k0 + w : a, inside);
            }
#pragma unroll
            for (int i = threadIdx.x; i < BN * KW / 4; i += THREADS) {
                const int r = i / (KW / 4), w = (i % (KW / 4)) * 4;
                const bool inside = col0 + r < N && k0 + w < kw;
                cp_async_16(smem_address(bs + swizzled_word<KW / 4>(r, w)),
                            inside ? b + static_cast<long long>(col0 + r) * kw + k0 + w : b, inside);
            }
        }
        cp_async_commit_group();
    };

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) issue(s);
    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait_pending<STAGES - 2>();  // tile kt has landed (for this thread's copies)
        __syncthreads();                       // ... and everyone's; the stage read at kt - 1 is free
        issue(kt + STAGES - 1);
        const unsigned* as = smem + (kt % STAGES) * STAGE_WORDS;
        const unsigned* bs = as + BM * KW;
#pragma unroll
        for (int kk = 0; kk < KW; kk += 8) {
            unsigned af[MT][4], bfr[NT][2];
#pragma unroll
            for (int i = 0; i < MT; ++i) ldmatrix_a<KW>(af[i], as, wm + 16 * i, kk);
#pragma unroll
            for (int j = 0; j < NT; j += 2)
                ldmatrix_b<KW>(*reinterpret_cast<unsigned(*)[2][2]>(&bfr[j]), bs, wn + 8 * j, kk);
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j) mma_16x8(acc[i][j], af[i], bfr[j], T{});
        }
    }
    cp_async_wait_pending<0>();
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) store_fragment(C, M, N, row0 + wm + 16 * i, col0 + wn + 8 * j, acc[i][j], alpha, beta);
}
