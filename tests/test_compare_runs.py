"""Two run files compared by the one engine (`analysis.compare.compare_work`): what a run adds to
each kernel's change (speedup, registers, the two-roof reading and the move toward it), the
reference, the kernels in both files not timed in both, and the tables and chart that show them."""

import json
from pathlib import Path

import pytest
from conftest import make_doc, set_rate

from roofline.analysis.compare import Delta, Untimed, compare_work
from roofline.errors import UsageError
from roofline.render.changes import change_tables
from roofline.results import store

PLOTS = Path(__file__).resolve().parent.parent / "plots"


def test_a_faster_run_kernel_moves_closer_to_its_floor_and_the_chart_shows_the_reference(tmp_path):
    from roofline.render import compare_chart

    before, after = make_doc(), make_doc()
    set_rate(after["kernels"][5], 30_000.0)
    cmp = compare_work(store.parse(before), store.parse(after))
    d = cmp.kernels[5]
    assert d.roof_move == "closer" and d.speedup == pytest.approx(1.2) and d.registers == (64, 64)
    assert d.floors[0].times_floor == pytest.approx(1.2 * d.floors[1].times_floor)
    # none below its floor: gmem_coalescing's GMEM requests are its L1's, set aside at the L2
    assert {c.roof_move for c in cmp.kernels if c is not d} == {"same"}
    assert cmp.in_both == cmp.kernels and cmp.reference_speedup == pytest.approx(1.0)
    assert cmp.to_dict()["reference_speedup"] == pytest.approx(1.0)
    svg = compare_chart.draw_moves(cmp, tmp_path / "c.svg").read_text()
    assert "cublas (reference)" in svg and "-17 %" in svg  # 1 / 1.2 - 1


def test_runs_of_different_problems_are_refused_unless_forced():
    before, small = store.parse(make_doc()), store.parse(make_doc(n=1024))
    with pytest.raises(UsageError, match="different problems"):
        compare_work(before, small)
    cmp = compare_work(before, small, force=True)
    assert cmp.notes[0].startswith("different problems") and cmp.problems == (before.problem.problem,
                                                                              small.problem.problem)


def test_two_sizes_on_one_gpu_are_read_per_flop(tmp_path):
    # the H100's FP32 ladder with counters at 2048^3 and 4096^3: 8x the FLOPs, so every time grows
    # about 8x; read per FLOP, split_k ran faster (47 -> 48.9 TFLOP/s) and its DRAM bytes per FLOP
    # grew by what the 8x FLOPs over 4x the footprint give, not by the +996 % of the raw bytes
    load = lambda name: store.load(PLOTS / name)  # noqa: E731
    cmp = compare_work(load("counters-h100-fp32-2048.json"), load("counters-h100-fp32-4096.json"), force=True)
    d = next(d for d in cmp.kernels if d.label == "split_k")
    assert d.per_flop and d.time_change > 6 and d.slowdown == pytest.approx(d.before_gflops / d.after_gflops - 1)
    assert d.reading == "faster" and d.slowdown < 0
    dram = next(lc for lc in d.shown_levels if lc.level == "dram")
    assert dram.change > 9 and d.level_change(dram) == pytest.approx((dram.change + 1) * d.before_gflops * d.before_ms
                                                                     / (d.after_gflops * d.after_ms) - 1)
    assert any("the reading compares the time of a FLOP" in n for n in cmp.notes)
    title = change_tables(cmp)[-1].title
    assert "runs (2048x2048x2048 -> 4096x4096x4096, read per FLOP)" in str(title)
    assert d.to_dict()["bytes"]["dram"]["change_per_flop"] == pytest.approx(d.level_change(dram))
    # the chart draws the same reading: each arrow the time of a FLOP after over before
    from roofline.render import compare_chart
    svg = compare_chart.draw_moves(cmp, tmp_path / "c.svg").read_text()
    assert "time of a FLOP after / time before" in svg and "per FLOP;" in svg


