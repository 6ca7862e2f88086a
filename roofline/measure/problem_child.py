"""A kernel benchmark's reference, or one of its candidates, graded in a process of its own
(`python -m roofline.measure.problem_child`): a candidate that ends its process (`os._exit`, a
signal, a fault that takes the CUDA context down) loses its own entry, not the grade file, and
nothing one candidate changed in its process (an op replaced, a switch turned, memory kept on the
GPU) is there when the next is graded.

The parent (`commands.grade.grade_problem`) sends a request (`roofline.child`: JSON on stdin): the
problem's file, the candidate's (none: the reference), the GPU's PCI bus id, the L2's size, the
timing's budget and clock share, the seed, and a token drawn at random for this child. The child
loads the problem and the candidate, grades it (`problem_grade.grade_reference` or
`grade_candidate`) and answers with the run as one JSON line holding the token: a line the
candidate prints itself, without the token, is not taken for the answer.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from pydantic import TypeAdapter

from .. import child
from .problem_grade import ProblemRun

CHILD = "roofline.measure.problem_child"
START_ALLOWANCE_S = 300.0  # PyTorch's import, the model's construction, Triton or load_inline compiles


@dataclass
class Answer:
    """What a child answers: the token its parent drew for it, and the run."""

    token: str
    run: ProblemRun


_REPORT = TypeAdapter(Answer)


def request_for(problem_path: Path, candidate_path: Path | None, pci_bus_id: str | None, l2_bytes: int | None,
                budget_s: float | None, full_clock_share: float | None, seed: int = 0, device: str = "cuda",
                case: int | None = None) -> dict:
    """The request that has a child grade `candidate_path` (None: the reference) of `problem_path`
    (of a GPU MODE task, its case `case`: `workload.problem.cases`), its check on `device` (the
    timing is on the GPU: 'cpu' checks alone, and the timing's error)."""
    return {"problem": str(problem_path), "candidate": str(candidate_path) if candidate_path else None,
            "pci_bus_id": pci_bus_id, "l2_bytes": l2_bytes, "budget_s": budget_s,
            "full_clock_share": full_clock_share, "seed": seed, "device": device, "case": case,
            "token": secrets.token_hex(16)}


def _named(request: dict) -> ProblemRun:
    """The run `request` asks for, before anything is known of it."""
    candidate = request.get("candidate")
    if candidate is None:
        return ProblemRun("reference", request["problem"], True)
    return ProblemRun(Path(candidate).stem, candidate, False)


def limit_s(request: dict) -> float:
    """How long the parent waits for the child of `request`: the start-up allowance, the checks'
    draws and the timing's rounds (a generous multiple of the budget) and the audit."""
    return START_ALLOWANCE_S + 60 * (request.get("budget_s") or 0.5)


def grade_in_child(request: dict, started: child.Started | None = None) -> ProblemRun:
    """The run of `request` (`request_for`), graded in a child (`started` where one was started
    ahead, else a new one). Never raises: a child that ended without the harness's answer (killed,
    timed out, or its answer line missing the token) gives a run whose `error` says so."""
    def read(text: str) -> ProblemRun:
        found = _REPORT.validate_json(text)
        if found.token != request["token"]:
            raise ValueError("not the harness's answer")
        return found.run

    reply = (started or child.Started(CHILD)).ask(request, limit_s(request), read)
    if reply.answer is not None:
        return reply.answer
    run = _named(request)
    run.error = f"its process gave no grade: {reply.why}"
    return run


def grade_each(requests: list[dict]) -> list[ProblemRun]:
    """`grade_in_child` of each of `requests` in turn, each in a fresh process, the next one's
    started while the one before it runs: its interpreter and PyTorch's import (`_prepare`, about
    5 s) overlap that run instead of adding to it. The started child reads nothing of its entry
    until it is asked."""
    runs: list[ProblemRun] = []
    ahead = child.Started(CHILD) if requests else None
    try:
        for i, request in enumerate(requests):
            current, ahead = ahead, child.Started(CHILD) if i + 1 < len(requests) else None
            runs.append(grade_in_child(request, current))
    finally:
        if ahead is not None:
            ahead.close()
    return runs


def _prepare() -> None:
    """What every request needs, imported before the request is read: PyTorch, CuPy where it is
    installed (the GPU's index), the problem loader, the harness (`import_harness`) and CUPTI's
    Python bindings where they are installed (`activity.preload`: half a second of import on the
    H100 machine, which a timed entry would otherwise spend after its request)."""
    import torch  # noqa: F401
    try:
        import cupy  # noqa: F401
    except ImportError:  # a check on the CPU needs none
        pass

    from ..workload import problem  # noqa: F401
    from .activity import preload
    import_harness()
    preload()


def _child(request: dict) -> ProblemRun:
    import torch

    if request.get("pci_bus_id"):
        torch.cuda.set_device(_index_of(request["pci_bus_id"]))
    args = (request.get("l2_bytes"), request.get("budget_s"), request.get("full_clock_share"), request.get("seed", 0))
    import_harness()
    device = request.get("device", "cuda")
    sampler = _sampler() if device == "cuda" else None  # the SM clock and throttling while it is timed
    try:
        return _graded(request, args, device, sampler)
    finally:
        if sampler is not None:
            sampler.close()


def _sampler():
    """NVML's readings of the GPU this process times on (`nvml.Sampler`)."""
    import torch

    from .nvml import Sampler
    return Sampler(torch.cuda.current_device())


def _graded(request: dict, args: tuple, device: str, sampler) -> ProblemRun:
    from ..workload import problem as problems
    from .problem_grade import grade_candidate, grade_reference

    with problems.pytorch_defaults():
        loaded = problems.load(Path(request["problem"]), request.get("case"))
        if request.get("candidate") is None:
            return grade_reference(loaded, *args, sampler=sampler)
        try:
            candidate = problems.with_candidate(loaded, Path(request["candidate"]))
        except (Exception, SystemExit) as exc:  # its import raised or ended the process
            from .candidate import call_error
            run = _named(request)
            run.error = call_error(exc)
            return run
        return grade_candidate(candidate, *args, device=device, sampler=sampler)


def import_harness() -> None:
    """Import roofline's timing and checking modules (`workload.problem.HARNESS_MODULES`) before the
    problem and its candidate: what the candidate then replaces of them is in the harness it is
    checked against, and flagged."""
    import importlib

    from ..workload.problem import HARNESS_MODULES

    for name in HARNESS_MODULES:
        importlib.import_module(name)


def _index_of(pci_bus_id: str) -> int:
    """The CUDA device index (as PyTorch counts) of the GPU at `pci_bus_id`."""
    import cupy

    return cupy.cuda.runtime.deviceGetByPCIBusId(pci_bus_id)


def _answer(request: dict) -> str:
    return _REPORT.dump_json(Answer(request["token"], _child(request))).decode()


def _failed(request: dict, exc: Exception) -> str:
    """Anything that stopped the child outside the candidate's own calls (the problem's file, the
    GPU) as the run's error."""
    run = _named(request)
    run.error = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    return _REPORT.dump_json(Answer(request["token"], run)).decode()


def main() -> None:
    """The child (`roofline.child.serve`): read the request, write the run as the last line of stdout."""
    child.serve(_answer, _failed, _prepare)


if __name__ == "__main__":
    main()
