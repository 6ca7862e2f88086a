"""A problem's candidate checked against its reference on several draws (`measure.candidate`):
honest candidates pass, each cheat of tests/fixtures/problems/candidates raises the flag its first
line names. On the CPU; skipped where PyTorch is not installed."""

from pathlib import Path

import pytest

from roofline.measure import candidate, problem_child
from roofline.workload import problem

torch = pytest.importorskip("torch")

PROBLEMS = Path(__file__).resolve().parent / "fixtures" / "problems"
CANDIDATES = PROBLEMS / "candidates"


def _check(problem_file: str, candidate_file: str, draws: int = 3):
    problem_child.import_harness()  # as the candidate's own process has it, before the problem and the candidate
    p = problem.with_candidate(problem.load(PROBLEMS / problem_file), CANDIDATES / candidate_file)
    return candidate.check(p, device="cpu", draws=draws)


def _expected(candidate_file: str) -> str:
    """What the file's first line says it must raise: 'honest', 'fails' or a flag code."""
    return (CANDIDATES / candidate_file).read_text().splitlines()[0].lstrip("# ").split(":")[0].split(" ")[0]


CASES = [("small_matmul.py", "matmul_honest.py"), ("small_matmul.py", "matmul_cached_by_shape.py"),
         ("small_matmul.py", "matmul_half.py"), ("small_matmul.py", "matmul_lazy.py"),
         ("small_matmul.py", "matmul_raises.py"), ("clamp.py", "clamp_honest.py"),
         ("clamp.py", "clamp_returns_input.py"), ("clamp.py", "clamp_in_place.py"),
         ("small_matmul.py", "matmul_patches_timer.py"), ("small_matmul.py", "matmul_patches_median.py"),
         ("small_matmul.py", "matmul_patches_reference.py"), ("small_matmul.py", "matmul_patches_forward.py"),
         ("small_matmul.py", "matmul_turns_tf32.py"), ("small_matmul.py", "matmul_every_other_call.py"),
         ("small_matmul.py", "matmul_in_thread.py"), ("small_matmul.py", "matmul_patches_checker.py"),
         ("clamp.py", "clamp_patches_op.py"), ("small_matmul.py", "matmul_fp16_reduction.py"),
         ("small_matmul.py", "matmul_patches_operator.py"), ("small_matmul.py", "matmul_autocast.py"),
         ("small_matmul.py", "matmul_skips_once_written.py"), ("small_matmul.py", "matmul_half_rows.py"),
         ("small_matmul.py", "matmul_exits.py"), ("small_matmul.py", "matmul_patches_roofline.py"),
         ("small_matmul.py", "matmul_empty_replay.py"), ("small_matmul.py", "matmul_patches_sync.py"),
         ("small_matmul.py", "matmul_precision_medium.py")]
# Caught only where the calls are timed on a GPU (tests/test_gpu_problem.py): honest on the CPU's draws.
GPU_CASES = [("small_matmul.py", "matmul_cached_by_pointer.py"), ("small_matmul.py", "matmul_cached_by_values.py"),
             ("small_matmul.py", "matmul_side_stream.py"), ("small_matmul.py", "matmul_persisting_l2.py")]
# End the process they are checked in: graded in a child each (tests/test_problem_child.py).
CHILD_CASES = [("small_matmul.py", "matmul_os_exit.py"), ("small_matmul.py", "matmul_forges_answer.py")]


def test_every_candidate_in_the_folder_is_a_case():
    assert {c for _, c in CASES + GPU_CASES + CHILD_CASES} == {p.name for p in CANDIDATES.glob("*.py")}


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
    elif want == "wrong":
        assert not got.verified and any(not o.passed for d in got.draws for o in d.outputs), got
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
    assert "the reference leaves its inputs" in flag.evidence and "inout" not in flag.evidence  # nothing to declare


def test_each_draw_is_new_inputs():
    p = problem.load(PROBLEMS / "small_matmul.py")
    a, b = p.inputs(1), p.inputs(2)
    assert not torch.equal(a[0], b[0])
    assert torch.equal(p.inputs(1)[0], a[0])  # one seed, one draw


