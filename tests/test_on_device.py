"""A problem's work as it runs on a GPU without the roof of its precision (`sol.on_device`): TF32
work at FP32 on a V100, BF16 products as FP16 tensor ones; and problems named apart by their
folders (`analysis.problems._labels`). Worked by hand from the presets' datasheet roofs; on the CPU."""

from pathlib import Path

import pytest

from roofline.analysis.problems import _labels
from roofline.model import sol
from roofline.model.device import from_preset


def test_work_without_a_roof_runs_at_the_next_precision_the_gpu_has():
    v100 = from_preset("v100-sxm2").roofs
    conv = sol.Work({"tf32_tensor": 3e11, "bf16_tensor": 1e9}, 5.37e8, 1.04e9, "a convolution")
    moved, notes = sol.on_device(conv, v100)
    assert moved.flops == {"fp32": 3e11, "fp16_tensor": 1e9} and moved.nbytes == conv.nbytes
    assert notes == ["TF32 tensor work read at FP32's roof: this GPU has no TF32 tensor roof",
                     "BF16 tensor work read at FP16 tensor's roof: this GPU has no BF16 tensor roof"]
    light = sol.speed_of_light(moved, v100)
    assert light.binding.level == "FP32" and light.ms == pytest.approx(3e11 / v100.roof("fp32").value / 1e6)
    h200 = from_preset("h200").roofs
    assert sol.on_device(conv, h200) == (conv, [])  # every roof there: as it was


def test_problems_from_several_folders_are_told_apart_by_the_fewest_parts(tmp_path):
    a, b, c = tmp_path / "a" / "x" / "p.py", tmp_path / "b" / "x" / "p.py", tmp_path / "b" / "y" / "q.py"
    assert _labels([a, b]) == {a: "a/x/p", b: "b/x/p"}
    assert _labels([a, c]) == {a: "x/p", c: "y/q"}
    assert _labels([b, c]) == {b: "x/p", c: "y/q"}
    assert _labels([Path("one.py"), Path("two.py")]) == {Path("one.py"): "one", Path("two.py"): "two"}
