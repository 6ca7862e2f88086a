"""A user's kernel run in a process of its own, so that its faults cannot take the run down.

A CUDA fault (an illegal address, a trap) poisons the context it happens in, and a kernel that
never ends holds the GPU until its process goes. So each user kernel is compiled, verified and
timed by a child process (this module run as a script, `python -m roofline.measure.isolated`,
through `roofline.child`: the request on its stdin, its report the last line of its stdout),
which draws the same inputs from the same seed, computes its own cuBLAS reference, and answers
with one JSON document on stdout. The child first verifies at a ragged problem (sizes one less
than a multiple of 128, so that a kernel that only works on whole tiles is caught), then verifies
and times at the requested one (a kernel that fails verification at the ragged shape is still
verified there, untimed: a fault it meets there tells more than a wrong answer). A launch that
outlives the timeout ends the child, and says after how long; the parent also stops a child that
does not answer in time. Whatever happens, the parent gets a `KernelRun` whose `error` says what,
the most telling failure first (`summarise`): a CUDA error (illegal address, ...), a timeout, how
the child died, a failed verification.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import TypeAdapter

from .. import child
from ..ladder.user import UserKernel, from_description
from ..model.problem import Problem
from ..model.timing import DEFAULT_TIMEOUT_S
from ..model.verify import Verification
from .nvrtc_compile import compiler_env
from .rounds import BUDGET_PER_ITEM_S, MIN_SAMPLES, WARMUP, without_rounds
from .runner import FAILURES, Compiled, KernelRun, RaggedCheck, run
from .timing import Timing
from .waiting import LaunchTimeout

RAGGED = Problem(511, 383, 255)  # each one less than a multiple of 128
RAGGED_TENSOR_K = 248  # a tensor-core precision's rows must be 16 bytes: the multiple of 8 below 255
CHILD = "roofline.measure.isolated"
START_ALLOWANCE_S = 180.0  # CuPy import, NVRTC compile, inputs and the reference, before any launch
# the most launches near the timeout one verify-and-time pass makes: the kernel's and cuBLAS's
# warm-up and the rounds that reach `rounds.MIN_SAMPLES` (a launch that slow is one per burst, and
# the budget is spent by then), and the check; faster launches fit the child's timing budget
TIMED_LAUNCHES = 2 * (WARMUP + MIN_SAMPLES + 1) + 1


def ragged_for(dtype: str) -> Problem:
    """The ragged shape in precision `dtype`: RAGGED, with K = 248 in the tensor-core precisions."""
    return RAGGED if dtype == "fp32" else Problem(RAGGED.m, RAGGED.n, RAGGED_TENSOR_K, dtype)


@dataclass(frozen=True)
class ChildReport:
    """What the child found, in the order it happened (None where it stopped short)."""

    compiled: Compiled | None = None
    ragged: Verification | None = None
    verification: Verification | None = None
    timing: Timing | None = None
    sm_clock_mhz: tuple[int | None, int | None] = (None, None)
    error: str | None = None
    failure: str | None = None  # the kind of `error` (`runner.FAILURES`)


_REPORT = TypeAdapter(ChildReport)


def summarise(name: str, outcomes: list[tuple[str, str | None, str | None]]) -> tuple[str | None, str | None]:
    """A kernel's failure over the shapes it was checked at: `outcomes` holds, per shape, where
    ('' for the shape asked for, 'at the ragged shape 511x383x255'), the failure kind
    (`runner.FAILURES`, None where it went through) and the error message (which starts with
    `name`). Returns (kind, message) of the most telling failure (a fault or a timeout before a
    wrong answer; the earlier shape among equals) with its shape named, and the others after it
    on the same line; (None, None) when nothing failed."""
    failed = [o for o in outcomes if o[1] is not None]
    if not failed:
        return None, None
    first = min(failed, key=lambda o: FAILURES.index(o[1]) if o[1] in FAILURES else len(FAILURES))

    def text(o: tuple[str, str | None, str | None]) -> str:
        where, _, message = o
        body = (message or o[1]).removeprefix(f"{name}: ")
        return f"{where}: {body}" if where else body

    rest = "".join(f"; {text(o)}" for o in failed if o is not first)
    return first[1], f"{name}: {text(first)}{rest}"


def run_isolated(kernel: UserKernel, problem: Problem, pci_bus_id: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                 ragged: bool = True, timed: bool = True, l2: str = "cold") -> KernelRun:
    """Compile, verify (at RAGGED first when `ragged`) and, with `timed`, time `kernel` on
    `problem` in a child process on the GPU at `pci_bus_id`, with the L2 `l2` ('cold' or 'warm',
    as `runner.run`). Never raises for the kernel's faults: the returned run's `error` says what
    happened."""
    figures = kernel.figures(problem)
    request = {"kernel": kernel.describe(), "problem": [problem.m, problem.n, problem.k, problem.dtype],
               "ragged": ragged, "timed": timed, "timeout_s": timeout_s, "pci_bus_id": pci_bus_id, "l2": l2}
    limit = START_ALLOWANCE_S + timeout_s * TIMED_LAUNCHES + 2 * BUDGET_PER_ITEM_S
    reply = child.ask(CHILD, request, limit, _REPORT.validate_json, env=compiler_env())
    if reply.answer is None:
        return KernelRun(kernel, figures, error=f"{kernel.name}: {reply.why}", failure=reply.failure)
    report = reply.answer
    check = None if report.ragged is None else RaggedCheck(ragged_for(problem.dtype), report.ragged)
    failure = report.failure or ("error" if report.error else None)
    return KernelRun(kernel, figures, report.compiled, report.verification, report.timing,
                     report.sm_clock_mhz, report.error, check, failure)


def _child(request: dict) -> ChildReport:
    import cupy

    cupy.cuda.Device(cupy.cuda.runtime.deviceGetByPCIBusId(request["pci_bus_id"])).use()
    kernel = from_description(request["kernel"])
    problem = Problem(*request["problem"])
    timeout = request["timeout_s"]
    ragged, outcomes = None, []
    if request["ragged"]:
        shape = ragged_for(problem.dtype)
        try:
            first = run([kernel], shape, timed=False, timeout_s=timeout).kernels[0]
        except LaunchTimeout as exc:
            return _stuck(kernel, exc, outcomes, f"at the ragged shape {shape.text()}", None, request)
        ragged = first.verification
        failure = first.failure or (None if first.correct else "verification")
        outcomes.append((f"at the ragged shape {shape.text()}", failure,
                         first.error or (f"{kernel.name}: failed verification" if failure else None)))
        if failure not in (None, "verification"):  # still running, or the context is lost: nothing more here
            kind, error = summarise(kernel.name, outcomes)
            return ChildReport(first.compiled, ragged, error=error, failure=kind)
        cupy.get_default_memory_pool().free_all_blocks()
    wrong = bool(outcomes and outcomes[0][1])  # a wrong answer at the ragged shape: verified here, not timed
    try:
        r = run([kernel], problem, timed=request["timed"] and not wrong, timeout_s=timeout, l2=request["l2"]).kernels[0]
    except LaunchTimeout as exc:
        return _stuck(kernel, exc, outcomes, "", ragged, request)
    except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as exc:  # left by the ragged launch
        outcomes.append(("", "fault", f"{kernel.name}: CUDA error: {exc}"))
        kind, error = summarise(kernel.name, outcomes)
        return ChildReport(None, ragged, error=error, failure=kind)
    outcomes.append(("", r.failure, r.error))
    kind, error = summarise(kernel.name, outcomes)
    # its rounds were shared with this process's cuBLAS, not the parent's: read against that by medians
    timing = without_rounds(r.timing) if r.timing is not None else None
    return ChildReport(r.compiled, ragged, r.verification, timing, r.sm_clock_mhz, error, kind)


def _stuck(kernel: UserKernel, exc: LaunchTimeout, outcomes: list, where: str,
           ragged: Verification | None, request: dict) -> ChildReport:
    """The report of a launch still running past its timeout (`waiting.LaunchTimeout`): what was
    known before it, and the time since this process started (imports, compile, inputs and the
    reference came before the launch). Nothing more may touch the GPU: the caller ends the process."""
    partial = exc.partial
    before = child.seconds_before(request, exc.waited_s)
    outcomes.append((where, "timeout", f"{kernel.name}: timeout: {exc}; {before:.1f} s of start-up, compile, inputs "
                                       f"and reference before it"))
    kind, error = summarise(kernel.name, outcomes)
    return ChildReport(partial.compiled if partial is not None else None, ragged, error=error, failure=kind)


def _failed(request: dict, exc: Exception) -> str:
    """The report of an exception outside a launch: a UsageError from the file, a CUDA error."""
    name = request.get("kernel", {}).get("name", "kernel")
    fault = "CUDA" in type(exc).__name__ or "cuda" in type(exc).__module__
    return _REPORT.dump_json(ChildReport(error=f"{name}: {type(exc).__name__}: {exc}".splitlines()[0],
                                         failure="fault" if fault else "error")).decode()


def main() -> None:
    """The child (`roofline.child.serve`): read the request on stdin, write the report as the last
    line of stdout, and end at once (a timed-out kernel may still be running: the driver ends it
    with the process)."""
    child.serve(lambda request: _REPORT.dump_json(_child(request)).decode(), _failed)


if __name__ == "__main__":
    main()