def test_a_sweep_compares_with_a_run_at_the_size_they_share():
    # the committed BF16 sweep (2048, 4096, 8192 cubed) against its 4096^3 counters run on the same
    # H200: read at 4096^3, where the sweep keeps mma_sync's rate, 78,892 GFLOP/s, so its time is
    # 2 * 4096^3 / 78,892e6 = 1.742 ms, and cuBLAS's 750,934 GFLOP/s (0.1830 ms)
    sweep = store.load(PLOTS / "results-h200-bf16.json")
    run = store.load(PLOTS / "counters-h200-bf16.json")
    cmp = compare_work(sweep, run)
    assert cmp.problems == (run.problem.problem, run.problem.problem)
    mma = next(d for d in cmp.kernels if d.label == "mma_sync")
    assert mma.before_ms == pytest.approx(1.7421, abs=1e-4) and mma.after_ms == pytest.approx(1.741, abs=1e-3)
    assert cmp.notes[0].startswith("the first file holds a size sweep: compared at 4096x4096x4096 bf16, one of its "
                                   "sizes")
    assert cmp.reference_speedup == pytest.approx(0.1830 / run.reference.time_ms, rel=1e-3)
    from roofline.render.changes import _reading
    assert _reading(next(d for d in cmp.kernels if d.label == "mma_pipeline")) == "noise (within 2 %)"
    # the sweep read at 4096^3 keeps the whole file's ceilings (BF16 at the best rate any size saw), so
    # each kernel binds where show's table of sizes says it does (mma_pipeline: SMEM 3.22)
    point = next(p for p in sweep.sweep if p.problem.problem == run.problem.problem)
    assert {d.label: d.binding[0] for d in cmp.kernels} == {  # the five kernels both files ran
        d.label: sweep.sweep_verdict(point, d.label).binding.level for d in cmp.kernels}
    assert next(d for d in cmp.kernels if d.label == "mma_pipeline").binding[0] == "SMEM"
    # against the counters run of the day before (its L2 ceiling measured low, 7,322 GB/s): mma_pipeline's
    # time moved within its noise, but its roof did (the model's bytes against this visit's ceilings leave
    # SMEM the highest floor; its counted L2 bytes at the other's best rate seen, 8,120 GB/s, bind): the
    # reading says so, and that the two read different bytes. wgmma_ws binds at two levels too, but one
    # reading names the other's roof within 5 %: a tie the ceilings cannot order, not a move
    older = store.load(Path(__file__).resolve().parent / "fixtures" / "counters-h200-bf16-20261205.json")
    by = {d.label: d for d in compare_work(sweep, older).kernels}
    pipeline, ws = by["mma_pipeline"], by["wgmma_ws"]
    assert pipeline.is_noise and _reading(pipeline).endswith(
        "; the binding roof moved, SMEM -> L2 (read from the model bytes before, the counted after)")
    assert ws.binding == ("BF16 tensor", "L2") and ws.tied and ws.binding_moved is None
    assert _reading(ws) == "noise (within 3.02 %)"
    # a size the sweep does not hold is still a different problem, and the refusal gives the sweep's sizes
    with pytest.raises(UsageError, match=r"different problems \(8192x8192x8192 and 3000x3000x3000; the first file's "
                                         r"sweep holds 128x128x128, 256x256x256, .*, 8192x8192x8192\)"):
        compare_work(store.load(PLOTS / "sweep-h200.json"), store.parse(make_doc(n=3000)))
    # of another precision, whatever the sizes: said so, and not offered --across-sizes
    with pytest.raises(UsageError, match=r"^the files solve different problems \(in fp32 and in bf16\): each is read "
                                         "against its own precision's roof; compare runs of one precision$"):
        compare_work(store.load(PLOTS / "results-h200.json"), sweep, force=True)


def test_a_sweep_point_that_fails_a_runs_checks_is_refused_in_one_line():
    # an empty kernel recorded at 1 ms: the sweep's 128^3 launches (microseconds) could not have run
    # faster than a fifth of it; the whole file passes (its largest size runs for ms), the point does not
    from roofline.results.sweep_point import at_size, sizes
    doc = json.loads((PLOTS / "sweep-h200.json").read_text())
    doc["device"]["launch_latency_ms"] = 1.0
    sweep = store.parse(doc)
    with pytest.raises(UsageError, match=r"^the sweep's figures at 128x128x128 do not make a run: device.launch_latency_ms"):
        at_size(sweep, sizes(sweep)[0])


