"""Results of a tensor-core (BF16) ladder run: read, checked and drawn against the roof of their
precision. The fixture is a BF16 run at 4096^3 on the H200 of plots/results-h200.json; every
figure asserted here is re-derived from what the file records (the device's peaks, the problem,
the model's tiles), so a real run's file can take its place."""

from __future__ import annotations

import copy
import json
from dataclasses import asdict
from pathlib import Path

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from roofline.cli import app
from roofline import documents
from roofline.errors import UsageError
from roofline.model.problem import Problem
from roofline.model.traffic import TrafficModel
from roofline.render.tables import run_tables, verdict_lines
from roofline.render.text import ceiling_lines
from roofline.results import store

BF16 = FIXTURES / "results-h200-bf16.json"
FP32 = Path(__file__).resolve().parent.parent / "plots" / "results-h200.json"


def raw() -> dict:
    return json.loads(BF16.read_text())


def kernel(doc, name):
    return next(k for k in doc.kernels if k.name == name)


def test_a_bf16_problem_is_read_with_its_precision_and_layout():
    doc = store.load(BF16)
    p = doc.problem.problem
    assert p == Problem(4096, 4096, 4096, "bf16") and p.precision_key == "bf16_tensor"
    assert doc.problem.layout == "TN" and doc.precision == "bf16_tensor" and doc.compute_level == "BF16 tensor"
    # the H200's BF16 tensor roof: 132 SMs x 4096 FLOP per clock x 1830 MHz (the Hopper whitepaper's figure)
    assert doc.peak_gflops() == pytest.approx(132 * 4096 * 1830 / 1e3) == pytest.approx(989_429.76)


def test_the_model_figures_are_the_traffic_models_at_two_bytes_an_element():
    # wgmma_ws: a 128 x 256 block of two 64 x 256 wgmma tiles
    k = kernel(store.load(BF16), "wgmma_ws")
    fig = TrafficModel((128, 256), None, operand_tile=(64, 256)).figures(Problem(4096, 4096, 4096, "bf16"))
    assert asdict(k.model) == pytest.approx(asdict(fig))
    assert k.model.gmem_bytes == 2 * 4096**3 * (1 / 128 + 1 / 256) == pytest.approx(1.61e9, rel=1e-3)
    assert k.model.arithmetic_intensity == pytest.approx(85.33, abs=0.01)
    assert k.model.smem_served_bytes == pytest.approx(2 * 4096**3 * (1 / 64 + 1 / 256 + 1 / 128 + 1 / 256))
    assert k.model.smem_served_bytes == pytest.approx(4.29e9, rel=2e-3)


def test_floors_are_read_against_the_bf16_tensor_roof_not_fp32():
    doc = store.load(BF16)
    k = kernel(doc, "wgmma_ws")
    flops, peak = 2 * 4096**3, doc.device.peaks_gflops["bf16_tensor"]
    assert flops / (peak * 1e6) == pytest.approx(0.1389, abs=1e-4)  # 137.4 GFLOP at 989.4 TFLOP/s
    busy = 512 / (4 * 132)  # 16 x 32 blocks of 128 x 256, one per SM: 3.88 waves, the last 88 % full
    assert k.waves.utilization == pytest.approx(busy)
    plain = doc.floors(k)
    assert plain.floor("FP32") is None
    tensor = plain.floor("BF16 tensor")
    assert tensor.floor_ms == pytest.approx(flops / (peak * 1e6) / busy) and not tensor.roof.measured
    assert not tensor.counted  # 2*M*N*K from the model, not counted by Nsight Compute
    # AI 85.3 FLOP/B is below the BF16 ridge over DRAM (989,430 / 4,814 = 205.5 FLOP/B), but the GMEM
    # bytes are the L2's requests: at its 15,354 GB/s they take 0.1049 ms, and the 4.29 GB the banks
    # serve 0.1284 ms at 33,454 GB/s; the tensor roof's 0.1389 ms binds. The file read alone (no
    # kernel families) has no DRAM bytes modelled: no DRAM floor.
    l2, smem = plain.floor("L2"), plain.floor("SMEM")
    assert l2.floor_ms == pytest.approx(k.model.gmem_bytes / (doc.device.peak_l2_gbps * 1e6))  # the chip's L2, not the busy SMs' share
    assert smem.floor_ms == pytest.approx(4.294967296e9 / 33_454.08e6 / busy)
    assert plain.floor("DRAM") is None and plain.binding.level == "BF16 tensor" and plain.times_floor > 1
    # the hierarchical reading: the measured BF16 ceiling (cuBLAS's FP16 product, one rate for both),
    # raised to the best rate the file saw on the SMs a grid kept busy, which went past it
    found = doc.verdict(k).floor("BF16 tensor")
    best = max(x.gflops / x.waves.utilization for x in doc.kernels if x.timed)
    [raised] = [b for b in doc.beaten if b.level == "BF16 tensor"]
    assert raised.measured == doc.device.measured_peaks_gflops["fp16_tensor"] == pytest.approx(760_802.4, abs=0.1)
    # cuBLAS BF16 ran 769,535 GFLOP/s in this run, above the kernels' best (714,745 on their busy SMs)
    assert raised.by == "cuBLAS" and raised.seen == doc.reference.gflops == pytest.approx(769_535, abs=1)
    assert best == pytest.approx(714_745, abs=1)
    assert found.roof.measured and found.roof.value == raised.used == raised.seen


