"""Measured ceilings chosen as `measure.ceilings` says: each tensor precision's from cuBLAS in that
precision, the best of the sizes that fit, on the GPUs whose tensor cores take it; the L2's, the
best of its read patterns over buffers a quarter of the L2 at most. CuPy and the GPU stood in for
by fakes (the GPU test, tests/test_profile_gpu.py, measures the real ones)."""

import sys
from types import SimpleNamespace

import pytest

from roofline.measure import ceilings, reference
from roofline.model.timing import Timing


def _fake_gpu(monkeypatch, cc: int, free_bytes: int, ms: dict, refuse: str | None = None):
    """A GPU of compute capability `cc` with `free_bytes` free whose product of precision d at size n
    takes ms[d, n]; `refuse`: a precision whose product raises."""
    asked = []
    device = SimpleNamespace(compute_capability=str(cc))
    cupy = SimpleNamespace(
        cuda=SimpleNamespace(Device=lambda: device, runtime=SimpleNamespace(memGetInfo=lambda: (free_bytes, 0))),
        empty=lambda shape, dtype=None: SimpleNamespace(shape=shape, dtype=dtype), float32="float32",
        float16="float16", uint16="uint16",
        get_default_memory_pool=lambda: SimpleNamespace(free_all_blocks=lambda: None))
    monkeypatch.setitem(sys.modules, "cupy", cupy)

    def inputs(m, n, k, dtype):
        if dtype == refuse:
            raise RuntimeError("CUBLAS_STATUS_NOT_SUPPORTED")
        asked.append((dtype, n))
        return (dtype, n), None

    monkeypatch.setattr(reference, "random_inputs", inputs)
    c_types = []
    monkeypatch.setattr(reference, "gemm", lambda a, b, c, dtype: c_types.append(c.dtype))
    flush = object()
    monkeypatch.setattr(ceilings, "l2_flush", lambda nbytes: flush)

    def timed(f, before=None, **kw):
        assert before is flush  # every launch after an L2 flush, as a run times cuBLAS
        f()
        took = ms.get((*asked[-1], c_types[-1]), ms.get(asked[-1]))  # by C's type where given
        return Timing((took,) * 3, warmup=3)
    monkeypatch.setattr(ceilings, "time_gpu", timed)
    return asked


def test_each_precision_is_the_best_of_its_sizes():
    ms = {("fp16", 4096): 0.19, ("fp16", 8192): 1.40, ("fp16", 16384): 11.5,
          ("bf16", 4096): 0.18, ("bf16", 8192): 1.38, ("bf16", 16384): 11.4,
          ("tf32", 4096): 0.33, ("tf32", 8192): 2.60, ("tf32", 16384): 21.0}
    with pytest.MonkeyPatch.context() as mp:
        _fake_gpu(mp, 90, 80 * 2**30, ms)
        found = ceilings.measure_tensor_gflops()
    # 2 x 8192^3 / 1.38 ms = 796.8 TFLOP/s, BF16's best; TF32's best is 8192^3 too (422.9 against 418.9
    # at 16384^3 and 416.5 at 4096^3)
    assert found["bf16_tensor"] == pytest.approx(2 * 8192**3 / 1.38e-3 / 1e9)
    assert found["tf32_tensor"] == pytest.approx(2 * 8192**3 / 2.60e-3 / 1e9)
    assert set(found) == {"fp16_tensor", "bf16_tensor", "tf32_tensor"}


def test_a_16_bit_product_is_the_best_of_c_in_fp32_and_c_in_its_own_type():
    ms = {(d, n): 1.40 * (n / 8192) ** 3 for d in ("fp16", "bf16", "tf32") for n in (4096, 8192, 16384)}
    ms[("fp16", 8192, "float16")] = 1.30   # FP16 C at 8192^3: 845.8 TFLOP/s against 785.4 with an FP32 C
    ms[("bf16", 4096, "uint16")] = 0.30    # BF16 C slower at 4096^3: the FP32 C's rate stands
    ms[("tf32", 8192, "float16")] = 0.01   # never asked: TF32 writes an FP32 C alone
    with pytest.MonkeyPatch.context() as mp:
        _fake_gpu(mp, 90, 80 * 2**30, ms)
        found = ceilings.measure_tensor_gflops()
    assert found["fp16_tensor"] == pytest.approx(2 * 8192**3 / 1.30e-3 / 1e9)
    assert found["bf16_tensor"] == pytest.approx(2 * 8192**3 / 1.40e-3 / 1e9)
    assert found["tf32_tensor"] == pytest.approx(2 * 8192**3 / 1.40e-3 / 1e9)


