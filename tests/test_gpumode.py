"""Problems as GPU MODE's reference kernels write them (a task folder: reference.py with
generate_input and ref_kernel, task.yml with its cases and files, a submission's custom_kernel):
each benchmark case a problem, read and checked with no spec written by hand. The fixtures
(tests/fixtures/gpumode) are written in that format; the figures are worked by hand. The tests
that run PyTorch skip where it is not installed."""

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline.errors import UsageError
from roofline.workload import gpumode, problem

TASKS = Path(__file__).resolve().parent / "fixtures" / "gpumode"
AXPY, MM = TASKS / "axpy_py" / "reference.py", TASKS / "scaled_mm_py" / "reference.py"
CUMSUM = TASKS / "cumsum_py" / "reference.py"

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch")


def test_a_tasks_reference_is_a_problem_of_a_problem_per_benchmark_case():
    assert problem.is_problem(AXPY) and problem.is_task(AXPY) and not problem.is_task(TASKS.parent / "problems" /
                                                                                        "small_matmul.py")
    assert problem.is_candidate(AXPY.parent / "submission.py") and not problem.is_problem(AXPY.parent / "submission.py")
    assert problem.cases(AXPY) == [1, 2, 3]  # its benchmarks, not its one test
    assert problem.cases(MM) == [1, 2]  # no benchmarks: its tests
    assert problem.cases(TASKS.parent / "problems" / "small_matmul.py") == [None]
    listed = gpumode.cases(AXPY)
    # two cases of one size are told apart by their number; the seed is no part of a name
    assert [gpumode.name_of(AXPY, c, listed) for c in listed] == \
        ["axpy_py[size=4096]", "axpy_py[size=1048576]#2", "axpy_py[size=1048576]#3"]
    assert listed[1].drawn(0) == {"size": 1048576, "seed": 202} and listed[1].drawn(3) == {"size": 1048576, "seed": 205}


def test_cases_are_picked_by_the_arguments_of_generate_input():
    # axpy's cases: size 4096 (seed 101), size 1048576 (seeds 202 and 303)
    assert problem.cases(AXPY, ["size=1048576"]) == [2, 3]
    assert problem.cases(AXPY, ["size=4096", "size=1048576", "seed=303"]) == [3]  # either size, that seed
    assert problem.cases(AXPY, [" size = 4096 "]) == [1]
    assert problem.cases(MM, ["m=128", "k=32"]) == [2]
    listed = [gpumode.Case(1, {"m": [8, 16], "causal": True}), gpumode.Case(2, {"m": [8, 32], "causal": False})]
    assert [c.number for c in gpumode.chosen(AXPY, listed, ["m=[8, 32]"])] == [2]  # a list, read as YAML reads it
    assert [c.number for c in gpumode.chosen(AXPY, listed, ["m=[8,16]"])] == [1]
    assert [c.number for c in gpumode.chosen(AXPY, listed, ["causal=true"])] == [1]
    assert problem.cases(AXPY, ["size=4.096e3"]) == [1] and problem.cases(AXPY, ["size=4_096"]) == [1]
    numbers = [gpumode.Case(1, {"eps": 1e-5, "affine": True}), gpumode.Case(2, {"eps": 1e-6, "affine": 1})]
    assert [c.number for c in gpumode.chosen(AXPY, numbers, ["eps=1e-5"])] == [1]  # YAML 1.1 reads 1e-5 as text
    assert [c.number for c in gpumode.chosen(AXPY, numbers, ["affine=1"])] == [2]  # a number is no boolean
    assert [c.number for c in gpumode.chosen(AXPY, numbers, ["affine=true"])] == [1]


def test_a_case_that_leaves_an_argument_to_its_default_is_picked_by_it(tmp_path):
    reference = tmp_path / "reference.py"
    reference.write_text("import torch\n\ndef generate_input(n: int, seed: int, case: str = 'dense', *, "
                         "scale=2.5, other=len([])) -> tuple:\n    return torch.randn(n),\n\n"
                         "def ref_kernel(data):\n    return data[0]\n")
    assert gpumode.defaults(reference) == {"case": "dense", "scale": 2.5}  # `len([])` is no literal
    listed = [gpumode.Case(1, {"n": 4, "seed": 1}), gpumode.Case(2, {"n": 4, "seed": 2, "case": "banded"})]
    assert [c.number for c in gpumode.chosen(reference, listed, ["case=dense"])] == [1]
    assert [c.number for c in gpumode.chosen(reference, listed, ["scale=2.5", "case=banded"])] == [2]


