// The cp.async pipeline shared by the last steps of the ladder (async_copy, full_tiles):
// asynchronous global-to-shared tile copies (sm_80+) issued STAGES - 1 tiles
// ahead of the arithmetic, and the warp-tiled main loop that consumes them.
//
// Shared memory per stage: the BM x BK tile of A transposed, As[k * (BM + 4) + m], then the
// BK x BN tile of B row-major, Bs[k * BN + n]; STAGES stages, STAGES * BK * (BM + 4 + BN) * 4
// bytes of dynamic shared memory. With the pitch BM + 4 the float4 fragment reads stay aligned
// and conflict-free, and a warp's 4-byte copies of A (32 / BK rows by BK columns) land in bank
// (4k + m) % 32: all distinct for BK = 8, two to a bank for BK = 16, a cost the copy engine pays
// off the FMA path.
#pragma once
#include "common.cuh"

// cp.async of 4 or 16 bytes. With `inside` false nothing is read and the destination is zero-filled
// (src-size 0), which is how the checked path pads the matrix edge; src must still be a valid
// address, so callers pass the matrix base then.
__device__ __forceinline__ void cp_async4(unsigned dst, const float* src, bool inside) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(inside ? 4 : 0));
}
__device__ __forceinline__ void cp_async16(unsigned dst, const float* src, bool inside) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(inside ? 16 : 0));
}
// The same without the size operand: for tiles known to lie inside the matrices.
__device__ __forceinline__ void cp_async4(unsigned dst, const float* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async16(unsigned dst, const float* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING)); }

template <int BM>
constexpr int A_PITCH = BM + 4;  // floats per row of the transposed A tile in shared memory

// Bytes of one stage: the BK x BM tile of A transposed (pitch A_PITCH) and the BK x BN tile of B.
template <int BM, int BN, int BK>
constexpr int stage_bytes = (BK * A_PITCH<BM> + BK * BN) * 4;

// The dynamic shared memory a pipelined kernel is launched with, in bytes. The host reads this
// figure from the compiler (each kernel file names it <kernel>_smem_bytes), never from a copy.
template <int BM, int BN, int BK, int STAGES>
constexpr int pipeline_smem_bytes = STAGES * stage_bytes<BM, BN, BK>;

// One thread's share of the copies of a stage. Thread t copies the A elements (ar + l * A_STEP, ac)
// of the tile, ac = t % BK, ar = t / BK (consecutive threads walk k: sector-efficient reads), and
// the B float4s (br + l * B_STEP, bc), bc = 4 * (t % (BN / 4)) (consecutive threads walk n:
// coalesced). Its source pointers and shared-memory addresses are computed once; a stage then
// costs one add per copy.
template <int BM, int BN, int BK, int NT>
struct TileCopy {
    static constexpr int AP = A_PITCH<BM>;
    static constexpr int A_STAGE = BK * AP;
    static constexpr int STAGE_BYTES = stage_bytes<BM, BN, BK>;
    static constexpr int A_STEP = NT / BK, B_STEP = NT / (BN / 4);
    static_assert(NT % BK == 0 && BM % A_STEP == 0, "the block's threads must cover the A tile exactly");
    static_assert(BN % 4 == 0 && NT % (BN / 4) == 0 && BK % B_STEP == 0,
                  "the block's threads must cover the B tile exactly, in float4s");

    const float* pa;  // A[row0 + ar][ac]
    const float* pb;  // B[br][col0 + bc]
    unsigned sa, sb;  // their shared-memory addresses in stage 0
    int ar, ac, br, bc;

    __device__ __forceinline__ TileCopy(const float* A, const float* B, unsigned smem, int row0, int col0,
                                        int K, int N)
        : ar(threadIdx.x / BK), ac(threadIdx.x % BK), br(threadIdx.x / (BN / 4)), bc(threadIdx.x % (BN / 4) * 4) {
        pa = A + static_cast<long long>(row0 + ar) * K + ac;
        pb = B + static_cast<long long>(br) * N + col0 + bc;
        sa = smem + (ac * AP + ar) * 4;
        sb = smem + (A_STAGE + br * BN + bc) * 4;
    }

