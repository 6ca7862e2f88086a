"""`roofline whatif`: each kernel at a fraction of its binding roof, the ms it saves and, for a
profile, the step's time and speed-up (Amdahl), checked by hand on a three-kernel profile and
against golden tables of the committed H200 files.

After an intended change of output, regenerate the golden texts with
ROOFLINE_UPDATE_GOLDEN=1 pytest tests/test_whatif.py and read the diff before committing it."""

import json
import math
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline.errors import UsageError
from roofline.results import store
from roofline.results.profile import ProfileResults
from roofline.analysis.whatif import whatif

ROOT = Path(__file__).resolve().parent.parent
PLOTS = ROOT / "plots"
GOLDEN = Path(__file__).resolve().parent / "golden"
TRANSFORMER = PLOTS / "profile-h200-transformer.json"
LADDER = PLOTS / "results-h200.json"


def three_kernels() -> dict:
    """A profile of one 4.0 ms step on the H200 at its datasheet roofs (the measured ones taken
    out): DRAM 4,814.304 GB/s, BF16 tensor 989,429.76 GFLOP/s. No grid, so no waves: the floors
    are plain work over roof.

    copy      2.0 ms, 4,814,304,000 DRAM bytes, no operations      -> DRAM floor 1.0 ms
    matmul    1.5 ms, 989,429,760,000 BF16 tensor FLOPs, no bytes  -> BF16 tensor floor 1.0 ms
    mystery   0.5 ms, its FP32 operations and DRAM bytes not counted -> no floor
    """
    device = json.loads(TRANSFORMER.read_text())["device"]
    for key in [k for k in device if k.startswith("measured")] + ["launch_latency_ms"]:
        device.pop(key, None)

    def kernel(name, time_ms, precision, **more):
        return {"name": name, "demangled": name, "launches": 1, "time_ms": time_ms, "median_ms": time_ms,
                "time_share": time_ms / 4.0, "precision": precision, "tensor_core": False, **more}

    return {"schema": 3, "kind": "profile", "device": device, "launches_profiled": 3, "total_time_ms": 4.0,
            "kernels": [
                kernel("copy", 2.0, "none", bytes={"dram": 4_814_304_000.0}),
                kernel("matmul", 1.5, "bf16", tensor_core=True, flops={"bf16_tensor": 989_429_760_000.0},
                       gflops=989_429_760_000.0 / 1.5e6),
                kernel("mystery", 0.5, "unknown", missing={"fp32": "--metrics ...", "dram": "--metrics ..."})]}


@pytest.fixture
def fixture_file(tmp_path):
    path = tmp_path / "three.json"
    path.write_text(json.dumps(three_kernels()))
    return path


def test_three_kernels_worked_by_hand():
    w = whatif(ProfileResults.model_validate(three_kernels()), target=0.8)
    copy, matmul, mystery = w.kernels  # ranked by saving; the kernel without a floor last
    assert w.step_ms == 4.0 and w.kind == "profile"
    # copy: floor 4,814,304,000 B / 4,814.304 GB/s = 1.0 ms; at 80 % of DRAM 1.0 / 0.8 = 1.25 ms;
    # saves 2.0 - 1.25 = 0.75 ms; the step 4.0 - 0.75 = 3.25 ms, 4.0 / 3.25 = 1.2308x
    assert (copy.name, copy.roof, copy.roof_measured) == ("copy", "DRAM", False)
    assert copy.floor_ms == pytest.approx(1.0) and copy.target_ms == pytest.approx(1.25)
    assert copy.saved_ms == pytest.approx(0.75) and copy.step_ms_after == pytest.approx(3.25)
    assert copy.speedup == pytest.approx(4.0 / 3.25) and copy.time_share == pytest.approx(0.5)
    assert copy.cumulative_step_ms == pytest.approx(3.25)
    # matmul: floor 989.42976e9 FLOP / 989,429.76 GFLOP/s = 1.0 ms; at 80 %, 1.25 ms; saves
    # 1.5 - 1.25 = 0.25 ms; alone the step is 3.75 ms (1.0667x); with copy too 4.0 - 0.75 - 0.25 = 3.0 ms
    assert matmul.roof == "BF16 tensor" and matmul.floor_ms == pytest.approx(1.0)
    assert matmul.saved_ms == pytest.approx(0.25) and matmul.step_ms_after == pytest.approx(3.75)
    assert matmul.speedup == pytest.approx(4.0 / 3.75)
    assert matmul.cumulative_step_ms == pytest.approx(3.0) and matmul.cumulative_speedup == pytest.approx(4.0 / 3.0)
    # mystery: no floor, so no figure, never a guessed one; counted in a note
    assert mystery.roof is None and mystery.floor_ms is mystery.target_ms is mystery.saved_ms is None
    assert mystery.not_counted == ("fp32", "dram") and mystery.cumulative_step_ms is None
    assert any(n.startswith("1 kernel (0.500 ms) with no roof") and "mystery (fp32, dram not counted)" in n
               for n in w.notes)
    assert w.saved_ms == pytest.approx(1.0) and w.step_ms_after == pytest.approx(3.0)
    # at 60 % the matmul's target, 1.0 / 0.6 = 1.667 ms, is past its 1.5 ms: it saves 0, never less
    slow = {k.name: k for k in whatif(ProfileResults.model_validate(three_kernels()), target=0.6).kernels}
    assert slow["matmul"].target_ms == 1.5 and slow["matmul"].saved_ms == 0 and slow["matmul"].speedup == 1.0
    assert slow["copy"].target_ms == pytest.approx(1.0 / 0.6)