def test_a_kernel_failed_in_one_run_is_in_both_untimed_gone_and_in_the_run_table():
    failed = store.parse(make_doc(failed=("register_strip", "async_copy")))
    cmp = compare_work(store.parse(make_doc()), failed)
    untimed = [c for c in cmp.in_both if isinstance(c, Untimed)]
    assert [u.label for u in untimed] == ["register_strip", "async_copy"] and cmp.gone == ["register_strip", "async_copy"]
    assert all(isinstance(c, Delta) for c in cmp.in_both if c not in untimed) and len(cmp.in_both) == 14
    u = untimed[0]
    assert u.after_ms is None and u.floors[1] is None and u.speedup is None and u.roof_move == "-"
    assert u.before_ms is not None and u.floors[0] is not None
    from rich.console import Console

    console = Console(width=140, record=True)
    for table in change_tables(cmp, 140):  # the runs side by side, then what changed
        console.print(table)
    text = console.export_text()
    assert text.startswith("before -> after: SGEMM 4096x4096x4096 on H200") and "what changed, run" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("register_strip"))
    assert row.split()[2:4] == ["-", "-"] and "-> failed" in row


def _in_rounds(doc: dict, kernel_ms: dict[str, float], drift: float = 1.0) -> dict:
    """`doc` as if timed in 20 rounds with cuBLAS (at its own time): the kernels of `kernel_ms` at
    those times, each time with a small alternating jitter (+/-0.1 %), and every time (kernels and
    reference) scaled by `drift` (a device that ran slower)."""
    n = 20
    ref_ms = doc["reference"]["time_ms"]

    def timing(ms):
        return {"samples_ms": [ms * drift * (1 + (0.001 if r % 2 else -0.001)) for r in range(n)], "warmup": 3,
                "rounds": list(range(n)), "sm_clock_mhz": [1980] * n, "reasons": [""] * n, "power_w": [500.0] * n,
                "throttled": [False] * n, "full_clock_share": 0.97}
    doc["reference"]["timing"] = timing(ref_ms)
    doc["reference"]["time_ms"] = ref_ms * drift
    doc["reference"]["gflops"] /= drift
    doc["timed_in_rounds"] = {"rounds": n, "burst": 1, "top_clock_mhz": 1980, "full_clock_share": 0.97, "seconds": 1.0}
    for k in doc["kernels"]:
        if k.get("time_ms") is None:
            continue
        ms = kernel_ms.get(k["name"], k["time_ms"])
        set_rate(k, k["model"]["flops"] / (ms * drift) / 1e6)
        if k["name"] in kernel_ms:
            k["timing"] = timing(ms)
        else:
            k.pop("timing", None)
    return doc


