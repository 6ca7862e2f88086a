"""The regression gate (`roofline check`): exit 0 when no matched kernel got slower than --max-drop
and than its noise, 1 naming those that did, 2 for bad input."""

import json
from pathlib import Path

import pytest
from conftest import make_doc, set_rate
from test_compare_profiles import GEMM, PROFILE, changed_profile
from typer.testing import CliRunner

from roofline.cli import app
from roofline.errors import UsageError
from roofline.results import store
from roofline.analysis.check import check, parse_max_drop

PLOTS = Path(__file__).resolve().parent.parent / "plots"


def gate(new, baseline, *args, **kwargs):
    """`compare BASELINE NEW --max-drop` (5 % unless `args` give one): the regression gate."""
    args = [str(a) for a in args]
    drop = [] if "--max-drop" in args else ["--max-drop", "5%"]
    return CliRunner().invoke(app, ["compare", str(baseline), str(new), *args, *drop], **kwargs)


@pytest.fixture(scope="module")
def changed(tmp_path_factory):
    path = tmp_path_factory.mktemp("check") / "changed.json"
    path.write_text(json.dumps(changed_profile()))
    return path


def test_max_drop_reads_a_percentage_or_a_fraction():
    assert parse_max_drop("5%") == pytest.approx(0.05) and parse_max_drop("0.05") == 0.05
    assert parse_max_drop(" 12.5 % ") == pytest.approx(0.125)
    for bad in ("five", "-5%", "0", "", "nan", "2000%"):
        with pytest.raises(UsageError, match="^max_drop "):
            parse_max_drop(bad)


def test_the_committed_user_kernel_run_passes_against_the_ladder():
    r = gate(PLOTS / "user-kernel-h200.json", PLOTS / "results-h200.json")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines == [
        "new (not gated):", "  tiled_f4",
        "gate passed: none of 14 matched kernels is slower by more than 5 % and beyond its noise",
        "  the largest slowdown: full_tiles +0.2 % (within its noise)"]


