"""A kernel benchmark's problem graded on the GPU (`roofline run problem.py new.py ...`): each
candidate checked against the reference (`measure.candidate`, on the GPU), then the reference and
every candidate that passed timed as `run` times a graded callable (`graded._in_rounds`: in
rounds behind a hold, the L2's persisting lines reset and the L2 flushed ahead of
each call (`l2_persist`, `timing.l2_flush`), CUDA events around it), each call on
inputs of its own: one draw made before the timing, and ahead of each call (outside its events) a
new copy of it rolled by one more place (`rolled`: new values at every place, in a new tensor), so
that no answer kept by input pointer or by the inputs' values is ever the right one. After the
timing:
- the very instance that was timed is checked on a rolled copy at a place drawn at random, and on
  a new draw (an answer kept by pointer or value, or a candidate that stops computing once
  checked, is caught);
- the harness's timers and statistics and the reference's ops are looked at (what the candidate
  replaced while it was timed is put back and flagged);
- its calls are timed once more from an idle device, by the events and by the wall clock to the
  whole device idle: work left on a stream of its own shows as a gap.

Each is one entry of a grade file (`grading.problem_entry`), the reference first: its work and
compulsory bytes the reference's own (`workload.problem.work`, read on the meta device), its
speed of light on this GPU, and every candidate scored against the reference's time. `roofline
run` grades the reference and each candidate in a process of its own (`problem_child`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.timing import Timing
from ..workload.problem import Problem, put_back
from ..workload.regions import memory_order
from . import l2_persist
from .activity import CallKernels
from .candidate import CandidateCheck, call_error, check



@dataclass
class ProblemRun:
    """One model of a problem on the GPU: its name and file, whether it is the reference, its check
    (None for the reference), its timing, and the error that stopped it."""

    name: str
    source: str
    reference: bool
    check: CandidateCheck | None = None
    timing: Timing | None = None
    error: str | None = None
    audit: list[str] = field(default_factory=list)  # the outputs that failed the check after the timing
    patched: list[str] = field(default_factory=list)  # what it replaced of the harness while it was timed
    async_ms: tuple[float, float] | None = None  # (events, wall clock) of its calls: `graded.idle_calls`
    kernels: CallKernels | None = None  # the same calls' kernels from CUPTI's records: `graded.idle_calls`
    kernels_why: str | None = None  # why `kernels` is None where it was timed
    self_check: str | None = None  # the reference: where a second instance of it disagreed with it, and how
    l2_set_aside: int = 0  # the most L2 (bytes) found set aside for persisting lines ahead of its timed calls

    @property
    def verified(self) -> bool:
        return self.reference or (self.check is not None and self.check.verified and not self.audit)


def rolled(draw: list, k: int) -> list:
    """`draw` (a forward's arguments) with each tensor of more than one element rolled by `k` places
    over its elements in memory order (a new tensor): new values at every place for any `k` short
    of its size, the same values overall, so an index stays an index; other arguments as they are.
    A tensor that is a permutation of a contiguous one (`regions.memory_order`: contiguous, or
    transposed, or GPU MODE's `permute(1, 2, 0)` layouts) keeps its strides, rolled by two memory
    copies of its two parts (`_roll`); another (a slice with gaps) becomes a contiguous tensor of
    its shape, by `torch.roll(x, k)`, as the work reads it (`workload.problem._work`)."""
    import torch

    def roll(x):
        order = memory_order(x)
        if order is None:
            return torch.roll(x, k)
        back = sorted(range(x.dim()), key=order.__getitem__)
        return _roll(x.permute(order), k).permute(back)

    return [roll(x) if isinstance(x, torch.Tensor) and x.numel() > 1 else x for x in draw]


def _roll(x, k: int):
    """Contiguous tensor `x` rolled by `k` places over its elements, as `torch.roll(x, k)`: element
    i of the result is element (i - k) mod n of `x`; two slice copies into a new tensor of its
    shape, dtype and device (`torch.roll` computes each element's index, a division per element)."""
    import torch

    flat = x.reshape(-1)
    n = flat.numel()
    k %= n
    out = torch.empty_like(flat)
    out[k:].copy_(flat[:n - k])
    if k:
        out[:k].copy_(flat[n - k:])
    return out.view(x.shape)


def _timed(model, draw: list, l2_bytes: int | None, budget_s: float | None,
           full_clock_share: float | None, sampler=None,
           set_aside: list[int] | None = None) -> tuple[Timing | None, str | None, tuple[float, float] | None,
                                                         tuple[CallKernels | None, str | None]]:
    """The timing of `model` called on a new rolled copy of `draw` each time (`rolled`, made ahead of
    the call and the L2 flush after it, outside its events, the L2's persisting set-aside put back
    to 0 first: `l2_persist`), or the error of a call; and the events' and the wall clock's time of
    its calls from an idle device (work left on a stream of its own, which the events on the
    caller's stream do not see) and the kernels of the same calls from CUPTI's activity records,
    or why there are none (`graded.idle_calls`). `sampler`
    (`nvml.Sampler`, or None) reads the SM clock and throttle reasons while each burst runs; the
    L2 set aside for persisting lines found ahead of each call, and after the last, goes into
    `set_aside` (bytes; `l2_persist.clear`), put back to 0 before the first, so that what it finds
    was set by the model's own timed calls."""
    import itertools

    import torch

    from .graded import _first_line, _in_rounds, idle_calls
    from .timing import l2_flush

    places, flush, current = itertools.count(1), l2_flush(l2_bytes), [draw]

    def call():
        with torch.no_grad():
            model(*current[0])

    with l2_persist.Watch() as kept:  # what ran before (the check's calls, of the reference too) is not charged to it
        def before():  # the copy first, then the flush: the copy leaves none of the inputs in L2
            kept.clear()  # no line kept persisting, which the flush could not evict
            current[0] = rolled(draw, next(places))
            flush()
        timing, error = _in_rounds(call, before, budget_s, sampler, full_clock_share)
        if error is not None:
            out = (timing, f"a timed call raised {type(error).__name__}: {_first_line(error)}", None, (None, None))
        else:
            async_ms, kernels, why = idle_calls(call, before)
            out = (timing, None, async_ms, (kernels, why))
    if set_aside is not None:
        set_aside.append(kept.most)
    return out


def grade_reference(problem: Problem, l2_bytes: int | None, budget_s: float | None = None,
                    full_clock_share: float | None = None, seed: int = 0, sampler=None) -> ProblemRun:
    """The reference of `problem` checked against a second instance of itself on the check's draws
    (as each candidate is checked before it is timed: `run.self_check` says where the two
    disagree), then timed on the current GPU on the draw every model of the grading is timed on
    (`problem.inputs(seed + 1000)`), as the module says; `sampler` (`nvml.Sampler`) reads the
    clock while it runs. The check is also what puts the reference's process where a candidate's
    is when its timing starts: on an H100, a reference timed without it read calls of 4 to 15 us
    12 to 17 % faster than copies of itself graded as candidates (docs/grade.md)."""
    run = ProblemRun("reference", str(problem.path), True)
    try:
        model = problem.model(seed, device="cuda")
        agree = check(problem, "cuda", seed=seed, models=(problem.model(seed, device="cuda"), model))
        run.self_check = None if agree.verified else _disagreement(agree)
        draw = problem.inputs(seed + 1000, "cuda")  # after the check, whose draws are let go (memory)
        set_aside: list[int] = []
        run.timing, run.error, run.async_ms, (run.kernels, run.kernels_why) = _timed(
            model, draw, l2_bytes, budget_s, full_clock_share, sampler, set_aside)
        run.l2_set_aside = max(set_aside, default=0)
    except (Exception, SystemExit) as exc:  # its constructor raised
        run.error = call_error(exc)
    return run


def _disagreement(agree: CandidateCheck) -> str:
    """Where a check failed, in a line: its first two outputs that failed, its first error, its flags."""
    outputs = [f"{o.name} on draw {d.seed}: " + (f"relative error {o.rel_error:.3g}" if o.rel_error is not None
                                                  else o.reason or "unreadable")
               for d in agree.draws for o in d.outputs if not o.passed]
    errors = [d.error for d in agree.draws if d.error]
    return "; ".join(outputs[:2] + errors[:1] + [f.code for f in agree.flags]) or "disagrees"


def grade_candidate(candidate: Problem, l2_bytes: int | None, budget_s: float | None = None,
                    full_clock_share: float | None = None, seed: int = 0, device: str = "cuda",
                    sampler=None) -> ProblemRun:
    """`candidate` (the problem with one candidate loaded: `workload.problem.with_candidate`)
    checked against the reference on `device` and, where it passed, timed on the reference's draw
    and audited, on the current GPU, as the module says. Never raises for the candidate's faults:
    its run's `error` says what stopped it (on a `device` other than 'cuda', the timing's).
    `sampler` (`nvml.Sampler`) reads the clock while it is timed."""
    import random

    import torch

    p = candidate
    run = ProblemRun(p.candidate_path.stem if p.candidate_path else "candidate", str(p.candidate_path), False)
    try:
        reference = p.model(seed, device=device)
        model = p.model(seed, candidate=True, device=device)
        run.check = check(p, device, seed=seed, models=(reference, model))  # the instances that are timed
        if not run.check.verified:
            return run
        draw = p.inputs(seed + 1000, device)
        set_aside: list[int] = []
        run.timing, run.error, run.async_ms, (run.kernels, run.kernels_why) = _timed(
            model, draw, l2_bytes, budget_s, full_clock_share, sampler, set_aside)
        run.l2_set_aside = max(set_aside, default=0)
        run.patched = put_back(p.harness)
        if run.error is None:  # the instance timed, on a rolled copy at a place of chance and on a new draw
            audits = [rolled(draw, random.randrange(1, 1 << 30)), p.inputs(seed + 2000, device)]
            after = check(p, device, on=audits, models=(reference, model))
            run.audit = [o.name for d in after.draws for o in d.outputs if not o.passed] + \
                        [d.error for d in after.draws if d.error]
    except (Exception, SystemExit) as exc:  # its constructor or a call outside the check raised
        run.error = call_error(exc)
    finally:
        if device == "cuda":
            torch.cuda.synchronize()
    return run


def grade(problem: Problem, candidates: list[Problem], l2_bytes: int | None, budget_s: float | None = None,
          full_clock_share: float | None = None, seed: int = 0) -> list[ProblemRun]:
    """The reference of `problem` and each of `candidates` checked and timed in this process, on the
    current GPU, the reference first (`grade_reference`, `grade_candidate`). `roofline run` grades
    each in a process of its own instead (`problem_child`)."""
    from .nvml import Sampler

    sampler = Sampler()
    try:
        return [grade_reference(problem, l2_bytes, budget_s, full_clock_share, seed, sampler)] + \
            [grade_candidate(p, l2_bytes, budget_s, full_clock_share, seed, sampler=sampler) for p in candidates]
    finally:
        sampler.close()