@pytest.mark.parametrize("sizes, why", [
    (["size"], "give NAME=VALUE, e.g. size=4096"),
    (["m=64"], "the cases of .*task.yml take size, seed; not m"),
    (["size=5", "seed=101"], r"no case of .*task.yml has these \(size: 4096, 1048576; seed: 101, 202, 303\)"),
])
def test_sizes_that_pick_no_case_are_refused_naming_what_the_cases_take(sizes, why):
    with pytest.raises(UsageError, match=why):
        problem.cases(AXPY, sizes)


def test_a_problem_of_one_size_takes_no_size():
    with pytest.raises(UsageError, match="picks a GPU MODE task's cases; .*small_matmul.py is a problem of one size"):
        problem.cases(TASKS.parent / "problems" / "small_matmul.py", ["n=4"])


@needs_torch
def test_a_reference_beside_a_task_file_in_neither_format_is_refused_in_gpu_modes_words(tmp_path):
    (tmp_path / "task.yml").write_text("benchmarks:\n  - {b: 4}\n")
    (tmp_path / "reference.py").write_text("def reference_forward(x):\n    return x\n\n"
                                           "def generate_inputs(b):\n    return b\n")
    with pytest.raises(UsageError, match="a GPU MODE task's reference defines ref_kernel and generate_input \\(a "
                                         "KernelBench problem: class Model and get_inputs and get_init_inputs\\); "
                                         "it has neither"):
        problem.load(tmp_path / "reference.py")


def test_a_case_too_long_to_name_by_its_arguments_is_named_by_its_number(tmp_path):
    case = gpumode.Case(2, {"m": [80, 176, 128, 72, 64, 248, 96, 160], "n": [4096] * 8, "seed": 1})
    assert case.label() == "#2"
    assert gpumode.Case(1, {"seed": 7}).label() == "#1"


@pytest.mark.parametrize("text, why", [
    (None, "its cases are read from task.yml beside it, which is not there"),
    ("tests: [\n", "not YAML"),
    ("- 1\n- 2\n", "a task file is a mapping"),
    ("files: []\n", "it lists no benchmarks and no tests"),
    ("benchmarks:\n  - 4096\n", "case 1 is no mapping of generate_input's arguments"),
])
def test_a_task_file_missing_or_malformed_is_refused_in_one_line(tmp_path, text, why):
    reference = tmp_path / "reference.py"
    reference.write_text((AXPY).read_text())
    if text is not None:
        (tmp_path / "task.yml").write_text(text)
    with pytest.raises(UsageError, match=why):
        problem.cases(reference)
    r = CliRunner().invoke(app, ["kernels", str(reference), "--gpu", "h200"])
    assert r.exit_code == 2 and why in r.output and "Traceback" not in r.output


@needs_torch
def test_an_output_buffer_given_with_the_inputs_is_written_not_read():
    # out = 2x + y over 4096 float32: x and y read (2 x 16 KiB), the buffer written (16 KiB), never read
    w = problem.work(problem.load(AXPY, 1))
    assert w.work.flops == {} and w.work.bytes_read == 2 * 4096 * 4 and w.work.bytes_written == 4096 * 4
    assert [t.name for t in w.inputs] == ["input 0", "input 1", "input 2"]
    assert problem.load(AXPY, 3).name == "axpy_py[size=1048576]#3"


@needs_torch
def test_data_in_a_dict_with_a_number_beside_its_tensors_is_read_leaf_by_leaf():
    # (a @ b) * scale, a 128 x 32 and b 32 x 64 in FP16: 2 * 128 * 64 * 32 FLOPs on FP16 tensor cores;
    # a and b read (8 KiB + 4 KiB), the 128 x 64 FP16 product written (16 KiB); the scale a scalar argument
    w = problem.work(problem.load(MM, 2))
    assert w.work.flops == {"fp16_tensor": 2 * 128 * 64 * 32}
    assert w.work.bytes_read == (128 * 32 + 32 * 64) * 2 and w.work.bytes_written == 128 * 64 * 2
    assert w.scalars == (0.25,)


