"""`roofline run` grading on a real GPU (once `roofline grade`): the kernels and callables of
examples/grade verify, time and grade with no integrity flag, and each planted cheat of
tests/fixtures/grade raises its own flag (one per flag), through the command line as a user types
it. Skipped without a GPU."""

import json
import shutil

import pytest
from typer.testing import CliRunner

from roofline.cli import app

pytestmark = pytest.mark.gpu

FIXTURES = "tests/fixtures/grade"
HONEST = ["examples/grade/softmax_online.cu", "examples/grade/reduce_sum.cu", "examples/grade/layer_norm.cu",
          "examples/grade/scan_rows_vec4.cu", f"{FIXTURES}/copy.cu"]


def grade(tmp_path, *args: str) -> tuple[int, dict, str]:
    out = tmp_path / "grades.json"
    r = CliRunner().invoke(app, ["run", *args, "--out", str(out), "--budget", "0.3"])
    doc = json.loads(out.read_text()) if out.exists() else {}
    return r.exit_code, {e["name"]: e for e in doc.get("entries", [])}, r.output


def codes(entry: dict) -> list[str]:
    return [f["code"] for f in entry["flags"]]


def test_honest_kernels_are_graded_without_flags(tmp_path):
    """Each honest kernel verifies on three draws of its inputs (before and after timing), is
    timed, and lands between 20 % and 110 % of its speed of light, none flagged."""
    code, entries, output = grade(tmp_path, *HONEST)
    assert code == 0, output
    for name, e in entries.items():
        assert e["verified"] and e["error"] is None, (name, e["error"])
        assert len(e["checks"]) == 3, (name, e["checks"])
        assert any("(after timing)" in c["name"] for c in e["checks"]), name
        assert codes(e) == [], (name, e["flags"])
        assert 0.2 < e["share"] <= 1.1, (name, e["share"])
        assert e["binding"] == "DRAM" and e["registers"] > 0 and e["occupancy"]["occupancy"] > 0


def test_a_tiny_honest_kernel_is_launch_bound_and_not_flagged(tmp_path):
    """A copy of 1,024 floats: its speed of light is the launch floor (an empty kernel timed as it
    is), and it is neither faster than light nor taken for work that never ran."""
    code, entries, output = grade(tmp_path, f"{FIXTURES}/copy.cu", "--size", "N=1024")
    e = entries["copy"]
    assert code == 0, output
    assert e["binding"] == "launch" and codes(e) == [] and 0.3 < e["share"] <= 1.1, e


@pytest.mark.parametrize("n", [256, 4096 * 4096])
def test_a_kernel_that_never_ends_is_stopped_at_its_timeout_and_the_next_entry_graded(tmp_path, n):
    """A kernel that spins forever, graded with --timeout 2 before an honest copy: its child ends
    2 s into its first launch (the error says so, and how long start-up took), and the copy after
    it is graded on the same GPU."""
    import time

    start = time.monotonic()
    code, entries, output = grade(tmp_path, f"{FIXTURES}/spin.cu", f"{FIXTURES}/copy.cu", "--size", f"N={n}",
                                  "--timeout", "2")
    took = time.monotonic() - start
    assert code == 1 and "Traceback" not in output, output
    error = entries["spin"]["error"]
    assert "timeout: stopped after 2." in error and "s of start-up, compile, inputs and references before it" in error
    assert not entries["spin"]["verified"] and entries["spin"]["registers"] > 0
    assert entries["copy"]["verified"] and entries["copy"]["error"] is None
    assert took < 120, took


def test_honest_callables_are_graded_without_flags(tmp_path):
    """A Triton kernel and a PyTorch operator, timed with events around the call, no flags; the
    wall clock of a call from an idle device stays near its events' time."""
    pytest.importorskip("triton")
    code, entries, output = grade(tmp_path, "examples/grade/softmax_triton.toml",
                                  "examples/grade/torch_layer_norm.toml")
    assert code == 0, output
    for name, e in entries.items():
        assert e["verified"] and codes(e) == [], (name, e["flags"])
        assert e["wall_ms"] - e["event_ms"] < 0.2, name
        assert 0.2 < e["share"] <= 1.1


def test_faster_than_light_is_flagged_and_refused_at_twice(tmp_path):
    """A copy that declares 1.5x its bytes is flagged faster than light with its figures; one that
    declares 4x is refused (exit 1), and the honest copy beside them is still graded."""
    code, entries, output = grade(tmp_path, f"{FIXTURES}/copy.cu", f"{FIXTURES}/ftl_copy.cu",
                                  f"{FIXTURES}/refused_copy.cu")
    assert code == 1 and "refused_copy: refused: its declared work makes it" in output
    assert codes(entries["copy"]) == [] and entries["copy"]["share"] > 0.8
    ftl = entries["ftl_copy"]
    assert codes(ftl) == ["faster_than_light"] and 1.1 < ftl["share"] < 2 and ftl["flags"][0]["figures"]["t_sol_ms"]
    refused = entries["refused_copy"]
    assert refused["refused"] and refused["share"] is None and codes(refused) == ["faster_than_light"]