def _entries(candidate_files: list[str], times: dict[str, float]):
    """Grade entries of small_matmul.py's reference and candidates as `run problem.py new.py` writes
    them, from the checks run here and the times given (ms, as if measured on an H200)."""
    from roofline import grading
    from roofline.measure.problem_grade import ProblemRun
    from roofline.model.device import from_preset
    from roofline.model.timing import Timing

    p = problem.load(PROBLEMS / "small_matmul.py")
    found = problem.work(p)
    runs = [ProblemRun("reference", str(p.path), True, timing=Timing(samples_ms=(times["reference"],) * 5, warmup=1))]
    for name in candidate_files:
        c = problem.with_candidate(p, CANDIDATES / name)
        check = candidate.check(c, device="cpu")
        ms = times.get(Path(name).stem)
        runs.append(ProblemRun(Path(name).stem, name, False, check,
                               Timing(samples_ms=(ms,) * 5, warmup=1) if ms and check.verified else None))
    entries = [grading.problem_entry(r, p.name, found.work, from_preset("h200"), 0.005) for r in runs]
    return grading.with_baseline(entries, ["reference"]), found


def test_a_problems_entries_read_the_references_work_and_score_against_its_time():
    entries, found = _entries(["matmul_honest.py", "matmul_cached_by_shape.py"],
                              {"reference": 0.020, "matmul_honest": 0.010})
    ref, honest, cached = entries
    # 2 x 256 x 192 x 128 FLOPs in FP32; A, B read and C written once, 4 bytes each
    assert found.work.flops == {"fp32": 2 * 256 * 192 * 128}
    assert found.work.bytes_read == 4 * (256 * 192 + 192 * 128) and found.work.bytes_written == 4 * 256 * 128
    assert ref.graded and honest.graded and honest.baseline == "reference" and honest.baseline_ms == 0.020
    assert honest.share == pytest.approx(honest.t_sol_ms / 0.010)
    assert not cached.graded and cached.error.startswith("wrong answer on draw")
    assert [f.code for f in cached.flags] == ["cached_answer"]


def test_a_candidate_faster_than_light_is_refused():
    entries, _ = _entries(["matmul_honest.py"], {"reference": 0.020, "matmul_honest": 1e-6})
    honest = entries[1]
    assert honest.refused and not honest.graded and honest.flags[0].code in ("faster_than_light", "no_gpu_work")


@pytest.mark.parametrize("args, says, code", [
    (["small_matmul.py", "row_sums.py"], "after a problem file", 2),
    (["small_matmul.py", "candidates/matmul_honest.py", "--size", "M=4"], "is a problem of one size, its get_inputs'", 2),
    (["small_matmul.py", "candidates/matmul_honest.py", "--profile"], "is graded with its candidates alone", 2),
    (["small_matmul.py", "candidates/matmul_honest.py"], "GPU", 1),
])
def test_run_a_problem_without_a_gpu_or_with_wrong_files_says_so_in_one_line(tmp_path, args, says, code):
    from typer.testing import CliRunner

    from roofline.cli import app
    argv = [str(PROBLEMS / a) if a.endswith(".py") else a for a in args]
    got = CliRunner().invoke(app, ["run", *argv, "--out", str(tmp_path / "g.json")])
    assert got.exit_code == code, got.output
    assert says in got.output and "Traceback" not in got.output and not (tmp_path / "g.json").exists()


def test_a_problems_grade_file_is_shown_and_drawn(tmp_path):
    from typer.testing import CliRunner

    from roofline.cli import app
    from roofline.model.device import from_preset
    from roofline.results import store
    from roofline.results.grades import GradeResults

    entries, _ = _entries(["matmul_honest.py", "matmul_half.py"], {"reference": 0.020, "matmul_honest": 0.010})
    doc = GradeResults(created="2026-12-05T00:00:00+00:00", tool="roofline test", device=from_preset("h200"),
                       launch_ms=0.005, entries=entries, notes=[])
    store.save(doc, tmp_path / "g.json")
    got = CliRunner().invoke(app, ["show", str(tmp_path / "g.json")], env={"COLUMNS": "220"})
    assert got.exit_code == 0, got.output
    assert "matmul_honest" in got.output and "matmul_half" in got.output and "precision" in got.output
    got = CliRunner().invoke(app, ["plot", str(tmp_path / "g.json"), "--out", str(tmp_path / "g.png")])
    assert got.exit_code == 0, got.output


def test_what_a_candidate_patches_is_named_and_put_back():
    import statistics
    import time

    clocks, median, elapsed = time.perf_counter, statistics.median, torch.cuda.Event.elapsed_time
    for name, replaced in (("matmul_patches_timer.py", "time.perf_counter, torch.cuda.Event.elapsed_time when its file "
                                                       "was imported:"),
                           ("matmul_patches_median.py", "statistics.median:")):
        got = _check("small_matmul.py", name)
        (flag,) = got.flags
        assert flag.code == "patched_harness" and flag.evidence.startswith(f"replaces {replaced}"), flag
        assert time.perf_counter is clocks and statistics.median is median and torch.cuda.Event.elapsed_time is elapsed


