"""FP32 matrix products done as 3xTF32 on the tensor cores (`sol.fp32_on_tensor_cores`): FP32's
accuracy faster than FP32's roof, so a problem's candidate that runs there is graded, not flagged
faster than light; a time past that bound too is still flagged. Figures worked by hand from the
H200's datasheet roofs; on the CPU."""

import pytest

from roofline import grading
from roofline.measure.candidate import CandidateCheck, DrawResult, OutputResult
from roofline.measure.problem_grade import ProblemRun
from roofline.model import integrity, sol
from roofline.model.device import from_preset
from roofline.model.timing import Timing

H200 = from_preset("h200")
FP32, TF32 = H200.roofs.roof("fp32", True).value, H200.roofs.roof("tf32_tensor", True).value
MATMUL = sol.Work({"fp32": 2 * 4096.0 ** 3}, 2 * 4 * 4096.0 ** 2, 4 * 4096.0 ** 2, "1_Square, 4096^3 FP32")


def test_fp32_products_as_3xtf32_are_three_tf32_products_each_where_that_is_faster():
    assert TF32 / 3 > FP32  # 494.7 / 3 = 164.9 TFLOP/s against FP32's 66.9
    emulated = sol.fp32_on_tensor_cores(MATMUL, H200.roofs)
    assert emulated.flops == {"tf32_tensor": 3 * 2 * 4096.0 ** 3} and emulated.nbytes == MATMUL.nbytes
    light, fast = sol.speed_of_light(MATMUL, H200.roofs), sol.speed_of_light(emulated, H200.roofs)
    assert light.ms == pytest.approx(2 * 4096 ** 3 / FP32 / 1e6)  # 2.054 ms
    assert fast.ms == pytest.approx(3 * 2 * 4096 ** 3 / TF32 / 1e6)  # 0.833 ms
    assert sol.fp32_on_tensor_cores(sol.Work({"bf16_tensor": 1e9}), H200.roofs) is None  # no FP32 work
    slow_tensor = H200.roofs.__class__(fp32_gflops=FP32, dram_gbps=4800.0, compute=(("TF32 tensor", 2 * FP32),))
    assert sol.fp32_on_tensor_cores(MATMUL, slow_tensor) is None  # TF32 over three is slower than FP32 there


def test_a_time_within_3xtf32s_bound_is_not_faster_than_light_and_one_past_it_is():
    light = sol.speed_of_light(MATMUL, H200.roofs)
    fast = sol.speed_of_light(sol.fp32_on_tensor_cores(MATMUL, H200.roofs), H200.roofs)
    assert integrity.faster_than_light(1.2, light).code == "faster_than_light"  # 2.054 / 1.2 = 1.71x
    assert integrity.faster_than_light(1.2, light, fast) is None  # 0.833 / 1.2: within the emulated bound
    assert integrity.faster_than_light(0.5, light, fast).code == "faster_than_light"  # past both


def _run(ms: float, error: float = 1e-6) -> ProblemRun:
    draws = tuple(DrawResult(s, (OutputResult("output 0", "float32", error, 1e-4, True),)) for s in (1, 2, 3))
    return ProblemRun("cutlass_3xtf32", "c.py", False, CandidateCheck("1_Square", "c.py", "cuda", draws),
                      Timing(samples_ms=(ms,) * 5, warmup=1), async_ms=(ms, ms + 0.01))


def test_a_problems_candidate_at_3xtf32s_speed_is_graded_with_a_note():
    e = grading.problem_entry(_run(1.2), "1_Square", MATMUL, H200, 0.005)
    assert e.graded and e.flags == [] and e.share == pytest.approx(2 * 4096 ** 3 / FP32 / 1e6 / 1.2)
    notes = grading.emulation_notes([e], MATMUL, H200, 0.005)
    assert notes == [f"cutlass_3xtf32: {e.share:.2f}x faster than its speed of light at FP32's roof, within 3xTF32's "
                     f"({3 * 2 * 4096 ** 3 / TF32 / 1e6:.4g} ms): "
                     "FP32 matrix products can run FP32-accurate on the tensor cores, three TF32 products each, so "
                     "this is not flagged"]
    past = grading.problem_entry(_run(0.5), "1_Square", MATMUL, H200, 0.005)
    assert past.refused and [f.code for f in past.flags] == ["faster_than_light"]
    assert grading.emulation_notes([past], MATMUL, H200, 0.005) == []


def test_a_candidate_as_fast_but_only_as_accurate_as_one_tf32_pass_is_still_flagged():
    # 3e-5: one TF32 pass where a sigmoid and a sum follow the GEMM, inside FP32's 1e-4, not FP32's accuracy
    e = grading.problem_entry(_run(1.2, error=3e-5), "1_Square", MATMUL, H200, 0.005)
    assert e.refused and [f.code for f in e.flags] == ["faster_than_light"]
