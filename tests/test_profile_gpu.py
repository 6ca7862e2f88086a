"""`roofline profile` on a real GPU under a real ncu: tensor-core work counted per input type,
bytes per level, the command's exit code kept with its kernels, both report readers agreeing, and
the ceilings per memory level and precision measured in a plausible order."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from roofline import cli
from roofline import nsight
from roofline.nsight.metrics import COLLECT
from roofline.results import store

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(shutil.which("ncu") is None, reason="ncu is not installed")]

N = 1024
ELEMENTS = 1 << 22
APP = f"""
import sys, cupy
a = cupy.ones(({N}, {N}), dtype=cupy.float16)
c = a @ a
x = cupy.ones({ELEMENTS}, dtype=cupy.float32)
y = x * 2.0
cupy.cuda.runtime.deviceSynchronize()
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("profile")
    app = tmp / "app.py"
    app.write_text(APP)
    out, report = tmp / "p.json", tmp / "r.ncu-rep"
    result = CliRunner().invoke(cli.app, ["profile", "--out", str(out), "--report", str(report), "--",
                                          sys.executable, str(app), "3"])
    return result, out, report


def test_a_failing_command_exits_1_with_its_kernels_kept(profiled):
    result, out, _ = profiled
    assert result.exit_code == 1, result.output
    assert "exited with code 3" in result.stderr
    doc = store.load(out, profile=True)
    assert doc.exit_code == 3 and doc.launches_profiled >= 3


def test_tensor_core_work_and_elementwise_bytes_are_counted(profiled):
    doc = store.load(profiled[1], profile=True)
    gemm = [k for k in doc.kernels if k.tensor_core]
    assert len(gemm) == 1 and gemm[0].precision == "fp16"
    assert gemm[0].flops["fp16_tensor"] == 2 * N**3  # two operations per multiply-add
    assert doc.verdict(gemm[0]).binding.level != "FP32"
    mul = [k for k in doc.kernels if k.name.startswith("cupy_multiply")]
    assert len(mul) == 1 and mul[0].precision == "fp32" and not mul[0].tensor_core
    assert mul[0].flops["fp32"] == ELEMENTS  # one FMUL per element
    assert mul[0].bytes["dram"] > 0.9 * 4 * ELEMENTS  # x read from DRAM; y's 16 MB stay in L2, written back later
    assert mul[0].bytes["l2"] > 0.9 * 2 * 4 * ELEMENTS  # read x, write y
    assert doc.verdict(mul[0]).binding.level in ("DRAM", "L2")
    fill = [k for k in doc.kernels if k.precision == "none"]
    assert fill, [k.name for k in doc.kernels]
    assert abs(sum(k.time_share for k in doc.kernels) - 1) < 1e-9


def test_the_launch_order_and_the_dram_split_are_recorded(profiled):
    """Every kernel knows its launches' places (0 .. launches - 1, each once) and its DRAM bytes
    read and written apart, adding up to its DRAM bytes."""
    doc = store.load(profiled[1], profile=True)
    places = sorted(p for k in doc.kernels for p in k.launch_order)
    assert places == list(range(doc.launches_profiled))
    for k in doc.kernels:
        assert k.dram_read_bytes is not None and k.dram_write_bytes is not None, k.name
        assert k.dram_read_bytes + k.dram_write_bytes == pytest.approx(k.bytes["dram"], rel=1e-3, abs=64), k.name
    mul = next(k for k in doc.kernels if k.name.startswith("cupy_multiply"))
    assert mul.dram_read_bytes > 0.9 * 4 * ELEMENTS  # x read from DRAM


@pytest.mark.parametrize("units", ["base", "auto"])
def test_both_report_readers_give_the_same_rows(profiled, units):
    """Nsight Compute's Python interface (units from the module) and the CSV export of the same
    report (base or display units) give every collected metric alike."""
    report = profiled[2]
    module = nsight.binary.read_report(report)
    assert "ncu_report" in module.read_with  # Nsight Compute's own Python interface, found beside ncu
    text = subprocess.run(["ncu", "--import", str(report), "--csv", "--page", "raw", "--print-units", units],
                          capture_output=True, text=True, check=True).stdout
    exported = nsight.pages.parse_csv(text).rows
    assert len(module.rows) == len(exported)
    for a, b in zip(module.rows, exported):
        for metric in COLLECT:
            if metric in a.values or metric in b.values:
                assert a.values.get(metric) == pytest.approx(b.values.get(metric), rel=1e-3 if units == "auto" else 1e-6,
                                                             abs=1.0), metric


def test_a_filter_that_matches_nothing_lists_the_kernels(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(APP)
    result = CliRunner().invoke(cli.app, ["profile", "--kernel-regex", "^no_such_kernel$", "--out",
                                          str(tmp_path / "p.json"), "--", sys.executable, str(app)])
    assert result.exit_code == 2
    assert "matched none" in result.stderr and "cupy_multiply" in result.stderr
    assert not (tmp_path / "p.json").exists()


def test_a_command_without_kernels_and_a_missing_program(tmp_path):
    out = tmp_path / "p.json"
    none = CliRunner().invoke(cli.app, ["profile", "--out", str(out), "--", sys.executable, "-c", "print(1)"])
    assert none.exit_code == 1 and "launched no CUDA kernel" in none.stderr
    missing = CliRunner().invoke(cli.app, ["profile", "--out", str(out), "--", "no-such-program-here"])
    assert missing.exit_code == 2 and "no such program" in missing.stderr
    assert not out.exists()


def test_memory_level_and_tensor_ceilings_are_ordered():
    from roofline.measure import ceilings
    from roofline.measure.nvml import from_nvml

    d = from_nvml()
    c = ceilings.measure(d, refresh=True)
    assert c.dram_gbps < c.l2_gbps < c.smem_gbps < 1.01 * d.memory_peaks["L1"].value
    for key in ("fp16_tensor", "bf16_tensor", "tf32_tensor"):  # cuBLAS in each precision, below its peak
        assert 5 * c.fp32_gflops < c.tensor_gflops[key] < 1.01 * d.peaks_gflops[key], key
    assert 0.0005 < c.launch_latency_ms < 0.05  # an empty kernel between CUDA events: microseconds