def test_paired_percentages_read_a_device_that_drifted_as_the_same_and_a_real_gain_as_higher():
    """Both files timed in rounds: the after run's device is 1 % slower for everyone, so every time
    moved by 1 % but each kernel's paired %cuBLAS did not ('same'); one kernel 5 % faster as well
    reads 'higher', with both percentages and intervals in --json."""
    names = {"register_tiling_2d": 4.7, "vectorized": 4.24}
    before = store.parse(_in_rounds(make_doc(), names))
    after = store.parse(_in_rounds(make_doc(), {**names, "vectorized": 4.24 / 1.05}, drift=1.01))
    ref = before.reference.time_ms
    cmp = compare_work(before, after)
    by = {d.label: d for d in cmp.kernels}
    tiling, vec = by["register_tiling_2d"], by["vectorized"]
    assert tiling.time_change == pytest.approx(0.01, rel=1e-3) and tiling.reference_move == "same"
    assert tiling.vs_reference[0].pct == pytest.approx(100 * ref / 4.7, rel=1e-3)
    assert vec.reference_move == "higher" and vec.vs_reference[1].pct == pytest.approx(1.05 * 100 * ref / 4.24, rel=1e-3)
    doc = vec.to_dict()
    assert doc["pct_move"] == "higher" and len(doc["pct_ci95"]) == 2 and doc["pct_ci95"][0][0] <= doc["pct_of_reference"][0]
    assert all(d.vs_reference is None for d in cmp.kernels if d.label not in names)  # not timed in rounds: no pairing
    first = change_tables(cmp, 300)[0]
    rows = dict(zip(first.columns[0].cells, zip(*(c.cells for c in first.columns if c.header in ("%cuBLAS", "moved (CI95)")))))
    pb, pa = tiling.vs_reference
    assert f"{pb.pct:.1f}" == f"{pa.pct:.1f}" and rows["register_tiling_2d"] == (f"{pb.pct:.1f}", "same")
    pb, pa = vec.vs_reference
    assert rows["vectorized"] == (f"{pb.pct:.1f} -> {pa.pct:.1f}", f"higher, {pa.pct - pb.pct:+.2g} points")
    assert rows["naive"] == ("-", "-") and rows["cublas"] == ("100.0", "-")


def test_percentages_that_round_alike_but_moved_get_the_decimals_that_show_it():
    from roofline.model.timing import Pairing
    from roofline.render.tables import _joules, _pct_move

    moved = (Pairing(9.679, (9.67, 9.69), 20), Pairing(9.714, (9.70, 9.72), 20))
    assert _pct_move(moved, "higher") == "9.68 -> 9.71"
    assert _pct_move(moved, "same") == "9.7"  # the intervals overlap: one figure
    assert [_joules(j) for j in (1.2, 1.22, 12.94, 61.014, 123.4)] == ["1.20", "1.22", "12.9", "61.0", "123"]


def test_a_kernel_at_another_template_in_each_file_is_named_and_across_gpus_the_gate_says_further():
    # the H200's file of 2026-12-05 (kept as a fixture) holds wgmma_tma before it took GROUP, as one
    # warpgroup's 128 x 128 tile, the H100 file the two-warpgroup 128 x 256 rung: the pairing says the
    # kernel changed too; across GPUs the gate reads fractions of a roof, not times
    from pathlib import Path

    from roofline import api
    from roofline.analysis.check import check
    from roofline.render.changes import check_lines

    plots = Path(__file__).resolve().parent.parent / "plots"
    fixtures = Path(__file__).resolve().parent / "fixtures"
    h200 = api.read(fixtures / "counters-h200-bf16-8192-20261205.json")
    h100 = api.read(plots / "counters-h100-bf16-8192.json")
    c = compare_work(h200, h100)
    assert any("wgmma_tma (wgmma_tma<bf16,128,128,64,4> -> wgmma_tma<bf16,128,256,64,4,8>)" in n for n in c.notes)
    # the peaks that differ, the run's own BF16 tensor roof first (the same 989.4 T on both SXM cards)
    assert any(n.startswith("peak BF16 tensor 989,430 -> 989,430 GFLOP/s (1.00x), peak FP32") and
               "peak DRAM 4,814 -> 3,352 GB/s (0.70x)" in n for n in c.notes)
    # the H200 record reads L2-bound (23.2 GB counted at 15,354 GB/s), the H100's BF16 tensor-bound: 2 x
    # 8192^3 FLOP at 989.43 T on the busy SMs (2048 tiles in 15.5 waves of 132: 0.970 of them) is 1.146 ms
    # of its 1.597 ms; the fractions are of two roofs, and the reading says so
    tma = next(d for d in c.kernels if d.label == "wgmma_tma")
    assert tma.binding == ("L2", "BF16 tensor") and tma.binding_moved == "L2 -> BF16 tensor"
    assert tma.before_fraction == pytest.approx(23.1679e9 / 15354e9 / 2.27504e-3, rel=2e-3)
    busy = (2048 / 132) / 16
    assert tma.after_fraction == pytest.approx(2 * 8192**3 / (989.43e12 * busy) / 1.5966e-3, rel=2e-3)
    from roofline.render.changes import _reading
    assert "the binding roof moved, L2 -> BF16 tensor" in _reading(tma)
    assert tma.fraction_move == "66.3 % -> 71.8 %"  # shares, never a relative change read as points
    ws = next(d for d in c.kernels if d.label == "wgmma_ws")
    assert ws.binding_moved is None
    # BF16 tensor at 989,430 GFLOP/s on both SXM cards: the move is not blamed on the GPUs' roofs
    assert not ws.roofs_differ and "differs between the GPUs" not in _reading(ws)
    from dataclasses import replace as swap
    dram = swap(ws, binding=("DRAM", "DRAM"), roof_values=(4814.0, 3352.3))  # a DRAM-bound kernel: H200 -> H100
    assert dram.roofs_differ and "(its DRAM roof differs between the GPUs)" in _reading(dram)
    # on one GPU the fraction is show's verdict's (measured ceilings), the first table the datasheet's: said
    same = compare_work(api.read(plots / "results-h200-bf16-8192-run1.json"),
                        api.read(plots / "results-h200-bf16-8192-run3.json"))
    assert any(n.startswith("'of roof' reads each kernel as show's verdict does") for n in same.notes)
    assert not any(n.startswith("'of roof'") for n in c.notes)
    assert any(n.startswith("the first table's 'bound x' and 'roof' read the model's bytes") for n in c.notes)
    lines = check_lines(check(h200, h100, 0.05))  # the H200 file gated against the H100 one
    assert lines[0].startswith("further: wgmma_tma: 71.8% -> 66.3% of its binding roof") and not any(
        ln.startswith("slower") for ln in lines)


