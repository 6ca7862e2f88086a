"""A size sweep read at one of its sizes as a run of that size (`at_size`), so that a run compares
with the sweep that holds its size (`compare`, the regression gate).

A sweep records, at each size but its largest, a kernel's rate and time, whether it verified, its
traffic model and its waves (`SweepKernel`), and cuBLAS's rate and time (`SweepReference`): no timing
samples, no relative error, no counters, no energy. The run made from it has none of them, and its
compiled record (registers, shared memory, occupancy) is the largest size's, where the kernel ran
the same tile there; a kernel whose tile the sweep chose per size (a dispatching kernel at another
tile there) has no compiled record at this size. A kernel without a traffic model at this size (a
sweep written before the model was kept per size, read without the kernel families) is left out.
"""

from __future__ import annotations

from pydantic import ValidationError

from ..errors import UsageError
from ..model.problem import Problem
from .schema import KernelRecord, Reference, Results, SweepKernel, SweepPoint
from .store import one_line


def sizes(doc: Results) -> list[Problem]:
    """The problems `doc` holds: each size of its sweep, or its one problem."""
    return [p.problem.problem for p in doc.sweep] if doc.sweep else [doc.problem.problem]


def holds(doc: Results, problem: Problem) -> bool:
    """Whether `doc` (a run, or a sweep at any of its sizes) holds `problem`."""
    return problem in sizes(doc)


def at_size(doc: Results, problem: Problem) -> Results:
    """`doc` read at `problem`: itself where that is its problem (a sweep's largest size, whose
    kernels it records in full), else the run its sweep point at `problem` makes (see the module's
    docstring for what such a run lacks). Raises UsageError when the file does not hold `problem`."""
    if doc.problem.problem == problem:
        return doc
    point = next((p for p in doc.sweep or [] if p.problem.problem == problem), None)
    if point is None:
        raise UsageError(f"the file holds no run of {problem.text()} (its sizes: "
                         f"{', '.join(p.text() for p in sizes(doc))})")
    records = {k.name: k for k in doc.kernels}
    kernels = [_kernel(records[k.name], k, problem, point.reference.gflops) for k in point.kernels
               if k.name in records and (k.model is not None or records[k.name].model is None)]
    try:
        run = Results.model_validate({
            **doc.model_dump(by_alias=True, exclude={"sweep", "tune", "kernels", "problem", "reference", "skipped"}),
            "problem": point.problem.model_dump(by_alias=True),
            "reference": _reference(doc.reference, point, problem).model_dump(by_alias=True),
            "kernels": [k.model_dump(by_alias=True) for k in kernels]})
    except ValidationError as exc:  # the point's figures fail a run's checks: the file's fault, said in one line
        raise UsageError(f"the sweep's figures at {problem.text()} do not make a run: {one_line(exc)}") from None
    run._file_rates = doc.seen_rates()  # its ceilings are the file's (at least what any size saw), as show reads it
    return run


def _reference(ref: Reference, point: SweepPoint, problem: Problem) -> Reference:
    time_ms = point.reference.time_ms or problem.flops / (point.reference.gflops * 1e6)
    return Reference(name=ref.name, via=ref.via, tf32=ref.tf32, gflops=point.reference.gflops, time_ms=time_ms)


def _kernel(record: KernelRecord, k: SweepKernel, problem: Problem, reference_gflops: float) -> KernelRecord:
    """The largest size's record of a kernel with what the sweep holds for it at `problem` (its
    share of cuBLAS worked out from the two rates, which the sweep may keep rounded)."""
    time_ms = k.time_ms if k.time_ms is not None or k.gflops is None else problem.flops / (k.gflops * 1e6)
    same_tile = not k.params or k.params == record.params
    compiled = {} if same_tile else {"template": "", "registers": None, "static_smem_bytes": None,
                                     "local_bytes": None, "occupancy": None, "driver_active_blocks_per_sm": None,
                                     "compiler": None}
    return record.model_copy(update={
        "params": k.params or record.params, **compiled, "verified": k.verified, "rel_error": None,
        "nan_or_unwritten_elements": None, "error": None if k.verified else record.error,
        "gflops": k.gflops, "time_ms": time_ms, "timing": None, "sm_clock_mhz_before_after": [], "energy": None,
        "pct_of_reference": None if k.gflops is None else 100 * k.gflops / reference_gflops,
        "model": k.model, "counted": None, "ragged": None, "waves": k.waves, "timeline": None})
