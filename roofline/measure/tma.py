"""Tensor maps for the Tensor Memory Accelerator (TMA, sm_90): the descriptors the wgmma rungs
load their tiles through, encoded by the CUDA driver on the host.

CuPy has no binding for `cuTensorMapEncodeTiled` (CUDA driver API, "Tensor Map Object
Management"), so it is called through ctypes from libcuda. Each map describes one row-major
operand (rows x K elements, rows 16-byte aligned) and the box one TMA load copies (box_rows x
box_k elements), with the 128-byte swizzle and zeros for elements outside the matrix. The maps
of A and B travel to the kernel in global memory, 64-byte aligned, A's first.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache

from ..errors import RunError
from ..model.precision import PRECISIONS

MAP_BYTES = 128  # sizeof(CUtensorMap)
MAP_ALIGNMENT = 64
# CUtensorMapDataType (cuda.h)
DATA_TYPES = {"bf16": 9, "fp16": 6, "tf32": 7}  # TF32 travels as its FP32 words
SWIZZLE_128B = 3  # CU_TENSOR_MAP_SWIZZLE_128B
INTERLEAVE_NONE = 0
L2_PROMOTION_256B = 3  # CU_TENSOR_MAP_L2_PROMOTION_L2_256B
OOB_FILL_ZEROS = 0  # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: outside the matrix reads as zero


@lru_cache(maxsize=1)
def _encoder():
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        fn = lib.cuTensorMapEncodeTiled
    except (OSError, AttributeError) as exc:
        raise RunError(f"the CUDA driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12 or newer): {exc}") from None
    u32, u64 = ctypes.c_uint32, ctypes.c_uint64
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, u32, ctypes.c_void_p, ctypes.POINTER(u64), ctypes.POINTER(u64),
                   ctypes.POINTER(u32), ctypes.POINTER(u32), ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def encode(address: int, dtype: str, rows: int, k: int, box_rows: int, box_k: int) -> bytes:
    """The 128-byte CUtensorMap of a row-major `rows` x `k` matrix of `dtype` elements
    (`model.precision.Precision.element_bytes`) at device `address`, for boxes of `box_rows` x `box_k`
    elements (box_k elements must be 128 bytes: the swizzle's row). Raises RunError when the
    driver refuses (a row not a multiple of 16 bytes, an unaligned address, a box over 256)."""
    fn = _encoder()
    u32, u64 = ctypes.c_uint32, ctypes.c_uint64
    raw = ctypes.create_string_buffer(MAP_BYTES + MAP_ALIGNMENT)
    offset = -ctypes.addressof(raw) % MAP_ALIGNMENT
    status = fn(ctypes.addressof(raw) + offset, DATA_TYPES[dtype], 2, ctypes.c_void_p(address),
                (u64 * 2)(k, rows), (u64 * 1)(k * PRECISIONS[dtype].element_bytes), (u32 * 2)(box_k, box_rows), (u32 * 2)(1, 1),
                INTERLEAVE_NONE, SWIZZLE_128B, L2_PROMOTION_256B, OOB_FILL_ZEROS)
    if status != 0:
        raise RunError(f"cuTensorMapEncodeTiled refused a {rows} x {k} {dtype} matrix with {box_rows} x {box_k} "
                       f"boxes (CUresult {status}); rows must be a multiple of 16 bytes")
    return raw.raw[offset:offset + MAP_BYTES]


def device_maps(a, b, dtype: str, box_a: tuple[int, int], box_b: tuple[int, int]):
    """The tensor maps of A (M x K) and B (N x K), CuPy arrays of `dtype` elements, in one
    64-byte-aligned device buffer (a CuPy uint8 array of 256 bytes), for boxes `box_a` and
    `box_b` = (rows, K elements). Raises RunError as `encode` does."""
    import cupy
    import numpy

    host = b"".join(encode(x.data.ptr, dtype, x.shape[0], x.shape[1], *box) for x, box in ((a, box_a), (b, box_b)))
    return cupy.asarray(numpy.frombuffer(host, dtype=numpy.uint8))  # CuPy allocations are 256-byte aligned
