"""`roofline project`: a kernel's floors on another GPU, worked out by hand; the golden table of the
transformer profile on the B200 and the RTX A6000; a bad --gpu; work a target cannot run; and the
method's published error, recomputed from bench/public_figures.json so docs/project.md cannot drift."""

import json
import os
import re
import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline.model.device import from_preset
from roofline.model.roofs import Verdict
from roofline.analysis.project import project, project_kernel, published_errors
from roofline.results.store import load
from roofline.analysis.work import KernelWork, workload

ROOT = Path(__file__).resolve().parent.parent
LADDER = ROOT / "plots" / "results-h200.json"
TRANSFORMER = ROOT / "plots" / "profile-h200-transformer.json"
GOLDEN = Path(__file__).resolve().parent / "golden"


def test_register_tiling_2d_onto_the_rtx_a6000_by_hand():
    # register_tiling_2d on the H200: 2 x 4096^3 = 137,438,953,472 FP32 FLOPs in 4.707584 ms.
    # Theoretical FP32 roof here: 16,896 cores x 2 x 1980 MHz = 66,908.16 GFLOP/s.
    # Waves here: 128 registers x 256 threads on sm_90 -> 4,096 registers a warp, 16,384 / 4,096 =
    # 4 warps per sub-partition, 16 warps = 2 blocks of 8 warps per SM: 264 slots; 1,024 blocks take
    # 4 waves, the last 232 blocks >= 132 SMs: utilization 1.0.
    # FP32 floor here 137.439e9 / 66,908.16e9 s = 2.05415 ms (SMEM 23.6 GB at 33,454 GB/s is 0.71 ms:
    # FP32 binds); fraction of its roof 2.05415 / 4.707584 = 0.43635.
    # RTX A6000: 10,752 x 2 x 1800 MHz = 38,707.2 GFLOP/s; sm_86 also fits 2 blocks (registers),
    # 168 slots on 84 SMs; 1,024 blocks = 6 full waves + 16 blocks: utilization
    # (6 x 84 + 16) / (7 x 84) = 520 / 588 = 0.884354.
    # FP32 floor there 137.439e9 / 38,707.2e9 s / 0.884354 = 4.01506 ms; estimate 4.01506 / 0.43635
    # = 9.2015 ms, 137.439e9 / 9.2015e-3 s = 14,937 GFLOP/s.
    w = workload(load(LADDER))
    k = next(k for k in w.kernels if k.name == "register_tiling_2d")
    r = project_kernel(k, w.device, from_preset("rtx-a6000"), k.verdict.waves)
    assert r.level_here == r.level == "FP32" and not r.binding_changed
    assert r.utilization_here == pytest.approx(1.0)
    assert r.utilization == pytest.approx(520 / 588)
    assert r.floor_here_ms == pytest.approx(137438953472 / 66908.16e6, rel=1e-6)
    assert r.fraction == pytest.approx(2.05415 / 4.707584, rel=1e-4)
    assert r.floor_ms == pytest.approx(137438953472 / 38707.2e6 / (520 / 588), rel=1e-6)
    assert r.estimate_ms == pytest.approx(9.2015, rel=1e-4)
    assert r.gflops == pytest.approx(14937, rel=1e-3)
    assert r.left_out is None and r.flags == []


def _render(args, columns=140):
    return CliRunner().invoke(app, args, env={"COLUMNS": str(columns)})


