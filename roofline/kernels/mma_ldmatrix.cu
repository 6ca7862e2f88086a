// mma_ldmatrix: mma_sync with its shared-memory bank conflicts removed.
//
// The tiles are stored with an XOR swizzle of their 16-byte chunks (tensor.cuh,
// swizzled_word): the same chunk of eight consecutive rows lands on eight different bank groups.
// Fragments are read with ldmatrix.x4, one instruction for a 16-row A fragment or for two n8 B
// fragments, instead of four or two 32-bit loads per thread: fewer shared-memory instructions,
// and none of them conflicts. The 16-byte copies into the tiles keep the same swizzle, so they do
// not conflict either. Copies still go through registers and the block still waits for each tile.
//
// Launch: block ((BM / WM) * (BN / WN) * 32), grid (ceil(N / BN), ceil(M / BM)), no dynamic smem.
#include "tensor.cuh"

template <typename T, int BM, int BN, int BK, int WM, int WN>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
mma_ldmatrix(int M, int N, int K, float alpha, const T* __restrict__ A, const T* __restrict__ B, float beta,
             float* __restrict__ C) {
    constexpr int KW = words_of<T, BK>;
    constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
    constexpr int MT = WM / 16, NT = WN / 8;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "warp tiles must split the block tile");
    static_assert(KW == 8 || KW == 16 || KW == 32, "BK must be 32, 64 or 128 bytes of K");
    static_assert((BM * KW / 4) % THREADS == 0 && (BN * KW / 4) % THREADS == 0,
                  "the block's threads must share the tile copies evenly");
    __shared__ __align__(128) unsigned As[BM * KW];
    __shared__ __align__(128) unsigned Bs[BN * KW];

    const unsigned* a = reinterpret_cast<const unsigned*>(A);
    const unsigned* b = reinterpret_cast<const unsigned*>(B);
    const int kw = K * static_cast<int>(sizeof(T)) / 4;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int warp = threadIdx.x / 32;
    const int wm = (warp / (BN / WN)) * WM, wn = (warp % (BN / WN)) * WN;
    float acc[MT][NT][4] = {};

    for (int k0 = 0; k0 < kw; k0 += KW) {
#pragma unroll
        for (int i = threadIdx.x; i < BM * KW / 4; i += THREADS) {
            const int r = i / (KW / 4), w = (i % (KW / 4)) * 4;
            *reinterpret_cast<uint4*>(&As[swizzled_word<KW / 4>(r, w)]) = load_16(a, M, kw, row0 + r, k0 + w);
        }
#pragma unroll
        for (int i = threadIdx.x; i < BN * KW / 4; i += THREADS) {
            const int r = i / (KW / 4), w = (i % (KW / 4)) * 4;
            *reinterpret_cast<uint4*>(&Bs[swizzled_word<KW / 4>(r, w)]) = load_16(b, N, kw, col0 + r, k0 + w);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < KW; kk += 8) {
            unsigned af[MT][4], bfr[NT][2];
#pragma unroll
            for (int i = 0; i < MT; ++i) ldmatrix_a<KW>(af[i], As, wm + 16 * i, kk);
#pragma unroll
            for (int j = 0; j < NT; j += 2)
                ldmatrix_b<KW>(*reinterpret_cast<unsigned(*)[2][2]>(&bfr[j]), Bs, wn + 8 * j, kk);
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