def test_the_fixture_table_names_the_roof_and_what_was_not_counted(fixture_file):
    result = CliRunner().invoke(app, ["whatif", str(fixture_file), "--target", "0.8"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "copy: 2.000 ms -> 1.250 ms at 80 % of DRAM; step 4.000 -> 3.250 ms, 1.23x" in out
    assert "matmul: 1.500 ms -> 1.250 ms at 80 % of BF16 tensor; step 4.000 -> 3.750 ms, 1.07x" in out
    assert "no roof: FP32 work; DRAM bytes" in out
    assert "all 2 kernels with a roof at 80 % of it: step 4.000 -> 3.000 ms, 1.33x" in out
    assert "roofline: note: no fusion what-if" in result.stderr  # notes on stderr, as every command's


def test_a_profiles_kernels_add_up_to_its_step():
    w = whatif(store.load(TRANSFORMER, profile=True))
    assert len(w.kernels) == 65 and w.step_ms == 10.536928
    assert math.fsum(k.time_ms for k in w.kernels) == pytest.approx(w.step_ms, rel=1e-9)
    assert w.kernels_ms == pytest.approx(w.step_ms, rel=1e-9)
    ranked = w.ranked
    assert [k.saved_ms for k in ranked] == sorted((k.saved_ms for k in ranked), reverse=True)
    # the cumulative column ends at the step with every kernel at the target
    assert ranked[-1].cumulative_step_ms == pytest.approx(w.step_ms - math.fsum(k.saved_ms for k in ranked))
    # PyTorch's bf16 copy, 0.725 ms against its 0.341 ms DRAM floor: its 1.548 GB at a fill kernel's counted
    # 4,543 GB/s, the best the profile saw, to which the measured 4,283 is raised (at 4,283 the floor was 0.361 ms);
    # at 80 % of that roof it takes 0.426 ms, 0.299 ms saved
    top = ranked[0]
    assert top.name == "unrolled_elementwise_kernel [direct_copy_kernel_cuda]" and top.roof == "DRAM"
    assert top.floor_ms == pytest.approx(1.548e9 / 4543e6, rel=1e-3)
    assert top.target_ms == pytest.approx(top.floor_ms / 0.8) and top.saved_ms == pytest.approx(0.2992, abs=1e-4)


def test_a_run_has_no_step_and_says_why():
    w = whatif(store.load(LADDER), target=0.5)
    assert w.kind == "run" and w.step_ms is None and w.step_ms_after is None
    naive = next(k for k in w.kernels if k.name == "naive")
    assert naive.step_ms_after is None and naive.cumulative_step_ms is None
    assert naive.speedup == pytest.approx(naive.time_ms / (naive.floor_ms / 0.5))
    assert any(n.startswith("no step column: a run's kernels are alternatives") for n in w.notes)


def test_a_profile_of_programs_profiled_apart_has_no_step_and_no_fusion():
    # the committed timeline file: four single-launch reports (three wgmma rungs and cuBLAS, each its own
    # process) read together; their 6.391 ms add up to no program's step
    doc = store.load(PLOTS / "timeline-h200-bf16-8192.json", profile=True)
    assert doc.programs == 4 and doc.total_time_ms == pytest.approx(6.391136)
    w = whatif(doc)
    assert w.step_ms is None and w.fusion == [] and all(k.cumulative_step_ms is None for k in w.kernels)
    assert any("holds the launches of 4 programs, profiled apart" in n for n in w.notes)
    tma = next(k for k in w.kernels if k.name == "wgmma_tma")  # read alone: its own time at 80 % of its roof
    assert tma.speedup == pytest.approx(tma.time_ms / tma.target_ms)
    # its phases: without a step, the times without the tail wave or the fill are each kernel's own
    phase = next(p for p in w.phases if p.kernel == "wgmma_tma")
    assert phase.of == "kernel" and phase.ms_without_tail == pytest.approx(tma.time_ms - phase.tail_saved_ms)
    assert phase.ms_without_tail < tma.time_ms
    # a profile of one program (every older file) keeps its step
    assert store.load(TRANSFORMER, profile=True).programs == 1


JSON_KEYS = {"kind", "device", "target", "problem", "step_ms", "step_ms_after_all", "saved_ms_all", "kernels", "fusion", "notes"}
KERNEL_KEYS = {"name", "label", "roof", "roof_measured", "roof_seen", "roof_borrowed", "time_ms", "floor_ms", "target_ms", "saved_ms", "time_share",
               "step_ms_after", "speedup", "cumulative_step_ms", "cumulative_speedup", "not_counted"}


def test_json_keys(fixture_file):
    result = CliRunner().invoke(app, ["whatif", str(fixture_file), "--json", "--target", "0.8"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert set(doc) == JSON_KEYS and all(set(k) == KERNEL_KEYS for k in doc["kernels"])
    assert doc["step_ms"] == 4.0 and doc["target"] == 0.8 and doc["step_ms_after_all"] == pytest.approx(3.0)
    assert [k["name"] for k in doc["kernels"]] == ["copy", "matmul", "mystery"]
    assert doc["kernels"][0]["saved_ms"] == pytest.approx(0.75) and doc["kernels"][2]["not_counted"] == ["fp32", "dram"]
    run = json.loads(CliRunner().invoke(app, ["whatif", str(LADDER), "--json"]).stdout)
    assert run["step_ms"] is None and run["kernels"][0]["step_ms_after"] is None and run["kernels"][0]["speedup"] > 1


@pytest.mark.parametrize("value", ["0", "-0.5", "1.01", "nan", "inf", "abc", ""])
def test_a_bad_target_exits_2_with_one_line(value, fixture_file):
    result = CliRunner().invoke(app, ["whatif", str(fixture_file), "--target", value])
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("roofline: error: --target")


def test_bad_files_exit_2(tmp_path):
    for args in (["whatif", str(tmp_path / "none.json")], ["whatif", str(LADDER), "--out", str(tmp_path / "x.gif")]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
        assert result.stderr.startswith("roofline: error: ")
    with pytest.raises(UsageError):
        whatif(store.load(LADDER), target=0)


def test_a_run_without_a_timed_kernel_exits_2(tmp_path):
    doc = json.loads(LADDER.read_text())
    doc["kernels"] = []
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(doc))
    result = CliRunner().invoke(app, ["whatif", str(empty)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"roofline: error: {empty}: no verified and timed kernel to read; run the kernels "
                             "again (roofline run) or give another results file\n")


def test_a_floor_the_report_counted_in_part_is_a_lower_bound_and_says_so(tmp_path):
    """A report of the default section set counts no tensor-core work nor L2/L1 bytes: a tensor
    GEMM is read against its DRAM floor alone, 65x under its time; the saving is then an upper bound."""
    out = tmp_path / "section.json"
    imported = CliRunner().invoke(app, ["profile", "--import", str(ROOT / "tests/fixtures/ncu/forms/section-raw.csv"),
                                        "--out", str(out)])
    assert imported.exit_code == 0, imported.output
    result = whatif(store.load(out, profile=True))
    gemm = next(r for r in result.kernels if r.name.startswith("cutlass_80_wmma_tensorop_i161616gemm"))
    assert gemm.roof == "DRAM" and gemm.saved_ms == pytest.approx(0.1403, abs=1e-4)
    assert gemm.not_counted == ("fp16", "tensor", "l2", "l1", "smem")
    assert gemm.to_json()["not_counted"] == ["fp16", "tensor", "l2", "l1", "smem"]
    note = next(n for n in result.notes if "only a lower bound" in n)
    assert note.startswith("6 kernels (0.222 ms saved) read against a floor that is only a lower bound")
    # a profile that counted everything has no such note, and null not_counted
    full = whatif(store.load(TRANSFORMER, profile=True))
    assert not any("only a lower bound" in n for n in full.notes) and full.kernels[0].not_counted is None


def test_the_chart_is_written(tmp_path):
    out = tmp_path / "whatif.svg"
    result = CliRunner().invoke(app, ["whatif", str(TRANSFORMER), "--chart", str(out)])
    assert result.exit_code == 0 and out.stat().st_size > 10_000
    svg = out.read_text()
    assert "1. unrolled_elementw" in svg and "saves 1 %" in svg


GOLDEN_CASES = {
    "whatif_transformer_200": (200, [str(TRANSFORMER)]),
    "whatif_transformer_100": (100, [str(TRANSFORMER), "--target", "0.9"]),
    "whatif_ladder_120": (120, [str(LADDER)]),
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_output_matches_the_golden_text(name):
    columns, args = GOLDEN_CASES[name]
    result = CliRunner().invoke(app, ["whatif", *args], env={"COLUMNS": str(columns)})
    got = f"exit {result.exit_code}\n--- stdout\n{result.stdout}--- stderr\n{result.stderr}"
    got = got.replace(str(PLOTS) + "/", "plots/")
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("ROOFLINE_UPDATE_GOLDEN"):
        path.write_text(got)
    assert got == path.read_text()
    lines = got.splitlines()
    assert [line for line in lines if line != line.rstrip()] == []
    assert [line for line in got.split("\n--- stderr\n")[0].splitlines() if len(line) > columns] == []
    assert [line for line in lines if "…" in line] == []


def test_a_roof_raised_to_the_best_rate_seen_says_so():
    # BF16 at 8192^3: the measured tensor ceiling (cuBLAS FP16) was raised to what the wgmma rungs'
    # busy SMs ran; the mma.sync rungs are bound by the measured shared-memory roof
    bf16 = Path(__file__).resolve().parent.parent / "plots" / "results-h200-bf16.json"
    doc = json.loads(CliRunner().invoke(app, ["whatif", str(bf16), "--json"]).stdout)
    seen = {k["name"]: (k["roof"], k["roof_measured"], k["roof_seen"]) for k in doc["kernels"]}
    assert seen["wgmma_ws"] == ("BF16 tensor", True, True) and seen["mma_sync"] == ("SMEM", True, False)
    table = CliRunner().invoke(app, ["whatif", str(bf16)], env={"COLUMNS": "160"}).stdout
    assert "BF16 tensor best seen" in table


def test_a_target_is_a_fraction_or_a_percentage():
    from typer.testing import CliRunner

    from roofline.cli import app

    path = Path(__file__).resolve().parents[1] / "plots" / "profile-h200-transformer.json"
    a = CliRunner().invoke(app, ["whatif", str(path), "--target", "80%", "--json"])
    b = CliRunner().invoke(app, ["whatif", str(path), "--target", "0.8", "--json"])
    assert a.exit_code == b.exit_code == 0 and a.stdout == b.stdout


def test_a_profiles_own_caveat_comes_with_its_whatif():
    # the committed timeline file reads four programs' reports together: its step is their sum, and
    # the what-if says so with the file's own note before its own
    from roofline import api
    from roofline.analysis.whatif import whatif

    w = whatif(api.read(Path(__file__).resolve().parent.parent / "plots" / "timeline-h200-bf16-8192.json"))
    assert w.notes[0].endswith("4 reports of one launch each, read together; the time shares are of their launches "
                               "together, which ran in separate processes")


def test_a_kernel_bound_by_a_borrowed_ceiling_says_whose_it_is():
    # the H200's BF16 counters of 2026-12-05 read BF16 at cuBLAS FP16's rate (device --measure timed no
    # BF16 product then): whatif names that ceiling as the verdicts do, in the table and in the JSON
    path = Path(__file__).resolve().parent / "fixtures" / "counters-h200-bf16-20261205.json"
    r = CliRunner().invoke(app, ["whatif", str(path)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    row = next(line for line in r.stdout.splitlines() if "wgmma_persistent" in line)
    assert "BF16 tensor (FP16 cuBLAS)" in row
    doc = json.loads(CliRunner().invoke(app, ["whatif", str(path), "--json"]).stdout)
    ranked = {k["name"]: k for k in doc["kernels"]}
    assert ranked["wgmma_persistent"]["roof_borrowed"] == "FP16 cuBLAS"
    assert ranked["wgmma_ws"]["roof_borrowed"] is None and ranked["wgmma_ws"]["roof_seen"]


def test_a_kernel_whose_own_rate_raised_its_roof_is_not_said_to_be_at_a_bound():
    # wgmma_ws's counted L2 bytes moved at 8,120 GB/s, past the 7,322 measured: its L2 roof is its own
    # rate, so 'nothing to save' there is no bound, and whatif says so (as show says the ceiling is low)
    path = Path(__file__).resolve().parent / "fixtures" / "counters-h200-bf16-20261205.json"
    r = CliRunner().invoke(app, ["whatif", str(path)], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    said = " ".join(r.stderr.split())
    assert ("wgmma_ws: the measured ceiling of the roof that binds it was below the rate it reached, so that roof is "
            "its own rate") in said
    assert "wgmma_persistent: the measured ceiling" not in said  # bound by BF16, a ceiling it did not raise


def test_a_fusion_pair_of_a_shared_name_keeps_its_launch_written_short():
    # a new-user trial (2026-12-08): the Llama step's pair read 'vectorized_elementwise_...ks of 128x1x1]', its
    # functor and grid cut away, which fits about ten kernels of that profile; now its launch is written as the
    # kernel table's grid x block column writes it
    from roofline.render.text import short_label

    assert short_label("vectorized_elementwise_kernel [bfloat16_copy_kernel_cuda] [32000x1x1 blocks of 128x1x1]",
                       40) == "vectorized_elem...el_cuda] [32000 x 128]"
    assert short_label("k [98x2x32 blocks of 256x1x1]", 40) == "k [98x2x32 x 256]"
    assert short_label("plain_kernel", 40) == "plain_kernel"
    path = Path(__file__).resolve().parent / "fixtures" / "timeline-h100" / "profile-llama.json.gz"
    got = CliRunner().invoke(app, ["whatif", str(path)], env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    (row,) = [line for line in got.stdout.splitlines() if line.startswith(" 1. cunn_SoftMaxBackward")]
    assert "vectorized_elem...el_cuda] [32000 x 128]" in row


def test_whatif_cuts_each_name_as_show_does_and_its_phase_table_too():
    # a second new-user trial (2026-12-08): whatif cut names over its own rows only, so a cuBLAS kernel of the GCN
    # step read 'sm80_xmma_gemm_f32f32_f...nel__5x_cublas', which fits both of that file's cuBLAS kernels, where
    # show gave it its tile; and its phase table printed names whole (190 characters), one column per block
    from roofline.render.text import display_names

    fixtures = Path(__file__).resolve().parent / "fixtures" / "timeline-h100"
    doc = store.load(fixtures / "profile-gcn.json.gz", profile=True)
    everyone = [k.name for k in doc.kernels]
    shown = dict(zip(everyone, display_names(everyone, 40, everyone)))
    text = CliRunner().invoke(app, ["whatif", str(fixtures / "profile-gcn.json.gz")], env={"COLUMNS": "200"}).stdout
    gemms = [n for n in everyone if n.startswith("sm80_xmma_gemm")]
    assert len(gemms) >= 2 and len({shown[n] for n in gemms}) == len(gemms)
    assert any(shown[n] in text for n in gemms) and "sm80_xmma_gemm_f32f32_f...nel__5x_cublas" not in text
    resnet = CliRunner().invoke(app, ["whatif", str(fixtures / "profile-resnet.json.gz")], env={"COLUMNS": "200"})
    assert resnet.exit_code == 0, resnet.output
    phases = resnet.stdout[resnet.stdout.index("by phase"):]
    assert "continued" not in phases.split("\n\n\n")[0] and max(len(line) for line in phases.splitlines()) <= 200
    assert "batch_norm_backward_kernel [64 x 512]" in phases
