// Attention forward, O = softmax(Q K^T / sqrt(D)) V, in FP32 on the CUDA cores, the way
// FlashAttention orders it: a block of 64 threads takes 64 queries of one (batch, head), one
// query per thread (its row of Q and of O in registers), and walks K and V in tiles of keys
// staged in shared memory. Per tile, each thread's scores go to shared memory (rows padded by
// one word: no bank conflicts), the running maximum and sum are rescaled once (the online
// softmax), and the tile's V rows are accumulated into O. Q, K and V are read once per query
// tile; S x S scores never reach DRAM. D is fixed at 64.
//
// roofline entry: attention_fwd
// roofline sizes: B=4, H=16, S=2048, D=64
// roofline arg: q f32[B, H, S, D] in
// roofline arg: k f32[B, H, S, D] in
// roofline arg: v f32[B, H, S, D] in
// roofline arg: o f32[B, H, S, D] out
// roofline arg: seq i32 = S
// roofline arg: scale f32 = 1 / D ** 0.5
// roofline block: 64
// roofline grid: cdiv(S, 64), B*H
// roofline reference: torch.nn.functional.scaled_dot_product_attention(q, k, v)
// roofline work: attention(B, H, S, D, dtype=f32)

#define NEG_INF __int_as_float(0xff800000)  // -infinity (NVRTC has no <math.h> INFINITY)
#define DH 64
#define TILE 64  // queries per block, one per thread
#define KT 32    // keys per tile

extern "C" __global__ void __launch_bounds__(TILE) attention_fwd(const float* q, const float* k, const float* v,
                                                                  float* o, int seq, float scale) {
    __shared__ float ks[KT][DH];
    __shared__ float vs[KT][DH];
    __shared__ float ps[TILE][KT + 1];
    size_t head = (size_t)blockIdx.y * seq * DH;
    int row = blockIdx.x * TILE + threadIdx.x;
    bool live = row < seq;
    float qr[DH], acc[DH];
#pragma unroll
    for (int d = 0; d < DH; ++d) {
        qr[d] = live ? q[head + (size_t)row * DH + d] * scale : 0.f;
        acc[d] = 0.f;
    }
    float m = NEG_INF, l = 0.f;
    for (int start = 0; start < seq; start += KT) {
        __syncthreads();
        for (int i = threadIdx.x; i < KT * DH; i += TILE) {  // consecutive threads, consecutive words
            int key = start + i / DH;
            ks[i / DH][i % DH] = key < seq ? k[head + (size_t)key * DH + i % DH] : 0.f;
            vs[i / DH][i % DH] = key < seq ? v[head + (size_t)key * DH + i % DH] : 0.f;
        }
        __syncthreads();
        float tile_max = NEG_INF;
        for (int j = 0; j < KT; ++j) {
            float s = 0.f;
#pragma unroll
            for (int d = 0; d < DH; ++d) s = fmaf(qr[d], ks[j][d], s);
            s = start + j < seq ? s : NEG_INF;
            ps[threadIdx.x][j] = s;
            tile_max = fmaxf(tile_max, s);
        }
        float m_new = fmaxf(m, tile_max);
        float correction = __expf(m - m_new);
        l *= correction;
#pragma unroll
        for (int d = 0; d < DH; ++d) acc[d] *= correction;
        for (int j = 0; j < KT; ++j) {
            float p = __expf(ps[threadIdx.x][j] - m_new);
            l += p;
#pragma unroll
            for (int d = 0; d < DH; ++d) acc[d] = fmaf(p, vs[j][d], acc[d]);
        }
        m = m_new;
    }
    if (!live) return;
    float inv = 1.f / l;
#pragma unroll
    for (int d = 0; d < DH; ++d) o[head + (size_t)row * DH + d] = acc[d] * inv;
}
