"""A kernel benchmark's problem graded on a real GPU (`roofline run problem.py new.py ...`): the
honest candidates of tests/fixtures/problems/candidates are verified, timed and graded against the
reference with no flag, and every cheat is flagged or refused as its first line says (those the
CPU's check cannot catch among them: timed on the GPU), through the command line as a user types
it. Skipped without a GPU or PyTorch with CUDA."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device for PyTorch", allow_module_level=True)

PROBLEMS = Path(__file__).resolve().parent / "fixtures" / "problems"
CANDIDATES = PROBLEMS / "candidates"


def _expected(path: Path) -> str:
    return path.read_text().splitlines()[0].lstrip("# ").split(":")[0].split(" ")[0]


def _grade(tmp_path, problem_file: str, prefix: str) -> tuple[int, dict, str]:
    out = tmp_path / f"{prefix}.json"
    files = sorted(str(p) for p in CANDIDATES.glob(f"{prefix}_*.py"))
    r = CliRunner().invoke(app, ["run", str(PROBLEMS / problem_file), *files, "--out", str(out), "--budget", "0.3"])
    doc = json.loads(out.read_text()) if out.exists() else {}
    return r.exit_code, {e["name"]: e for e in doc.get("entries", [])}, r.output


@pytest.mark.parametrize("problem_file, prefix", [("small_matmul.py", "matmul"), ("clamp.py", "clamp")])
def test_every_candidate_gets_the_verdict_its_file_names(tmp_path, problem_file, prefix):
    code, entries, output = _grade(tmp_path, problem_file, prefix)
    assert "Traceback" not in output and entries, output
    ref = entries.pop("reference")
    assert ref["time_ms"] and ref["error"] is None and ref["flags"] == [], ref
    if ref.get("kernels") is not None or "cupti-python is not installed" not in output:  # CUPTI's records
        k = ref["kernels"]  # the calls from an idle device own the kernels that started in them
        assert k["launches"] >= 1 and k["calls"] == 5 and 0 < k["busy_ms"] <= k["span_ms"] < 2 * ref["time_ms"] + 0.05, k
    for name, e in entries.items():
        want = _expected(CANDIDATES / f"{name}.py")
        got = [f["code"] for f in e["flags"]]
        if want == "honest":
            assert e["verified"] and e["error"] is None and got == [] and e["time_ms"], (name, e)
            assert e["baseline"] == "reference" and e["baseline_ms"] == ref["time_ms"], (name, e)
        elif want in ("fails", "wrong"):
            assert not e["verified"] and e["error"], (name, e)
        elif want == "not_graded":
            assert e["share"] is None and (e["error"] or got), (name, e)
        elif want == "no_gain":  # graded, at no less than the reference's time, or caught
            assert e["share"] is None or e["time_ms"] >= 0.9 * ref["time_ms"], (name, e)
        else:
            assert want in got and e["share"] is None, (name, want, e)


def test_the_persisting_set_aside_a_candidate_leaves_is_put_back():
    import ctypes

    from roofline.measure import l2_persist

    torch.zeros(1, device="cuda")  # a current context
    driver = ctypes.CDLL("libcuda.so.1")
    l2_persist.clear()  # the driver's own set-aside (9.4 MiB on an H100 of the device machine) put back to 0
    # a window on the stream, with no set-aside: found, and taken off (on an H100 such a window alone kept a
    # product's input through the L2 flush: l2_persist's docstring)
    window = l2_persist._Window(torch.zeros(1 << 16, device="cuda").data_ptr(), 1 << 18, 1.0, 2, 1)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    assert driver.cuStreamSetAttribute(stream, l2_persist.CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW,
                                       ctypes.byref(window)) == 0
    assert l2_persist.clear() == 1 << 18 and l2_persist.clear() == 0
    if driver.cuCtxSetLimit(l2_persist.CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(8 << 20)) != 0:
        pytest.skip("this GPU sets aside no L2 for persisting lines")
    assert l2_persist.limit() > 0
    assert l2_persist.clear() > 0 and l2_persist.limit() == 0


def test_a_gpu_mode_task_is_graded_on_every_case_its_lazy_submission_on_none(tmp_path):
    # tests/fixtures/gpumode/axpy_py: three benchmark cases; its submission writes the output buffer it is given and
    # returns it (no flag: the buffer is its to write), the lazy one returns the buffer unwritten (drawn NaN: wrong)
    task = Path(__file__).resolve().parent / "fixtures" / "gpumode" / "axpy_py"
    out = tmp_path / "axpy.json"
    r = CliRunner().invoke(app, ["run", str(task), str(task / "submission.py"), str(task / "untouched_buffer.py"),
                                 "--out", str(out), "--budget", "0.2"])
    assert "Traceback" not in r.output and out.exists(), r.output
    doc = json.loads(out.read_text())
    cases = ["axpy_py[size=4096]", "axpy_py[size=1048576]#2", "axpy_py[size=1048576]#3"]
    by = {(e["workload"], e["name"]): e for e in doc["entries"]}
    assert set(by) == {(c, n) for c in cases for n in ("reference", "submission", "untouched_buffer")}
    for case in cases:
        honest, lazy = by[(case, "submission")], by[(case, "untouched_buffer")]
        assert honest["verified"] and honest["error"] is None and honest["flags"] == [] and honest["time_ms"], honest
        assert honest["baseline_ms"] == by[(case, "reference")]["time_ms"]
        assert not lazy["verified"] and "NaN" in lazy["error"], lazy
    assert any("geometric mean of the times over the 3 cases" in n and "submission" in n for n in doc["notes"])


def test_an_fp8_product_is_graded_at_the_fp8_tensor_roof(tmp_path):
    # torch._scaled_mm of E4M3 operands: 2 M N K FP8 tensor FLOPs (until 2026-12-07 read as FP32 work, so cuBLAS's FP8
    # product ran at some 20x its FP32 speed of light and was refused)
    problem = PROBLEMS / "fp8_matmul.py"
    if torch.cuda.get_device_capability() < (8, 9):
        pytest.skip("no FP8 tensor cores on this GPU")
    out = tmp_path / "fp8.json"
    r = CliRunner().invoke(app, ["run", str(problem), str(PROBLEMS / "fp8" / "fp8_matmul_new.py"), "--out", str(out),
                                 "--budget", "0.3"])
    assert "Traceback" not in r.output and out.exists(), r.output
    doc = json.loads(out.read_text())
    by = {e["name"]: e for e in doc["entries"]}
    for name in ("reference", "fp8_matmul_new"):
        e = by[name]
        assert e["error"] is None and e["flags"] == [] and e["verified"], e
        assert e["work"]["flops"] == {"fp8_tensor": 2.0 * 4096**3}, e["work"]
        assert e["binding"] == "FP8 tensor" and 0.3 < e["share"] <= 1.1, e  # cuBLAS's FP8 at a third of the roof at least
