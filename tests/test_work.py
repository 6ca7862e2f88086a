"""Every committed results file read as the decision commands read it (`analysis.work`)."""

from pathlib import Path

import pytest

from roofline.results import store
from roofline.analysis.work import workload

PLOTS = Path(__file__).resolve().parent.parent / "plots"


def test_a_profile_is_a_step_whose_kernels_add_up():
    doc = store.load(PLOTS / "profile-h200-transformer.json", profile=True)
    w = workload(doc)
    assert w.kind == "profile" and w.step_ms == pytest.approx(sum(k.time_ms for k in w.kernels))
    assert w.step_ms == doc.total_time_ms and len(w.kernels) == len(doc.kernels)
    gemm = max(w.kernels, key=lambda k: k.time_ms)
    # the step's longest kernel: a cuBLAS BF16 product, 2 x 66 blocks of 384 threads, bytes counted
    assert gemm.key[1:] == ((2, 66, 1), (384, 1, 1)) and gemm.blocks == 132 and gemm.threads_per_block == 384
    assert list(gemm.flops) == ["bf16_tensor"] and all(gemm.bytes_counted.values())
    assert gemm.verdict.binding.level == "BF16 tensor" and gemm.label.endswith("[2x66x1 blocks of 384x1x1]")


def test_a_run_holds_alternatives_with_one_launch_each():
    w = workload(store.load(PLOTS / "results-h200.json"))
    assert w.kind == "run" and w.step_ms is None and w.problem == "4096x4096x4096"
    naive = w.by_key()[("naive",)]
    assert naive.flops == {"fp32": 2 * 4096**3} and naive.launches == 1 and naive.label == "naive"
    assert naive.bytes_counted == {"dram": True, "l2": True, "l1": True}  # profiled with --profile
    sweep = workload(store.load(PLOTS / "sweep-h200.json"))
    assert sweep.problem == "8192x8192x8192" and sweep.notes == [
        "a size sweep: read at its largest size, 8192x8192x8192"]
