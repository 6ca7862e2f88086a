// roofline entry: my_sgemm<32>
// roofline block: 32,32
// roofline grid: cdiv(N,32), cdiv(M,32)
// roofline tile: 32x32x32
// roofline thread-tile: 1x1
//
// A starting point for your own SGEMM, written by `roofline new`. It is correct at any size and
// slow on purpose: every thread computes one element of C, so each value read from shared memory
// is used for a single FMA. Make it faster, then measure it beside the ladder:
//
//     roofline run THIS_FILE.cu --all
//     roofline plot --out roofline.png
//
// The lines above, `// roofline KEY: VALUE`, tell roofline how to launch and model the kernel
// (command-line flags of the same names override them):
//   entry        the __global__ function, with its template arguments
//   block        threads per block: T, or X,Y or X,Y,Z
//   grid         blocks per dimension, from M, N, K with cdiv(a, b), integers, + - * //
//   dynamic-smem bytes of dynamic shared memory per block (default 0)
//   tile         block tile BM x BN x BK: each block's share of C and its step along K
//   thread-tile  thread tile TM x TN: the results one thread owns (1x1 here)
//   name         the kernel's name in tables and charts (default: the file's name)
// When you change the tiling (TILE is the template argument in `entry`), change `block`, `grid`,
// `tile` and `thread-tile` with it.

// The calling convention every kernel roofline runs must keep: row-major A (M x K), B (K x N)
// and C (M x N), C = alpha * A * B + beta * C. roofline calls it with alpha = 1 and beta = 0 after
// filling C with NaN, so every element must be written.
template <int TILE>
__global__ void my_sgemm(int M, int N, int K, float alpha, const float* A, const float* B,
                         float beta, float* C) {
    // One TILE x TILE tile of A and of B at a time, staged in shared memory.
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];

    const int col = blockIdx.x * TILE + threadIdx.x;  // threadIdx.x walks a row of C: coalesced B and C
    const int row = blockIdx.y * TILE + threadIdx.y;

    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Each thread loads one element of each tile; outside the matrices it loads 0.
        const int a_col = k0 + threadIdx.x;
        const int b_row = k0 + threadIdx.y;
        a_tile[threadIdx.y][threadIdx.x] = (row < M && a_col < K) ? A[row * K + a_col] : 0.0f;
        b_tile[threadIdx.y][threadIdx.x] = (b_row < K && col < N) ? B[b_row * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            sum += a_tile[threadIdx.y][k] * b_tile[k][threadIdx.x];
        }
        __syncthreads();  // the tiles are overwritten in the next step
    }
    if (row < M && col < N) {
        // beta = 0 must not read C: it holds NaN, and 0 * NaN is NaN.
        C[row * N + col] = beta == 0.0f ? alpha * sum : alpha * sum + beta * C[row * N + col];
    }
}