def test_a_kernel_10_percent_slower_fails_and_is_named(changed):
    r = gate(changed, PROFILE)
    assert r.exit_code == 1, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == f"slower: {GEMM}: 1.195 -> 1.314 ms (+10 %; noise 2 %, --max-drop 5 %)"
    assert lines[-1] == "gate failed: 1 of 63 matched kernels slower by more than 5 % and beyond their noise"
    gone = lines.index("gone (in the baseline only, not gated):")
    assert lines[gone + 1].startswith("  cunn_SoftMaxForward")
    assert gate(changed, PROFILE, "--max-drop", "10.5%").exit_code == 0  # 10 % is allowed now
    r = gate(changed, PROFILE, "--json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and doc["passed"] is False and doc["failed"] == [GEMM] and doc["measure"] == "time"
    assert doc["max_drop"] == 0.05 and len(doc["gone"]) == 2 and doc["new"] == [
        "cunn_SoftMaxForward [fused] [8192x1x1 blocks of 1024x1x1]"]
    failed = next(k for k in doc["kernels"] if k["failed"])
    assert failed["slowdown"] == pytest.approx(0.10) and failed["noise_from"] == "fixed"


def test_a_slowdown_inside_the_spread_is_noise_and_passes():
    before = make_doc()
    after = make_doc()
    k = after["kernels"][5]
    set_rate(k, k["gflops"] / 1.06)  # 6 % slower: beyond --max-drop 5 %
    k.pop("timing", None)
    t = before["kernels"][5]["time_ms"]
    before["kernels"][5]["timing"] = {"samples_ms": [t] * 20 + [t * 1.08], "warmup": 3}  # spread over 8 %
    result = check(store.parse(after), store.parse(before), 0.05)
    g = next(g for g in result.kernels if g.delta.label == k["name"])
    assert g.slowdown == pytest.approx(0.06) and g.delta.noise_from == "spread"
    assert g.delta.noise == pytest.approx(0.08, abs=0.005) and not g.failed and result.passed


def test_across_gpus_the_fraction_of_the_roof_is_gated():
    before, after = make_doc(), make_doc(gpu="rtx5080")
    result = check(store.parse(after), store.parse(before))
    assert result.measure == "fraction of binding roof"
    d = result.kernels[0].delta
    assert result.kernels[0].slowdown == pytest.approx(d.before_fraction / d.after_fraction - 1)
    # the same rates against the RTX 5080's lower roofs: closer to them, by the fraction, whatever the time did
    assert d.time_change == pytest.approx(0) and d.after_fraction > d.before_fraction and d.reading == "closer"
    assert result.passed and result.to_dict()["measure"] == "fraction of binding roof"
    r = gate("y.json", "x.json", "--max-drop", "lots")
    assert r.exit_code == 2 and r.stderr.startswith("roofline: error: --max-drop 'lots'")


def test_a_profile_against_a_run_is_refused():
    r = gate(PROFILE, PLOTS / "results-h200.json")
    assert r.exit_code == 2 and r.stderr.startswith("roofline: error: cannot compare a run with a profile")


def test_across_gpus_a_measured_roof_on_one_side_does_not_read_as_a_slowdown():
    """The H200 file holds a measured FP32 roof 8 % under its theoretical one, the A100 file none:
    a kernel at the same fraction of each GPU's theoretical FP32 roof is no slower."""
    before, after = make_doc(), make_doc(gpu="a100-sxm4-80gb")
    before["device"]["measured_fp32_gflops"] = 0.92 * before["device"]["peak_fp32_gflops"]
    ratio = after["device"]["peak_fp32_gflops"] / before["device"]["peak_fp32_gflops"]
    b = next(k for k in before["kernels"] if k["name"] == "warptiling")
    a = next(k for k in after["kernels"] if k["name"] == "warptiling")
    set_rate(a, b["gflops"] * ratio)
    after["reference"]["gflops"] *= ratio
    after["reference"]["time_ms"] /= ratio
    for k in after["kernels"]:
        k.pop("pct_of_reference", None)
        if k["name"] != "warptiling" and k["gflops"] > 0.9 * after["device"]["peak_fp32_gflops"]:
            set_rate(k, 0.5 * after["device"]["peak_fp32_gflops"])
    result = check(store.parse(after), store.parse(before))
    g = next(g for g in result.kernels if g.delta.label == "warptiling")
    assert g.delta.before_fraction == pytest.approx(b["gflops"] / before["device"]["peak_fp32_gflops"], rel=1e-6)
    assert g.slowdown == pytest.approx(0, abs=1e-6) and not g.failed  # was +8.7 %, failing the gate
    assert any("theoretical" in n for n in result.comparison.notes)


def test_runs_of_different_problems_are_refused_without_offering_a_force_the_gate_lacks(tmp_path):
    other = tmp_path / "results-3000.json"
    other.write_text(json.dumps(make_doc(n=3000)))
    r = gate(PLOTS / "sweep-h200.json", other)
    assert r.exit_code == 2 and "--across-sizes" not in r.stderr and "--force" not in r.stderr
    assert r.stderr.strip() == ("roofline: error: the baseline solves 3000x3000x3000 and the new file "
                                "8192x8192x8192: a change of problem is no slowdown; check against a baseline "
                                "of the same problem")


def test_a_sweep_is_gated_at_the_size_the_baseline_holds():
    # the FP32 sweep (128^3 to 8192^3) against the 4096^3 run, both on the H200: read at 4096^3
    r = gate(PLOTS / "sweep-h200.json", PLOTS / "results-h200.json", "--json")
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.stdout)
    assert any(n.startswith("the second file holds a size sweep: compared at 4096x4096x4096") for n in doc["notes"])
    naive = next(k for k in doc["kernels"] if k["kernel"] == "naive")
    # the sweep's time at 4096^3: 2 * 4096^3 FLOP at its 498.625 GFLOP/s there = 275.64 ms
    assert naive["time_ms"][1] == pytest.approx(2 * 4096**3 / 498.6247e6, rel=1e-5) and not naive["failed"]
    # a CI log says at which size the sweep was gated: the notes go to stderr beside the reading
    r = gate(PLOTS / "sweep-h200.json", PLOTS / "results-h200.json")
    assert r.exit_code in (0, 1) and ("roofline: note: the second file holds a size sweep: compared at "
                                      "4096x4096x4096, one of its sizes") in r.stderr
