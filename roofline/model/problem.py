"""A GEMM problem and the precision it runs in.

FP32 (the SGEMM ladder): C (M x N) = alpha * A (M x K) @ B (K x N) + beta * C, all float32,
row-major. The tensor-core precisions (BF16, FP16, TF32 inputs; FP32 accumulate and FP32 C):
C (M x N) = alpha * A (M x K) @ B^T + beta * C with B stored N x K, both operands row-major with
K along their rows ("TN", the layout of a linear layer's weights and the one Hopper's wgmma
takes in every input precision). Their rows must be a multiple of 16 bytes, the width of every
copy the tensor-core kernels make (and of a TMA row pitch).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError
from .precision import PRECISIONS, check_dtype

BYTES_PER_FLOAT = 4
ROW_ALIGNMENT_BYTES = 16
INT32_ELEMENTS = 2**31 - 1  # the kernels index with 32-bit ints: each matrix must stay below this


@dataclass(frozen=True)
class Problem:
    """The sizes of one GEMM and its input precision. `m`, `n`, `k` are element counts (M, N, K >= 1
    once validated); `dtype` one of `precision.DTYPES`."""

    m: int
    n: int
    k: int
    dtype: str = "fp32"

    @property
    def element_bytes(self) -> int:
        """Bytes of one element of A or B (C is always 4-byte FP32)."""
        return PRECISIONS[self.dtype].element_bytes

    @property
    def tensor(self) -> bool:
        """A tensor-core precision (B stored N x K)."""
        return self.dtype != "fp32"

    @property
    def precision_key(self) -> str:
        """The key of the compute roof this problem's FLOPs are read against ('fp32', 'bf16_tensor')."""
        return PRECISIONS[self.dtype].key

    @property
    def flops(self) -> int:
        """2*M*N*K floating-point operations (a multiply and an add per term; the epilogue is not
        counted, as in the seed lessons)."""
        return 2 * self.m * self.n * self.k

    @property
    def results(self) -> int:
        """Elements of C: M*N."""
        return self.m * self.n

    @property
    def working_set_bytes(self) -> int:
        """Bytes of A, B and C: what one launch touches at least once."""
        return self.element_bytes * (self.m * self.k + self.k * self.n) + BYTES_PER_FLOAT * self.m * self.n

    @property
    def device_bytes(self) -> int:
        """GPU memory a run allocates: A and B, then C, the reference C and a scratch buffer (FP32);
        in a tensor precision also A and B as FP32 values (the inputs are drawn in FP32)."""
        ab = self.m * self.k + self.k * self.n
        inputs = self.element_bytes * ab + (BYTES_PER_FLOAT * ab if self.tensor else 0)
        return inputs + BYTES_PER_FLOAT * 3 * self.m * self.n

    @property
    def square(self) -> bool:
        """M = N = K."""
        return self.m == self.n == self.k

    def validate(self) -> "Problem":
        """Return the problem; raise UsageError unless M, N, K >= 1, every matrix has at most
        2**31 - 1 elements (32-bit indexing in the kernels), the dtype is known, and in a tensor
        precision the rows of A and B are a multiple of 16 bytes (K % 8 == 0 in BF16 and FP16,
        K % 4 == 0 in TF32)."""
        check_dtype(self.dtype)
        for name, v in (("M", self.m), ("N", self.n), ("K", self.k)):
            if v < 1:
                raise UsageError(f"{name} must be a positive integer, got {v}")
        for name, rows, cols in (("A", self.m, self.k), ("B", self.k, self.n), ("C", self.m, self.n)):
            if rows * cols > INT32_ELEMENTS:
                raise UsageError(f"{name} would have {rows * cols:,} elements; the kernels index with "
                                 f"32-bit integers, so each matrix must have at most {INT32_ELEMENTS:,}")
        row = self.k * self.element_bytes
        if self.tensor and row % ROW_ALIGNMENT_BYTES:
            step = ROW_ALIGNMENT_BYTES // self.element_bytes
            raise UsageError(f"K = {self.k} gives {self.dtype.upper()} rows of {row} bytes; the tensor-core kernels copy "
                             f"16 bytes at a time, so K must be a multiple of {step} in {self.dtype.upper()}")
        return self

    def text(self) -> str:
        """'4096x4096x4096' (M x N x K), with the precision after it when not FP32 ('4096x4096x4096 bf16')."""
        size = f"{self.m}x{self.n}x{self.k}"
        return size if self.dtype == "fp32" else f"{size} {self.dtype}"