def test_each_candidates_import_is_charged_to_it_alone():
    # every candidate of a grading is imported before any is checked: one file's patches at import
    # are put back at once, charged to it, and never to the files checked before it
    import time

    clocks, matmul = time.perf_counter, torch.matmul
    p = problem.load(PROBLEMS / "small_matmul.py")
    honest = problem.with_candidate(p, CANDIDATES / "matmul_honest.py")
    cheats = [problem.with_candidate(p, CANDIDATES / n) for n in ("matmul_patches_timer.py",
                                                                  "matmul_patches_reference.py")]
    assert time.perf_counter is clocks and torch.matmul is matmul
    assert candidate.check(honest, device="cpu").verified
    assert [f.code for f in candidate.check(cheats[0], device="cpu").flags] == ["patched_harness"]
    assert [f.code for f in candidate.check(cheats[1], device="cpu").flags] == ["patched_reference"]


def test_a_candidate_that_patched_the_harness_while_timed_is_refused():
    from roofline import grading
    from roofline.model.device import from_preset

    found = problem.work(problem.load(PROBLEMS / "small_matmul.py"))
    # the run as problem_grade leaves it when the timed calls replaced a clock
    from roofline.measure.problem_grade import ProblemRun
    from roofline.model.timing import Timing
    p = problem.with_candidate(problem.load(PROBLEMS / "small_matmul.py"), CANDIDATES / "matmul_honest.py")
    run = ProblemRun("matmul_honest", "matmul_honest.py", False, candidate.check(p, device="cpu"),
                     Timing(samples_ms=(0.010,) * 5, warmup=1), patched=["time.perf_counter"])
    e = grading.problem_entry(run, p.name, found.work, from_preset("h200"), 0.005)
    assert e.refused and not e.graded and [f.code for f in e.flags] == ["patched_harness"]
    assert "time.perf_counter while it was timed" in e.flags[0].evidence


def test_a_candidate_whose_work_outlives_its_events_is_flagged():
    from roofline import grading
    from roofline.measure.problem_grade import ProblemRun
    from roofline.model.device import from_preset
    from roofline.model.timing import Timing

    p = problem.with_candidate(problem.load(PROBLEMS / "small_matmul.py"), CANDIDATES / "matmul_honest.py")
    found = problem.work(p)
    check = candidate.check(p, device="cpu")
    timing = Timing(samples_ms=(0.010,) * 5, warmup=1)
    # the run as problem_grade leaves it for work left on a stream of its own: 0.01 ms on the
    # caller's stream, the device idle 2 ms later
    late = grading.problem_entry(ProblemRun("matmul_honest", "m.py", False, check, timing, async_ms=(0.010, 2.0)),
                                 p.name, found.work, from_preset("h200"), 0.005)
    assert not late.graded and [f.code for f in late.flags] == ["async_return"] and late.wall_ms == 2.0
    # events and wall clock a launch apart: graded
    fine = grading.problem_entry(ProblemRun("matmul_honest", "m.py", False, check, timing, async_ms=(0.010, 0.03)),
                                 p.name, found.work, from_preset("h200"), 0.005)
    assert fine.graded and fine.flags == []


def test_a_candidate_that_set_l2_aside_for_persisting_lines_while_timed_is_flagged():
    from roofline import grading
    from roofline.measure.problem_grade import ProblemRun
    from roofline.model.device import from_preset
    from roofline.model.timing import Timing

    p = problem.with_candidate(problem.load(PROBLEMS / "small_matmul.py"), CANDIDATES / "matmul_honest.py")
    found = problem.work(p)
    check = candidate.check(p, device="cpu")
    timing = Timing(samples_ms=(0.010,) * 5, warmup=1)
    # the run as problem_grade leaves it when 32 MiB were found set aside ahead of its calls (matmul_persisting_l2)
    kept = grading.problem_entry(ProblemRun("m", "m.py", False, check, timing, async_ms=(0.010, 0.03),
                                            l2_set_aside=32 << 20), p.name, found.work, from_preset("h200"), 0.005)
    assert not kept.graded and [f.code for f in kept.flags] == ["l2_persisting"]
    assert kept.error.startswith("not graded: marked 32 MiB for persisting in the L2 while it was timed")
    assert kept.flags[0].figures == {"set_aside_bytes": float(32 << 20)}