def test_golden_transformer_on_b200_and_rtx_a6000():
    result = _render(["project", str(TRANSFORMER.relative_to(ROOT)), "--gpu", "b200", "--gpu", "rtx-a6000"])
    assert result.exit_code == 0, result.output
    text = "\n".join(line.rstrip() for line in result.output.splitlines()) + "\n"
    path = GOLDEN / "project_transformer_b200_a6000_140.txt"
    if os.environ.get("ROOFLINE_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


def test_an_unknown_gpu_exits_2_naming_the_presets():
    result = _render(["project", str(LADDER), "--gpu", "h300"])
    assert result.exit_code == 2
    assert "unknown GPU 'h300'" in result.stderr and "rtx-a6000" in result.stderr and "gh200-144gb" in result.stderr
    assert "Traceback" not in result.output


def test_work_the_target_has_no_roof_for_is_flagged_and_left_out():
    # FP8 tensor work on the RTX A6000 (sm_86 has no FP8 tensor cores).
    h200 = from_preset("h200")
    k = KernelWork(name="fp8_gemm", key=("fp8_gemm",), launches=1, time_ms=1.0, flops={"fp8_tensor": 1e12},
                   bytes={"dram": 1e9}, bytes_counted={"dram": True}, occupancy=None, spread=None,
                   verdict=Verdict((), 1.0))
    r = project_kernel(k, h200, from_preset("rtx-a6000"))
    assert r.left_out and "no FP8 tensor roof" in r.left_out and r.estimate_ms is None
    # The transformer's BF16 tensor kernels cannot run on a V100 (FP16 tensor cores only): left out
    # of the step's sums and counted.
    p = project(load(TRANSFORMER, profile=True), ["v100-sxm2"])
    t = p.targets[0]
    gone = [r for r in t.kernels if r.left_out]
    assert t.left_out == len(gone) > 0 and all("BF16 tensor" in r.left_out for r in gone)
    assert t.estimate_ms == pytest.approx(sum(r.estimate_ms for r in t.kernels if not r.left_out))
    assert t.here_ms + t.left_out_ms == pytest.approx(sum(r.time_here_ms for r in t.kernels))


def test_json_has_per_target_per_kernel_estimates_and_step_totals():
    result = _render(["project", str(TRANSFORMER), "--gpu", "b200", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    t = doc["targets"][0]
    assert doc["roofs"] == "theoretical" and t["gpu"] == "B200"
    k = t["kernels"][0]
    assert {"estimated_ms", "estimated_gflops", "floor_ms", "binding", "flags", "left_out"} <= set(k)
    assert t["step"]["estimated_ms"] == pytest.approx(sum(k["estimated_ms"] for k in t["kernels"]
                                                          if k["left_out"] is None))


def test_modelled_bytes_the_measured_time_refutes_are_no_floor():
    """The user-kernel run holds the traffic model's bytes: gmem_coalescing's modelled DRAM bytes
    (no cache reuse) would take 5.25x its measured time at the H200's DRAM roof. Read as a floor,
    they gave an estimate on the A100 (51.4 ms) 5x under its own lower bound (269.6 ms)."""
    user = project(load(ROOT / "plots" / "user-kernel-h200.json", profile=True), ["a100-sxm4-80gb"])
    k = next(k for k in user.targets[0].kernels if k.label == "gmem_coalescing")
    assert k.level_here == "L1" and k.level == "L1" and "DRAM" not in k.floors_ms
    assert k.estimate_ms >= k.floor_ms and k.estimate_ms == pytest.approx(37.17, abs=0.01)
    assert any("not a floor" in f for f in k.flags)
    # the ladder's file, whose bytes Nsight Compute counted, projects the same kernel within 0.5 %
    counted = project(load(LADDER, profile=True), ["a100-sxm4-80gb"]).targets[0]
    ref = next(k for k in counted.kernels if k.label == "gmem_coalescing")
    assert k.estimate_ms == pytest.approx(ref.estimate_ms, rel=0.005)


PUBLISHED = {  # pair -> (median, worst), as docs/project.md gives them (%)
    "SGEMM worklog, RTX A6000": (13.4, 86.7),
    "seed lesson 000, RTX 5080": (19.6, 20.4),
    "all": (16.5, 86.7),
}


def test_published_error_is_what_the_figures_and_the_h200_run_give():
    figures = json.loads((ROOT / "bench" / "public_figures.json").read_text())
    errors = published_errors(load(LADDER), figures)
    found = {e.name: (round(100 * e.median, 1), round(100 * e.worst, 1)) for e in errors}
    every = [r[3] for e in errors for r in e.rows]
    found["all"] = (round(100 * statistics.median(every), 1), round(100 * max(every), 1))
    assert found == PUBLISHED
    docs = (ROOT / "docs" / "project.md").read_text()
    for name, (median, worst) in PUBLISHED.items():
        assert re.search(rf"\| {re.escape(name)} \|[^\n]*\| {median} % \| {worst} % \|", docs), name


def test_a_gpu_named_twice_is_projected_once():
    r = CliRunner().invoke(app, ["project", str(LADDER), "--gpu", "l40s", "--gpu", "L40S", "--gpu", "l40s", "--json"])
    assert r.exit_code == 0
    assert [t["gpu"] for t in json.loads(r.stdout)["targets"]] == ["L40S"]


def test_hopper_only_rungs_are_left_out_on_other_gpus_and_the_reference_keeps_its_precision():
    doc = load(Path(__file__).resolve().parent.parent / "plots" / "results-h200-bf16.json")
    p = project(doc, ["a100-sxm4-80gb", "h100-sxm"])
    a100, h100 = ({r.label: r for r in t.kernels} for t in p.targets)
    for name in ("wgmma_tma", "wgmma_ws", "wgmma_persistent", "wgmma_by_shape"):
        assert a100[name].left_out == "uses Hopper's wgmma and TMA (sm_90a only); not run on sm_80"
        assert a100[name].estimate_ms is None and h100[name].left_out is None and h100[name].estimate_ms
    assert a100["mma_pipeline"].left_out is None and a100["mma_pipeline"].level == "BF16 tensor"
    assert "cublas (the reference) has no bytes or launch recorded: projected from its BF16 tensor floor alone" \
        in p.notes


def test_the_project_chart_reads_as_a_comparison_of_lengths():
    """The chart of GPT-2's step projected onto the H100, A100 and V100: a whole title naming every
    GPU and each target's step, bars on a linear axis from 0 (lengths compared), each series in the
    legend, and every bar a target has no estimate for marked 'n/a' with why (the V100 has no BF16
    tensor roof)."""
    from roofline.render import project as view

    doc = load(ROOT / "plots" / "profile-h200-gpt2.json", profile=True)
    p = project(doc, ["h100-sxm", "a100-sxm4-80gb", "v100-sxm2"])
    fig = view.render(p)
    ax = fig.axes[0]
    title = fig._suptitle.get_text()
    assert title.startswith("NVIDIA H200 -> H100 80GB HBM3, A100-SXM4-80GB, Tesla V100-SXM2: the 20 kernels")
    assert "H100 80GB HBM3: step 24.1 ms here -> estimate 29.2 ms (lower bound 13.6 ms)" in title
    assert "Tesla V100-SXM2: the 70 kernels it has roofs for" in title and "14 left out (n/a)" in title
    assert ax.get_xscale() == "linear" and ax.get_xlim()[0] == 0
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "NVIDIA H200 (measured here)", "H100 80GB HBM3 (estimate)", "A100-SXM4-80GB (estimate)",
        "Tesla V100-SXM2 (estimate)"]
    first = p.targets[0].kernels
    top = sorted(first, key=lambda r: -r.time_here_ms)[:20]
    v100 = {r.label: r for r in p.targets[2].kernels}
    missing = sum(1 for r in top if v100[r.label].estimate_ms is None)
    marks = [t.get_text() for t in ax.texts if t.get_text().startswith("n/a")]
    assert missing == 11 and marks == ["n/a: no BF16 tensor roof there"] * missing
    bars = [b for b in ax.patches if b.get_width() > 0]
    assert len(bars) == 4 * 20 - missing


def test_a_profile_of_programs_profiled_apart_is_projected_kernel_by_kernel():
    p = project(load(Path(__file__).resolve().parent.parent / "plots" / "timeline-h200-bf16-8192.json", profile=True),
                ["b200"])
    assert p.step_ms is None and p.targets[0].estimate_ms is None and p.targets[0].lower_bound_ms is None
    assert any("holds the launches of 4 programs" in n for n in p.notes)


def test_a_split_whose_blocks_wait_for_each_other_is_left_out_where_they_cannot_all_be_resident():
    # split_k<..., 4, 4> at 1024^3 on an H100 (roofline run --kernel split_k --size 1024 --profile, 2026-12-06):
    # 128 blocks of one per SM. An H200 (132 SMs) holds them all; an A100 (108) and an L4 (58) do not,
    # and there the kernel would run the other way (REDUCERS = 1): left out, said why
    doc = load(ROOT / "tests" / "fixtures" / "results-h100-split-1024.json")
    split = next(k for k in doc.kernels if k.name == "split_k")
    assert split.params["REDUCERS"] == 4 and split.waves.blocks == 128
    by_gpu = {p.device.name: next(k for k in p.kernels if k.label == "split_k")
              for p in project(doc, ["h200", "a100-sxm4-80gb", "l4"]).targets}
    assert by_gpu["H200"].left_out is None and by_gpu["H200"].estimate_ms is not None
    for gpu, held in (("A100-SXM4-80GB", 108), ("L4", 58)):
        why = by_gpu[gpu].left_out
        assert why.startswith(f"its 128 blocks add their slices together") and f"holds {held}:" in why
