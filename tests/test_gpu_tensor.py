"""On a CUDA GPU (the wgmma rungs: an sm_90 one): every tensor-core rung verifies against cuBLAS
in BF16, FP16 and TF32 at square and ragged shapes, and a user's BF16 kernel runs through the CLI.
Skipped without a GPU."""

import json

import pytest

from roofline.ladder import families
from roofline.measure import runner
from roofline.model.problem import Problem
from roofline.model.verify import tolerance_for

pytestmark = pytest.mark.gpu

# Ragged in every dimension but K's 16-byte rows; tiles of 128 x 256 with K tiles of 64 cover none.
SHAPES = [(511, 383, 248), (1000, 1000, 1000), (2048, 2048, 2048), (129, 4097, 520), (1, 1, 8), (300, 257, 4096)]


@pytest.fixture(scope="module")
def device():
    return runner.preflight(Problem(2048, 2048, 2048, "bf16"))


def test_a_wmma_kernel_verifies_beside_the_tensor_ladder(tmp_path):
    """tests/fixtures/kernels/wmma_bf16.cu (<mma.h>, nvcuda::wmma) compiles, verifies at the problem
    and the ragged shape, and runs on the tensor cores faster than the plain BF16 kernel would."""
    from typer.testing import CliRunner

    from roofline.cli import app

    out = tmp_path / "wmma.json"
    r = CliRunner().invoke(app, ["run", "tests/fixtures/kernels/wmma_bf16.cu", "--kernel", "mma_sync",
                                 "--size", "2048", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    mine = next(k for k in doc["kernels"] if k["name"] == "wmma_bf16")
    assert mine["verified"] and mine["ragged"]["passed"] and mine["registers"] > 0
    assert mine["gflops"] > 10_000  # tensor cores: well above a scalar BF16 loop's few TFLOP/s


@pytest.mark.parametrize("dtype", ["bf16", "fp16", "tf32"])
@pytest.mark.parametrize("shape", SHAPES)
def test_every_tensor_rung_verifies(device, dtype, shape):
    problem = Problem(*shape, dtype)
    specs = [s for s in families.select(None, dtype=dtype) if s.family.runs_on(device.compute_capability)]
    assert specs
    for r in runner.run(specs, problem, device, timed=False).kernels:
        assert r.error is None, r.error
        v = r.verification
        assert v.passed and v.nan_or_unwritten_elements == 0, r.spec.name_expression
        assert 0 <= v.rel_error <= tolerance_for(problem.k, dtype)


def test_a_wrong_k_tile_fails_the_gate(device):
    """A rung that skipped one K tile in 32 would be off by about sqrt(1/32) = 18 %: far above the
    limit. Shown by running the problem with K cut short and checking against the full one."""
    import cupy

    from roofline.measure import reference
    from roofline.model.verify import verify

    a, b = reference.random_inputs(512, 512, 2048, "bf16")
    full, short = (cupy.empty((512, 512), dtype=cupy.float32) for _ in range(2))
    reference.gemm(a, b, full, "bf16")
    reference.gemm(cupy.ascontiguousarray(a[:, 64:]), cupy.ascontiguousarray(b[:, 64:]), short, "bf16")
    assert not verify(short, full, cupy, tolerance_for(2048, "bf16")).passed


def test_a_users_bf16_kernel_runs_beside_the_tensor_ladder(tmp_path):
    from typer.testing import CliRunner

    from roofline.cli import app

    out = tmp_path / "bf16.json"
    r = CliRunner().invoke(app, ["run", "tests/fixtures/kernels/bf16_dot.cu", "--kernel", "wgmma_ws",
                                 "--size", "1024", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["problem"]["dtype"] == "bf16" and doc["problem"]["layout"] == "TN"
    mine = next(k for k in doc["kernels"] if k["name"] == "bf16_dot")
    assert mine["verified"] and mine["ragged"]["passed"] and mine["ragged"]["problem"]["k"] == 248
    ws = next(k for k in doc["kernels"] if k["name"] == "wgmma_ws")
    assert ws["verified"] and ws["gflops"] > 10 * mine["gflops"]


@pytest.mark.parametrize("dtype", ["bf16", "fp16", "tf32"])
def test_the_tensor_core_starter_is_correct_in_each_precision(tmp_path, dtype):
    from typer.testing import CliRunner

    from roofline.cli import app

    path, out = tmp_path / "mine.cu", tmp_path / "mine.json"
    assert CliRunner().invoke(app, ["new", str(path), "--dtype", dtype]).exit_code == 0
    r = CliRunner().invoke(app, ["run", str(path), "--size", "M=1000", "--size", "N=1000", "--size", "K=520",
                                 "--out", str(out)])
    assert r.exit_code == 0, r.output
    mine = json.loads(out.read_text())["kernels"][0]
    assert mine["verified"] and mine["ragged"]["passed"] and mine["rel_error"] <= tolerance_for(520, dtype)