def test_each_timed_call_gets_a_rolled_copy_new_at_every_place():
    from roofline.measure.problem_grade import rolled

    x, idx = torch.randn(64, 32), torch.randint(0, 10, (500,))
    draw = [x, idx, 3, torch.tensor([2.0])]
    for k in (1, 7, 2047):
        got = rolled(draw, k)
        assert got[2] == 3 and got[3] is draw[3]  # a number and a one-element tensor as they are
        assert got[0].shape == x.shape and got[0].data_ptr() != x.data_ptr()
        assert not torch.equal(got[0], x) and torch.equal(got[0].flatten().sort().values, x.flatten().sort().values)
        assert int(got[1].min()) >= 0 and int(got[1].max()) < 10  # indices stay indices
        assert torch.equal(got[0].flatten()[k], x.flatten()[0])


def test_a_contiguous_tensor_is_rolled_by_copies_exactly_as_torch_roll():
    from roofline.measure.problem_grade import rolled

    x = torch.arange(6 * 5 * 4, dtype=torch.float32).reshape(6, 5, 4)
    for k in (1, 3, 119, 120, 121, 7 * 120 + 5):
        got = rolled([x], k)[0]
        assert got.is_contiguous() and torch.equal(got, torch.roll(x, k)), k
    gaps = x[:, ::2]  # a slice with gaps: torch.roll itself, a contiguous tensor
    assert torch.equal(rolled([gaps], 9)[0], torch.roll(gaps, 9)) and rolled([gaps], 9)[0].is_contiguous()
    half = x.to(torch.bfloat16)
    assert rolled([half], 2)[0].dtype == torch.bfloat16 and torch.equal(rolled([half], 2)[0], torch.roll(half, 2))


@pytest.mark.parametrize("dims", [(2, 1, 0), (1, 2, 0), (1, 0)])
def test_a_permuted_input_keeps_its_layout_rolled_over_its_memory(dims):
    # GPU MODE's FP8 and NVFP4 tasks draw `(l, m, k).permute(1, 2, 0)` and transposed operands, and a kernel reading
    # raw pointers with those strides needs them in every timed call's inputs, not a contiguous copy
    from roofline.measure.problem_grade import rolled

    base = torch.arange(4 * 5 * 6, dtype=torch.float32).reshape(4, 5, 6)
    x = base.permute(*dims) if len(dims) == 3 else base[0].t()
    for k in (1, 7, x.numel() - 1):
        got = rolled([x], k)[0]
        assert got.shape == x.shape and got.stride() == x.stride() and got.data_ptr() != x.data_ptr()
        # element i in memory order is element i - k of the draw's memory, as a contiguous roll moves it
        memory = lambda t: t.as_strided((t.numel(),), (1,))  # noqa: E731
        assert torch.equal(memory(got), torch.roll(memory(x), k)), k
    fp8 = torch.randn(6, 4).to(torch.float8_e4m3fn).t()  # a column-major FP8 operand
    assert rolled([fp8], 3)[0].stride() == (1, 4) and rolled([fp8], 3)[0].dtype == torch.float8_e4m3fn


def test_the_audit_checks_the_very_instance_that_was_timed():
    # what an instance keeps (answers by input address) is caught only on that instance: new values
    # in the buffers it has seen
    p = problem.with_candidate(problem.load(PROBLEMS / "small_matmul.py"), CANDIDATES / "matmul_cached_by_pointer.py")
    reference, timed = p.model(0), p.model(0, candidate=True)
    a, b = p.inputs(5)
    timed(a, b)  # as in the timing: its answer kept by address
    a.copy_(torch.randn_like(a))
    b.copy_(torch.randn_like(b))
    after = candidate.check(p, device="cpu", on=[[a, b]], models=(reference, timed))
    assert not after.draws[0].passed
    fresh = candidate.check(p, device="cpu", on=[[a.clone(), b.clone()]])  # a new instance keeps nothing
    assert fresh.draws[0].passed


