"""The one record per GEMM precision (`model.precision`), and that every layer reads it."""

import typing

from roofline.model import peaks
from roofline.model.precision import BY_FILE_DTYPE, DTYPES, PRECISIONS
from roofline.model.problem import Problem
from roofline.model.roofs import COMPUTE_LEVEL
from roofline.results.schema import ProblemRecord


def test_each_precision_as_every_layer_spells_it():
    assert DTYPES == ("fp32", "bf16", "fp16", "tf32")
    assert [(p.file_dtype, p.key, p.element_bytes, p.layout, p.reference) for p in PRECISIONS.values()] == [
        ("float32", "fp32", 4, "row-major", "cupy.matmul"),
        ("bf16", "bf16_tensor", 2, "TN", "cublasGemmEx"),
        ("fp16", "fp16_tensor", 2, "TN", "cublasGemmEx"),
        ("tf32", "tf32_tensor", 4, "TN", "cublasGemmEx"),  # TF32 travels as FP32 words
    ]
    for p in PRECISIONS.values():
        assert p.key in peaks.PRECISIONS and p.key in COMPUTE_LEVEL
        assert p.tensor == (p.starter is not None) == (p.dtype != "fp32")
        assert BY_FILE_DTYPE[p.file_dtype] is p
        assert p.file_dtype in typing.get_args(ProblemRecord.model_fields["dtype"].annotation)
        problem = Problem(256, 256, 256, p.dtype)
        assert problem.precision_key == p.key and problem.element_bytes == p.element_bytes
    assert PRECISIONS["tf32"].starter.step_k == 8 and PRECISIONS["bf16"].starter.step_k == 16  # m16n8k8, m16n8k16