@needs_torch
def test_a_draw_is_the_case_as_given_at_seed_0_and_another_at_each_other_seed():
    loaded = problem.load(AXPY, 1)
    x0, y0, _ = loaded.inputs(0)
    again, moved = loaded.inputs(0), loaded.inputs(1)
    gen = torch.Generator().manual_seed(101)  # the case's own seed, on the host as read without a GPU
    assert torch.equal(x0, torch.randn(4096, generator=gen)) and torch.equal(again[0], x0)
    assert not torch.equal(moved[0], x0) and moved[0].shape == x0.shape


@needs_torch
def test_each_task_imports_its_own_utils_module():
    problem.load(AXPY, 1)
    assert Path(sys.modules["utils"].__file__).resolve() == (TASKS / "utils.py").resolve()
    assert Path(sys.modules["task"].__file__).resolve() == (TASKS / "axpy_py" / "task.py").resolve()
    problem.load(MM, 1)
    assert Path(sys.modules["task"].__file__).resolve() == (TASKS / "scaled_mm_py" / "task.py").resolve()


@needs_torch
def test_kernels_lists_every_case_with_its_speed_of_light():
    r = CliRunner().invoke(app, ["kernels", str(AXPY), str(MM), "--gpu", "h200", "--json"])
    assert r.exit_code == 0, r.output
    rows = {p["name"]: p for p in json.loads(r.stdout)["problems"]}
    assert list(rows) == ["axpy_py[size=4096]", "axpy_py[size=1048576]#2", "axpy_py[size=1048576]#3",
                          "scaled_mm_py[m=64,n=32,k=16]", "scaled_mm_py[m=128,n=64,k=32]"]
    assert rows["axpy_py[size=1048576]#2"]["bytes_read"] == 2 * 1048576 * 4
    assert rows["scaled_mm_py[m=64,n=32,k=16]"]["flops"] == {"fp16_tensor": 2 * 64 * 32 * 16}


