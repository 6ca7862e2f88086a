// Shared by every kernel of the ladder: the BLAS epilogue C = alpha * acc + beta * C.
// With beta == 0, C is not read (the BLAS convention), so whatever C held before, NaN included,
// cannot leak into the result: an element the kernel forgets to write stays visibly wrong.
#pragma once

__device__ __forceinline__ void store_result(float* C, int idx, float acc, float alpha, float beta) {
    C[idx] = (beta == 0.0f) ? alpha * acc : alpha * acc + beta * C[idx];
}

// Copy the ROWS x COLS tile at (row0, col0) of the row-major matrix `src` (nrows x ncols, leading
// dimension ld) into shared memory, zero where the tile runs past the matrix. NT threads share
// the copy: thread t takes column t % COLS and every (NT / COLS)-th row from t / COLS, so
// consecutive threads read consecutive addresses (coalesced), and each thread needs a single
// pointer plus one row check per pass. The tile lands row-major with row pitch PITCH, or, with
// TRANSPOSE, column-major (dst[c * PITCH + r]).
template <int ROWS, int COLS, int NT, int PITCH, bool TRANSPOSE>
__device__ __forceinline__ void load_tile(float* dst, const float* __restrict__ src, int ld,
                                          int row0, int col0, int nrows, int ncols) {
    static_assert(NT % COLS == 0 && ROWS % (NT / COLS) == 0,
                  "the block's threads must cover whole rows of the tile in each pass");
    constexpr int STEP = NT / COLS;
    const int c = threadIdx.x % COLS, r0 = threadIdx.x / COLS;
    const int gc = col0 + c;
    const bool col_ok = gc < ncols;
    // 64-bit offsets: past the last row this points beyond the matrix, and it is never read there.
    const float* p = src + static_cast<long long>(row0 + r0) * ld + gc;
#pragma unroll
    for (int l = 0; l < ROWS / STEP; ++l) {
        const int r = r0 + l * STEP;
        const float v = (col_ok && row0 + r < nrows) ? p[static_cast<long long>(l * STEP) * ld] : 0.0f;
        if (TRANSPOSE) dst[c * PITCH + r] = v;
        else dst[r * PITCH + c] = v;
    }
}

// Four consecutive elements src[r][c .. c+3] of the row-major matrix `src` (nrows x ncols, leading
// dimension ld), zero where they fall outside it. One 128-bit load when `vec` (ld a multiple of 4,
// so with c a multiple of 4 the address is 16-byte aligned) and all four are inside; otherwise
// element by element.
__device__ __forceinline__ float4 load4(const float* __restrict__ src, int ld, int r, int c,
                                        int nrows, int ncols, bool vec) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (r >= nrows) return v;
    const float* p = src + static_cast<long long>(r) * ld + c;
    if (vec && c + 3 < ncols) return *reinterpret_cast<const float4*>(p);
    if (c < ncols) v.x = p[0];
    if (c + 1 < ncols) v.y = p[1];
    if (c + 2 < ncols) v.z = p[2];
    if (c + 3 < ncols) v.w = p[3];
    return v;
}

// The epilogue for four consecutive results of one row: C[r][c .. c+3] = alpha * acc + beta * C,
// one 128-bit store when `vec` and all four are inside the matrix, else element by element.
__device__ __forceinline__ void store4(float* C, int ldc, int r, int c, int nrows, int ncols,
                                       float4 acc, float alpha, float beta, bool vec) {
    if (r >= nrows) return;
    float* p = C + static_cast<long long>(r) * ldc + c;
    if (vec && c + 3 < ncols) {
        float4 out = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
        if (beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4*>(p);
            out.x += beta * old.x; out.y += beta * old.y; out.z += beta * old.z; out.w += beta * old.w;
        }
        *reinterpret_cast<float4*>(p) = out;
        return;
    }
    const float v[4] = {acc.x, acc.y, acc.z, acc.w};
    for (int j = 0; j < 4 && c + j < ncols; ++j) p[j] = (beta == 0.0f) ? alpha * v[j] : alpha * v[j] + beta * p[j];
}

