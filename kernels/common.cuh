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