def test_a_paired_move_inside_the_noise_band_reads_same_in_both_tables():
    """Intervals that do not overlap but a move smaller than the kernel's noise band (here a 0.5 %
    gain against a 1.1 % range of launches, one slow launch in twenty): 'same' in the first table,
    as 'noise' in the second, never 'higher' beside 'noise'."""

    def with_one_slow_launch(doc: dict) -> dict:
        k = next(k for k in doc["kernels"] if k["name"] == "vectorized")
        k["timing"]["samples_ms"][0] *= 1.01
        return doc
    before = store.parse(with_one_slow_launch(_in_rounds(make_doc(), {"vectorized": 4.24})))
    after = store.parse(with_one_slow_launch(_in_rounds(make_doc(), {"vectorized": 4.24 / 1.005})))
    vec = next(d for d in compare_work(before, after).kernels if d.label == "vectorized")
    (pb, pa) = vec.vs_reference
    assert pa.ci95[0] > pb.ci95[1]  # the intervals alone would say 'higher'
    assert vec.is_noise and vec.noise > 0.001
    assert vec.reference_move == "same" and vec.to_dict()["pct_move"] == "same"


def test_a_kernel_recorded_before_a_parameter_was_added_is_the_same_template():
    # split_k recorded with nine parameters (sweep-h200) is split_k<..., REDUCERS = 1>: compared with a
    # file that spells the tenth, it ran the same template; another REDUCERS is another kernel
    from roofline import api
    from roofline.analysis.compare import _spelled

    plots = Path(__file__).resolve().parent.parent / "plots"
    assert _spelled("split_k<128,256,16,32,128,8,16,3,1>") == "split_k<128,256,16,32,128,8,16,3,1,1>"
    assert _spelled("split_k<128,256,16,32,128,8,16,3,4,4>") != _spelled("split_k<128,256,16,32,128,8,16,3,4>")
    assert _spelled("my_gemm<1,2>") == "my_gemm<1,2>"  # not a ladder kernel: as it is
    c = compare_work(api.read(plots / "sweep-h200.json"), api.read(plots / "sweep-h100.json"))
    assert not any("ran another template" in n for n in c.notes)


