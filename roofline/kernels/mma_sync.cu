// mma_sync: the first tensor-core rung. Warp tiles of the FP32 ladder, but each warp's inner
// product is the warp-level matrix instruction mma.sync (m16n8, 32 bytes of K per instruction:
// BF16 m16n8k16 or TF32 m16n8k8, FP32 accumulate) instead of FMAs.
//
// A block owns a BM x BN tile of C; its (BM / WM) x (BN / WN) warps each own WM x WN, as
// (WM / 16) x (WN / 8) mma tiles. Per K tile of BK elements, the block copies the BM x BK tile of
// A and the BN x BK tile of B (both K-contiguous) through registers into shared memory, 16 bytes
// per thread per copy, waits, and each warp reads its fragments with 32-bit shared loads in the
// mma's own register layout (tensor.cuh). The rows are 4 * BK bytes apart and unpadded, so the
// eight rows g = 0..7 a fragment load touches fall on two groups of banks: a 4-way bank
// conflict on every fragment load, which the next rung removes.
//
// Launch: block ((BM / WM) * (BN / WN) * 32), grid (ceil(N / BN), ceil(M / BM)), no dynamic smem.
#include "tensor.cuh"

template <typename T, int BM, int BN, int BK, int WM, int WN>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
mma_sync(int M, int N, int K, float alpha, const T* __restrict__ A, const T* __restrict__ B, float beta,
         float* __restrict__ C) {
    constexpr int KW = words_of<T, BK>;  // words of K per tile
    constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
    constexpr int MT = WM / 16, NT = WN / 8;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 8 == 0, "warp tiles must split the block tile");
    static_assert(KW % 8 == 0, "BK must be a multiple of 32 bytes of K (one mma)");
    static_assert((BM * KW / 4) % THREADS == 0 && (BN * KW / 4) % THREADS == 0,
                  "the block's threads must share the tile copies evenly");
    __shared__ __align__(16) unsigned As[BM][KW];
    __shared__ __align__(16) unsigned Bs[BN][KW];

    const unsigned* a = reinterpret_cast<const unsigned*>(A);
    const unsigned* b = reinterpret_cast<const unsigned*>(B);
    const int kw = K * static_cast<int>(sizeof(T)) / 4;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int wm = (warp / (BN / WN)) * WM, wn = (warp % (BN / WN)) * WN;
    float acc[MT][NT][4] = {};

    for (int k0 = 0; k0 < kw; k0 += KW) {
#pragma unroll
        for (int i = threadIdx.x; i < BM * KW / 4; i += THREADS) {
            const int r = i / (KW / 4), w = (i % (KW / 4)) * 4;
            *reinterpret_cast<uint4*>(&As[r][w]) = load_16(a, M, kw, row0 + r, k0 + w);
        }
#pragma unroll
        for (int i = threadIdx.x; i < BN * KW / 4; i += THREADS) {
            const int r = i / (KW / 4), w = (i % (KW / 4)) * 4;
            *reinterpret_cast<uint4*>(&Bs[r][w]) = load_16(b, N, kw, col0 + r, k0 + w);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < KW; kk += 8) {
            unsigned af[MT][4], bfr[NT][2];
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                const int r = wm + 16 * i + g;
                af[i][0] = As[r][kk + t];
                af[i][1] = As[r + 8][kk + t];
                af[i][2] = As[r][kk + t + 4];
                af[i][3] = As[r + 8][kk + t + 4];
            }
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const int n = wn + 8 * j + g;
                bfr[j][0] = Bs[n][kk + t];
                bfr[j][1] = Bs[n][kk + t + 4];
            }
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j) mma_16x8(acc[i][j], af[i], bfr[j], T{});
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) store_fragment(C, M, N, row0 + wm + 16 * i, col0 + wn + 8 * j, acc[i][j], alpha, beta);
}