// The BM x BK tile of A at (row0, k0) into shared memory transposed, As[k * PITCH + m], read from
// global memory as float4s along K (load4: zero outside the matrix, element-wise unless `vec`).
// The pitch decides the stores' bank conflicts: with PITCH = BM + 4 and BK = 8 the transposing
// stores of a warp hit 32 different banks; at BK = 16 they do not, and Nsight Compute counts
// shared-store bank conflicts again (about 273,000 at 1024^3 on an H200).
template <int BM, int BK, int NT, int PITCH>
__device__ __forceinline__ void load_a_transposed4(float* As, const float* __restrict__ A, int M, int K,
                                                   int row0, int k0, bool vec) {
    static_assert(BK % 4 == 0 && (BM * BK / 4) % NT == 0, "every thread loads whole float4s of A");
#pragma unroll
    for (int l = 0; l < BM * BK / 4 / NT; ++l) {
        const int i = threadIdx.x + l * NT;
        const int r = i / (BK / 4), c = i % (BK / 4) * 4;
        const float4 v = load4(A, K, row0 + r, k0 + c, M, K, vec);
        As[(c + 0) * PITCH + r] = v.x;
        As[(c + 1) * PITCH + r] = v.y;
        As[(c + 2) * PITCH + r] = v.z;
        As[(c + 3) * PITCH + r] = v.w;
    }
}

// The BK x BN tile of B at (k0, col0) into shared memory row-major, Bs[k * BN + n], float4 by float4.
template <int BK, int BN, int NT>
__device__ __forceinline__ void load_b4(float* Bs, const float* __restrict__ B, int K, int N,
                                        int k0, int col0, bool vec) {
    static_assert(BN % 4 == 0 && (BK * BN / 4) % NT == 0, "every thread loads whole float4s of B");
#pragma unroll
    for (int l = 0; l < BK * BN / 4 / NT; ++l) {
        const int i = threadIdx.x + l * NT;
        const int r = i / (BN / 4), c = i % (BN / 4) * 4;
        *reinterpret_cast<float4*>(&Bs[r * BN + c]) = load4(B, N, k0 + r, col0 + c, K, N, vec);
    }
}

// acc += a (TM values of A) x b (TN values of B): TM*TN independent FMAs from registers.
template <int TM, int TN>
__device__ __forceinline__ void outer_product(float (&acc)[TM][TN], const float (&a)[TM], const float (&b)[TN]) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
}

// The same FMAs issued column by column (j outer). The results are identical; what changes is
// the instruction order ptxas starts from, and with it which accumulator lands in which register
// and how often an FFMA reads two operands from the same register bank. Whether that helps is
// kernel by kernel: measure, and keep the order that wins.
template <int TM, int TN>
__device__ __forceinline__ void outer_product_by_column(float (&acc)[TM][TN], const float (&a)[TM],
                                                        const float (&b)[TN]) {
#pragma unroll
    for (int j = 0; j < TN; ++j)
#pragma unroll
        for (int i = 0; i < TM; ++i) acc[i][j] += a[i] * b[j];
}

// BK outer products from one shared-memory tile, for a thread tile cut into 4 x 4 pieces: at step
// k the thread's TM values of A are the float4s at As[k * A_PITCH + p * RSTEP], p < TM / 4, and
// its TN values of B the float4s at Bs[k * B_PITCH + q * CSTEP], q < TN / 4 (As and Bs already
// point at the thread's first piece: 16-byte aligned). TM/4 + TN/4 LDS.128 per TM * TN FMAs,
// issued row by row or, with BY_COLUMN, column by column (outer_product_by_column).
template <int BK, int A_PITCH, int B_PITCH, int RSTEP, int CSTEP, bool BY_COLUMN = false, int TM, int TN>
__device__ __forceinline__ void outer_products_from_pieces(float (&acc)[TM][TN], float (&a)[TM], float (&b)[TN],
                                                           const float* As, const float* Bs) {
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
        for (int p = 0; p < TM / 4; ++p)
            *reinterpret_cast<float4*>(&a[4 * p]) = *reinterpret_cast<const float4*>(&As[k * A_PITCH + p * RSTEP]);
#pragma unroll
        for (int q = 0; q < TN / 4; ++q)
            *reinterpret_cast<float4*>(&b[4 * q]) = *reinterpret_cast<const float4*>(&Bs[k * B_PITCH + q * CSTEP]);
        if (BY_COLUMN) outer_product_by_column(acc, a, b);
        else outer_product(acc, a, b);
    }
}

// The epilogue of a thread tile cut into 4 x 4 pieces: piece (p, q) of the TM x TN results acc
// lands at rows row + p * RSTEP .. + 3 and columns col + q * CSTEP .. + 3 of C (store4: 128-bit
// when `vec`, checked against the matrix edge).
template <int TM, int TN, int RSTEP, int CSTEP>
__device__ __forceinline__ void store_pieces(float* C, int M, int N, int row, int col,
                                             const float (&acc)[TM][TN], float alpha, float beta) {
    const bool vec = N % 4 == 0;
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int q = 0; q < TN / 4; ++q) {
            const int j = 4 * q;
            store4(C, N, row + (i / 4) * RSTEP + i % 4, col + q * CSTEP, M, N,
                   make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), alpha, beta, vec);
        }
}
