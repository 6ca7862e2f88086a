"""Two profiles of one program compared kernel by kernel (`analysis.compare.compare_work`), sweeps
against sweeps, and the `compare` command's JSON and chart on them."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline.errors import UsageError
from roofline.results import store
from roofline.analysis.compare import NOISE, compare_work

PLOTS = Path(__file__).resolve().parent.parent / "plots"
PROFILE = PLOTS / "profile-h200-transformer.json"

SOFTMAX_BWD = "cunn_SoftMaxBackward [LogSoftMaxBackwardEpilogue]"
SOFTMAX_FWD = "cunn_SoftMaxForward [LogSoftMaxForwardEpilogue]"
COPY = "unrolled_elementwise_kernel [direct_copy_kernel_cuda]"
GEMM = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"  # the longest kernel, 9 launches
GEMM_320 = "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_TNT"  # one configuration in the file
GEMM_128 = "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN"  # two configurations in the file


def _slower(k: dict, factor: float) -> None:
    """Kernel record `k` taking `factor` times its time for the same work (its rate following)."""
    k["time_ms"] *= factor
    k["gflops"] /= factor
    if "median_ms" in k:
        k["median_ms"] *= factor
    if k.get("timing"):
        k["timing"]["samples_ms"] = [t * factor for t in k["timing"]["samples_ms"]]
    k.pop("pct_of_reference", None)


def changed_profile() -> dict:
    """The committed transformer step after a change: the softmax backward's time and DRAM bytes
    cut by 38 % (1.070272 -> 0.66356864 ms), the direct copy gone, the softmax forward renamed
    (gone under its old name, new under the new one), the 320x128 GEMM launched on a 4x66 grid,
    the longest GEMM 10 % slower (bytes unchanged), the 128x256 GEMM at 2x66 blocks 1 % slower
    (within the 2 % noise). The step's time is the sum of the kernels'."""
    doc = json.loads(PROFILE.read_text())
    by = {(k["name"], tuple(k["grid"])): k for k in doc["kernels"]}
    bwd = by[(SOFTMAX_BWD, (8192, 1, 1))]
    _slower(bwd, 0.62)
    bwd["bytes"]["dram"] *= 0.62
    doc["kernels"].remove(by[(COPY, (512000, 1, 1))])
    doc["launches_profiled"] -= by[(COPY, (512000, 1, 1))]["launches"]
    by[(SOFTMAX_FWD, (8192, 1, 1))]["name"] = "cunn_SoftMaxForward [fused]"
    by[(SOFTMAX_FWD, (8192, 1, 1))]["demangled"] = "cunn_SoftMaxForward [fused]"
    by[(GEMM_320, (2, 66, 1))]["grid"] = [4, 66, 1]
    _slower(by[(GEMM, (2, 66, 1))], 1.10)
    _slower(by[(GEMM_128, (2, 66, 1))], 1.01)
    total = sum(k["time_ms"] for k in doc["kernels"])
    for k in doc["kernels"]:
        k["time_share"] = k["time_ms"] / total
    doc["total_time_ms"] = total
    return doc


@pytest.fixture(scope="module")
def both():
    return store.load(PROFILE, profile=True), store.parse(changed_profile(), profile=True)


def test_a_kernel_whose_dram_bytes_fell_is_faster_for_that_cause(both):
    cmp = compare_work(*both)
    d = next(d for d in cmp.kernels if d.label == SOFTMAX_BWD)
    assert d.before_ms == pytest.approx(1.070272) and d.after_ms == pytest.approx(1.070272 * 0.62)
    assert d.time_change == pytest.approx(-0.38)
    dram = next(lc for lc in d.levels if lc.level == "dram")
    assert dram.change == pytest.approx(-0.38) and dram.counted
    assert d.gflops_change == pytest.approx(1 / 0.62 - 1)  # the same FLOPs in 62 % of the time
    assert d.reading == "faster" and d.cause == "DRAM bytes -38 %, time -38 %"
    assert d.noise == NOISE and d.noise_from == "fixed" and d.launch == "8192 x 512"


def test_a_slower_kernel_without_a_byte_change_has_no_cause_and_a_small_one_is_noise(both):
    cmp = compare_work(*both)
    gemm = next(d for d in cmp.kernels if d.label == GEMM)
    assert gemm.time_change == pytest.approx(0.10) and gemm.reading == "slower" and gemm.cause is None
    assert all(lc.change == 0 for lc in gemm.levels)
    small = next(d for d in cmp.kernels if d.label == GEMM_128 and d.launch == "2x66 x 384")
    assert small.time_change == pytest.approx(0.01) and small.is_noise and small.reading == "noise"
    assert small.to_dict()["reading"] == "noise" and small.cause is None


def test_gone_new_and_a_changed_configuration_matched_by_a_unique_name(both):
    cmp = compare_work(*both)
    assert cmp.gone == [f"{SOFTMAX_FWD} [8192x1x1 blocks of 1024x1x1]", f"{COPY} [512000x1x1 blocks of 128x1x1]"]
    assert cmp.new == ["cunn_SoftMaxForward [fused] [8192x1x1 blocks of 1024x1x1]"]
    moved = [d for d in cmp.kernels if d.configuration]
    assert [(d.label, d.configuration) for d in moved] == [
        (GEMM_320, "2x66 x 384 -> 4x66 x 384")]
    assert len(cmp.kernels) == 65 - 2 and "1 kernel(s) matched by name alone" in cmp.notes[-1]
    assert cmp.notes[0] == "a profile has no timing samples: a time change within 2 %, or within 1 us per launch, is called noise"


def test_the_step_is_the_profiled_gpu_time_and_sums_bytes(both):
    before, after = both
    cmp = compare_work(before, after)
    step = cmp.step
    assert step.before_ms == pytest.approx(10.536928) and step.after_ms == pytest.approx(after.total_time_ms)
    # -0.38 x 1.070272 (softmax backward) - 0.725152 (the copy gone) + 0.1 x 1.194592 + 0.01 x 0.682816
    saved = -0.38 * 1.070272 - 0.725152 + 0.1 * 1.194592 + 0.01 * 0.682816
    assert step.after_ms - step.before_ms == pytest.approx(saved)
    dram_b = sum(k.bytes.get("dram", 0) for k in before.kernels)
    dram_a = sum(k.bytes.get("dram", 0) for k in after.kernels)
    assert next(lc for lc in step.levels if lc.level == "dram").after == pytest.approx(dram_a)
    assert dram_a < dram_b and step.reading == "faster"
    assert dram_a / dram_b - 1 == pytest.approx(-0.1444, abs=1e-4)
    assert step.after_ms / step.before_ms - 1 == pytest.approx(-0.0954, abs=1e-4)
    # each profile is read against its own ceilings, each at least the best rate that profile counted. Before,
    # the copy and the softmax backward are DRAM-bound (at a fill kernel's 4,543 GB/s); after, the backward's L2
    # bytes, unchanged in 62 % of the time, are the best L2 rate the second profile counted, which raises its L2
    # ceiling: the backward is L2-bound there and kernels near two roofs move between them. The L2-bound kernels'
    # time moved most
    b, a = ({k.name: k for k in doc.kernels} for doc in (before, after))
    assert before.verdict(b[SOFTMAX_BWD]).binding.level == "DRAM" and before.verdict(b[COPY]).binding.level == "DRAM"
    assert after.verdict(a[SOFTMAX_BWD]).binding.level == "L2"
    assert after.seen_rates()["L2"][1] == SOFTMAX_BWD
    # and what only one side ran: the copy (0.725152 ms) and the softmax forward under its old name gone, 0.825 ms
    # of it new under the new name
    fwd = next(k.time_ms for k in before.kernels if k.name == SOFTMAX_FWD)
    assert f"{0.725152 + fwd:.3f}" == "1.551" and f"{fwd:.3f}" == "0.825"
    assert step.cause == ("L2-bound kernels -1.764 ms (L2 bytes -4.5 %), time -9.5 %; of the step's kernels, "
                          "2 kernels gone (1.551 ms) and 1 new (0.825 ms)")  # a time under 10 % with one decimal


def test_a_profile_against_a_run_is_refused_in_one_line(tmp_path):
    r = CliRunner().invoke(app, ["compare", str(PROFILE), str(PLOTS / "results-h200.json")])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("roofline: error: cannot compare a profile with a run")


def test_compare_json_of_two_profiles(tmp_path):
    after = tmp_path / "after.json"
    after.write_text(json.dumps(changed_profile()))
    r = CliRunner().invoke(app, ["compare", str(PROFILE), str(after), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["kind"] == "profile" and doc["same_device"] and doc["noise_fixed"] == 0.02
    assert doc["step"]["time_ms"][0] == pytest.approx(10.536928) and len(doc["kernels"]) == 63
    bwd = next(k for k in doc["kernels"] if k["kernel"] == SOFTMAX_BWD)
    assert bwd["cause"] == "DRAM bytes -38 %, time -38 %" and bwd["bytes"]["dram"]["change"] == pytest.approx(-0.38)
    assert bwd["slowdown"] == pytest.approx(-0.38) and bwd["reading"] == "faster"
    assert len(doc["gone"]) == 2 and len(doc["new"]) == 1


def test_the_chart_draws_each_move_as_an_arrow(both, tmp_path, monkeypatch):
    from roofline.render import compare_chart

    monkeypatch.setattr(compare_chart, "TOP", 5)  # fewer rows: a faster test, the same drawing
    svg = compare_chart.draw_moves(compare_work(*both), tmp_path / "moves.svg").read_text()
    assert "step (profiled GPU time)" in svg and "DRAM bytes -38 %, time -38 %; 1.070 -&gt; 0.664 ms" in svg
    assert "the 5 longest of 63 matched kernels" in svg and "noise band" in svg and "gone, not drawn (2)" in svg


def test_sweep_against_sweep():
    sweep, shapes = store.load(PLOTS / "sweep-h200.json"), store.load(PLOTS / "shapes-h200.json")
    with pytest.raises(UsageError, match="different problems"):
        compare_work(sweep, shapes)
    cmp = compare_work(sweep, shapes, force=True)
    assert cmp.kind == "run" and cmp.step is None and len(cmp.kernels) == 14
    assert "the first file holds a size sweep: compared at its largest size, 8192x8192x8192" in cmp.notes
    doc = json.loads((PLOTS / "sweep-h200.json").read_text())
    k = next(k for k in doc["kernels"] if k["name"] == "register_tiling_2d")
    _slower(k, 0.8)  # 20 % faster, far outside its launches' spread
    cmp = compare_work(sweep, store.parse(doc))
    d = next(d for d in cmp.kernels if d.label == "register_tiling_2d")
    assert d.time_change == pytest.approx(-0.2) and d.reading == "faster" and d.noise_from == "spread"
    assert all(x.reading == "noise" and x.time_change == 0 for x in cmp.kernels if x is not d)


GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.mark.parametrize("name, columns, files", [
    ("compare_profiles_120", 120, ("profile", "changed")),
    ("compare_ladder_user_kernel_140", 140, ("results-h200", "user-kernel-h200")),
])
def test_compare_tables_match_the_golden_text(name, columns, files, tmp_path):
    """As tests/test_golden.py does (regenerate with ROOFLINE_UPDATE_GOLDEN=1)."""
    import os

    from test_golden import render

    (tmp_path / "changed.json").write_text(json.dumps(changed_profile()))
    paths = {"profile": PROFILE, "changed": tmp_path / "changed.json"}
    args = ["compare", *(str(paths.get(f, PLOTS / f"{f}.json")) for f in files)]
    got = render(columns, args).replace(str(tmp_path) + "/", "").replace(str(PLOTS) + "/", "")
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("ROOFLINE_UPDATE_GOLDEN"):
        path.write_text(got)
    assert got == path.read_text()
    tables = [line for line in got.split("\n--- stderr\n")[0].splitlines()
              if not line.startswith(("note: ", "gone, ", "new, "))]  # one line each, by contract
    assert [line for line in tables if len(line) > columns] == [] and "…" not in got


def test_a_profile_with_measured_ceilings_against_one_without_says_the_roofs_differ():
    # the committed transformer step (its H200's ceilings measured) against the same file without them, as
    # an imported report reads: its GEMM's 'of roof' falls from the measured BF16 ceiling to the clock-scaled
    # datasheet roof with no change of time, and a note says why
    doc = json.loads(PROFILE.read_text())
    bare = dict(doc, device={**doc["device"], "measured_at": None, "measured_dram_gbps": None,
                             "measured_fp32_gflops": None, "measured_l2_gbps": None, "measured_peaks_gflops": None,
                             "measured_method": None, "measured_smem_gbps": None})
    before, after = store.load(PROFILE, profile=True), store.parse(bare, profile=True)
    cmp = compare_work(before, after)
    assert any(n.startswith("'of roof' reads the first file against its measured ceilings and the other against "
                            "its theoretical roofs") for n in cmp.notes)
    gemm = next(d for d in cmp.kernels if d.label == GEMM)
    assert gemm.before_ms == gemm.after_ms and gemm.after_fraction < gemm.before_fraction
    assert not any("'of roof' reads" in n for n in compare_work(before, before).notes)


def test_profiles_of_other_programs_are_said_to_be_so():
    # a ResNet step against a transformer step: other commands, and 3 shared kernels that hold next to
    # none of either step's time; the AdamW pair is one program with another flag: only its commands differ
    load = lambda name: store.load(PLOTS / name, profile=True)  # noqa: E731
    other = compare_work(load("profile-h200-resnet-ops.json"), load("profile-h200-adamw-fused.json"))
    said = " ".join(other.notes)
    assert "the profiles record different commands (python3 examples/ops/step.py resnet before" in said
    assert f"the {len(other.kernels)} kernel(s) the profiles share hold" in said and "only one of them ran" in said
    same = compare_work(load("profile-h200-adamw-foreach.json"), load("profile-h200-adamw-fused.json"))
    assert any("--fused-adamw after" in n for n in same.notes) and not any("only one of them ran" in n for n in same.notes)


def test_names_in_both_profiles_left_unmatched_for_their_several_launches_are_named():
    # a new-user trial (2026-12-08): a GCN step against a Llama step, both on an H100; 'multi_tensor_apply_kernel
    # [PointwiseOpScalarListFunctor, divides]' runs at one configuration in the first and two in the second, and came
    # out both gone and new without a word, beside five kernels of one launch each matched by name alone
    fixtures = Path(__file__).resolve().parent / "fixtures" / "timeline-h100"
    got = CliRunner().invoke(app, ["compare", str(fixtures / "profile-gcn.json.gz"), str(fixtures / "profile-llama.json.gz"),
                                   "--json"])
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    (note,) = [n for n in doc["notes"] if "left among the gone and the new" in n]
    assert note.startswith("10 kernel name(s) in both files left among the gone and the new")
    assert "multi_tensor_apply_kernel [PointwiseOpScalarListFunctor, divides] (1 configuration before, 2 after)" in note
    assert "splitKreduce_kernel (2 configurations before, 1 after)" in note
    assert any(n == "5 kernel(s) matched by name alone: their launch configuration changed" for n in doc["notes"])
