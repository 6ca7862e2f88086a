"""The sums a check reads two outputs by, in one pass over them on the GPU.

A candidate's output is compared with the reference's by the relative Frobenius error, in float64
(`measure.candidate`): the sum of the reference's squares, the candidate's, and the squared
differences, and how many elements of each are NaN or infinite. Done with PyTorch's ops, a chunk
at a time, that is a float64 copy of both tensors, their difference and three dot products: about
104 bytes moved per float32 element, where reading the two tensors once is 8. On a problem that
moves gigabytes (KernelBench's `19_ReLU`: 1.6 G elements an output) the comparisons were most of
what a check costs. This kernel reads each element of both tensors once, widens it to float64 in
registers, and adds into per-thread sums that a block reduces and adds to five float64 totals
(`atomicAdd` on double, sm_60 and newer). The order of the additions varies from run to run, so the
sums agree with a sequential float64 sum to about 1e-15 relative, far inside any tolerance read
from them.

Element types read: float64, float32, float16 and bfloat16 (each widened exactly), int32 and int64
(int64 beyond 2**53 rounded, as `.to(float64)` rounds it). `supported` says whether a pair of
tensors is read here; other types and CPU tensors are summed by the caller's own path.
"""

from __future__ import annotations

import warnings
from functools import lru_cache

# what the kernel is told an element is: its code, and the integer type of its width it is viewed
# as on the way to CuPy (CuPy reads no bfloat16; the kernel reinterprets the bits)
_CODES = {"float64": (0, "int64"), "float32": (1, "int32"), "float16": (2, "int16"),
          "bfloat16": (3, "int16"), "int32": (4, "int32"), "int64": (5, "int64")}
THREADS = 256
MAX_BLOCKS = 2048  # a grid-stride loop: enough blocks to fill any GPU, few enough atomics

_SOURCE = r"""
__device__ __forceinline__ double widen(const void* p, long long i, int code) {
    switch (code) {
    case 0: return ((const double*)p)[i];
    case 1: return (double)((const float*)p)[i];
    case 2: {  // IEEE half: sign, 5 exponent bits, 10 mantissa bits
        unsigned int h = ((const unsigned short*)p)[i];
        unsigned int e = (h >> 10) & 31u, m = h & 1023u;
        double v = e == 0 ? ldexp((double)m, -24)
                 : e == 31 ? (m ? __longlong_as_double(0x7ff8000000000000LL) : __longlong_as_double(0x7ff0000000000000LL))
                 : ldexp((double)(m | 1024u), (int)e - 25);
        return (h >> 15) ? -v : v;
    }
    case 3: return (double)__uint_as_float(((unsigned int)((const unsigned short*)p)[i]) << 16);  // bfloat16
    case 4: return (double)((const int*)p)[i];
    default: return (double)((const long long*)p)[i];
    }
}

__device__ __forceinline__ double warp_sum(double v) {
    for (int s = 16; s > 0; s >>= 1) v += __shfl_down_sync(0xffffffffu, v, s);
    return v;
}

// out[0] += sum of b's squares (the reference), out[1] += a's, out[2] += (a - b)^2 where both are
// finite; out[3] += b's non-finite elements, out[4] += a's
extern "C" __global__ void roofline_sums(const void* a, int a_code, const void* b, int b_code,
                                         long long n, double* out) {
    double s[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        double x = widen(a, i, a_code), y = widen(b, i, b_code);
        bool fx = isfinite(x), fy = isfinite(y);
        if (fy) s[0] += y * y; else s[3] += 1.0;
        if (fx) s[1] += x * x; else s[4] += 1.0;
        if (fx && fy) { double d = x - y; s[2] += d * d; }
    }
    __shared__ double part[5][32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
    for (int k = 0; k < 5; ++k) {
        double v = warp_sum(s[k]);
        if (lane == 0) part[k][warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        for (int k = 0; k < 5; ++k) {
            double v = warp_sum(lane < warps ? part[k][lane] : 0.0);
            if (lane == 0 && v != 0.0) atomicAdd(&out[k], v);
        }
    }
}
"""


@lru_cache(maxsize=None)
def _kernel():
    import cupy

    return cupy.RawKernel(_SOURCE, "roofline_sums")


def _type(t) -> str:
    """A tensor's element type as `_CODES` names it ('float32')."""
    return str(t.dtype).replace("torch.", "")


def supported(a, b) -> bool:
    """Whether tensors `a` and `b` (same number of elements) are summed here: both on one CUDA
    device, each of a type the module names."""
    return a.is_cuda and b.is_cuda and a.device == b.device and _type(a) in _CODES and _type(b) in _CODES


def sums(a, b) -> tuple[float, float, float, int, int]:
    """Over tensors `a` (the candidate's output) and `b` (the reference's) of one number of
    elements, on their CUDA device, in one pass (`supported` must hold): the sum of `b`'s squares,
    of `a`'s, of the squared differences where both elements are finite (float64, read back once),
    and how many elements of `b` and of `a` are NaN or infinite. Runs on PyTorch's current stream;
    the host waits for the result."""
    import cupy
    import numpy as np
    import torch

    if a.numel() != b.numel():
        raise ValueError(f"sums of {a.numel()} and {b.numel()} elements")
    n = a.numel()
    if n == 0:
        return 0.0, 0.0, 0.0, 0, 0
    views = []
    for t in (a, b):
        code, as_int = _CODES[_type(t)]
        flat = t.detach().reshape(-1).contiguous().view(getattr(torch, as_int))
        views.append((cupy.asarray(flat), np.int32(code)))
    with warnings.catch_warnings():  # CuPy 14 names Stream.from_external instead; ExternalStream is what ran on the GPU
        warnings.simplefilter("ignore", DeprecationWarning)
        external = cupy.cuda.ExternalStream(torch.cuda.current_stream(a.device).cuda_stream)
    with cupy.cuda.Device(a.device.index if a.device.index is not None else torch.cuda.current_device()), external:
        out = cupy.zeros(5, dtype=cupy.float64)
        blocks = int(min(MAX_BLOCKS, -(-n // THREADS)))
        _kernel()((blocks,), (THREADS,), (views[0][0], views[0][1], views[1][0], views[1][1], np.int64(n), out))
        got = out.get()
    return float(got[0]), float(got[1]), float(got[2]), int(got[3]), int(got[4])
