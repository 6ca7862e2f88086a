// roofline entry: my_gemm
// roofline block: 128
// roofline grid: cdiv(N,32), cdiv(M,32)
// roofline tile: 32x32xSTEP_K
// roofline dtype: DTYPE
//
// A starting point for your own tensor-core GEMM in DTYPE_UPPER, written by `roofline new --dtype DTYPE`.
// It is correct at any M and N (K a multiple of ALIGN_K) and slow on purpose: each warp multiplies
// its 16 x 16 piece of C with the warp-level mma.sync, reading its operand fragments straight from
// global memory, so nothing is shared between warps. Make it faster (shared-memory tiles, ldmatrix,
// cp.async, wgmma: `roofline run --ladder tensor` shows each step), then measure it:
//
//     roofline run THIS_FILE.cu --ladder tensor --all
//     roofline plot --out roofline.png
//
// The `// roofline KEY: VALUE` lines tell roofline how to launch and model the kernel, as in the
// FP32 starter (`roofline new` without --dtype); `dtype` gives the precision it is run in.

// The tensor-core calling convention: A is M x K and B is N x K, both row-major (K along the rows
// of both: C = A * B^T), C is M x N in FP32, C = alpha * A * B^T + beta * C. roofline calls it with
// alpha = 1 and beta = 0 after filling C with NaN, so every element must be written. Rows of A and
// B are a multiple of 16 bytes (roofline refuses other K).
INCLUDE_LINE
__global__ void my_gemm(int M, int N, int K, float alpha, const ELEMENT* A, const ELEMENT* B, float beta,
                        float* C) {
    // Work in 32-bit words of K: one mma consumes 8 words (32 bytes) of K in every precision, and
    // lane 4 g + t holds words (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4) of A's 16 rows and
    // words (g, t), (g, t + 4) of B's 8 rows (PTX ISA, "Matrix fragments for mma.m16n8k*").
    const unsigned* a = reinterpret_cast<const unsigned*>(A);
    const unsigned* b = reinterpret_cast<const unsigned*>(B);
    const int kw = K * static_cast<int>(sizeof(ELEMENT)) / 4;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int row0 = blockIdx.y * 32 + (warp / 2) * 16;  // four warps: a 2 x 2 grid of 16 x 16 pieces
    const int col0 = blockIdx.x * 32 + (warp % 2) * 16;
    float acc[2][4] = {};  // two 16 x 8 accumulators: columns col0 .. col0 + 7 and col0 + 8 .. + 15

    // A word of a row-major matrix with `rows` rows of kw words, or 0 outside it (the last step of K
    // may run past the end of the rows: K is a multiple of 16 bytes, not of 32).
    auto word = [kw](const unsigned* m, int rows, int r, int w) {
        return r < rows && w < kw ? m[(long long)r * kw + w] : 0u;
    };
    for (int k = 0; k < kw; k += 8) {
        const unsigned fa[4] = {word(a, M, row0 + g, k + t), word(a, M, row0 + g + 8, k + t),
                                word(a, M, row0 + g, k + t + 4), word(a, M, row0 + g + 8, k + t + 4)};
        for (int j = 0; j < 2; ++j) {
            const int n = col0 + 8 * j + g;
            const unsigned fb[2] = {word(b, N, n, k + t), word(b, N, n, k + t + 4)};
            asm volatile("MMA_INSTRUCTION {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                         : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
                         : "r"(fa[0]), "r"(fa[1]), "r"(fa[2]), "r"(fa[3]), "r"(fb[0]), "r"(fb[1]));
        }
    }
    // Lane 4 g + t holds C[g][2t], C[g][2t + 1] in acc[j][0..1] and row g + 8 in acc[j][2..3].
    for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 4; ++i) {
            const int r = row0 + g + 8 * (i / 2), c = col0 + 8 * j + 2 * t + i % 2;
            if (r < M && c < N) {
                float* p = C + (long long)r * N + c;
                *p = beta == 0.0f ? alpha * acc[j][i] : alpha * acc[j][i] + beta * *p;  // beta = 0: C not read
            }
        }
}
