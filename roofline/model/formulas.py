"""The work of the kernels people write, once: FLOPs per precision and compulsory bytes per
launch, each formula with where its count comes from. A workload spec names one (`work:
softmax(R, C)`) instead of writing its own FLOPs and bytes (`workload.spec`).

FLOPs count the arithmetic the definition asks for, one per add, multiply, compare, exp or divide
(an FMA is two); the compulsory bytes are each input read once and each output written once,
nvbench's convention for global memory reads and writes. `dtype` is the element type of the
tensors ('f32', 'bf16', ...: `model.elements`); math on CUDA-core types counts as FP32 work
(half-precision inputs are computed in FP32 by the kernels people write), a GEMM's or
attention's as the tensor-core precision of its inputs.

    formula                          FLOPs                   bytes (read + written)
    elementwise(n, reads, writes,    n * flops               n * (reads + writes) * size
                flops)
    reduction(n)                     n - 1 adds              n * size + size
    scan(n)                          n - 1 adds              2 * n * size
    softmax(rows, cols)              5 per element           2 * rows * cols * size
    layer_norm(rows, cols)           8 per element           2 * rows * cols * size + 2 * cols * size
    rms_norm(rows, cols)             4 per element           2 * rows * cols * size + cols * size
    gemm(m, n, k)                    2 m n k                 (m k + k n) * size + m n * 4 (C in FP32;
                                                             read too with beta)
    batched_gemm(b, m, n, k)         2 b m n k               b (m k + k n + m n) * size
    attention(b, h, s, d, causal)    4 b h s^2 d, causal /2  4 b h s d * size (Q, K, V, O)
"""

from __future__ import annotations

from typing import Callable

from .elements import element
from .sol import Work

TENSOR_OF = {"f16": "fp16_tensor", "bf16": "bf16_tensor", "f32": "fp32", "f64": "fp64", "i8": "int8_tensor"}


def _size(dtype: str) -> int:
    return element(dtype, "formula dtype").nbytes


def elementwise(n: int, reads: int = 1, writes: int = 1, flops: float = 1, dtype: str = "f32") -> Work:
    """An elementwise map over `n` elements reading `reads` and writing `writes` tensors of
    `dtype`, `flops` operations per element (a ReLU 1, a GELU by tanh about 8): n * flops FP32
    FLOPs; n * size per tensor read or written. Source: nvbench's element counts and global
    memory reads/writes (NVIDIA/nvbench, docs/benchmarks.md)."""
    s = _size(dtype)
    return Work({"fp32": float(n) * flops}, float(n) * reads * s, float(n) * writes * s,
                f"elementwise({n}, reads={reads}, writes={writes}, flops={flops}, {dtype})")


def reduction(n: int, dtype: str = "f32") -> Work:
    """A sum of `n` elements to one: n - 1 adds; n elements read, one written. Source: a tree or
    sequential reduction alike performs n - 1 binary operations (Harris, "Optimizing Parallel
    Reduction in CUDA", NVIDIA 2007, which grades its kernels by the bandwidth of n elements read)."""
    s = _size(dtype)
    return Work({"fp32": float(max(n - 1, 0))}, float(n) * s, float(s), f"reduction({n}, {dtype})")


def scan(n: int, dtype: str = "f32") -> Work:
    """An inclusive prefix sum of `n` elements: n - 1 adds (the sequential count; a work-efficient
    parallel scan does about 2n), each element read once and written once. Source: Merrill and
    Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back" (NVIDIA, 2016): about 2n
    data movement, as a copy."""
    s = _size(dtype)
    return Work({"fp32": float(max(n - 1, 0))}, float(n) * s, float(n) * s, f"scan({n}, {dtype})")


def softmax(rows: int, cols: int, dtype: str = "f32") -> Work:
    """Softmax over each of `rows` rows of `cols`: per element a max compare, a subtract, an exp,
    an add to the sum and a divide (5 FLOPs); the input read once and the output written once,
    as the fused single-pass form does. Source: Milakov and Gimelshein, "Online normalizer
    calculation for softmax" (2018), whose fused online softmax reads each element once."""
    s, n = _size(dtype), float(rows) * cols
    return Work({"fp32": 5.0 * n}, n * s, n * s, f"softmax({rows}, {cols}, {dtype})")


