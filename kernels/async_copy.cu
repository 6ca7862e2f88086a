// async_copy: the warp-tiled kernel fed by a STAGES-deep pipeline of asynchronous copies.
//
// Until now every block loaded a tile, waited for it (__syncthreads), computed, and only then
// asked for the next one: the memory latency sat on the critical path. Here global-to-shared
// copies are issued with cp.async (sm_80+) STAGES - 1 tiles ahead of the computation, which runs
// on the oldest complete stage while the newer ones are in flight. The copies bypass registers:
// B rows travel as 16-byte copies; A is transposed on the way (4-byte copies, each to its column
// of the pitch-(BM + 4) tile, which keeps both the global reads sector-efficient and the shared
// stores conflict-free). Out-of-matrix elements are zero-filled by the copy itself (src-size 0).
// Shared memory is dynamic: STAGES * BK * (BM + 4 + BN) * 4 bytes, above 48 KB by opt-in.
//
// Launch: block ((BM / WM) * (BN / WN) * 32), grid (ceil(N / BN), ceil(M / BM)), dynamic smem above.
#include "common.cuh"

__device__ __forceinline__ void cp_async4(float* dst, const float* src, bool inside) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(inside ? 4 : 0));
}

__device__ __forceinline__ void cp_async16(float* dst, const float* src, bool inside) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(inside ? 16 : 0));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int PENDING>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING)); }

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
async_copy(int M, int N, int K, float alpha, const float* __restrict__ A,
           const float* __restrict__ B, float beta, float* __restrict__ C) {
    constexpr int NT = (BM / WM) * (BN / WN) * 32;
    constexpr int LM = WM / TM, LN = WN / TN;
    constexpr int AP = BM + 4;
    constexpr int A_STAGE = BK * AP, STAGE = BK * AP + BK * BN;
    static_assert(LM * LN == 32, "a warp's lanes must tile its warp tile exactly");
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BN % 4 == 0, "tiles must be whole float4s");
    static_assert((BM * BK) % NT == 0 && (BK * BN / 4) % NT == 0, "every thread copies whole pieces");
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");
    extern __shared__ __align__(16) float smem[];

    const bool b_vec = N % 4 == 0;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm0 = warp / (BN / WN) * WM, wn0 = warp % (BN / WN) * WN;
    const int lm = lane / LN, ln = lane % LN;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int ktiles = (K + BK - 1) / BK;

    auto issue = [&](int kt, int stage) {
        float* As = smem + stage * STAGE;
        float* Bs = As + A_STAGE;
        const int k0 = kt * BK;
#pragma unroll
        for (int l = 0; l < BM * BK / NT; ++l) {  // A, transposed: consecutive threads walk k
            const int i = threadIdx.x + l * NT;
            const int r = i / BK, c = i % BK;
            const bool inside = row0 + r < M && k0 + c < K;
            cp_async4(&As[c * AP + r], inside ? A + static_cast<long long>(row0 + r) * K + k0 + c : A, inside);
        }
#pragma unroll
        for (int l = 0; l < BK * BN / 4 / NT; ++l) {  // B, row by row in 16-byte pieces
            const int i = threadIdx.x + l * NT;
            const int r = i / (BN / 4), c = i % (BN / 4) * 4;
            const int gr = k0 + r, gc = col0 + c;
            const float* src = B + static_cast<long long>(gr) * N + gc;
            if (b_vec && gr < K && gc + 3 < N) {
                cp_async16(&Bs[r * BN + c], src, true);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const bool inside = gr < K && gc + j < N;
                    cp_async4(&Bs[r * BN + c + j], inside ? src + j : B, inside);
                }
            }
        }
    };

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) issue(s, s);
        cp_async_commit();
    }
    float acc[TM][TN] = {};
    float a[TM], b[TN];
    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<STAGES - 2>();  // this thread's copies of tile kt have landed ...
        __syncthreads();              // ... everyone's too, and nobody still reads tile kt - 1
        if (kt + STAGES - 1 < ktiles) issue(kt + STAGES - 1, (kt + STAGES - 1) % STAGES);
        cp_async_commit();
        const float* As = smem + (kt % STAGES) * STAGE;
        const float* Bs = As + A_STAGE;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int p = 0; p < TM / 4; ++p)
                *reinterpret_cast<float4*>(&a[4 * p]) =
                    *reinterpret_cast<const float4*>(&As[k * AP + wm0 + p * LM * 4 + lm * 4]);
#pragma unroll
            for (int q = 0; q < TN / 4; ++q)
                *reinterpret_cast<float4*>(&b[4 * q]) =
                    *reinterpret_cast<const float4*>(&Bs[k * BN + wn0 + q * LN * 4 + ln * 4]);
            outer_product(acc, a, b);
        }
    }
    cp_async_wait<0>();
    const bool c_vec = N % 4 == 0;
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int q = 0; q < TN / 4; ++q) {
            const int j = 4 * q;
            store4(C, N, row0 + wm0 + (i / 4) * LM * 4 + lm * 4 + i % 4, col0 + wn0 + q * LN * 4 + ln * 4, M, N,
                   make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), alpha, beta, c_vec);
        }
}
