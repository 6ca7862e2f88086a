"""A problem's candidate graded in a process of its own (`measure.problem_child`): a candidate that
ends its process, or prints a forged answer and ends it, loses its own entry with a reason; an
honest one's answer comes back whole. On the CPU (the check runs there; the timing, which needs a
GPU, is the honest run's error); skipped where PyTorch is not installed."""

from pathlib import Path

import pytest

from roofline.errors import UsageError
from roofline.measure import problem_child
from roofline.workload import problem

torch = pytest.importorskip("torch")

PROBLEMS = Path(__file__).resolve().parent / "fixtures" / "problems"
CANDIDATES = PROBLEMS / "candidates"


def _graded(candidate: str | None):
    request = problem_child.request_for(PROBLEMS / "small_matmul.py", CANDIDATES / candidate if candidate else None,
                                        None, None, 0.05, None, device="cpu")
    return problem_child.grade_in_child(request)


def test_a_candidate_that_ends_its_process_loses_its_own_entry_with_the_reason():
    run = _graded("matmul_os_exit.py")
    assert run.name == "matmul_os_exit" and not run.reference and not run.verified
    assert run.error == "its process gave no grade: its process ended (exit code 0) without a report: no message"


def test_a_forged_answer_without_the_token_is_not_taken_for_the_grade():
    run = _graded("matmul_forges_answer.py")
    assert run.timing is None and run.check is None and not run.verified
    assert run.error.startswith("its process gave no grade: its process ended (exit code 0) with a last line that is "
                                "not the harness's report (a forged or stray line: '{\"run\": {\"name\": \"matmul_forges")


def test_an_honest_candidates_check_comes_back_from_its_process():
    run = _graded("matmul_honest.py")
    assert run.check is not None and run.check.verified and len(run.check.draws) >= 2
    assert all(o.passed and o.rel_error < 1e-5 for d in run.check.draws for o in d.outputs)
    assert run.timing is None and run.error  # no GPU here: the timing's error, in the child's words


def test_a_candidate_whose_import_fails_is_graded_as_failed_in_its_child(tmp_path):
    bad = tmp_path / "imports_nothing.py"
    bad.write_text("import not_a_module_anywhere\nModelNew = None\n")
    request = problem_child.request_for(PROBLEMS / "small_matmul.py", bad, None, None, 0.05, None, device="cpu")
    run = problem_child.grade_in_child(request)
    assert "not_a_module_anywhere" in run.error and run.check is None


@pytest.mark.parametrize("text, why", [
    ("import torch\n", "defines class ModelNew"),
    ("class ModelNew(:\n", "not Python"),
])
def test_a_file_that_is_no_candidate_is_refused_unread_by_python(tmp_path, text, why):
    f = tmp_path / "c.py"
    f.write_text(text)
    with pytest.raises(UsageError, match=why):
        problem.declares_candidate(f)


def test_every_candidate_of_the_corpus_declares_itself():
    for f in sorted(CANDIDATES.glob("*.py")):
        problem.declares_candidate(f)


def test_a_candidate_that_replaces_rooflines_timing_in_its_process_is_caught_there():
    run = _graded("matmul_patches_roofline.py")
    flags = [f for f in run.check.flags if f.code == "patched_harness"]
    assert flags and "roofline.measure.graded._in_rounds" in flags[0].evidence and not run.verified


def test_each_entry_is_graded_in_its_own_process_the_next_started_ahead():
    # the reference and three candidates in turn: each answer its own (the one that ends its process
    # loses only its entry), and no child is left behind
    import os

    names = [None, "matmul_honest.py", "matmul_os_exit.py", "matmul_honest.py"]
    requests = [problem_child.request_for(PROBLEMS / "small_matmul.py", CANDIDATES / n if n else None,
                                          None, None, 0.05, None, device="cpu") for n in names]
    before = set(os.listdir("/proc")) if os.path.isdir("/proc") else set()
    runs = problem_child.grade_each(requests)
    assert [r.name for r in runs] == ["reference", "matmul_honest", "matmul_os_exit", "matmul_honest"]
    assert runs[0].reference and runs[1].check.verified and runs[3].check.verified
    assert runs[2].error.startswith("its process gave no grade")
    assert problem_child.grade_each([]) == []
    if before:  # every child reaped: none of ours is left as a zombie
        import subprocess
        mine = subprocess.run(["ps", "-o", "stat=,ppid=", "-A"], capture_output=True, text=True).stdout.split("\n")
        assert not [ln for ln in mine if ln.strip().startswith("Z") and ln.split()[-1] == str(os.getpid())]


def test_a_started_child_that_is_never_asked_is_ended():
    from roofline import child

    started = child.Started(problem_child.CHILD)
    started.close()
    assert started.proc.returncode is not None


def test_a_reference_that_disagrees_with_itself_is_said_in_one_line():
    from roofline.measure.candidate import CandidateCheck, DrawResult, OutputResult
    from roofline.measure.problem_grade import _disagreement
    from roofline.model.integrity import Flag

    wrong = OutputResult("output 0", "float32", 0.0123, 1e-4, False)
    odd = OutputResult("output 1", "float32", None, 1e-4, False, "another shape")
    got = CandidateCheck("p", "reference", "cuda", (DrawResult(1, (wrong, odd)), DrawResult(2, error="boom")),
                         (Flag("cached_answer", "", {}),))
    assert _disagreement(got) == "output 0 on draw 1: relative error 0.0123; output 1 on draw 1: another shape; boom; " \
                                 "cached_answer"