def layer_norm(rows: int, cols: int, dtype: str = "f32", affine: bool = True) -> Work:
    """Layer normalisation of `rows` rows of `cols` with a weight and bias of `cols` (`affine`):
    per element an add for the mean, a subtract, multiply and add for the variance, a subtract
    and multiply to normalise, and a multiply and add for the weight and bias (8 FLOPs; 6 without
    `affine`); x read, y written, weight and bias read. Source: Ba, Kiros and Hinton, "Layer
    Normalization" (2016), for the definition."""
    s, n = _size(dtype), float(rows) * cols
    params = 2 * cols * s if affine else 0
    return Work({"fp32": (8.0 if affine else 6.0) * n}, n * s + params, n * s,
                f"layer_norm({rows}, {cols}, {dtype}{'' if affine else ', affine=False'})")


def rms_norm(rows: int, cols: int, dtype: str = "f32") -> Work:
    """RMS normalisation of `rows` rows of `cols` with a weight of `cols`: per element a square
    and add, a multiply by the reciprocal root and one by the weight (4 FLOPs); x read, y written,
    weight read. Source: Zhang and Sennrich, "Root Mean Square Layer Normalization" (2019)."""
    s, n = _size(dtype), float(rows) * cols
    return Work({"fp32": 4.0 * n}, n * s + cols * s, n * s, f"rms_norm({rows}, {cols}, {dtype})")


def gemm(m: int, n: int, k: int, dtype: str = "f32", beta: bool = False, out_dtype: str = "f32") -> Work:
    """C (m x n) = A (m x k) B (k x n): 2 m n k FLOPs (an FMA per multiply-add) in the tensor-core
    precision of `dtype` (FP32 on the CUDA cores for 'f32'); A and B read once, C written once
    in `out_dtype` (and read, with `beta`). Source: the GEMM FLOP count of the BLAS literature
    (Goto and van de Geijn, 2008); the bytes are the compulsory ones of DESIGN's traffic model."""
    s, o = _size(dtype), _size(out_dtype)
    return Work({TENSOR_OF.get(dtype, "fp32"): 2.0 * m * n * k}, float(m * k + k * n) * s + (m * n * o if beta else 0),
                float(m * n) * o, f"gemm({m}, {n}, {k}, {dtype}{', beta' if beta else ''})")


def batched_gemm(b: int, m: int, n: int, k: int, dtype: str = "f32", out_dtype: str = "f32") -> Work:
    """`b` independent GEMMs of m x n x k: 2 b m n k FLOPs; each A, B read and C written once.
    Source: as `gemm`, b times (cuBLAS's gemmStridedBatched)."""
    s, o = _size(dtype), _size(out_dtype)
    return Work({TENSOR_OF.get(dtype, "fp32"): 2.0 * b * m * n * k}, float(b) * (m * k + k * n) * s,
                float(b) * m * n * o, f"batched_gemm({b}, {m}, {n}, {k}, {dtype})")


def attention(b: int, h: int, s: int, d: int, causal: bool = False, dtype: str = "f32") -> Work:
    """Attention forward, softmax(Q K^T / sqrt(d)) V, for `b` batches of `h` heads, sequence `s`,
    head dimension `d`: two GEMMs of 2 s^2 d FLOPs per head, 4 b h s^2 d in all (halved when
    `causal`: half the scores are masked), in the tensor-core precision of `dtype` ('f32':
    FP32); Q, K and V read and O written once (4 b h s d elements). The softmax's 5 b h s^2
    FLOPs are left out, as the source does. Source: Dao, "FlashAttention-2" (2023), section 4.1:
    forward FLOPs 4 * seqlen^2 * head dimension * heads, halved for causal."""
    size = _size(dtype)
    flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
    return Work({TENSOR_OF.get(dtype, "fp32"): flops}, 3.0 * b * h * s * d * size, float(b) * h * s * d * size,
                f"attention({b}, {h}, {s}, {d}{', causal' if causal else ''}, {dtype})")


FORMULAS: dict[str, Callable[..., Work]] = {f.__name__: f for f in (
    elementwise, reduction, scan, softmax, layer_norm, rms_norm, gemm, batched_gemm, attention)}