def test_float64_outputs_whose_squares_overflow_are_compared_by_their_ratio():
    # values near 1e200 square past float64's range; their relative error is still 1e-6
    want = torch.randn(500, dtype=torch.float64) * 1e200
    got = want * (1 + 1e-6)
    result, _ = candidate._compare("output 0", got, want)
    assert result.passed and result.rel_error == pytest.approx(1e-6, rel=1e-6)
    far, _ = candidate._compare("output 0", want * 1.5, want)
    assert not far.passed and far.rel_error == pytest.approx(0.5, rel=1e-9)
    # and values whose squares vanish (1e-200): a 1.5x wrong answer is not read as exact
    tiny = torch.randn(500, dtype=torch.float64) * 1e-200
    wrong, _ = candidate._compare("output 0", tiny * 1.5, tiny)
    assert not wrong.passed and wrong.rel_error == pytest.approx(0.5, rel=1e-9)
    assert candidate._compare("output 0", tiny, tiny)[0].rel_error == 0.0
    # a reference of zeros is read against the difference itself, whatever the scale
    zeros = torch.zeros(500, dtype=torch.float64)
    assert candidate._compare("output 0", zeros + 1e-200, zeros)[0].rel_error == pytest.approx(1e-200 * 500 ** 0.5)
    # one element of 1e300 among values near 1: failed, by far more than 0.75
    one = torch.ones(500, dtype=torch.float64)
    spike = one.clone()
    spike[7] = 1e300
    assert candidate._compare("output 0", spike, one)[0].rel_error > 1e290


def test_outputs_are_compared_a_chunk_at_a_time_as_if_whole(monkeypatch):
    want = torch.randn(1000, 37)
    got = want + 1e-3 * torch.randn(1000, 37)
    whole, _ = candidate._compare("output 0", got, want)
    monkeypatch.setattr(candidate, "CHUNK", 999)  # 38 chunks, the last one short
    chunked, _ = candidate._compare("output 0", got, want)
    exact = float(torch.linalg.vector_norm((got - want).double()) / torch.linalg.vector_norm(want.double()))
    assert chunked.rel_error == pytest.approx(exact, rel=1e-12) and whole.rel_error == pytest.approx(exact, rel=1e-12)
    got[999, 36] = float("nan")
    bad, _ = candidate._compare("output 0", got, want)
    assert not bad.passed and bad.reason == "1 of 37,000 elements NaN or infinite"
    worse_got, worse_want = got.clone(), want.clone()
    worse_got[3, 3] = float("-inf")
    assert candidate._sums(worse_got, worse_want)[:2] == (0, 2)  # counted where a sum of squares is not finite
    worse_want[5, 5] = float("inf")
    worse, _ = candidate._compare("output 0", worse_got, worse_want)
    assert not worse.passed and worse.reason == ("1 of the reference's 1 non-finite elements (an infinity, a NaN) not "
                                                 "the same there")
    # where the answer holds infinities and NaN (a log of 0), the same ones there pass, and the rest is compared
    answer = torch.randn(100)
    answer[[3, 50]], answer[7] = float("-inf"), float("nan")
    right, _ = candidate._compare("output 0", answer.clone(), answer)
    assert right.passed and right.rel_error == 0
    off = answer.clone()
    off[10] += 1.0
    near, _ = candidate._compare("output 0", off, answer)
    finite = answer[torch.isfinite(answer)]
    assert not near.passed and near.rel_error == pytest.approx(1.0 / float(torch.linalg.vector_norm(finite.double())))
    flipped = answer.clone()
    flipped[3] = float("inf")
    assert candidate._compare("output 0", flipped, answer)[0].reason.startswith("1 of the reference's 3 non-finite")
    extra = answer.clone()
    extra[20] = float("inf")
    assert candidate._compare("output 0", extra, answer)[0].reason == "1 of 100 elements NaN or infinite"
    # how far the reference moved between draws, chunked the same way: |now - before| / |before|
    assert candidate._moved(got[:999], want[:999]) == pytest.approx(
        float(torch.linalg.vector_norm((got[:999] - want[:999]).double()) / torch.linalg.vector_norm(want[:999].double())),
        rel=1e-12)
    assert candidate._moved(want, want) == 0 and candidate._moved(torch.ones(3), torch.zeros(3)) == pytest.approx(3 ** 0.5)



def test_a_candidate_that_calls_sys_exit_fails_its_draws_and_the_harness_goes_on():
    got = _check("small_matmul.py", "matmul_exits.py")
    assert not got.verified
    assert [d.error for d in got.draws] == ["it called sys.exit(0), which would have ended the grading"] * 3


def test_a_replaced_method_of_the_problems_own_file_is_named_by_that_file():
    got = _check("small_matmul.py", "matmul_patches_forward.py")
    flag = next(f for f in got.flags if f.code == "patched_reference")
    assert "Model.forward of small_matmul.py" in flag.evidence and "roofline_problem_" not in flag.evidence
