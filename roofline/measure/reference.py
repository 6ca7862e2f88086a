"""The reference of every run, cuBLAS, and the inputs it and the kernels share, in each precision.

FP32: A (M x K) and B (K x N) float32 from a standard normal; C_ref = A @ B through `cupy.matmul`
(full FP32: CUPY_TF32 must be off, `runner.check_tf32_off`).

Tensor-core precisions (model.problem): A (M x K) and B (N x K) drawn the same way and rounded
to the format (round to nearest even), so that every input is exact in it; BF16 and FP16 travel
as 16-bit words (CuPy has no bfloat16 type), TF32 as FP32 words whose 13 low significand bits
are zero. C_ref = A @ B^T through cublasGemmEx in the same precision with FP32 accumulation
(CUBLAS_COMPUTE_32F for BF16 and FP16, CUBLAS_COMPUTE_32F_FAST_TF32 for TF32; cuBLAS library
docs, "cublasGemmEx"). cuBLAS is column-major: the row-major C = A B^T is its C^T = B A^T, which is
gemmEx(op(B) = transposed, op(A) = as is) with every leading dimension K, and N for C.
"""

from __future__ import annotations

import numpy as np

SEED = 2026
CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF = 0, 2, 14  # cudaDataType (library_types.h)
CUBLAS_OP_N, CUBLAS_OP_T = 0, 1
CUBLAS_GEMM_DEFAULT = -1
DATA_TYPE = {"bf16": CUDA_R_16BF, "fp16": CUDA_R_16F, "tf32": CUDA_R_32F}


def round_to(x, dtype: str):
    """float32 CuPy array `x` rounded to the nearest `dtype` value (ties to even), as the kernels
    take it: uint16 words for 'bf16', float16 for 'fp16', float32 with 13 zero low bits for
    'tf32', `x` itself for 'fp32'."""
    import cupy

    if dtype == "fp32":
        return x
    if dtype == "fp16":
        return x.astype(cupy.float16)
    bits = x.view(cupy.uint32)
    if dtype == "bf16":
        return ((bits + cupy.uint32(0x7FFF) + ((bits >> 16) & 1)) >> 16).astype(cupy.uint16)
    if dtype == "tf32":
        return ((bits + cupy.uint32(0xFFF) + ((bits >> 13) & 1)) & cupy.uint32(0xFFFFE000)).view(cupy.float32)
    raise ValueError(f"no such precision {dtype!r}")


def random_inputs(m: int, n: int, k: int, dtype: str = "fp32", seed: int = SEED):
    """(A, B) on the GPU for a problem of sizes m, n, k in `dtype`: A m x k, B k x n in FP32,
    n x k in the tensor-core precisions, each rounded to the format (`round_to`)."""
    import cupy

    rng = cupy.random.default_rng(seed)
    a = rng.standard_normal((m, k), dtype=cupy.float32)
    b = rng.standard_normal((k, n) if dtype == "fp32" else (n, k), dtype=cupy.float32)
    return round_to(a, dtype), round_to(b, dtype)


_ONE = np.ones(1, dtype=np.float32)
_ZERO = np.zeros(1, dtype=np.float32)


def gemm(a, b, c, dtype: str = "fp32") -> None:
    """C = A @ B (FP32) or C = A @ B^T (tensor precisions) on the current stream, with cuBLAS,
    into the CuPy array `c` (M x N): float32, or for BF16 and FP16 inputs a C in their own 16-bit
    type as PyTorch's products write it (float16, or uint16 words for BF16), FP32 accumulation
    either way (cuBLAS library docs, "cublasGemmEx": CUBLAS_COMPUTE_32F takes a 16-bit C)."""
    import cupy

    if dtype == "fp32":
        cupy.matmul(a, b, out=c)
        return
    from cupy_backends.cuda.libs import cublas

    m, k = a.shape
    n = b.shape[0]
    compute = cublas.CUBLAS_COMPUTE_32F_FAST_TF32 if dtype == "tf32" else cublas.CUBLAS_COMPUTE_32F
    handle = cupy.cuda.device.get_cublas_handle()
    cublas.setStream(handle, cupy.cuda.get_current_stream().ptr)
    cublas.gemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, _ONE.ctypes.data, b.data.ptr, DATA_TYPE[dtype], k,
                  a.data.ptr, DATA_TYPE[dtype], k, _ZERO.ctypes.data, c.data.ptr,
                  CUDA_R_32F if c.dtype == cupy.float32 else DATA_TYPE[dtype], n, compute,
                  CUBLAS_GEMM_DEFAULT)