    // Issue the copies of k-tile kt into the stage at byte offset `stage`. CHECKED zero-fills what
    // lies outside the M x K and K x N matrices and falls back to 4-byte copies of B where a float4
    // would straddle the edge or be misaligned (N % 4 != 0); unchecked, every copy is taken whole.
    template <bool CHECKED>
    __device__ __forceinline__ void issue(int kt, unsigned stage, const float* A, const float* B, int M, int N,
                                          int K, int row0, int col0) const {
        const int k0 = kt * BK;
#pragma unroll
        for (int l = 0; l < BM / A_STEP; ++l) {
            const float* src = pa + static_cast<long long>(l * A_STEP) * K + k0;
            const unsigned dst = sa + stage + l * A_STEP * 4;
            if (!CHECKED) {
                cp_async4(dst, src);
            } else {
                const bool inside = row0 + ar + l * A_STEP < M && k0 + ac < K;
                cp_async4(dst, inside ? src : A, inside);
            }
        }
#pragma unroll
        for (int l = 0; l < BK / B_STEP; ++l) {
            const float* src = pb + static_cast<long long>(k0 + l * B_STEP) * N;
            const unsigned dst = sb + stage + l * B_STEP * BN * 4;
            if (!CHECKED) {
                cp_async16(dst, src);
            } else {
                const int gr = k0 + br + l * B_STEP, gc = col0 + bc;
                if (N % 4 == 0 && gr < K && gc + 3 < N) {
                    cp_async16(dst, src, true);
                } else {
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        const bool inside = gr < K && gc + j < N;
                        cp_async4(dst + 4 * j, inside ? src + j : B, inside);
                    }
                }
            }
        }
    }
};

// The main loop over k-tiles [kt_begin, kt_end) of one BM x BN block tile (all of K: 0 and
// ceil(K / BK); split_k gives each block a slice). The block's (BM / WM) x (BN / WN)
// warps each own a WM x WN warp tile at (wm0, wn0); inside it lane (lm, ln) of the LM x LN lane
// grid owns TM x TN results as 4 x 4 pieces spaced LM * 4 rows and LN * 4 columns apart (the
// warptiling layout: float4 fragment reads, no bank conflicts). Each k-tile: wait for its copies,
// one barrier (which also frees the stage written next), issue the copies STAGES - 1 tiles
// ahead, then BK outer products from the landed stage. CHECKED selects the copy path (above).
template <bool CHECKED, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
__device__ __forceinline__ void pipelined_mainloop(float (&acc)[TM][TN], float* smem, const float* A,
                                                   const float* B, int M, int N, int K, int row0, int col0,
                                                   int kt_begin, int kt_end) {
    constexpr int NT = (BM / WM) * (BN / WN) * 32;
    constexpr int LM = WM / TM, LN = WN / TN;
    using Copy = TileCopy<BM, BN, BK, NT>;
    constexpr unsigned STAGE = Copy::STAGE_BYTES, RING = STAGES * Copy::STAGE_BYTES;
    static_assert(LM * LN == 32, "a warp's lanes must tile its warp tile exactly");
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles must be whole float4s");
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm0 = warp / (BN / WN) * WM, wn0 = warp % (BN / WN) * WN;
    const int lm = lane / LN, ln = lane % LN;
    const int ktiles = kt_end - kt_begin;
    const Copy copy(A, B, static_cast<unsigned>(__cvta_generic_to_shared(smem)), row0, col0, K, N);

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) copy.template issue<CHECKED>(kt_begin + s, s * STAGE, A, B, M, N, K, row0, col0);
        cp_async_commit();
    }
    unsigned read = 0, write = (STAGES - 1) * STAGE;  // byte offsets of the stages, rotating
    float a[TM], b[TN];
    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<STAGES - 2>();  // this thread's copies of tile kt have landed ...
        __syncthreads();              // ... everyone's too, and nobody still reads tile kt - 1
        if (kt + STAGES - 1 < ktiles)
            copy.template issue<CHECKED>(kt_begin + kt + STAGES - 1, write, A, B, M, N, K, row0, col0);
        cp_async_commit();
        write = write + STAGE == RING ? 0 : write + STAGE;
        const float* As = smem + read / 4 + wm0 + lm * 4;
        const float* Bs = smem + read / 4 + Copy::A_STAGE + wn0 + ln * 4;
        read = read + STAGE == RING ? 0 : read + STAGE;
        outer_products_from_pieces<BK, Copy::AP, BN, LM * 4, LN * 4>(acc, a, b, As, Bs);
    }
    cp_async_wait<0>();
}

// The epilogue of pipelined_mainloop's thread tile: C = alpha * acc + beta * C.
template <int BM, int BN, int WM, int WN, int TM, int TN>
__device__ __forceinline__ void store_warp_tiled(float* C, int M, int N, int row0, int col0,
                                                 const float (&acc)[TM][TN], float alpha, float beta) {
    constexpr int LM = WM / TM, LN = WN / TN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm0 = warp / (BN / WN) * WM, wn0 = warp % (BN / WN) * WN;
    store_pieces<TM, TN, LM * 4, LN * 4>(C, M, N, row0 + wm0 + lane / LN * 4, col0 + wn0 + lane % LN * 4, acc,
                                         alpha, beta);
}