def test_an_fp32_run_reads_as_before():
    doc = store.load(FP32)
    k = kernel(doc, "register_tiling_2d")
    assert doc.precision == "fp32" and doc.floors(k).floor("FP32").floor_ms == pytest.approx(
        2 * 4096**3 / (doc.device.peak_fp32_gflops * 1e6) / k.waves.utilization)
    assert all(f.level in ("FP32", "DRAM", "L2", "SMEM", "L1", "launch") for f in doc.verdict(k).floors)


@pytest.mark.parametrize("edit, needle", [
    (lambda d: d["kernels"][4].update(gflops=1.2 * d["device"]["peaks_gflops"]["bf16_tensor"]),
     "kernels[4].gflops: 1,187,316 GFLOP/s is 1.2x the device's BF16 tensor peak of 989,430 GFLOP/s"),
    (lambda d: d["reference"].update(tf32=True), "reference.tf32: true, but the problem is bf16"),
    (lambda d: d["problem"].update(layout="row-major"), "problem: its layout is 'row-major', but a bf16 problem is stored 'TN'"),
    (lambda d: d["problem"].update(dtype="int8"), "problem.dtype: Input should be"),
    (lambda d: d["device"].pop("peaks_gflops"), "device.peaks_gflops: no bf16_tensor peak, so the BF16 rates cannot "
                                                "be checked against a BF16 tensor roof"),
])
def test_a_corrupt_tensor_file_is_refused_in_one_line(edit, needle):
    d = raw()
    edit(d)
    with pytest.raises(UsageError) as e:
        store.parse(copy.deepcopy(d), "r.json")
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_a_tf32_reference_is_accepted_for_a_tf32_problem():
    d = raw()
    d["problem"]["dtype"] = "tf32"
    d["reference"]["tf32"] = True
    for x in d["kernels"] + [d["reference"]]:  # TF32's roof is half BF16's: three times the time
        x["time_ms"] *= 3
        x["gflops"] /= 3
    for k in d["kernels"]:  # TF32 travels as 4-byte words: twice the bytes of BF16
        fig = TrafficModel(tuple(k["params"][x] for x in ("BM", "BN")), None,
                           operand_tile=(64, 256)).figures(Problem(4096, 4096, 4096, "tf32"))
        k["model"] = asdict(fig)
    doc = store.parse(d)
    assert doc.precision == "tf32_tensor" and doc.reference.tf32


def test_show_names_the_precision_and_its_roof():
    doc = store.load(BF16)
    title = run_tables(doc)[0].title
    assert title.startswith("GEMM 4096x4096x4096 BF16 (TN, FP32 accumulate) on NVIDIA H200 (BF16 tensor "
                            "989,430 GFLOP/s, DRAM 4,814 GB/s; measured 760,802 GFLOP/s (FP16 cuBLAS), 4,282 GB/s)")
    lines = verdict_lines(doc)
    ws = next(line for line in lines if line.startswith("wgmma_ws:"))
    # its GMEM requests (1.61 GB) at the best L2 rate the file saw (wgmma_by_shape's) bind, its BF16 work 6 % below
    assert ws.startswith("wgmma_ws: L2-bound (model bytes, best bandwidth seen); 1.02x its floor of 0.195 ms (98 % of "
                         "that ceiling)")
    assert ws.endswith("BF16 tensor roof (best rate seen): 1.08x its floor of 0.184 ms (93 % of that roof)")
    assert next(line for line in lines if line.startswith("wgmma_by_shape (128x256 block tile):"))
    assert not any("FP32" in line for line in lines)
    r = CliRunner().invoke(app, ["show", str(BF16)])
    assert r.exit_code == 0 and "bf16 tensor" not in r.stdout.split("\n")[0]
    # wgmma_ws's theoretical reading: 0.1389 ms of BF16 work over the 88 % of the GPU its grid keeps busy
    # binds (its L2 requests take 0.105 ms, its SMEM bytes 0.128 ms); it ran 1.38x that
    assert "bf16 tensor 1.38" in r.stdout


