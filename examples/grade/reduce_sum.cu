// The sum of N floats: a grid-stride loop of float4 loads (coalesced), a warp-shuffle reduction,
// one shared-memory step per block and one atomicAdd per block into the result, which starts at
// zero (declared inout, drawn as zeros). Enough blocks to fill every SM several times over.
//
// roofline entry: reduce_sum
// roofline sizes: N=268435456
// roofline arg: x f32[N] in uniform(0, 1)
// roofline arg: total f32[1] inout zeros
// roofline arg: n i64 = N
// roofline block: 512
// roofline grid: 132*8
// roofline reference: x.astype(cp.float64).sum().reshape(1)
// roofline tolerance: 1e-5
// roofline work: reduction(N)

extern "C" __global__ void __launch_bounds__(512) reduce_sum(const float* x, float* total, long long n) {
    __shared__ float partial[16];
    const float4* x4 = reinterpret_cast<const float4*>(x);
    long long n4 = n / 4, stride = (long long)gridDim.x * blockDim.x;
    float s = 0.f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = __ldcs(x4 + i);
        s += (v.x + v.y) + (v.z + v.w);
    }
    for (long long i = 4 * n4 + blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) s += x[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.f;
        for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
        if (threadIdx.x == 0) atomicAdd(total, s);
    }
}
