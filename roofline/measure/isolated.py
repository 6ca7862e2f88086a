"""A user's kernel run in a process of its own, so that its faults cannot take the run down.

A CUDA fault (an illegal address, a trap) poisons the context it happens in, and a kernel that
never ends holds the GPU until its process goes. So each user kernel is compiled, verified and
timed by a child process (this module run as a script: `python -m roofline.measure.isolated`),
which draws the same inputs from the same seed, computes its own cuBLAS reference, and answers
with one JSON document on stdout. The child first verifies at a ragged problem (sizes one less
than a multiple of 128, so that a kernel that only works on whole tiles is caught), then verifies
and times at the requested one. A launch that outlives the timeout ends the child; the parent
also stops a child that does not answer in time. Whatever happens, the parent gets a `KernelRun`
whose `error` says what: a CUDA error (illegal address, ...), a timeout, a failed verification,
or how the child died.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

from pydantic import TypeAdapter, ValidationError

from ..ladder.user import UserKernel, from_description
from ..model.problem import Problem
from ..model.timing import DEFAULT_TIMEOUT_S
from ..model.verify import Verification
from .runner import Compiled, KernelRun, RaggedCheck, run
from .timing import Timing

RAGGED = Problem(511, 383, 255)  # each one less than a multiple of 128
START_ALLOWANCE_S = 180.0  # CuPy import, NVRTC compile, inputs and the reference, before any launch
TIMED_LAUNCHES = 230  # the most launches one verify-and-time pass makes (time_gpu: 3 + up to 200 + probe)


@dataclass(frozen=True)
class ChildReport:
    """What the child found, in the order it happened (None where it stopped short)."""

    compiled: Compiled | None = None
    ragged: Verification | None = None
    verification: Verification | None = None
    timing: Timing | None = None
    sm_clock_mhz: tuple[int | None, int | None] = (None, None)
    error: str | None = None


_REPORT = TypeAdapter(ChildReport)


def run_isolated(kernel: UserKernel, problem: Problem, pci_bus_id: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                 ragged: bool = True, timed: bool = True, l2: str = "cold") -> KernelRun:
    """Compile, verify (at RAGGED first when `ragged`) and, with `timed`, time `kernel` on
    `problem` in a child process on the GPU at `pci_bus_id`, with the L2 `l2` ('cold' or 'warm',
    as `runner.run`). Never raises for the kernel's faults: the returned run's `error` says what
    happened."""
    figures = kernel.figures(problem)
    request = {"kernel": kernel.describe(), "problem": [problem.m, problem.n, problem.k],
               "ragged": ragged, "timed": timed, "timeout_s": timeout_s, "pci_bus_id": pci_bus_id, "l2": l2}
    limit = START_ALLOWANCE_S + timeout_s * TIMED_LAUNCHES
    try:
        proc = subprocess.run([sys.executable, "-m", "roofline.measure.isolated"], input=json.dumps(request),
                              capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return KernelRun(kernel, figures, error=f"{kernel.name}: timeout: no answer within {limit:g} s; "
                                                "its process was stopped")
    lines = proc.stdout.strip().splitlines()  # the kernel's own printf output comes before the report
    try:
        report = _REPORT.validate_json(lines[-1]) if lines else None
    except ValidationError:
        report = None
    if report is None:
        last = next((ln for ln in reversed(proc.stderr.strip().splitlines()) if ln.strip()), "no message")
        return KernelRun(kernel, figures, error=f"{kernel.name}: its process died (exit code {proc.returncode}) "
                                                f"without a report: {last.strip()[:200]}")
    check = None if report.ragged is None else RaggedCheck(RAGGED, report.ragged)
    return KernelRun(kernel, figures, report.compiled, report.verification, report.timing,
                     report.sm_clock_mhz, report.error, check)


def _child(request: dict) -> ChildReport:
    import cupy

    cupy.cuda.Device(cupy.cuda.runtime.deviceGetByPCIBusId(request["pci_bus_id"])).use()
    kernel = from_description(request["kernel"])
    problem = Problem(*request["problem"])
    timeout = request["timeout_s"]
    ragged = None
    if request["ragged"]:
        first = run([kernel], RAGGED, timed=False, timeout_s=timeout).kernels[0]
        ragged = first.verification
        if first.error is not None or not first.correct:
            why = first.error or f"{kernel.name}: failed verification"
            return ChildReport(first.compiled, ragged,
                               error=why.replace(f"{kernel.name}: ", f"{kernel.name}: at the ragged shape "
                                                                    f"{RAGGED.text()}: ", 1))
        cupy.get_default_memory_pool().free_all_blocks()
    r = run([kernel], problem, timed=request["timed"], timeout_s=timeout, l2=request["l2"]).kernels[0]
    return ChildReport(r.compiled, ragged, r.verification, r.timing, r.sm_clock_mhz, r.error)


def main() -> None:
    """The child: read the request on stdin, write the report as the last line of stdout, and
    end at once (a timed-out kernel may still be running: the driver ends it with the process)."""
    request = json.loads(sys.stdin.read())
    try:
        report = _child(request)
    except Exception as exc:  # a UsageError from the file, a CUDA error outside a launch
        name = request.get("kernel", {}).get("name", "kernel")
        report = ChildReport(error=f"{name}: {type(exc).__name__}: {exc}".splitlines()[0])
    sys.stdout.write(_REPORT.dump_json(report).decode() + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