def test_show_of_two_precisions_prints_each_and_json_a_list():
    r = CliRunner().invoke(app, ["show", str(FP32), str(BF16)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "SGEMM 4096x4096x4096 on NVIDIA H200" in r.stdout and "GEMM 4096x4096x4096 BF16" in r.stdout
    r = CliRunner().invoke(app, ["show", "--json", str(FP32), str(BF16)])
    docs = json.loads(r.stdout)
    assert [d["problem"]["dtype"] for d in docs] == ["float32", "bf16"]
    docs, _ = documents.read_all([FP32, BF16], "show")  # one document per precision, each read against its roof
    assert [d.problem.dtype for d in docs] == ["float32", "bf16"]


def test_plot_draws_a_tensor_run_and_two_ladders(tmp_path, monkeypatch):
    from matplotlib.text import Text

    from roofline.render import roofline_chart

    # The chart of one BF16 run: its roof and its rungs (what each roof and point says is checked
    # below and, for the committed runs, in test_chart_layout).
    fig, labels = roofline_chart.render(store.load(BF16))
    words = " ".join(t.get_text() for t in fig.findobj(Text))
    assert "BF16 tensor" in words and "wgmma_ws" in {t.get_text() for t in labels}
    assert "FP32 66,908" not in words  # no FP32 roof on a BF16 run's chart
    # The command hands both ladders, one document per precision, to the chart of several runs
    # (drawn for real in test_the_two_ladder_chart... and test_chart_layout).
    handed = []
    monkeypatch.setattr(roofline_chart, "draw_many", lambda docs, out, *a, **k: handed.append((docs, out)) or out)
    out = tmp_path / "both.png"
    r = CliRunner().invoke(app, ["plot", "--out", str(out), str(FP32), str(BF16)])
    assert r.exit_code == 0, r.output
    [(docs, drawn)] = handed
    assert [d.problem.dtype for d in docs] == ["float32", "bf16"] and drawn == out
    r = CliRunner().invoke(app, ["plot", "--kind", "sweep", str(FP32), str(BF16),
                                 "--out", str(tmp_path / "s.png")])
    assert r.exit_code == 2 and "drawn together only on a roofline chart" in r.stderr


def test_the_two_ladder_chart_reads_each_kernel_against_its_own_roof():
    from roofline.render import roofline_chart

    docs, _ = documents.read_all([FP32, BF16], "show")
    fig, texts = roofline_chart.render_many(docs)
    ax = fig.axes[0]
    flat = sorted({round(y) for line in ax.lines if len(set(line.get_ydata())) == 1 and len(line.get_ydata()) == 2
                   for y in line.get_ydata()})
    # FP32 and BF16 tensor, theoretical and measured (BF16's raised to what the file saw: `Results.roofs`)
    assert {66908, 62066, 989430, round(docs[1].roofs.roof("BF16 tensor").value)} <= set(flat)
    assert 753834 not in flat and round(docs[1].roofs.roof("BF16 tensor").value) > 753834
    listed = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "wgmma_ws  693,086 GFLOP/s (70 % of BF16 tensor), 168 regs, occupancy 18.8 %" in listed
    assert "split_k  48,849 GFLOP/s (73 % of FP32), 218 regs, occupancy 12.5 %" in listed
    assert {t.get_text() for t in texts} >= {"naive", "wgmma_ws"}


def test_the_html_report_of_a_tensor_run_has_its_roof(tmp_path):
    pytest.importorskip("plotly")
    from roofline.render import html_report

    report = html_report.build(store.load(BF16), [BF16])
    names = [t.name for t in report.figures[html_report.CHART_ID].data]
    assert "BF16 tensor roof 989,430 GFLOP/s" in names and not any(n.startswith("FP32") for n in names)
    assert report.title == "NVIDIA H200: GEMM 4096x4096x4096 BF16 (TN, FP32 accumulate)"


def test_counted_bytes_past_a_measured_ceiling_say_the_ceiling_is_low():
    """wgmma_ws at 4096^3 counted 1.61 GB through L2 in 0.198 ms (8.1 TB/s over the whole chip, whose
    L2 it draws on), above the measured L2 ceiling (7,322 GB/s): the bytes are Nsight Compute's own, so the
    ceiling is what is low; the verdicts read the L2 at that rate, the best the file saw, and wgmma_ws
    runs on that roof, its BF16 tensor floor within 5 % (the ceiling there cuBLAS FP16's, and said so).
    The file is the H200's of 2026-12-05, kept as a fixture: the visit of 2026-12-06 measured the L2 at
    11,342 GB/s and the BF16 product itself, and its file has neither line."""
    doc = store.load(Path(__file__).resolve().parent / "fixtures" / "counters-h200-bf16-20261205.json")
    assert ceiling_lines(doc) == [
        "L2 ceiling: measured at 7,322 GB/s by an __ldcg stream alone (which reads low), below the 8,120 GB/s at "
        "which wgmma_ws moved its counted L2 bytes in this file, so the measurement is low; verdicts read 8,120 "
        "GB/s, which may be low too: roofline device --measure now takes the best of streams, chunks and bulk "
        "copies; a kernel read as L2-bound near another roof may be bound by that one",
        "BF16 tensor ceiling: cuBLAS FP16's 749,820 GFLOP/s, measured before each tensor precision was; roofline "
        "device --measure now measures BF16 tensor's own"]
    ws = next(line for line in verdict_lines(doc) if line.startswith("wgmma_ws:"))
    assert ws.startswith("wgmma_ws: L2-bound (measured bytes, best bandwidth seen); 1.00x its floor of 0.198 ms "
                         "(100 % of that ceiling)")
    assert ws.endswith("BF16 tensor roof (FP16 cuBLAS): 1.05x its floor of 0.189 ms (95 % of that roof)")
    assert "fewer bytes" not in ws


def test_a_kernel_name_is_the_files_own_record_not_checked_against_todays_ladders():
    # A name is a label: the file's rates are checked against its own precision's roof, never
    # against which ladder today's kernel families put a kernel of that name in.
    d = json.loads(FP32.read_text())
    d["kernels"][0]["name"] = "wgmma_ws"
    doc = store.parse(d, "r.json")
    assert doc.kernels[0].name == "wgmma_ws" and doc.precision == "fp32"
    d["kernels"][0]["gflops"] *= 10  # but a rate the FP32 roof cannot reach is still refused
    with pytest.raises(UsageError, match=r"kernels\[0\]\.gflops"):
        store.parse(d, "r.json")


def test_compare_of_two_bf16_runs_is_titled_in_bf16_not_sgemm():
    r = CliRunner().invoke(app, ["compare", str(BF16), str(BF16)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    title = r.stdout.splitlines()[0]
    assert title == "before -> after: GEMM 4096x4096x4096 BF16 (TN, FP32 accumulate) on NVIDIA H200"


def test_a_kernel_above_the_measured_tensor_roof_is_told_the_ceiling_is_low():
    """At 8192³ the fastest wgmma rungs run above the measured BF16 ceiling (one cuBLAS FP16 product
    measured by device --measure): the ceiling is raised to the best rate seen, a line says so,
    and no kernel reads above its roof."""
    doc = store.load(Path(__file__).resolve().parent.parent / "plots" / "results-h200-bf16-8192-energy.json")
    [line] = [x for x in ceiling_lines(doc) if x.startswith("BF16 tensor ceiling")]
    assert line.startswith(f"BF16 tensor ceiling: cuBLAS FP16's {doc.device.measured_peaks_gflops['fp16_tensor']:,.0f} "
                           "GFLOP/s (device --measure timed no BF16 product then), below the 804,027 GFLOP/s wgmma_persistent reached on "
                           "the SMs its grid kept busy")
    assert "so the measurement is low; verdicts read " in line
    assert all(doc.verdict(k).times_floor >= 1 for k in doc.kernels if k.timed)
    assert not any("faster than" in x or "at its roof" in x for x in verdict_lines(doc))


def test_a_copy_of_a_run_reads_its_own_ceilings():
    from roofline import api

    doc = api.read(Path(__file__).resolve().parent.parent / "plots" / "results-h200-bf16.json")
    assert doc.roofs.roof("bf16_tensor").value == pytest.approx(779_451.6, abs=0.1)  # the best rung on its busy SMs
    slow = doc.model_copy(update={"kernels": doc.kernels[:2], "sweep": None})  # mma_sync and mma_ldmatrix alone
    assert slow.roofs.roof("bf16_tensor").value == pytest.approx(760_878, abs=1)  # cuBLAS BF16 at 8192^3, the best left


def test_the_h200_counters_of_2026_12_06_read_both_wgmma_rungs_on_their_tensor_roof():
    # the L2 measured at 11,342 GB/s and BF16's own product in the same visit: wgmma_ws moved its
    # counted L2 bytes at 7,894 GB/s, below it, and no ceiling is said to be low
    doc = store.load(Path(__file__).resolve().parent.parent / "plots" / "counters-h200-bf16.json")
    assert ceiling_lines(doc) == []
    lines = {line.split(":")[0].split(" (")[0]: line for line in verdict_lines(doc)}
    assert lines["wgmma_ws"].startswith("wgmma_ws: BF16 tensor-bound (measured); 1.05x its floor of 0.188 ms")
    assert lines["wgmma_persistent"].startswith("wgmma_persistent (128x256 block tile): BF16 tensor-bound (measured); "
                                                "1.02x its floor")
