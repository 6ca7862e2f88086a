"""A workload graded in a process of its own (`python -m roofline.measure.graded_child`), so that
a kernel's fault or a callable's crash cannot take the other entries down, and once more under
Nsight Compute for a graded `run --profile`.

The parent writes a request (`roofline.child`: JSON on stdin, or in a file named on the command
line for the run under ncu): the workload's source (a .cu path, or a callable's
target with its spec file), its sizes, the GPU's PCI bus id, the L2 size, the timing budget, and
the mode: 'grade' (check and time: `measure.graded.grade_one`; the report, one JSON line, is the
last of stdout) or 'profile' (one untimed call to compile and warm up, then one between
cudaProfilerStart and cudaProfilerStop, for ncu's `--profile-from-start off`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path

from pydantic import TypeAdapter

from .. import child
from ..build_options import CompileSettings
from ..model.timing import DEFAULT_TIMEOUT_S
from ..workload.spec import Workload, load_callable, load_kernel
from .graded import Findings, GradedRun
from .nvrtc_compile import compiler_env
from .waiting import LaunchTimeout

CHILD = "roofline.measure.graded_child"
START_ALLOWANCE_S = 180.0  # CuPy and PyTorch imports, NVRTC or Triton compiles, the inputs and references


@dataclass
class ChildGrade(Findings):
    """What the child found (`graded.Findings`); `usage` is a spec's error (a reference that
    fails), `error` anything else that stopped it."""

    usage: str | None = None


_REPORT = TypeAdapter(ChildGrade)


def request_for(workload: Workload, pci_bus_id: str | None, l2_bytes: int | None,
                budget_s: float | None, full_clock_share: float | None, mode: str = "grade",
                timeout_s: float | None = DEFAULT_TIMEOUT_S) -> dict:
    """The request that has a child rebuild `workload` and grade (or profile) it, a launch still
    running after `timeout_s` seconds ending the child (`waiting`)."""
    return {"path": str(workload.path) if workload.path else None, "target": workload.target,
            "compile": workload.build.describe(),
            "spec": str(workload.spec_file) if workload.spec_file else None, "sizes": workload.sizes, "name": workload.name,
            "pci_bus_id": pci_bus_id, "l2_bytes": l2_bytes, "budget_s": budget_s,
            "full_clock_share": full_clock_share, "mode": mode, "timeout_s": timeout_s}


def command(request: dict, folder: Path) -> list[str]:
    """The command line of a child that reads `request` from a file written in `folder` (one run
    under ncu, whose stdin is not the child's: `roofline.child`)."""
    return child.command(CHILD, child.write_request(request, folder))


def grade_in_child(workload: Workload, request: dict, timeout_s: float = DEFAULT_TIMEOUT_S) -> GradedRun:
    """Grade `workload` in a child process (`request` from `request_for`). Never raises for the
    kernel's faults: the run's `error` says what happened. Raises UsageError for a reference the
    child found wrong (the spec's error)."""
    from ..errors import UsageError
    run = GradedRun(workload=workload)
    limit = START_ALLOWANCE_S + 40 * timeout_s + 4 * (request.get("budget_s") or 0.5)
    reply = child.ask(CHILD, request, limit, _REPORT.validate_json, env=compiler_env())
    if reply.answer is None:
        run.error = reply.why
        return run
    report = reply.answer
    if report.usage:
        raise UsageError(report.usage)
    for f in fields(Findings):
        setattr(run, f.name, getattr(report, f.name))
    return run


def _workload(request: dict) -> Workload:
    spec = Path(request["spec"]) if request.get("spec") else None
    w = load_kernel(Path(request["path"])) if request.get("path") else load_callable(request["target"], spec)
    if request.get("path"):  # compiled as the parent was asked: the file's settings with the command line's
        w = replace(w, build=CompileSettings.from_description(request.get("compile") or {}))
    return replace(w.resized(request.get("sizes") or {}), name=request.get("name") or w.name)


def _child(request: dict) -> ChildGrade:
    import cupy

    from . import buffers
    from .graded import build, grade_one
    from .nvml import Sampler, this_gpu_limits
    if request.get("pci_bus_id"):
        cupy.cuda.Device(cupy.cuda.runtime.deviceGetByPCIBusId(request["pci_bus_id"])).use()
    limits = this_gpu_limits()
    workload = _workload(request)
    if request.get("mode") == "profile":
        arrays = buffers.allocate(workload, workload.seed)
        subject = build(workload, arrays, limits)
        subject.launch()
        cupy.cuda.Device().synchronize()
        cupy.cuda.profiler.start()
        subject.launch()
        cupy.cuda.Device().synchronize()
        cupy.cuda.profiler.stop()
        return ChildGrade()
    sampler = Sampler()
    try:
        run = grade_one(workload, limits, request.get("l2_bytes"), sampler, request.get("budget_s"),
                        request.get("full_clock_share"), timeout_s=request.get("timeout_s"))
    except LaunchTimeout as exc:  # still on the GPU: report what is known, and the caller ends the process
        run = exc.partial
        run.error += f"; {child.seconds_before(request, exc.waited_s):.1f} s of start-up, compile, inputs and " \
                     "references before it"
    finally:
        sampler.close()
    return ChildGrade(**{f.name: getattr(run, f.name) for f in fields(Findings)})


def _answer(request: dict) -> str | None:
    """The report of `request`; None in the profile mode, under ncu: the counts are the answer."""
    report = _child(request)
    return None if request.get("mode") == "profile" else _REPORT.dump_json(report).decode()


def _failed(request: dict, exc: Exception) -> str:
    """A spec's error as `usage`; anything else that stopped the child (a CUDA error outside a
    launch, a callable that raised while it was built) as `error`. In the profile mode the
    exception goes on: the exit code is the answer."""
    from ..errors import UsageError
    if request.get("mode") == "profile":
        raise exc
    if isinstance(exc, UsageError):
        return _REPORT.dump_json(ChildGrade(usage=str(exc))).decode()
    return _REPORT.dump_json(ChildGrade(error=f"{type(exc).__name__}: {exc}".splitlines()[0][:300])).decode()


def main() -> None:
    """The child (`roofline.child.serve`): read the request, write the report as the last line of
    stdout, end at once."""
    child.serve(_answer, _failed)


if __name__ == "__main__":
    main()
