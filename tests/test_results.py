"""Results files: the schema's checks with field paths, schema 1 migration, atomic writes,
merging, conversion from a run, and Nsight Compute's CSV."""

import json
import lzma
import os
import re
import stat
from pathlib import Path

import pytest
from conftest import FIXTURES, make_doc, set_rate
from typer.testing import CliRunner

from roofline.cli import app

from roofline.errors import RunError, UsageError
from roofline.ladder import upgrade
from roofline.ladder.families import BY_NAME
from roofline.measure.runner import Compiled, KernelRun, RunOutput, check_fits
from roofline.model.timing import Timing
from roofline.model.arch import parse_arch
from roofline.model.device import from_preset
from roofline.model.occupancy import calculate
from roofline.model.problem import Problem
from roofline.model.waves import Waves
from roofline.model.traffic import CountedTraffic
from roofline.model.verify import Verification
from roofline import collect
from roofline.results import convert, store
from roofline.results.schema import json_schema


def write(tmp_path, doc, name="r.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_round_trip(tmp_path, doc):
    first = store.parse(doc)
    path = tmp_path / "r.json"
    store.save(first, path)
    assert store.load(path) == first
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_interrupted_write_keeps_the_old_file(tmp_path, doc, monkeypatch):
    path = tmp_path / "r.json"
    store.save(store.parse(doc), path)
    before = path.read_text()

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken)
    with pytest.raises(RunError, match="cannot write .*r.json: No space left on device"):
        store.save(store.parse(make_doc(1024)), path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_files_get_the_usual_permissions(tmp_path, doc):
    old = os.umask(0o022)
    try:
        store.save(store.parse(doc), tmp_path / "r.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o644


@pytest.mark.parametrize("mutate, needle", [
    (lambda d: d.update(schema=5), "schema 5 is not supported; expected 4 (or 1 to 3); re-create it with roofline run"),
    (lambda d: d.pop("reference"), "reference: missing"),
    (lambda d: d["device"].pop("peak_dram_gbps"), "device.peak_dram_gbps: missing"),
    (lambda d: d["device"].update(peak_fp32_gflops=-1), "device.peak_fp32_gflops: Input should be greater than 0, got -1"),
    (lambda d: d["kernels"][3].update(gflops="fast"), 'kernels[3].gflops: Input should be a valid number, got "fast"'),
    (lambda d: d["kernels"][3].pop("model"), "kernels[3].model: missing"),
    (lambda d: d["kernels"][0]["model"].update(flops=None), "kernels[0].model.flops: Input should be a valid number"),
    (lambda d: d["kernels"][2].update(verified="false"), "kernels[2].verified: Input should be a valid boolean"),
    (lambda d: d["problem"].update(m="4096"), 'problem.m: Input should be a valid integer, got "4096"'),
    (lambda d: d["kernels"][0].update(registers=300), "kernels[0].registers: Input should be less than or equal to 255"),
    (lambda d: d["kernels"][0]["occupancy"].update(limiters=None), "kernels[0].occupancy.limiters: Input should be a valid"),
    (lambda d: d.update(kernels={}), "kernels: Input should be a valid array"),
    (lambda d: d["kernels"].append(dict(d["kernels"][0])), "kernels[14].name: 'naive' appears twice"),
    (lambda d: d["kernels"][0]["model"].update(flops=5), "kernels[0].model.flops: 5, but the problem's 2*M*N*K is 1.37"),
    (lambda d: d["problem"].update(m=1), "reference.gflops: 50,000 disagrees with the 12.2 the file's other figures give"),
    (lambda d: d["kernels"][3].update(time_ms=1e-9), "kernels[3].gflops: 17,000 disagrees with the 137,438,953,472,000"),
    (lambda d: d["kernels"][3].update(pct_of_reference=99.0), "kernels[3].pct_of_reference: 99 disagrees with the 34"),
    (lambda d: d["kernels"][3]["model"].update(arithmetic_intensity=1000),
     "kernels[3].model.arithmetic_intensity: 1,000 disagrees with the 16"),
    (lambda d: d["kernels"][3]["occupancy"].update(occupancy=1.7), "kernels[3].occupancy.occupancy: Input should be less"),
    (lambda d: d["kernels"][3]["occupancy"].update(limiters=["cheese"]), "kernels[3].occupancy.limiters[0]: Input should"),
    (lambda d: d["kernels"][3].update(registers=128), "kernels[3].occupancy.registers_per_thread: 64, but the kernel's is 128"),
    (lambda d: d["kernels"][3].update(rel_error=0.5), "kernels[3].verified: true, but its relative error 0.5"),
    (lambda d: d["kernels"][3].update(tile_source="magic"), "kernels[3].tile_source: Input should be"),
    (lambda d: d["kernels"][3].update(name="cublas"), "kernels[3].name: 'cublas' is the reference's name"),
    (lambda d: d["kernels"][3].update(name="two\nlines"), "kernels[3].name: String should match pattern"),
    (lambda d: d["kernels"][2].update(name=[]), "kernels[2].name: Input should be a valid string"),  # met before the check
    (lambda d: d["device"].update(compute_capability="banana"), "device.compute_capability: 'banana' is not a compute"),
    (lambda d: d["device"].update(measured_fp32_gflops=1e6),
     "device.measured_fp32_gflops: 1,000,000 is 14.9x its peak_fp32_gflops of 66,908, more than anything sustains"),
    (lambda d: d["reference"].update(tf32=True), "reference.tf32: true, but the problem is float32"),
    (lambda d: d["problem"].update(dtype="float64"), "problem.dtype: Input should be 'float32'"),
    (lambda d: d["kernels"][5].update(gflops=10_036_000.0), "kernels[5].gflops: Input should be less than or equal"),
    (lambda d: d["kernels"][5].update(gflops=2_000_000.0),
     "kernels[5].gflops: 2,000,000 GFLOP/s is 29.9x the device's FP32 peak of 66,908 GFLOP/s, which no kernel"),
    (lambda d: d["device"].update(peak_fp32_gflops=0.001, fp32_cores=None, peaks_gflops=None, measured_fp32_gflops=None),
     "reference.gflops: 50,000 GFLOP/s is 5e+07x the device's FP32 peak of 0.001 GFLOP/s"),
    (lambda d: d.clear(), "not a roofline results file (no schema field)"),
])
def test_a_bad_file_is_refused_in_one_line_naming_the_field(tmp_path, doc, mutate, needle):
    mutate(doc)
    with pytest.raises(UsageError) as exc:
        store.load(write(tmp_path, doc))
    message = str(exc.value)
    assert message.startswith(f"{tmp_path / 'r.json'}: ") and "\n" not in message
    assert needle in message


def test_a_text_file_is_sent_to_profile_import_only_when_it_reads_as_nsight_compute(tmp_path):
    import shutil

    fixtures = Path(__file__).parent / "fixtures" / "ncu"
    notes = tmp_path / "notes.txt"
    notes.write_text("grade 2.56 s, do_bench 0.42 s\n")
    with pytest.raises(UsageError) as raised:
        store.load(notes)
    assert "not valid JSON" in str(raised.value) and "profile --import" not in str(raised.value)
    for name in ("cupy-h200-base.csv", "transformer-h200-raw.csv"):
        renamed = tmp_path / (name + ".txt")  # what the file holds decides, not its name
        shutil.copy(fixtures / name, renamed)
        with pytest.raises(UsageError, match=f"read with roofline profile --import {re.escape(str(renamed))}"):
            store.load(renamed)
    report = tmp_path / "full.ncu-rep"  # a binary report (first bytes 'NVR'): sent to profile --import too
    report.write_bytes(lzma.decompress((fixtures / "corpus" / "llama" / "full.ncu-rep.xz").read_bytes()))
    with pytest.raises(UsageError, match=f"an Nsight Compute report .*read with roofline profile --import "
                                         f"{re.escape(str(report))}"):
        store.load(report)
    cut = tmp_path / "trace.json"  # one long line, cut short, naming both of a CSV header's cells
    cut.write_text('[{"name": "ID", "args": {"Kernel Name": "k"}},' + ",".join(['{"x": 1}'] * 30000))
    with pytest.raises(UsageError, match="not valid JSON"):
        store.load(cut)


def test_missing_and_corrupt_files(tmp_path):
    with pytest.raises(UsageError, match="no such results file; create one with `roofline run --all`, or a profile"):
        store.load(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": 2, "device": ')
    with pytest.raises(UsageError, match=r"not valid JSON \(line 1, column 25"):
        store.load(bad)
    nan = make_doc()
    nan["kernels"][0]["gflops"] = float("nan")  # json writes NaN, which Python's reader takes
    with pytest.raises(UsageError, match=r"kernels\[0\].gflops: NaN, not a number; the file looks hand-edited"):
        store.load(write(tmp_path, nan, "nan.json"))
    (tmp_path / "empty.json").write_text(" \n")
    with pytest.raises(UsageError, match="empty.json: the file is empty, so not a results file"):
        store.load(tmp_path / "empty.json")
    arr = write(tmp_path, [1, 2], "arr.json")
    with pytest.raises(UsageError, match="not a roofline results file"):
        store.load(arr)


def test_a_byte_order_mark_is_read_past(tmp_path):
    # a file saved by an editor that starts UTF-8 with a BOM reads as the same file
    committed = FIXTURES / "results-h200.json"
    marked = tmp_path / "bom.json"
    marked.write_bytes(b"\xef\xbb\xbf" + committed.read_bytes())
    assert store.load(marked).reference.gflops == store.load(committed).reference.gflops


def test_schema_1_files_are_migrated():
    doc = store.load(FIXTURES / "results-schema1.json")
    assert doc.schema_version == 4
    assert doc.read_notes == [f"{FIXTURES / 'results-schema1.json'}: written as schema 1, read as schema 4"]
    k = {k.name: k for k in doc.kernels}["register_tiling_2d"]
    # Figures kept from the schema 1 file (an H200 run): 4,658 ms median, 128 registers.
    assert (round(k.time_ms, 3), k.registers, k.nan_or_unwritten_elements) == (4.658, 128, 0)
    assert k.model.smem_bytes == 4 * 1024 * 4096 * 4096  # added by the migration
    assert k.occupancy.reserved_smem_bytes == 1024  # sm_90 reserves 1 KB per block
    raw = json.loads((FIXTURES / "results-schema1.json").read_text())
    assert raw["kernels"][5]["verdict"]["times_floor"] == pytest.approx(doc.verdict(k).times_floor)


def test_the_json_schema_is_published():
    s = json_schema()
    assert s["title"] == "Results" and "kernels" in s["required"]
    assert s["properties"]["schema"]["const"] == 4
    assert "model" in s["$defs"]["SweepKernel"]["properties"]  # schema 4: each size's model recorded
    assert {"KernelRecord", "DeviceSpec", "Occupancy", "ModelFigures", "Timing"} <= set(s["$defs"])


def test_merge_runs_of_different_kernels(doc):
    a, b = store.parse(doc), store.parse(doc)
    a = a.model_copy(update={"kernels": a.kernels[:2]})
    b = b.model_copy(update={"kernels": [b.kernels[1].model_copy(update={"gflops": 1234.0}), b.kernels[2]]})
    notes = []
    merged = store.merge([a, b], ["a", "b"], notes)
    assert [k.name for k in merged.kernels] == ["naive", "gmem_coalescing", "smem_tiling"]
    assert merged.kernels[1].gflops == 1234.0
    assert notes == ["b: gmem_coalescing is in an earlier results file too; read from b, the last given"]
    other = store.parse(make_doc(1024))
    with pytest.raises(UsageError, match=r"b solves 1024x1024x1024 and a 4096x4096x4096: runs read together merge into one "
                                         r"table and chart of one problem; .* roofline compare a b --across-sizes"):
        store.merge([a, other], ["a", "b"])


def test_problem_that_does_not_fit_is_refused_before_allocating():
    with pytest.raises(UsageError, match="needs 32.0 GB of GPU memory but only 16.0 GB is free"):
        check_fits(Problem(40_000, 40_000, 40_000), 16 * 10**9)  # 5 x 6.4 GB of float32
    check_fits(Problem(4096, 4096, 4096), 16 * 10**9)  # 336 MB: fine


def fake_run(problem=Problem(256, 256, 256)):
    """A RunOutput as the runner returns it: one kernel timed, one that failed verification,
    one that did not compile."""
    dev = from_preset("h200")
    specs = [BY_NAME[n].spec() for n in ("smem_tiling", "vectorized", "warptiling")]
    compiled = [Compiled(64, 8192, 0, 0, calculate(parse_arch("sm_90"), 64, s.threads_per_block, 8192), 4)
                for s in specs]
    ok = Verification(True, 2e-7, 0)
    bad = Verification(False, None, 128 * 256, 0, 128, reason="32,768 elements NaN or unwritten, 128 rows never written")
    runs = [KernelRun(specs[0], specs[0].model.figures(problem), compiled[0], ok, Timing((0.02,) * 20, 3), (1980, 1980)),
            KernelRun(specs[1], specs[1].model.figures(problem), compiled[1], bad,
                      error="vectorized: failed verification: 32,768 elements NaN or unwritten, 128 rows never written"),
            KernelRun(specs[2], specs[2].model.figures(problem), error="warptiling<...>: compile failed: x")]
    return RunOutput(dev, problem, Timing((0.01,) * 20, 3), (1980, 1980), runs)


def test_a_run_becomes_a_document():
    doc = collect.from_run(fake_run())
    ok, bad, broken = doc.kernels
    # 2 x 256^3 FLOP in 0.02 ms is 1,677.7 GFLOP/s; cuBLAS took half the time.
    assert ok.gflops == pytest.approx(1677.72, abs=0.01) and ok.pct_of_reference == pytest.approx(50.0)
    assert (ok.verified, ok.registers, ok.tile_source, ok.template) == (True, 64, "ladder", "smem_tiling<32>")
    assert (bad.verified, bad.gflops, bad.nan_or_unwritten_elements) == (False, None, 32_768)
    assert (broken.registers, broken.occupancy, broken.verified) == (None, None, False)
    # smem_tiling at 256^3: an 8 x 8 grid of 32 x 32 tiles; 64 registers x 1024 threads: one block per SM
    assert ok.waves == Waves.of(64, 132, 132) and ok.waves.utilization == pytest.approx(64 / 132)
    assert broken.waves is None  # not compiled: no occupancy, no waves
    assert doc.reference.gflops == pytest.approx(3355.44, abs=0.01)
    again = store.parse(store.dump(doc))  # what is written reads back the same
    assert again == doc


def test_counters_attach_by_name_not_position():
    doc = collect.from_run(fake_run())
    counted = CountedTraffic(dram_bytes=1000, l2_bytes=2000)
    out = convert.with_counters(doc, {"vectorized": counted})
    assert [k.counted for k in out.kernels] == [None, counted, None]


NCU_CSV = "\n".join([
    "==PROF== Connected to process 1234",
    '"ID","Process ID","Kernel Name","dram__bytes.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",'
    '"l1tex__t_bytes.sum","lts__t_bytes.sum","smsp__sass_data_bytes_mem_shared.sum",'
    '"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum","smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",'
    '"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"',
    '"","","","byte","","byte","byte","byte","inst","inst","inst"',
    '"0","1234","register_tiling_2d","401,110,000","274903434","4830000000","4410000000","23620000000","0",'
    '"68719476736","16777216"',
])


def test_ncu_csv_gives_the_counted_traffic():
    """`run --profile` reads its one-kernel report with the same reader as `roofline profile`."""
    from roofline.errors import UsageError
    from roofline import nsight
    from roofline.measure import counters

    c = counters.counted_from(nsight.pages.parse_csv(NCU_CSV).rows[0])
    assert c == CountedTraffic(dram_bytes=401_110_000, l2_bytes=4_410_000_000, l1_bytes=4_830_000_000,
                               smem_bytes=23_620_000_000, bank_conflicts=274_903_434,
                               fp32_flops=2 * 68_719_476_736 + 16_777_216)
    with pytest.raises(UsageError, match="ncu said: something broke"):
        nsight.pages.parse_csv("==ERROR== something broke\n")


def test_merged_files_must_share_one_reference(doc):
    a = store.parse(doc)
    other = make_doc()
    other["reference"]["time_ms"] *= 1.25
    other["reference"]["gflops"] /= 1.25
    for k in other["kernels"]:
        k.pop("pct_of_reference")
    with pytest.raises(UsageError, match=r"b: its cuBLAS reference \(40,000 GFLOP/s\) differs from a's \(50,000\)"):
        store.merge([a, store.parse(other)], ["a", "b"])


def test_files_whose_ceilings_were_measured_apart_are_not_merged_and_the_refusal_says_what_to_do():
    # two committed H200 runs of one size, each with the ceilings its own session measured (0.16 % apart)
    plots = Path(__file__).resolve().parents[1] / "plots"
    a, b = plots / "results-h200.json", plots / "user-kernel-h200.json"
    with pytest.raises(UsageError, match=r"user-kernel-h200.json: device measured_fp32_gflops differs .* \(each run "
                                         r"measured its own\): read each alone, or set them side by side with "
                                         r"roofline compare"):
        store.merge([store.load(a), store.load(b)], [str(a), str(b)])


def test_counted_bytes_no_gpu_moves_in_the_kernels_time_are_a_corrupt_file(tmp_path):
    # as an imported report is checked: naive's DRAM bytes edited to 1e13 in 275.6 ms (36 TB/s on a 4.8 TB/s H200)
    d = json.loads((Path(__file__).resolve().parents[1] / "plots" / "results-h200.json").read_text())
    k = next(k for k in d["kernels"] if k.get("measured"))
    k["measured"]["dram_bytes"] = 1e13
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(UsageError, match=r"kernels\[0\]\.measured\.dram_bytes: 10,000,000,000,000 bytes in 275\.6\d* ms "
                                         r"is 36,2\d\d GB/s, above the device's 4,814; the file looks corrupt"):
        store.load(tmp_path / "bad.json")


def test_deeply_nested_json_is_refused_in_one_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000)
    with pytest.raises(UsageError, match="deep.json: not"):
        store.load(path)


def sweep(points):
    d = make_doc(256)
    d["sweep"] = points
    return d


def point(n, kernels=(("naive", 100.0),)):
    flops = 2 * n**3
    return {"problem": {"m": n, "n": n, "k": n}, "reference": {"gflops": 1000.0},
            "kernels": [{"name": name, "gflops": g, "time_ms": flops / g / 1e6, "verified": True} for name, g in kernels]}


@pytest.mark.parametrize("points, needle", [
    ([point(128), point(256, (("naive", 100.0), ("naive", 90.0)))], "sweep[1].kernels[1].name: 'naive' appears twice"),
    ([point(128), dict(point(256), kernels=[])], "sweep[1].kernels: List should have at least 1 item"),
    ([point(128), point(256, (("naive", 1e6),))], "sweep[1].kernels[0].gflops: 1,000,000 GFLOP/s is 14.9x"),
    ([point(128), point(512)], "problem: 256x256x256 is not among the sweep's sizes"),
])
def test_sweeps_are_checked_like_single_runs(points, needle):
    with pytest.raises(UsageError) as exc:
        store.parse(sweep(points))
    assert needle in str(exc.value)


# ---------------------------------------------------------------- a file checked against itself

PLOTS = FIXTURES.parent.parent / "plots"
H200 = PLOTS / "results-h200.json"
TRANSFORMER = PLOTS / "profile-h200-transformer.json"


def _show(tmp_path, raw: dict):
    from typer.testing import CliRunner

    from roofline.cli import app

    path = write(tmp_path, raw, "edited.json")
    return CliRunner().invoke(app, ["show", str(path)])


@pytest.mark.parametrize("edit, needle", [
    # the fraction changed without the warps that give it: it showed "50% regs"
    (lambda d: d["kernels"][5]["occupancy"].update(occupancy=0.5),
     "kernels[5].occupancy.occupancy: 0.5, but its active_warps_per_sm 16 / max_warps_per_sm 64 give 0.25"),
    (lambda d: d["kernels"][5]["occupancy"].update(active_warps_per_sm=32, occupancy=0.5),
     "kernels[5].occupancy.active_warps_per_sm: 32, but its 2 active blocks of 8 warps (256 threads) give 16"),
    (lambda d: d["kernels"][5]["occupancy"].update(active_blocks_per_sm=4, active_warps_per_sm=32, occupancy=0.5),
     "kernels[5].occupancy.active_blocks_per_sm: 4, but its block_limits"),
    (lambda d: d["kernels"][5]["occupancy"].update(limiters=["shared_memory"]),
     "kernels[5].occupancy.limiters: ['shared_memory'], but the resources whose block_limits equal its 2 blocks are "
     "['registers']"),
    (lambda d: d["kernels"][5]["occupancy"]["block_limits"].update(warps=4),
     "kernels[5].occupancy.block_limits.warps: 4, but max_warps_per_sm 64 / 8 warps per block give 8"),
    (lambda d: d["kernels"][5]["occupancy"].update(max_warps_per_sm=128, occupancy=0.125),
     "kernels[5].occupancy.max_warps_per_sm: 128, but the device's SMs hold 64"),
    # the bound flipped from fp32 to dram: the file's own cores x 2 x clock give 66,908
    (lambda d: d["device"].update(peak_fp32_gflops=1e6),
     "device.peak_fp32_gflops: 1,000,000, but its fp32_cores 16,896 x 2 FLOP x max_sm_clock_mhz 1980 give 66,908"),
    (lambda d: d["device"].update(peak_dram_gbps=48_000.0),
     "device.peak_dram_gbps: 48,000, but 2 x its max_mem_clock_mhz 3201 x memory_bus_width_bits 6016 / 8 give 4,814"),
    (lambda d: d["device"]["peaks_gflops"].update(fp32=100_000.0),
     "device.peaks_gflops.fp32: 100,000, but its peak_fp32_gflops give 66,908"),
    (lambda d: d["device"]["peaks_gflops"].update(bf16_tensor=2e6),
     "device.peaks_gflops.bf16_tensor: 2,000,000, but 4096 per SM per clock x its 132 SMs x 1830 MHz give 989,430"),
    (lambda d: d["device"]["peaks_gflops"].update(fp64=1e5),
     "device.peaks_gflops.fp64: 100,000, but 128 per SM per clock x its 132 SMs x 1980 MHz give 33,454"),
    (lambda d: d["device"].update(measured_l2_gbps=20_000.0),
     "device.measured_l2_gbps: 20,000 is 1.3x its peak_l2_gbps of 15,354, more than anything sustains"),
    (lambda d: d["device"].update(measured_smem_gbps=40_000.0),
     "device.measured_smem_gbps: 40,000 is 1.2x its shared-memory peak (SMs x 128 B x clock) of 33,454"),
    (lambda d: d["device"]["measured_peaks_gflops"].update(fp16_tensor=2e6),
     "device.measured_peaks_gflops.fp16_tensor: 2,000,000 is 2.02x its peaks_gflops.fp16_tensor of 989,430"),
    (lambda d: d["device"]["limits"].update(compute_capability="8.0"),
     "device.limits.compute_capability: '8.0', but the device's is '9.0'"),
    (lambda d: d["kernels"][5]["waves"].update(block_slots=528, waves=1024 / 528, last_wave_efficiency=496 / 528),
     "kernels[5].waves.block_slots: 528, but 132 SMs x the 2 blocks per SM of its occupancy are 264"),
    (lambda d: d["kernels"][5]["model"].update(arithmetic_intensity=64.0),
     "kernels[5].model.arithmetic_intensity: 64 disagrees with the 32 the file's other figures give"),
    (lambda d: d["kernels"][5].update(gflops=39_000.0),
     "kernels[5].gflops: 39,000 disagrees with the 29,195 the file's other figures give"),
])
def test_a_hand_edited_figure_is_refused_by_show_naming_the_field_and_what_the_file_implies(tmp_path, edit, needle):
    raw = json.loads(H200.read_text())
    edit(raw)
    r = _show(tmp_path, raw)
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert "\n" not in line and line.startswith(f"roofline: error: {tmp_path / 'edited.json'}: "), line
    assert needle in line, line
    assert line.endswith("the file looks hand-edited or corrupt")


@pytest.mark.parametrize("edit, needle", [
    (lambda d: d["kernels"][0]["occupancy"].update(occupancy=0.75),
     "kernels[0].occupancy.occupancy: 0.75, but its active_warps_per_sm 12 / max_warps_per_sm 64 give 0.1875"),
    (lambda d: d["device"].update(peak_fp32_gflops=1e6),
     "device.peak_fp32_gflops: 1,000,000, but its fp32_cores 16,896 x 2 FLOP x max_sm_clock_mhz 1980 give 66,908"),
    # two nulls and a zero the schema's types let through, which the readings divide or look up by
    (lambda d: d["kernels"][0]["occupancy"].update(warp_size=0),
     "kernels[0].occupancy.warp_size: 0, but a warp is 32 threads"),
    (lambda d: d["kernels"][0]["occupancy"]["block_limits"].update(warps=None),
     "kernels[0].occupancy.block_limits.warps: null, but every block's warps limit the blocks an SM holds"),
])
def test_a_hand_edited_profile_is_refused_the_same_way(tmp_path, edit, needle):
    raw = json.loads(TRANSFORMER.read_text())
    edit(raw)
    r = _show(tmp_path, raw)
    assert r.exit_code == 2, r.output
    assert needle in r.stderr and r.stderr.count("\n") == 1, r.stderr


@pytest.mark.parametrize("path", sorted(PLOTS.glob("*.json")) + sorted(FIXTURES.rglob("*.json")),
                         ids=lambda p: str(p.relative_to(FIXTURES.parent.parent)))
def test_every_committed_results_file_still_loads(path):
    raw = json.loads(path.read_text())
    if not isinstance(raw, dict) or ("schema" not in raw and raw.get("kind") != "profile"):
        pytest.skip("not a results file")
    doc = store.load(path, profile=True)
    assert doc.device.disagreements() == []


def test_a_figure_rounded_by_hand_within_a_percent_is_not_a_corruption(tmp_path):
    raw = json.loads(H200.read_text())
    raw["device"]["peak_fp32_gflops"] = 66_900.0  # the datasheet's 66.9 TFLOP/s
    raw["device"]["peaks_gflops"]["fp32"] = 66_900.0
    raw["device"]["peak_dram_gbps"] = 4_800.0
    doc = store.load(write(tmp_path, raw))
    assert doc.device.peak_fp32_gflops == 66_900.0 and doc.device.peak_dram_gbps == 4_800.0


def test_a_file_is_checked_against_itself_not_against_todays_kernel_families(tmp_path, monkeypatch):
    """A kernel family whose grid or tiles change later must not make old files corrupt."""
    raw = json.loads(H200.read_text())
    # the 2D kernel recorded at a tile (64x64) whose grid (4096 blocks) is not the 1024 blocks its
    # waves record: the file's waves are its own record, as a later change of the family would leave them
    raw["kernels"][5]["params"].update(BM=64, BN=64)
    doc = store.load(write(tmp_path, raw))
    assert doc.kernels[5].waves.blocks == 1024 and doc.kernels[5].params["BM"] == 64
    # a sweep reads each size's model and waves from the file (schema 4), whatever its tile says
    sweep = json.loads((PLOTS / "sweep-h200.json").read_text())
    assert sweep["schema"] == 4
    split_k = next(k for k in sweep["sweep"][3]["kernels"] if k["name"] == "split_k")
    split_k["params"] = {"BM": 7, "BN": 3, "BK": 0}  # a tile today's split_k refuses
    swept = store.load(write(tmp_path, sweep, "s.json"))
    v = swept.sweep_verdict(swept.sweep[3], "split_k")
    assert v.waves.blocks == split_k["waves"]["blocks"] and v.binding is not None
    assert swept.sweep[3].kernels[[k["name"] for k in sweep["sweep"][3]["kernels"]].index("split_k")].model.flops \
        == split_k["model"]["flops"]
    # no kernel family is read to load a file, or to read it
    from roofline.ladder import families

    monkeypatch.setattr(families, "BY_NAME", {})
    assert store.load(H200).kernels[5].waves.blocks == 1024
    again = store.load(write(tmp_path, sweep, "s.json"))
    assert again.sweep_verdict(again.sweep[3], "split_k") == v


def _as_schema_3(doc: dict) -> dict:
    """A schema 4 sweep file as schema 3 wrote it: no model or waves at a size of the sweep but
    for a kernel that picks its tile by shape."""
    doc = json.loads(json.dumps(doc))
    doc["schema"] = 3
    for point in doc["sweep"]:
        for k in point["kernels"]:
            k.pop("model")
            if not k["params"]:
                k.pop("waves")
    return doc


def test_a_schema_3_sweep_is_migrated_with_its_models_worked_out_once_by_the_caller(tmp_path):
    new = store.load(PLOTS / "sweep-h200.json", upgrade=upgrade.fill)  # with today's DRAM bytes, as api reads it
    path = write(tmp_path, _as_schema_3(json.loads((PLOTS / "sweep-h200.json").read_text())), "old.json")
    bare = store.load(path)  # the results package alone: the models stay missing, and it says so
    assert bare.schema_version == 4 and all(k.model is None for p in bare.sweep for k in p.kernels)
    assert bare.sweep_verdict(bare.sweep[0], "naive") is None
    assert "its sweep records no model at each size" in bare.read_notes[0]
    old = store.load(path, upgrade=upgrade.fill)  # as roofline.api reads it
    assert old.read_notes == [f"{path}: written as schema 3, read as schema 4; the model at each size of its sweep "
                              "worked out from today's kernel families"]
    for p_old, p_new in zip(old.sweep, new.sweep):
        for k in p_new.kernels:
            a, b = old.sweep_verdict(p_old, k.name), new.sweep_verdict(p_new, k.name)
            assert (a is None) == (b is None) and (a is None or a == b), (p_new.problem, k.name)
    assert old == new  # the same document as the one written at schema 4


def test_results_files_load_and_read_with_no_ladder_or_measure_module_imported():
    import subprocess
    import sys

    code = (
        "import sys, pathlib\n"
        "from roofline.results import store\n"
        "for f in sorted(pathlib.Path(sys.argv[1]).glob('*.json')):\n"
        "    doc = store.load(f, profile=True)\n"
        "    assert not doc.read_notes, (f, doc.read_notes)\n"
        "    for point in getattr(doc, 'sweep', None) or []:\n"
        "        assert all(doc.sweep_verdict(point, k.name) for k in point.kernels if k.timed), (f, point.problem)\n"
        "bad = sorted(m for m in sys.modules if m.startswith(('roofline.ladder', 'roofline.measure')))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(PLOTS)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_an_old_file_gets_derived_waves_where_it_has_what_they_take_else_none(tmp_path):
    raw = json.loads((FIXTURES / "results-schema1.json").read_text())
    assert all("waves" not in k for k in raw["kernels"])
    raw["kernels"][1]["name"] = "coalesced_old"  # a kernel no family of today's ladder knows
    doc = store.load(write(tmp_path, raw), upgrade=upgrade.fill)
    tiled = next(k for k in doc.kernels if k.name == "register_tiling_1d")
    assert (tiled.waves.blocks, tiled.waves.block_slots) == (4096, 132 * tiled.occupancy.active_blocks_per_sm)
    assert doc.kernels[1].waves is None  # shown as missing
    assert store.load(write(tmp_path, raw)).kernels[1].waves is None  # without the families: none filled
    assert next(k for k in store.load(write(tmp_path, raw)).kernels if k.name == "register_tiling_1d").waves is None


def test_what_nsight_compute_counted_is_counted_in_python_and_measured_in_the_file(tmp_path):
    doc = store.load(H200)
    k = doc.kernels[5]
    assert k.counted.dram_bytes == 400_601_088.0 and k.counted.fp32_flops == 137_455_730_688.0
    assert "measured" not in type(k).model_fields and "counted" in type(k).model_fields
    out = store.dump(doc)["kernels"][5]
    assert out["measured"]["l2_bytes"] == 4_342_505_664.0 and "counted" not in out
    assert "measured" in json_schema()["$defs"]["KernelRecord"]["properties"]


def test_a_kernel_without_shared_memory_on_turing_loads_and_shows(tmp_path):
    # Before sm_80 a block that takes no shared memory has no shared-memory limit (null in
    # block_limits); the file's own checks and the occupancy column read it as such.
    doc = make_doc(gpu="t4")
    doc["kernels"] = doc["kernels"][:3]  # kernels that run before sm_80, at a T4's rates
    for x in doc["kernels"]:
        set_rate(x, x["gflops"] / 20)
    doc["reference"]["gflops"] /= 20
    doc["reference"]["time_ms"] *= 20
    k = doc["kernels"][0]
    k["static_smem_bytes"] = 0
    k["occupancy"] = calculate(parse_arch("sm_75"), 64, k["threads_per_block"], 0).to_dict()
    assert k["occupancy"]["block_limits"]["shared_memory"] is None
    path = tmp_path / "t4.json"
    path.write_text(json.dumps(doc))
    r = CliRunner().invoke(app, ["show", str(path)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "100% regs+warps" in r.stdout.split("naive", 1)[1].split("\n", 1)[0]


@pytest.mark.parametrize("char", ["\u202e", "\u200b", "\x1b"])
def test_a_kernel_name_that_would_garble_a_terminal_is_refused(tmp_path, char):
    doc = json.loads((FIXTURES / "results-h200.json").read_text())
    doc["kernels"][0]["name"] = f"naive{char}evil"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    r = CliRunner().invoke(app, ["show", str(path)])
    assert r.exit_code == 2 and "kernels[0].name" in r.stderr and r.stderr.count("\n") == 1


def test_a_time_that_is_not_the_median_of_its_samples_is_refused(tmp_path):
    doc = json.loads((PLOTS / "results-h200.json").read_text())
    doc["kernels"][2]["timing"]["samples_ms"] = [1.0] * len(doc["kernels"][2]["timing"]["samples_ms"])
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    r = CliRunner().invoke(app, ["show", str(path)])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "kernels[2].time_ms: 14.4 disagrees with the 1 timing.samples_ms (their median) give" in r.stderr


def test_a_schema_4_sweep_that_lost_a_size_s_model_is_refused_in_one_line(tmp_path):
    raw = json.loads((PLOTS / "sweep-h200.json").read_text())
    k = next(k for k in raw["sweep"][2]["kernels"] if k["name"] == "full_tiles")
    del k["model"]
    with pytest.raises(UsageError) as e:
        store.load(write(tmp_path, raw, "s.json"))
    assert "sweep[2].kernels[" in str(e.value) and "model: missing, but full_tiles has a model in kernels[]" in str(e.value)
    assert "\n" not in str(e.value)
    raw["schema"] = 3  # the same content written at schema 3 is migrated, with a note, not refused
    assert store.load(write(tmp_path, raw, "s3.json")).read_notes


def test_a_run_without_a_measured_dram_rate_shows_that_it_has_none(tmp_path):
    # the schema lets a device record a measured FP32 rate without a DRAM one
    raw = json.loads(H200.read_text())
    raw["device"]["measured_dram_gbps"] = None
    r = _show(tmp_path, raw)
    assert r.exit_code == 0, r.output
    assert "measured 62,066 GFLOP/s, DRAM not measured" in " ".join(r.stdout.split())


def test_a_run_whose_rounds_record_no_seconds_is_shown_without_them(tmp_path):
    # the schema lets timed_in_rounds.seconds be null; show leaves the seconds out, nothing else
    doc = json.loads((PLOTS / "results-h200.json").read_text())
    doc["timed_in_rounds"]["seconds"] = None
    got = CliRunner().invoke(app, ["show", str(write(tmp_path, doc))], env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    assert "timed in 20 rounds of 1 launch per kernel, cuBLAS first and the kernels in turn; CI95" in got.stdout


def test_a_gzipped_results_file_is_read_and_a_damaged_one_said_so(tmp_path):
    import gzip

    packed = tmp_path / "r.json.gz"
    packed.write_bytes(gzip.compress((PLOTS / "results-h200.json").read_bytes()))
    doc = store.load(packed)
    assert doc.problem.m == 4096 and len(doc.kernels) == 14
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(packed.read_bytes()[:3000])
    with pytest.raises(UsageError, match="a gzip-compressed file that does not unpack .cut short or damaged."):
        store.load(cut)


SPLIT_FILE = FIXTURES / "results-h100-split-1024.json"


@pytest.mark.parametrize("edit, says", [
    (lambda k: k["params"].update(BM=-8), "kernels[0].params: split_k takes positive parameters, not BM = -8"),
    (lambda k: k["params"].update(SPLITS=0), "not SPLITS = 0"),
    (lambda k: k["params"].update(REDUCERS=3), "REDUCERS = 3 is neither 1 nor SPLITS = 4"),
    (lambda k: k["params"].update(TM=7), "TM = 7 does not divide BM = 128"),
    (lambda k: k["params"].update(EXTRA=7), "not EXTRA"),
    (lambda k: k.update(template="split_k<128,256,16,32,128,8,16,3,-4,1>"), "gives a parameter below 1"),
    (lambda k: k.update(template="split_k<128,2"), "is not a kernel's template"),
    (lambda k: k.update(template="split_k<128,256,16,32,128,8,16,3,2,2>"), "name different kernels or tiles"),
    (lambda k: k.update(template="warptiling<128,256,16,32,128,8,16,3,4,4>"), "name different kernels or tiles"),
    (lambda k: k.update(template="split_k<128,256,16>"), "name different kernels or tiles"),
    (lambda k: k.update(template="split_k<a,b>"), "gives no parameter"),
])
def test_a_ladder_tile_no_version_of_its_family_takes_is_refused_in_one_line(tmp_path, edit, says):
    # the H100 run of split_k at 1024^3 (K in 4 slices, its 4 blocks adding them together), edited
    doc = json.loads(SPLIT_FILE.read_text())
    (k,) = [k for k in doc["kernels"] if k["name"] == "split_k"]
    edit(k)
    path = write(tmp_path, doc)
    for args in (["show", str(path)], ["project", str(path), "--gpu", "a100-sxm4-80gb"]):
        got = CliRunner().invoke(app, args)
        assert got.exit_code == 2 and says in got.output and "Traceback" not in got.output, got.output


def test_an_older_familys_tile_and_template_are_read_as_recorded():
    # a BF16 run written when wgmma_ws took BM and its template spelled the element type __nv_bfloat16
    got = CliRunner().invoke(app, ["show", str(FIXTURES / "results-h200-bf16.json")])
    assert got.exit_code == 0, got.output


def test_a_recorded_dram_figure_of_zero_is_an_older_models_and_a_negative_one_refused(tmp_path):
    doc = json.loads(SPLIT_FILE.read_text())
    doc["kernels"][0]["model"]["dram_bytes"] = 0
    got = CliRunner().invoke(app, ["show", str(write(tmp_path, doc))])
    assert got.exit_code == 0 and "split_k 0 -> 0.0115 GB" in got.output, got.output
    doc["kernels"][0]["model"]["dram_bytes"] = -12_600_000
    got = CliRunner().invoke(app, ["show", str(write(tmp_path, doc, "neg.json"))])
    assert got.exit_code == 2 and "kernels[0].model.dram_bytes" in got.output, got.output


def test_show_and_project_say_which_roofs_a_profile_is_read_against(tmp_path):
    # the JAX step's report imported here (its roofs: the report's device attributes) and the same step profiled
    # on the H100 (with the ceilings measured there)
    imported = tmp_path / "imported.json"
    csv = FIXTURES / "xla" / "jax-step-h100" / "jax-step-raw.csv"
    assert CliRunner().invoke(app, ["profile", "--import", str(csv), "--out", str(imported)]).exit_code == 0
    measured = FIXTURES.parent.parent / "plots" / "profile-h100-jax-ops.json"
    said = {}
    for name, path in (("imported", imported), ("measured", measured)):
        got = CliRunner().invoke(app, ["show", str(path)], env={"COLUMNS": "300"})
        said[name] = " ".join(got.output.split())
        assert got.exit_code == 0, got.output
    assert "Verdicts read the theoretical peaks of the NVIDIA H100 80GB HBM3 alone" in said["imported"]
    assert "nothing was measured on it" in said["imported"]
    assert "Verdicts read the ceilings measured on this NVIDIA H100 80GB HBM3 on 2026-12-06" in said["measured"]
    by_op = CliRunner().invoke(app, ["show", str(measured), "--by", "op"], env={"COLUMNS": "300"})
    assert by_op.exit_code == 0 and "Verdicts read the ceilings measured on this NVIDIA H100" in by_op.output
    got = CliRunner().invoke(app, ["project", str(imported), "--gpu", "h200"], env={"COLUMNS": "300"})
    assert got.exit_code == 0 and "as `show` does (the file records no measured ceiling)" in " ".join(got.output.split())
    assert "reads the measured ceilings" not in got.output
    for path, theoretical in ((imported, True), (measured, False)):
        got = CliRunner().invoke(app, ["whatif", str(path)], env={"COLUMNS": "300"})
        assert got.exit_code == 0 and ("each 'roof' is a theoretical peak of the NVIDIA H100 80GB HBM3: the file records "
                                       "no ceiling measured on it" in " ".join(got.output.split())) == theoretical


@pytest.mark.parametrize("edit, says", [
    (lambda d: d["kernels"][0].update(pct_of_reference=1e300), "pct_of_reference: 1e+300 disagrees with the 108"),
    (lambda d: d.update(schema="4"), 'schema "4" is not a whole number'),
])
def test_a_damaged_figure_is_named_in_a_readable_line(tmp_path, edit, says):
    doc = json.loads(SPLIT_FILE.read_text())
    edit(doc)
    got = CliRunner().invoke(app, ["show", str(write(tmp_path, doc))])
    assert got.exit_code == 2 and says in got.output and len(got.output) < 300, got.output


@pytest.mark.parametrize("edit, says", [
    (lambda t: t.update(candidates=-1), "tune.candidates"),
    (lambda t: t.update(valid=200), "tune.valid: 200 of 108 candidates"),
    (lambda t: t["winner"].update(BM=-1), "tune.winner.BM"),
])
def test_a_tile_search_with_counts_no_search_gives_is_refused(tmp_path, edit, says):
    doc = json.loads((FIXTURES.parent.parent / "plots" / "tune-h200.json").read_text())
    edit(doc["tune"])
    got = CliRunner().invoke(app, ["show", str(write(tmp_path, doc))])
    assert got.exit_code == 2 and says in got.output, got.output


@pytest.mark.parametrize("name", ["profile-h100-jax-ops.json", "grades-h200.json"])
def test_a_profile_or_grade_file_without_its_schema_is_refused_as_a_runs_is(tmp_path, name):
    doc = json.loads((FIXTURES.parent.parent / "plots" / name).read_text())
    del doc["schema"]
    got = CliRunner().invoke(app, ["show", str(write(tmp_path, doc))])
    assert got.exit_code == 2 and f"a {doc['kind']} file without its schema field" in got.output, got.output