def test_a_reading_says_where_the_reference_moved_with_the_kernel():
    # the H200's BF16 ladder at 8192^3, timed in two visits (run1, 2026-12-06; the --energy run before it):
    # cuBLAS itself ran 3.3 % faster in the second file, so wgmma_ws's faster time is the device's (its % of
    # cuBLAS held), and mma_ldmatrix's same time is a lower % of it
    from roofline.render.changes import _reading

    before, after = (store.load(PLOTS / f) for f in ("results-h200-bf16-8192-run1.json",
                                                      "results-h200-bf16-8192-energy.json"))
    deltas = {d.label: d for d in compare_work(before, after).kernels}
    ws, ldm = _reading(deltas["wgmma_ws"]), _reading(deltas["mma_ldmatrix"])
    assert ws.startswith("faster: ") and ws.endswith("its % of the reference held: the reference moved with it "
                                                      "(the device, not the kernel)")
    assert ldm.startswith("noise (within 3.59 %)") and ldm.endswith("its % of the reference is lower: the "
                                                                     "reference's own time moved")


def test_a_cause_at_a_level_that_does_not_bind_says_so():
    # the FP32 ladder at 4096^3 and 8192^3 read per FLOP: gmem_coalescing's DRAM bytes per FLOP rose 7.7 %,
    # but the L1 binds it (its L1/shared bytes per FLOP did not move): the cause names DRAM and says it is
    # not the binding level; where the binding level's bytes moved, it is named alone
    before, after = (store.load(PLOTS / f) for f in ("counters-h200-fp32-4096.json", "counters-h200-fp32-8192.json"))
    deltas = {d.label: d for d in compare_work(before, after, force=True).kernels}
    gmem = deltas["gmem_coalescing"]
    assert gmem.binding == ("L1", "L1")
    assert gmem.cause == ("DRAM bytes per FLOP +7.7 %, FLOP/s -5.8 % (not the level that binds it, L1, whose bytes "
                          "did not move as much)")


def test_a_cause_names_the_binding_level_of_the_side_that_held_the_kernel_back():
    from dataclasses import replace as swap

    before, after = (store.load(PLOTS / f) for f in ("counters-h200-fp32-4096.json", "counters-h200-fp32-8192.json"))
    gmem = next(d for d in compare_work(before, after, force=True).kernels if d.label == "gmem_coalescing")
    # the binding level's bytes moved that way: named alone (DRAM bound after the slowdown)
    assert swap(gmem, binding=("L1", "DRAM")).cause == "DRAM bytes per FLOP +7.7 %, FLOP/s -5.8 %"
    # a compute roof binds after the slowdown: the bytes that moved are named, and that FP32 binds it
    assert swap(gmem, binding=("L1", "FP32")).cause.endswith("(FP32 binds it, not these bytes)")
    # the L1 binds after but its bytes were not counted alike in the two files: said so, not 'did not move'
    assert swap(gmem, binding=("L1", "L1"), levels=[lc for lc in gmem.levels if lc.level not in ("l1", "smem")]
                ).cause.endswith("(not the level that binds it, L1, whose bytes the two files do not count alike)")
    assert swap(gmem, binding=(None, None)).cause == "DRAM bytes per FLOP +7.7 %, FLOP/s -5.8 %"
    # a compute roof binds on both sides: the bytes that moved are named, and that they do not bind
    assert swap(gmem, binding=("FP32", "FP32")).cause.endswith("FLOP/s -5.8 % (FP32 binds it, not these bytes)")


def test_across_sizes_a_reference_that_moved_with_the_kernel_is_the_problems_doing():
    from roofline.render.changes import _reading

    before, after = (store.load(PLOTS / f) for f in ("sweep-h200.json", "shapes-h200.json"))
    deltas = {d.label: d for d in compare_work(before, after, force=True).kernels}
    said = _reading(deltas["autotuned"])
    assert said.endswith("its % of the reference held: the reference's rate moved with it (the problem's size, "
                         "not the kernel)") and "device" not in said
    # naive: slower per FLOP, yet a higher % of cuBLAS: the reading says why the two tables differ
    assert _reading(deltas["naive"]).endswith("its % of the reference is higher: the reference's own rate moved more")