def test_a_slower_step_fails_though_every_matched_kernel_held():
    # AdamW's fused kernel replaced by its 14 foreach kernels: every kernel both steps share reads as
    # noise, the 14 are new (not gated), and the step is 10.522 / 9.894 - 1 = +6.3 % slower.
    foreach, fused = str(PLOTS / "profile-h200-adamw-foreach.json"), str(PLOTS / "profile-h200-adamw-fused.json")
    r = gate(foreach, fused, env={"COLUMNS": "200"})
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert "slower: step (profiled GPU time): 9.894 -> 10.522 ms (+6.3 %; noise 2 %, --max-drop 5 %)" in lines
    assert lines[-1].startswith("gate failed: the step is +6.3 % slower, beyond its noise, though none of 51")
    doc = json.loads(gate(foreach, fused, "--json").stdout)
    assert doc["passed"] is False and doc["failed"] == ["step (profiled GPU time)"]
    # the other way round the step is 6.0 % faster: the gate passes and says so
    r = gate(fused, foreach, "--max-drop", "6.5%")
    assert r.exit_code == 0 and "step (profiled GPU time): 10.522 -> 9.894 ms (-6.0 %" in r.stdout


def test_a_failed_kernel_of_two_launch_configurations_is_named_with_its_launch(tmp_path):
    # the transformer step (H200) with both launch configurations of its 128x256 GEMM 10 % slower: each named in
    # `failed` with its grid x block, and each entry carrying its launch
    from test_compare_profiles import _slower

    doc = json.loads(PROFILE.read_text())
    twice = "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN"
    for k in doc["kernels"]:
        if k["name"] == twice:
            _slower(k, 1.10)
    total = sum(k["time_ms"] for k in doc["kernels"])
    for k in doc["kernels"]:
        k["time_share"] = k["time_ms"] / total
    doc["total_time_ms"] = total
    after = tmp_path / "after.json"
    after.write_text(json.dumps(doc))
    got = CliRunner().invoke(app, ["compare", str(PROFILE), str(after), "--max-drop", "5%", "--json"])
    assert got.exit_code == 1, got.output
    out = json.loads(got.stdout)
    grids = sorted(f"{'x'.join(map(str, k['grid'][:2]))} x {k['threads_per_block']}" for k in doc["kernels"]
                   if k["name"] == twice)  # '2x64 x 384': a grid's third dimension of 1 left out
    assert sorted(f for f in out["failed"] if f.startswith(twice)) == [f"{twice} [{g}]" for g in grids]
    assert all(k["launch"] for k in out["kernels"] if k["kernel"] == twice)


def test_a_grade_gate_fails_on_a_graded_entry_the_new_file_lacks_and_says_so():
    # docs/check.md, "Grade files": the matmul corpus against the three cheats graded apart share five
    # entries, none slower; the baseline's 25 others are missing, which fails a grade gate (not a kernel gate)
    from typer.testing import CliRunner

    from roofline.cli import app
    plots = Path(__file__).resolve().parents[1] / "plots"
    r = CliRunner().invoke(app, ["compare", str(plots / "grades-h100-corpus-matmul.json"),
                                 str(plots / "grades-h100-corpus-newest.json"), "--max-drop", "5%"],
                           env={"COLUMNS": "300"})
    text = " ".join(r.output.split())
    assert r.exit_code == 1
    assert ("gate failed: 0 of 5 matched entries slower, newly flagged or no longer graded; 25 of the baseline's "
            "entries not in the new file, each a failure for a grade gate") in text