def test_a_precision_the_gpu_lacks_or_refuses_is_left_unmeasured_and_memory_bounds_the_sizes():
    ms = {(d, n): n**3 / 1e12 for d in ("fp16", "bf16", "tf32") for n in (4096, 8192, 16384)}
    with pytest.MonkeyPatch.context() as mp:
        asked = _fake_gpu(mp, 75, 80 * 2**30, ms)  # a Turing part: FP16 tensor cores only
        assert set(ceilings.measure_tensor_gflops()) == {"fp16_tensor"}
    with pytest.MonkeyPatch.context() as mp:
        asked = _fake_gpu(mp, 90, 2**29, ms, refuse="bf16")  # 512 MiB free: 4096^3 alone; BF16 refused
        assert set(ceilings.measure_tensor_gflops()) == {"fp16_tensor", "tf32_tensor"}
        assert asked == [("fp16", 4096), ("tf32", 4096)]


def _fake_l2(monkeypatch, cc: int, l2_bytes: int, ms_by_kernel: dict):
    """A GPU of compute capability `cc` and `l2_bytes` of L2 whose L2 kernels take ms_by_kernel[name] ms
    a launch; returns the (kernel, buffer bytes) launched, in order."""
    launched, current = [], {}
    device = SimpleNamespace(compute_capability=str(cc), attributes={"L2CacheSize": l2_bytes})
    cupy = SimpleNamespace(cuda=SimpleNamespace(Device=lambda: device), float32="float32",
                           empty=lambda n, dtype=None: None,
                           ones=lambda n, dtype=None: SimpleNamespace(nbytes=4 * n))
    monkeypatch.setitem(sys.modules, "cupy", cupy)

    def function(name):
        def launch(grid, block, args):
            current["name"] = name
            launched.append((name, args[0].nbytes))
        return launch

    module = SimpleNamespace(get_function=function)
    monkeypatch.setattr(ceilings, "_stream_module", lambda: module)
    monkeypatch.setattr(ceilings, "_bulk_module", lambda: module)

    def timed(f, **kw):
        f()
        return Timing((ms_by_kernel[current["name"]],) * 3, warmup=3)

    monkeypatch.setattr(ceilings, "time_gpu", timed)
    return launched


def test_the_l2_ceiling_is_the_best_pattern_over_buffers_a_quarter_of_the_l2_at_most():
    ms = {"l2_stream": 0.20, "l2_chunks": 0.17, "l2_bulk": 0.12}
    with pytest.MonkeyPatch.context() as mp:
        launched = _fake_l2(mp, 90, 50 * 2**20, ms)  # an H100's 50 MiB: 2, 4 and 8 MiB buffers, bulk copies too
        found = dict(ceilings.l2_patterns(132))
        assert [n for n, _ in found.items()][:3] == ["stream 2 MiB", "chunks 2 MiB", "bulk copies 2 MiB"]
        assert sorted({b for _, b in launched}) == [2 * 2**20, 4 * 2**20, 8 * 2**20]
        # bulk copies: 132 x 3 blocks, each 2**30 // (16 KiB x 396) = 165 copies of 16 KiB, in 0.12 ms
        assert found["bulk copies 2 MiB"] == pytest.approx(16384 * 396 * 165 / 0.12e-3 / 1e9)
        assert ceilings.measure_l2_gbps(132) == max(found.values())
    with pytest.MonkeyPatch.context() as mp:
        launched = _fake_l2(mp, 80, 6 * 2**20, ms)  # 6 MiB of L2 on an sm_80 part: the 2 MiB buffer alone, no TMA
        assert [n for n, _ in ceilings.l2_patterns(108)] == ["stream 2 MiB", "chunks 2 MiB"]
