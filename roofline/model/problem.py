"""An SGEMM problem: C (M x N) = alpha * A (M x K) @ B (K x N) + beta * C, float32, row-major."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError

BYTES_PER_FLOAT = 4
INT32_ELEMENTS = 2**31 - 1  # the kernels index with 32-bit ints: each matrix must stay below this


@dataclass(frozen=True)
class Problem:
    """The sizes of one SGEMM. `m`, `n`, `k` are element counts (M, N, K >= 1 once validated)."""

    m: int
    n: int
    k: int

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
        return BYTES_PER_FLOAT * (self.m * self.k + self.k * self.n + self.m * self.n)

    @property
    def device_bytes(self) -> int:
        """GPU memory a run allocates: A, B, C, the reference C and a scratch buffer, 4 bytes each."""
        return BYTES_PER_FLOAT * (self.m * self.k + self.k * self.n + 3 * self.m * self.n)

    @property
    def square(self) -> bool:
        """M = N = K."""
        return self.m == self.n == self.k

    def validate(self) -> "Problem":
        """Return the problem; raise UsageError unless M, N, K >= 1 and every matrix has at most
        2**31 - 1 elements (32-bit indexing in the kernels)."""
        for name, v in (("M", self.m), ("N", self.n), ("K", self.k)):
            if v < 1:
                raise UsageError(f"{name} must be a positive integer, got {v}")
        for name, rows, cols in (("A", self.m, self.k), ("B", self.k, self.n), ("C", self.m, self.n)):
            if rows * cols > INT32_ELEMENTS:
                raise UsageError(f"{name} would have {rows * cols:,} elements; the kernels index with "
                                 f"32-bit integers, so each matrix must have at most {INT32_ELEMENTS:,}")
        return self

    def text(self) -> str:
        """'4096x4096x4096' (M x N x K)."""
        return f"{self.m}x{self.n}x{self.k}"