@needs_torch
def test_kernels_lists_the_cases_size_picks_and_refuses_one_that_picks_none():
    r = CliRunner().invoke(app, ["kernels", str(AXPY.parent), "--gpu", "h200", "--size", "size=1048576", "--json"])
    assert r.exit_code == 0, r.output
    assert [p["name"] for p in json.loads(r.stdout)["problems"]] == ["axpy_py[size=1048576]#2",
                                                                     "axpy_py[size=1048576]#3"]
    r = CliRunner().invoke(app, ["kernels", str(AXPY.parent), "--gpu", "h200", "--size", "n=4"])
    assert r.exit_code == 2 and "--size n=...: the cases of" in r.output and "take size, seed" in r.output
    # across several tasks, the cases of those that have them; the others left out in a note
    r = CliRunner().invoke(app, ["kernels", str(AXPY.parent), str(MM.parent), "--gpu", "h200", "--size",
                                 "size=1048576", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [p["name"] for p in doc["problems"]] == ["axpy_py[size=1048576]#2", "axpy_py[size=1048576]#3"]
    assert "size=1048576 picks no case of 1 of the problems given, left out: scaled_mm_py" in doc["notes"]
    # each task picked by the names it takes; a name none takes is a slip
    r = CliRunner().invoke(app, ["kernels", str(AXPY.parent), str(MM.parent), "--gpu", "h200", "--size",
                                 "size=4096", "--size", "m=128", "--json"])
    assert r.exit_code == 0, r.output
    assert [p["name"] for p in json.loads(r.stdout)["problems"]] == ["axpy_py[size=4096]",
                                                                     "scaled_mm_py[m=128,n=64,k=32]"]
    r = CliRunner().invoke(app, ["kernels", str(AXPY.parent), str(MM.parent), "--gpu", "h200", "--size", "sise=1"])
    assert r.exit_code == 2 and "--size sise=...: no task given takes sise (they take size, seed, m, n, k)" in r.output
    r = CliRunner().invoke(app, ["kernels", str(AXPY.parent), str(MM.parent), "--gpu", "h200", "--size", "size=7"])
    assert r.exit_code == 2 and r.output.strip().splitlines() == [
        "roofline: error: --size size=7: none of the 2 problems given has a case with this; given one task alone, "
        "the line says what its cases take"]



def test_run_refuses_sizes_that_pick_no_case_before_any_gpu_work():
    sub = str(AXPY.parent / "submission.py")
    r = CliRunner().invoke(app, ["run", str(AXPY.parent), sub, "--size", "size=7"])
    assert r.exit_code == 2 and "--size size=7: no case of" in r.output and "(size: 4096, 1048576)" in r.output
    small = TASKS.parent / "problems"
    r = CliRunner().invoke(app, ["run", str(small / "small_matmul.py"), str(small / "candidates" / "matmul_honest.py"),
                                 "--size", "n=4"])
    assert r.exit_code == 2 and "--size picks a GPU MODE task's cases" in r.output


@needs_torch
def test_a_submission_is_checked_against_the_reference_and_a_lazy_one_fails():
    from roofline.measure import problem_child

    def checked(candidate: str, case: int):
        request = problem_child.request_for(AXPY, AXPY.parent / candidate, None, None, 0.05, None, device="cpu",
                                            case=case)
        return problem_child.grade_in_child(request)

    honest, lazy = checked("submission.py", 2), checked("untouched_buffer.py", 1)
    assert honest.check is not None and honest.check.verified and len(honest.check.draws) >= 2
    assert lazy.check is not None and not lazy.check.verified  # its buffer drawn NaN: never the answer
    assert all(not d.passed and "NaN or infinite" in d.outputs[0].reason for d in lazy.check.draws)


def _checked(reference: Path, candidate: str, case: int = 1):
    from roofline.measure import problem_child

    request = problem_child.request_for(reference, reference.parent / candidate, None, None, 0.05, None,
                                        device="cpu", case=case)
    return problem_child.grade_in_child(request)


@needs_torch
def test_the_tasks_own_check_fails_an_answer_roofline_would_pass():
    off = _checked(AXPY, "slightly_off.py", 1).check  # 5e-5 off: inside roofline's 1e-4, outside the task's rtol 1e-5
    assert off is not None and not off.verified and not off.flags
    assert all(o.passed for d in off.draws for o in d.outputs)  # roofline's own comparison passed it
    assert all(d.error == "the task's own check (check_implementation): output differs from the reference"
               for d in off.draws)
    assert _checked(AXPY, "submission.py", 1).check.verified


@needs_torch
def test_an_output_finds_the_buffer_it_is_else_one_of_its_size_and_kind():
    # a top-k: the reference returns new float32 values and int64 indices; the task gives the indices' buffer first
    values, indices = torch.zeros(8, 4), torch.zeros(8, 4, dtype=torch.int64)
    idx_buf, val_buf = torch.empty(8, 4, dtype=torch.int64), torch.empty(8, 4, dtype=torch.bfloat16)
    found = gpumode.declared([values, indices], [idx_buf, val_buf])
    assert found[0] is val_buf and found[1] is idx_buf
    written = torch.empty(8, 4)  # the buffer returned itself, written in place
    found = gpumode.declared([written, indices], [torch.empty(8, 4), written])
    assert found[0] is written and found[1] is None
    assert gpumode.declared([values], [torch.empty(31)]) == [None]  # another size: no buffer of its


@needs_torch
def test_the_tasks_own_check_rules_how_close_a_right_answer_is():
    # eigenvectors with their signs turned: right, 2.0 from the reference's in relative terms; the task's check,
    # by residual and orthogonality, passes them; eigenvalues 1e-3 off it fails, with what it says
    eig = TASKS / "eigvec_py" / "reference.py"
    flipped = _checked(eig, "submission.py").check
    assert flipped.verified, [d.outputs for d in flipped.draws]
    first = flipped.draws[0].outputs[0]
    assert first.rel_error > 1.0 and first.passed and \
        first.reason.endswith("within the task's own check (check_implementation), which rules")
    shifted = _checked(eig, "shifted.py").check
    assert not shifted.verified and all(d.error.startswith("the task's own check (check_implementation): residual ")
                                        for d in shifted.draws)


@needs_torch
def test_an_answer_in_the_type_of_the_buffer_given_is_no_lower_precision_and_is_what_is_written():
    # the reference returns a new float64 tensor; the task gives a float32 buffer for the answer
    honest = _checked(CUMSUM, "submission.py").check
    assert honest.verified, [(d.error, d.outputs) for d in honest.draws] + list(honest.flags)
    half = _checked(CUMSUM, "half.py").check
    assert "lower_precision" in [f.code for f in half.flags]
    found = problem.work(problem.load(CUMSUM, 1))
    assert found.work.bytes_written == 65536 * 4 and found.work.bytes_read == 65536 * 4  # not 8 B an element
    assert found.outputs[0].dtype == "float32"
    assert "output 0 written as float32, the type of the buffer the task gives for it (the reference returns " \
           "float64)" in found.work.source


@needs_torch
def test_the_tasks_own_check_is_read_in_each_form_it_answers_in_and_one_that_raises_fails_the_draw():
    layout = gpumode.Layout()
    layout.leaves((torch.ones(2), torch.empty(2)))
    said = {"tuple": (False, "mismatch"), "text": "off by 3", "passed": (True, ""), "empty": "", "none": None,
            "reasons": ["SIZE MISMATCH", "at (0,)"], "no reasons": [], "true": True, "false": False}
    checks = {k: gpumode.own_check(lambda data, out, v=v: v, layout) for k, v in said.items()}
    got = {k: c([torch.ones(2), torch.zeros(2)], torch.ones(2)) for k, c in checks.items()}
    assert got == {"tuple": "mismatch", "text": "off by 3", "passed": None, "empty": None, "none": None,
                   "reasons": "SIZE MISMATCH; at (0,)", "no reasons": None, "true": None,
                   "false": "it answered that the output is wrong"}
    boom = gpumode.own_check(lambda data, out: 1 / 0, layout)
    assert boom([torch.ones(2), torch.zeros(2)], None) == "it raised ZeroDivisionError: division by zero"
    long = gpumode.own_check(lambda data, out: (False, "x\n" * 400), layout)([torch.ones(2), torch.zeros(2)], None)
    assert len(long) == gpumode.LONGEST_MESSAGE and long.endswith("...") and "\n" not in long


def test_a_submission_binds_custom_kernel_or_is_refused_unread(tmp_path):
    problem.declares_candidate(AXPY.parent / "submission.py")
    other = tmp_path / "other.py"
    other.write_text("def kernel(data):\n    return data\n")
    with pytest.raises(UsageError, match="a GPU MODE task, custom_kernel; it has neither"):
        problem.declares_candidate(other)


def _task(tmp_path, reference: str, yml: str) -> Path:
    folder = tmp_path / "t_py"
    folder.mkdir()
    (folder / "reference.py").write_text(reference)
    (folder / "task.yml").write_text(yml)
    return folder


@needs_torch
def test_a_case_that_fails_alone_is_named_and_the_task_may_be_named_by_its_folder(tmp_path):
    folder = _task(tmp_path, "import torch\n\ndef generate_input(size, seed):\n    if size == 64:\n"
                             "        raise ValueError('no such size')\n    return torch.randn(size, device='cuda'),\n\n"
                             "def ref_kernel(data):\n    return data[0] * 2\n",
                   "benchmarks:\n  - {size: 32, seed: 1}\n  - {size: 64, seed: 2}\n  - {size: 128, seed: 3}\n")
    r = CliRunner().invoke(app, ["kernels", str(folder), "--gpu", "h200", "--json"])
    assert r.exit_code == 2 and [p["name"] for p in json.loads(r.stdout)["problems"]] == ["t_py[size=32]", "t_py[size=128]"]
    assert f"{folder / 'reference.py'} (case 2 of 3): building the reference or its inputs raised ValueError: no such size" \
        in r.stderr


@needs_torch
def test_a_file_the_task_names_that_is_not_there_is_named(tmp_path):
    folder = _task(tmp_path, "import torch\nfrom helpers import twice\n\ndef generate_input(size, seed):\n"
                             "    return torch.randn(size),\n\ndef ref_kernel(data):\n    return twice(data[0])\n",
                   "files:\n  - {name: helpers.py, source: ../helpers.py}\nbenchmarks:\n  - {size: 32, seed: 1}\n")
    r = CliRunner().invoke(app, ["kernels", str(folder / "reference.py"), "--gpu", "h200"])
    assert r.exit_code == 2 and "task.yml: its files give helpers.py from ../helpers.py, which is not there" in r.output
    (tmp_path / "helpers.py").write_text("def twice(x):\n    return 2 * x\n")
    assert CliRunner().invoke(app, ["kernels", str(folder), "--gpu", "h200"]).exit_code == 0


@needs_torch
def test_a_package_missing_for_every_case_is_a_failure_to_run(tmp_path):
    folder = _task(tmp_path, "import torch\nimport no_such_package_here\n\ndef generate_input(size, seed):\n"
                             "    return torch.randn(size),\n\ndef ref_kernel(data):\n    return data[0]\n",
                   "benchmarks:\n  - {size: 32, seed: 1}\n  - {size: 64, seed: 2}\n")
    for given in ([folder], [folder, AXPY]):  # alone, or among others that read: said once, exit 1
        r = CliRunner().invoke(app, ["kernels", *map(str, given), "--gpu", "h200"])
        assert r.exit_code == 1 and r.output.count("no_such_package_here, which this Python cannot find") == 1


@needs_torch
def test_an_output_buffer_is_poisoned_and_an_input_made_empty_then_drawn_is_not_one():
    loaded = problem.load(AXPY, 1)
    x, y, out = loaded.inputs(0)
    assert loaded.buffers == (2,) and bool(torch.isnan(out).all()) and not torch.isnan(x).any()
    mm = problem.load(MM, 1)  # a = torch.empty(...).uniform_(...): an input, not a buffer
    a = mm.inputs(0)[0]
    assert mm.buffers == () and bool(((a >= -0.5) & (a <= 0.5)).all())


def test_a_task_graded_on_every_case_reads_as_gpu_mode_ranks_it():
    from types import SimpleNamespace

    from roofline.commands.grade import _geomeans

    def entry(name, case, ms, graded=True):
        return SimpleNamespace(name=name, workload=f"t_py[size={case}]", time_ms=ms, graded=graded)

    # the reference at 1 and 4 ms (geometric mean 2 ms), the submission at 0.5 and 2 ms (1 ms: 2x); lazy failed a case
    entries = [entry("reference", 1, 1.0), entry("submission", 1, 0.5), entry("lazy", 1, None, False),
               entry("reference", 2, 4.0), entry("submission", 2, 2.0), entry("lazy", 2, 0.1)]
    notes = _geomeans(entries, ["reference", "submission", "lazy"], "t_py (2 cases)", 2)
    assert notes == ["t_py (2 cases): geometric mean of the times over the 2 cases (as GPU MODE ranks a submission): "
                     "reference 2,000.0 µs, submission 1,000.0 µs (2.00x the reference)",
                     "t_py (2 cases): no geometric mean for what was not graded on every case: lazy (1 of 2)"]
    # two cases of five picked with --size: a mean over them, not GPU MODE's rank
    assert _geomeans(entries[:2] + entries[3:5], ["reference", "submission"], "t_py (2 of 5 cases)", 5) == \
        ["t_py (2 of 5 cases): geometric mean of the times over the 2 cases (GPU MODE ranks a submission over all "
         "5): reference 2,000.0 µs, submission 1,000.0 µs (2.00x the reference)"]


@needs_torch
def test_no_file_beside_the_reference_but_its_task_modules_runs_when_it_is_read(tmp_path):
    # a submission kept in the task's folder runs in its grading's own process alone, never as the task is read
    folder = _task(tmp_path, "import torch\nfrom task import input_t\n\ndef generate_input(size, seed):\n"
                             "    return torch.randn(size),\n\ndef ref_kernel(data: input_t):\n    return data[0] * 2\n",
                   "benchmarks:\n  - {size: 32, seed: 1}\n")
    (folder / "task.py").write_text("input_t = tuple\n")
    marker = tmp_path / "ran"
    (folder / "mine.py").write_text(f"open({str(marker)!r}, 'w').close()\n\ndef custom_kernel(data):\n    return data[0] * 2\n")
    assert problem.work(problem.load(folder / "reference.py", 1)).work.bytes_read == 32 * 4
    assert not marker.exists()


def test_a_warning_several_cases_share_is_said_once():
    said = {"w1": ["t_py[size=1]"], "w2": ["t_py[size=1]", "t_py[size=2]", "t_py[size=3]"],
            "w3": ["t_py[size=1]", "t_py[size=3]"]}
    assert gpumode.said_once(said, "t_py", 3) == ["t_py[size=1]: w1", "t_py (3 cases): w2",
                                                  "t_py[size=1], t_py[size=3]: w3"]
