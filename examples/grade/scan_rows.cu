// The inclusive prefix sum of each row, one block of 1,024 threads per row: the row taken in
// chunks of 1,024 elements, each chunk scanned across the block (a warp-shuffle scan within each
// warp, then a scan of the 32 warp totals), the running total of the chunks before it added.
// Each element is read once and written once.
//
// roofline entry: scan_rows
// roofline sizes: R=16384, C=4096
// roofline arg: x f32[R, C] in
// roofline arg: y f32[R, C] out
// roofline arg: rows i32 = R
// roofline arg: cols i32 = C
// roofline block: 1024
// roofline grid: R
// roofline reference: cp.cumsum(x.astype(cp.float64), axis=1)
// roofline work: scan(R*C)

extern "C" __global__ void __launch_bounds__(1024) scan_rows(const float* x, float* y, int rows, int cols) {
    __shared__ float warp_total[32];
    int r = blockIdx.x;
    if (r >= rows) return;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const float* in = x + (size_t)r * cols;
    float* out = y + (size_t)r * cols;
    float carry = 0.f;
    for (int base = 0; base < cols; base += 1024) {
        int c = base + threadIdx.x;
        float v = c < cols ? __ldcs(in + c) : 0.f;
        for (int o = 1; o < 32; o <<= 1) {
            float w = __shfl_up_sync(0xffffffff, v, o);
            if (lane >= o) v += w;
        }
        if (lane == 31) warp_total[warp] = v;
        __syncthreads();
        if (warp == 0) {
            float t = warp_total[lane];
            for (int o = 1; o < 32; o <<= 1) {
                float w = __shfl_up_sync(0xffffffff, t, o);
                if (lane >= o) t += w;
            }
            warp_total[lane] = t;  // inclusive totals of warps 0..lane
        }
        __syncthreads();
        float before = warp > 0 ? warp_total[warp - 1] : 0.f;
        if (c < cols) __stcs(out + c, carry + before + v);
        carry += warp_total[31];
        __syncthreads();  // warp_total is rewritten by the next chunk
    }
}