def test_unwritten_outputs_are_flagged(tmp_path):
    code, entries, output = grade(tmp_path, f"{FIXTURES}/half_written.cu")
    e = entries["half_written"]
    assert code == 1 and codes(e) == ["nan_or_unwritten"] and not e["verified"] and e["time_ms"] is None
    assert e["flags"][0]["figures"]["elements"] == e["flags"][0]["figures"]["size"] / 2


def test_modified_inputs_are_flagged(tmp_path):
    """A right answer, but its input zeroed: graded, and flagged with the count of changed elements."""
    code, entries, output = grade(tmp_path, f"{FIXTURES}/writes_input.cu")
    e = entries["writes_input"]
    assert code == 0 and e["verified"] and codes(e) == ["inputs_modified"]


def test_a_cached_answer_is_flagged(tmp_path):
    code, entries, output = grade(tmp_path, f"{FIXTURES}/cheats.py:cached", f"{FIXTURES}/cheats.py:honest",
                                  "--spec", f"{FIXTURES}/double.toml")
    assert code == 1
    assert codes(entries["cheats.cached"]) == ["cached_answer"] and not entries["cheats.cached"]["verified"]
    assert codes(entries["cheats.honest"]) == [] and entries["cheats.honest"]["verified"]


def test_work_that_never_reaches_the_gpu_is_flagged(tmp_path):
    """A callable that computes only for its first two calls: no GPU work while timed (at the
    launch floor), and the check after timing sees the same output for new inputs."""
    code, entries, output = grade(tmp_path, f"{FIXTURES}/cheats.py:lazy", "--spec", f"{FIXTURES}/double.toml")
    e = entries["cheats.lazy"]
    assert code == 1 and "no_gpu_work" in codes(e) and "cached_answer" in codes(e) and e["refused"]


def test_an_early_return_is_flagged(tmp_path):
    """Work left on a side stream: the events see almost nothing, the wall clock to an idle device
    sees it all."""
    pytest.importorskip("torch")
    code, entries, output = grade(tmp_path, f"{FIXTURES}/cheats_torch.py:side_stream", "--spec",
                                  f"{FIXTURES}/double.toml")
    e = entries["cheats_torch.side_stream"]
    assert "async_return" in codes(e) and e["wall_ms"] > e["event_ms"] + 0.2


@pytest.mark.skipif(shutil.which("ncu") is None, reason="ncu is not installed")
def test_tensor_work_missing_is_flagged_under_profile(tmp_path):
    """A BF16 GEMM on the CUDA cores, declared as tensor work: Nsight Compute counts its FP32
    FLOPs (2 M N K) and no tensor-core ones."""
    code, entries, output = grade(tmp_path, f"{FIXTURES}/tensor_missing.cu", "--profile")
    e = entries["tensor_missing"]
    assert code == 0, output
    assert codes(e) == ["tensor_work_missing"]
    assert e["counted"]["kernels"] == 1 and e["counted"]["flops"]["fp32"] == pytest.approx(2 * 1024**3, rel=0.01)


@pytest.mark.skipif(shutil.which("ncu") is None, reason="ncu is not installed")
def test_profile_counts_an_honest_kernel_near_its_compulsory_bytes(tmp_path):
    """softmax_online under --profile: about one read and one write of the rows from DRAM."""
    code, entries, output = grade(tmp_path, "examples/grade/softmax_online.cu", "--profile")
    e = entries["softmax_online"]
    assert code == 0 and codes(e) == [], output
    assert 0.9 < e["counted"]["excess"] < 1.2 and e["counted"]["binding"] == "DRAM"


def test_bad_input_is_one_line_each_and_the_rest_is_kept(tmp_path):
    """A callable that raises (exit 1), a reference that gives NaN and one that gives another shape
    (the spec's errors: exit 2): one line each, and the honest entry beside them is graded and kept."""
    code, entries, output = grade(tmp_path, f"{FIXTURES}/cheats.py:raises", f"{FIXTURES}/cheats.py:honest",
                                  "--spec", f"{FIXTURES}/double.toml")
    assert code == 1 and entries["cheats.honest"]["share"] > 0
    assert "cheats.raises: launch raised ValueError: this callable always fails" in output
    code, entries, output = grade(tmp_path, f"{FIXTURES}/cheats.py:honest", "--spec", f"{FIXTURES}/nan_reference.toml")
    assert code == 2 and "NaN or infinite elements on the drawn inputs" in output
    assert "cheats.honest" in entries and entries["cheats.honest"]["error"]  # kept, with the spec's error
    code, entries, output = grade(tmp_path, f"{FIXTURES}/cheats.py:honest", "--spec", f"{FIXTURES}/wrong_shape.toml")
    assert code == 2 and "the reference gives y the shape (10,); the spec declares (1048576,)" in output
    errors = [ln for ln in output.splitlines() if ln.startswith("roofline: error:")]
    assert len(errors) == 1
