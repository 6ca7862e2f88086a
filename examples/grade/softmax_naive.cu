// Softmax over each row, the first way most people write it: one thread per row, three passes
// over the row (its maximum, the sum of exponentials, the output). Neighbouring threads read
// addresses a whole row apart, so no load is coalesced: each warp's load touches 32 lines.
//
// roofline entry: softmax_naive
// roofline sizes: R=8192, C=4096
// roofline arg: x f32[R, C] in
// roofline arg: y f32[R, C] out
// roofline arg: rows i32 = R
// roofline arg: cols i32 = C
// roofline block: 128
// roofline grid: cdiv(R, 128)
// roofline reference: torch.softmax(x, dim=-1)
// roofline work: softmax(R, C)

#define NEG_INF __int_as_float(0xff800000)  // -infinity (NVRTC has no <math.h> INFINITY)
extern "C" __global__ void softmax_naive(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* row = x + (size_t)r * cols;
    float m = NEG_INF;
    for (int c = 0; c < cols; ++c) m = fmaxf(m, row[c]);
    float sum = 0.f;
    for (int c = 0; c < cols; ++c) sum += expf(row[c] - m);
    float inv = 1.f / sum;
    for (int c = 0; c < cols; ++c) y[(size_t)r * cols + c] = expf(row[c] - m) * inv;
}