def test_grade_files_of_two_gpu_models_are_read_by_time_over_t_sol_and_a_refused_entry_has_no_move():
    # the matmul corpus graded on an H100 and on an H200: the same code on another card is no regression of
    # its time; matmul_side_stream, refused on the H200 (no_gpu_work), is not called faster
    import json as _json

    from typer.testing import CliRunner

    from roofline.cli import app
    plots = Path(__file__).resolve().parents[1] / "plots"
    h100, h200 = plots / "grades-h100-corpus-matmul.json", plots / "grades-h200-corpus-matmul.json"
    r = CliRunner().invoke(app, ["compare", str(h100), str(h200)], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert text.startswith("the GPU changed (NVIDIA H100 80GB HBM3 -> NVIDIA H200): each entry's change is that of "
                           "its time over its T_SOL")
    # the reference ran 0.01187 ms on both; its T_SOL is shorter on the H200 (30.7 % -> 23.2 % of light)
    assert "reference: 0.01187 ms, 30.7% of light -> 0.01187 ms, 23.2% of light (+32.6% over T_SOL, further from its " \
        "light)" in text  # not "slower": its time is the same
    assert "matmul_side_stream: 3.147 ms, not graded (async_return) -> 0.001856 ms, not graded (no_gpu_work); new " \
        "flags: no_gpu_work" in text  # no "faster", and why it is not graded on each side
    r = CliRunner().invoke(app, ["compare", str(h100), str(h200), "--max-drop", "5%", "--json"])
    doc = _json.loads(r.stdout)
    assert r.exit_code == 1 and doc["basis"] == "share" and doc["gpus"] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    side = next(e for e in doc["entries"] if e["name"] == "matmul_side_stream")
    assert side["move"] == "-" and side["change"] is None and side["failure"] == "new flag: no_gpu_work"
    ref = next(e for e in doc["entries"] if e["name"] == "reference")
    assert abs(ref["change"] - (0.307 / 0.232 - 1)) < 0.01 and ref["failure"].endswith("time over T_SOL beyond noise "
                                                                                       "(more than 5%)")


def test_a_kernel_that_no_longer_verifies_fails_the_gate(tmp_path):
    # full_tiles verified and timed in the baseline, failing verification in the new file: no time to
    # compare, but a regression all the same; the gate fails and names it, in text and in JSON
    raw = json.loads((PLOTS / "results-h200.json").read_text())
    k = next(k for k in raw["kernels"] if k["name"] == "full_tiles")
    k.update(verified=False, time_ms=None, gflops=None)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(raw))
    r = gate(broken, PLOTS / "results-h200.json")
    assert r.exit_code == 1, r.output
    assert "failed: full_tiles: verified and timed in the baseline, not in the new file" in r.stdout
    assert r.stdout.splitlines()[-1].startswith("gate failed: 1 kernel(s) the baseline verified and timed")
    doc = json.loads(gate(broken, PLOTS / "results-h200.json", "--json").stdout)
    assert doc["passed"] is False and doc["failed"] == ["full_tiles"] == doc["not_timed_now"]
    assert "full_tiles" not in doc["gone"]  # gated, so not among the ungated
    # the other way round (it verifies again) is no failure
    assert gate(PLOTS / "results-h200.json", broken).exit_code == 0


def test_a_gate_of_two_programs_says_how_little_of_them_it_matched():
    # a PyTorch GPT-2 step on an H200 against a JAX program on an H100: two kernels share names (3.1 % and 46.8 % of
    # the steps' GPU time); the gate passes on those alone, and its line says so, not a bare "gate passed"
    r = gate(PLOTS / "profile-h100-jax-ops.json", PLOTS / "profile-h200-gpt2.json", env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    line = " ".join(next(x for x in r.stdout.splitlines() if x.startswith("gate passed")).split())
    assert line.startswith("gate passed on what it matched: none of 2 matched kernels")
    assert "they hold 3.08 % of the first step's GPU time and 46.8 % of the second's, so the rest was not gated" in line
    doc = json.loads(gate(PLOTS / "profile-h100-jax-ops.json", PLOTS / "profile-h200-gpt2.json", "--json").stdout)
    assert doc["matched_share"] == pytest.approx([0.0308, 0.468], abs=5e-4)
    # one program against itself: all of it matched, the plain line
    same = gate(PLOTS / "profile-h200-gpt2.json", PLOTS / "profile-h200-gpt2.json")
    assert "gate passed: none of" in same.stdout and "not gated" not in same.stdout


def test_one_report_read_from_two_of_its_exports_is_one_gpu_and_the_step_rate_is_said_to_hold_the_counting(tmp_path):
    # the Llama step's H200 report as its raw page (the device 'NVIDIA H200') and as ncu's text output (read against
    # the preset 'H200'): one GPU, so times are gated; the text counts no FLOPs of CatArrayBatchedCopy
    import lzma

    corpus = Path(__file__).resolve().parent / "fixtures" / "ncu" / "corpus" / "llama"
    files = {}
    for name in ("full-raw.csv", "full-all.txt"):
        (tmp_path / name).write_bytes(lzma.decompress((corpus / f"{name}.xz").read_bytes()))
        files[name] = tmp_path / f"{name}.json"
        r = CliRunner().invoke(app, ["profile", "--import", str(tmp_path / name), "--out", str(files[name])])
        assert r.exit_code == 0, r.output
    r = gate(files["full-all.txt"], files["full-raw.csv"], "--json")
    doc = json.loads(r.stdout)
    assert {doc["before_device"], doc["after_device"]} == {"NVIDIA H200", "H200"} and doc["measure"] == "time"
    assert not any(n.startswith("different GPUs") for n in doc["notes"]) and doc["passed"]
    assert any(n.startswith("1 kernel counted other kinds of FLOPs in each file (CatArrayBatchedCopy")
               for n in doc["notes"]), doc["notes"]
