// Softmax over each row, one block of 256 threads per row: the row is read once, with float4
// loads that are coalesced across the block, into registers (up to 16 values per thread: rows
// of up to 4,096); the maximum and the sum of exponentials are reduced with warp shuffles and
// one shared-memory step, and the output is written from the registers. One read, one write:
// the compulsory traffic.
//
// roofline entry: softmax_online
// roofline sizes: R=8192, C=4096
// roofline arg: x f32[R, C] in
// roofline arg: y f32[R, C] out
// roofline arg: rows i32 = R
// roofline arg: cols i32 = C
// roofline block: 256
// roofline grid: R
// roofline reference: torch.softmax(x, dim=-1)
// roofline work: softmax(R, C)

#define NEG_INF __int_as_float(0xff800000)  // -infinity (NVRTC has no <math.h> INFINITY)
#define THREADS 256
#define VECS 4  // float4 per thread: 256 x 4 x 4 = 4,096 columns at most

__device__ float block_reduce(float v, bool is_max, float* scratch) {
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffff, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();  // scratch may still be read by the previous reduction
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < THREADS / 32 ? scratch[lane] : (is_max ? NEG_INF : 0.f);
    for (int o = 4; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffff, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    return __shfl_sync(0xffffffff, v, 0);  // lanes 0-7 hold the total; every lane gets it
}

extern "C" __global__ void __launch_bounds__(THREADS) softmax_online(const float* x, float* y, int rows, int cols) {
    __shared__ float scratch[THREADS / 32];
    int r = blockIdx.x;
    if (r >= rows) return;
    const float4* row = reinterpret_cast<const float4*>(x + (size_t)r * cols);
    float4* out = reinterpret_cast<float4*>(y + (size_t)r * cols);
    int n4 = cols / 4;
    float4 v[VECS];
    float m = NEG_INF;
#pragma unroll
    for (int i = 0; i < VECS; ++i) {
        int c = threadIdx.x + i * THREADS;
        v[i] = c < n4 ? __ldcs(row + c) : make_float4(NEG_INF, NEG_INF, NEG_INF, NEG_INF);
        m = fmaxf(m, fmaxf(fmaxf(v[i].x, v[i].y), fmaxf(v[i].z, v[i].w)));
    }
    m = block_reduce(m, true, scratch);
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < VECS; ++i) {
        v[i].x = __expf(v[i].x - m); v[i].y = __expf(v[i].y - m);
        v[i].z = __expf(v[i].z - m); v[i].w = __expf(v[i].w - m);
        s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
    float inv = 1.f / block_reduce(s, false, scratch);
#pragma unroll
    for (int i = 0; i < VECS; ++i) {
        int c = threadIdx.x + i * THREADS;
        if (c < n4) __stcs(out + c, make_float4(v[i].x * inv, v[i].y * inv, v[i].z * inv, v[i].w * inv));
    }
}
