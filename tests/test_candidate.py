"""A problem's candidate checked against its reference on several draws (`measure.candidate`):
honest candidates pass, each cheat of tests/fixtures/problems/candidates raises the flag its first
line names. On the CPU; skipped where PyTorch is not installed."""

from pathlib import Path

import pytest

from roofline.measure import candidate
from roofline.workload import problem

torch = pytest.importorskip("torch")

PROBLEMS = Path(__file__).resolve().parent / "fixtures" / "problems"
CANDIDATES = PROBLEMS / "candidates"


def _check(problem_file: str, candidate_file: str, draws: int = 3):
    p = problem.with_candidate(problem.load(PROBLEMS / problem_file), CANDIDATES / candidate_file)
    return candidate.check(p, device="cpu", draws=draws)


def _expected(candidate_file: str) -> str:
    """What the file's first line says it must raise: 'honest', 'fails' or a flag code."""
    return (CANDIDATES / candidate_file).read_text().splitlines()[0].lstrip("# ").split(":")[0].split(" ")[0]


CASES = [("small_matmul.py", "matmul_honest.py"), ("small_matmul.py", "matmul_cached_by_shape.py"),
         ("small_matmul.py", "matmul_half.py"), ("small_matmul.py", "matmul_lazy.py"),
         ("small_matmul.py", "matmul_raises.py"), ("clamp.py", "clamp_honest.py"),
         ("clamp.py", "clamp_returns_input.py"), ("clamp.py", "clamp_in_place.py")]


def test_every_candidate_in_the_folder_is_a_case():
    assert {c for _, c in CASES} == {p.name for p in CANDIDATES.glob("*.py")}


@pytest.mark.parametrize("problem_file, candidate_file", CASES, ids=[c for _, c in CASES])
def test_each_candidate_gets_the_verdict_its_file_names(problem_file, candidate_file):
    got = _check(problem_file, candidate_file)
    want = _expected(candidate_file)
    codes = {f.code for f in got.flags}
    if want == "honest":
        assert got.verified and not codes, got
        assert all(o.rel_error < 1e-5 for d in got.draws for o in d.outputs)
    elif want == "fails":
        assert not got.verified and all(d.error for d in got.draws)
    else:
        assert want in codes, (want, got)
        assert not got.verified


def test_a_cached_answer_fails_every_draw_after_the_first():
    got = _check("small_matmul.py", "matmul_cached_by_shape.py")
    assert [d.passed for d in got.draws] == [True, False, False]
    (flag,) = [f for f in got.flags if f.code == "cached_answer"]
    assert flag.figures["reference_change"] > 1.0  # new random inputs: a product of another size


def test_the_input_handed_back_is_right_almost_everywhere_and_still_flagged():
    # randn rarely leaves [-8, 8]: returning x passes the comparison, and shares x's storage
    got = _check("clamp.py", "clamp_returns_input.py")
    assert all(d.passed for d in got.draws)
    assert [f.code for f in got.flags] == ["aliased_output"] and not got.verified


def test_a_candidate_that_writes_its_input_is_flagged_though_its_answer_is_right():
    got = _check("clamp.py", "clamp_in_place.py")
    assert all(d.passed for d in got.draws)
    (flag,) = got.flags
    assert flag.code == "inputs_modified" and flag.figures["elements"] > 0.99 * flag.figures["size"]


def test_each_draw_is_new_inputs():
    p = problem.load(PROBLEMS / "small_matmul.py")
    a, b = p.inputs(1), p.inputs(2)
    assert not torch.equal(a[0], b[0])
    assert torch.equal(p.inputs(1)[0], a[0])  # one seed, one draw
