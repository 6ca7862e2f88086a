"""The precisions a GEMM of the ladders runs in, each one record (`Precision`): how the command
line, the results files and the charts spell it, the roof it is read against, its element size,
the layout its operands are stored in, how its reference is computed, and what a starter kernel
of it declares. Every table keyed by precision is a view of these records.

C is FP32 in all of them. FP32 runs on the CUDA cores with row-major A (M x K) and B (K x N); the
tensor-core precisions store B N x K ("TN", both K-contiguous) and accumulate in FP32.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError


@dataclass(frozen=True)
class Starter:
    """What `roofline new --dtype D` writes into a tensor-core starter kernel: the element type,
    the header that declares it, the mma.sync that consumes 32 bytes of K (PTX ISA, "Warp-level
    matrix multiply-accumulate instructions"), the K a copy of 16 bytes needs, and one mma's K."""

    element: str
    include: str
    mma: str
    align_k: int
    step_k: int


@dataclass(frozen=True)
class Precision:
    """One GEMM precision: `dtype` as the command line and the code spell it ('bf16'),
    `file_dtype` as results files do ('float32' for FP32), `key` the roof it is read against
    (`peaks.PRECISIONS`), `title` for tables and charts, `element_bytes` per input element (TF32
    travels as FP32 words), `layout` of its operands, `reference` how its reference product is
    computed, `starter` what a starter kernel of it declares (None: FP32's starter is the SGEMM one)."""

    dtype: str
    file_dtype: str
    key: str
    title: str
    element_bytes: int
    layout: str
    reference: str
    starter: Starter | None = None

    @property
    def tensor(self) -> bool:
        """Whether it runs on the tensor cores."""
        return self.key.endswith("_tensor")


PRECISIONS: dict[str, Precision] = {p.dtype: p for p in (
    Precision("fp32", "float32", "fp32", "FP32", 4, "row-major", "cupy.matmul"),
    Precision("bf16", "bf16", "bf16_tensor", "BF16", 2, "TN", "cublasGemmEx",
              Starter("__nv_bfloat16", "#include <cuda_bf16.h>", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
                      8, 16)),
    Precision("fp16", "fp16", "fp16_tensor", "FP16", 2, "TN", "cublasGemmEx",
              Starter("__half", "#include <cuda_fp16.h>", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 8, 16)),
    Precision("tf32", "tf32", "tf32_tensor", "TF32", 4, "TN", "cublasGemmEx",
              Starter("float", "// TF32 values travel as FP32 words whose 13 low significand bits are zero.",
                      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 4, 8)),
)}
DTYPES = tuple(PRECISIONS)  # the command line's spellings, in the order messages list them
BY_FILE_DTYPE: dict[str, Precision] = {p.file_dtype: p for p in PRECISIONS.values()}


def check_dtype(dtype: str) -> str:
    """`dtype` when it is a precision's spelling (`DTYPES`); else UsageError naming them."""
    if dtype not in DTYPES:
        raise UsageError(f"{{dtype}} takes {', '.join(DTYPES)}, got {dtype!r}", "dtype")
    return dtype
