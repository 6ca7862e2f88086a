// Shared by the tensor-core ladder: element types, the warp-level mma.sync of each precision,
// ldmatrix, cp.async of 16 bytes, and the epilogue of an mma accumulator fragment.
//
// The problem (all tensor rungs and user kernels run with --dtype bf16|fp16|tf32):
//     C (M x N, FP32, row-major) = alpha * A (M x K, row-major) * B^T + beta * C,
// where B is stored N x K, row-major: each operand's K runs along its rows ("TN", the layout of
// a linear layer's weights, and the only one Hopper's wgmma takes for TF32). Rows are a multiple
// of 16 bytes long (K % 8 == 0 in BF16/FP16, K % 4 == 0 in TF32): every copy is 16 bytes wide.
//
// The rungs work on 32-bit words of K: one m16n8 mma consumes 8 words (32 bytes) of K in every
// precision (m16n8k16 for 16-bit inputs, m16n8k8 for TF32), and the register fragments of A and
// B hold the same words of the same rows in both (PTX ISA, "Matrix fragments for mma.m16n8k16 /
// mma.m16n8k8"): a thread with lane = 4 * g + t holds A words (g, t), (g + 8, t), (g, t + 4),
// (g + 8, t + 4) and B words (n = g, t), (n = g, t + 4). Only the instruction differs.
#pragma once

// A BF16 element as its 16 bits; an FP32 word read by the tensor cores as TF32 (its 13 low
// mantissa bits ignored: the inputs the tool draws have them zero). Tags for the templates.
struct bf16 { unsigned short bits; };
struct fp16 { unsigned short bits; };
struct tf32 { float value; };

// C += A * B on one m16n8 tile, 8 words of K (32 bytes), FP32 accumulate.
__device__ __forceinline__ void mma_16x8(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2], bf16) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_16x8(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2], fp16) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_16x8(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2], tf32) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ unsigned smem_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Four 8 x 16-byte matrices from shared memory: lanes 8j .. 8j + 7 give the rows of matrix j,
// and register j of lane 4 * g + t receives word t of row g of matrix j.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(address));
}

// 16 bytes global -> shared without a register stop; zero-filled (nothing read) when !inside.
__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, bool inside) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(inside ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit_group() { asm volatile("cp.async.commit_group;\n" ::); }
template <int PENDING>
__device__ __forceinline__ void cp_async_wait_pending() { asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING)); }

// 16 bytes of row `r`, word `w` (a multiple of 4) of a row-major matrix of `rows` rows and `kw`
// words per row, or zeros outside it.
__device__ __forceinline__ uint4 load_16(const unsigned* __restrict__ src, int rows, int kw, int r, int w) {
    if (r < rows && w < kw) return *reinterpret_cast<const uint4*>(src + static_cast<long long>(r) * kw + w);
    return make_uint4(0u, 0u, 0u, 0u);
}

// The epilogue of one m16n8 accumulator fragment whose top-left corner is C[r0][c0]: the
// thread's pairs (g, 2t .. 2t + 1) and (g + 8, 2t .. 2t + 1), C = alpha * acc + beta * C, each
// element inside the matrix written (beta == 0: C not read).
__device__ __forceinline__ void store_fragment(float* C, int M, int N, int r0, int c0, const float (&acc)[4],
                                               float alpha, float beta) {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int c = c0 + 2 * t;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int r = r0 + g + 8 * h;
        if (r >= M) continue;
        float* p = C + static_cast<long long>(r) * N + c;
        float v0 = alpha * acc[2 * h], v1 = alpha * acc[2 * h + 1];
        if (c + 1 < N && (N % 2) == 0) {
            if (beta != 0.0f) { const float2 old = *reinterpret_cast<float2*>(p); v0 += beta * old.x; v1 += beta * old.y; }
            *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
        } else {
            if (c < N) p[0] = beta != 0.0f ? v0 + beta * p[0] : v0;
            if (c + 1 < N) p[1] = beta != 0.0f ? v1 + beta * p[1] : v1;
        }
    }
}

// Bytes of one element, and words of K in a tile of K elements.
template <typename T> constexpr int element_bytes = sizeof(T);
template <typename T, int BK> constexpr int words_of = BK * static_cast<int>(sizeof(T)) / 4;

// The XOR swizzle of a shared tile whose rows hold CHUNKS 16-byte chunks (2, 4 or 8): chunk c of
// row r is stored at chunk c ^ ((r / (8 / CHUNKS)) % CHUNKS). Any 8 consecutive rows' same chunk
// then fall on 8 different 16-byte bank groups (a 128-byte line holds 8 / CHUNKS rows), so an
// ldmatrix phase (8 rows of 16 bytes) and a warp's 16-byte copies are conflict-free.
template <int CHUNKS>
__device__ __forceinline__ int swizzled_word(int r, int w) {
    static_assert(CHUNKS == 2 || CHUNKS == 4 || CHUNKS == 8, "rows of 32, 64 or 128 bytes");
    const int chunk = (w / 4) ^ ((r / (8 / CHUNKS)) % CHUNKS);
    return r * CHUNKS * 4 + chunk * 4 + w % 4;
}

// The fragments of one k step (8 words at word kk) through ldmatrix from swizzled row-major tiles
// of KW words per row: A's 16 rows from `a_row0` (one m16 tile), B's 16 rows from `b_row0` (two
// n8 tiles: b[0] for rows b_row0 .. + 7, b[1] for the next eight).
template <int KW>
__device__ __forceinline__ void ldmatrix_a(unsigned (&a)[4], const unsigned* tile, int a_row0, int kk) {
    const int lane = threadIdx.x % 32, j = lane / 8;
    ldmatrix_x4(a, smem_address(tile + swizzled_word<KW / 4>(a_row0 + (j & 1) * 8 + lane % 8, kk + (j >> 1) * 4)));
}
template <int KW>
__device__ __forceinline__ void ldmatrix_b(unsigned (&b)[2][2], const unsigned* tile, int b_row0, int kk) {
    const int lane = threadIdx.x % 32, j = lane / 8;
    unsigned r[4];
    ldmatrix_x4(r, smem_address(tile + swizzled_word<KW / 4>(b_row0 + (j >> 1) * 8 + lane % 8, kk + (j & 1) * 4)));
    b[0][0] = r[0]; b[0][1] = r[1]; b[1][0] = r[2]; b[1][1] = r[3];
}
