"""Any results file as the decision commands read it (what-if, compare, project, check): its
kernels, each with its time, the work and bytes behind it, its occupancy and its reading against
the file's roofs, and how kernels are matched across files.

Two kinds of file, two meanings of a kernel's time:

- a profile of a program (`roofline profile`): each kernel is one kernel at one launch
  configuration, with all its launches; `time_ms` is their sum and the kernels add up to the
  step's profiled GPU time (`Workload.step_ms`);
- a run of the ladder or of the user's kernels (`roofline run`, a sweep at its largest size, a tile
  search): the kernels are alternatives that solve one problem; `time_ms` is one launch (the median
  of the timed ones) and there is no step (`step_ms` None).

FLOPs are per precision key (`model.peaks.PRECISIONS`): a run's kernels do the problem's 2·M·N·K
FP32 operations; a profile's are those Nsight Compute counted and the verdict reads
(`ProfiledKernel.credible_flops`). Bytes are per level key ('dram', 'l2', 'l1', 'smem'): counted by
Nsight Compute where the file has them, else the model's (`model.roofs.level_bytes`), which
`bytes_counted` tells apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from ..model.device import DeviceSpec
from ..model.roofs import Verdict, level_bytes
from ..model.units import gflops
from ..results.profile import ProfiledKernel, ProfileResults, launch_label
from ..results.schema import KernelRecord, Results

LEVELS = {"DRAM": "dram", "L2": "l2", "L1": "l1", "SMEM": "smem"}  # model.roofs level -> level key


@dataclass(frozen=True)
class KernelWork:
    """One kernel of a results file. Times in ms, FLOPs and bytes as counts; `launches` 1 for a run."""

    name: str
    key: tuple  # what matches it in another file: (name,) for a run; (name, grid, block) for a profile
    launches: int
    time_ms: float  # all its launches (a profile) or one launch (a run)
    flops: dict[str, float]  # precision key -> FLOPs in `time_ms`
    bytes: dict[str, float]  # level key -> bytes in `time_ms`
    bytes_counted: dict[str, bool]  # level key -> counted by Nsight Compute (False: the model's)
    occupancy: float | None  # theoretical occupancy, 0-1, where known
    spread: float | None  # its timed launches' (max - min) / median, where the file has them
    verdict: Verdict  # against the file's roofs, as `show` reads it
    threads_per_block: int | None = None
    blocks: int | None = None
    registers: int | None = None  # per thread, where known: with the block size and shared memory, the
    smem_bytes: tuple[int, int] | None = None  # (static, dynamic) per block: occupancy on another GPU
    joules: float | None = None  # a run's kernel measured with --energy: joules per launch
    params: dict[str, int] | None = None  # a run's ladder kernel: its template parameters, as recorded
    # what the file did not count for it (`ProfiledKernel.uncounted`: 'fp32', 'dram'); () where all is counted
    uncounted: tuple[str, ...] = ()
    main: str | None = None  # the precision key whose rate `show` gives (a profile's dominant, a run's own)

    @property
    def main_flops(self) -> float:
        """Its `main` precision's FLOPs (the work `show`'s rate counts and its roof reads), or all its
        FLOPs where it has no main one."""
        return self.flops.get(self.main, 0.0) if self.main else sum(self.flops.values())

    @property
    def main_gflops(self) -> float | None:
        """GFLOP/s of `main_flops` in its time; None without FLOPs or time."""
        return gflops(self.main_flops, self.time_ms) if self.main_flops and self.time_ms else None

    @property
    def label(self) -> str:
        """The name, with the launch configuration where two kernels of a file share a name."""
        if len(self.key) == 3 and self.key[1] is not None:
            grid, block = self.key[1], self.key[2]
            return launch_label(self.name, grid, block)
        return self.name


@dataclass(frozen=True)
class Workload:
    """A results file's kernels (`KernelWork`), its device and, for a profile, the step's time.
    `kind` is the file's kind as documents show it ('profile', 'run'); what the readings depend on
    is `is_step`, whether the kernels are one step's parts (they add up to `step_ms`) or
    alternatives solving one problem (a run's, with its `reference` where recorded)."""

    kind: Literal["profile", "run"]
    device: DeviceSpec
    kernels: list[KernelWork]
    step_ms: float | None  # the profiled GPU time (a profile); None for a run, whose kernels are alternatives
    problem: str | None = None  # 'M x N x K' of a run
    notes: list[str] = field(default_factory=list)
    is_step: bool = False
    reference: KernelWork | None = None  # a run's cuBLAS reference: its work alone (no bytes or launch)
    compute_level: str | None = None  # a run's compute roof ('FP32', 'BF16 tensor')
    programs: int = 1  # a profile of several programs profiled apart (`apart`): no step, each kernel alone
    # a run's measured ceilings raised to a rate one of its own kernels reached: roof level -> that kernel
    raised_by: dict[str, str] = field(default_factory=dict)

    def by_key(self) -> dict[tuple, KernelWork]:
        return {k.key: k for k in self.kernels}


def phase_notes(where: str, cut: list[str], apart: list[str], how: str, then: str = "") -> list[str]:
    """The notes beside a phase table (`where`: 'by phase', 'over their runs'; `whatif`'s, `compare`'s):
    one naming the kernels it leaves out, sampled over the start of their run only (`cut`, `how` to
    see more), and one naming those whose sampled launch ran at another SM clock than their timed
    calls (`apart`, `then` what that means there); none where both lists are empty."""
    notes = []
    if cut:  # no tail or drain seen, so no phase of the whole run to read
        notes.append(f"{where}: {', '.join(cut[:5])}{', ...' if len(cut) > 5 else ''} left out: sampled over the "
                     f"start of the run only ({how})")
    if apart:
        notes.append(f"{where}: the launches sampled of {', '.join(apart)} ran at another SM clock than their timed "
                     f"calls (show names both): their phases' shares of the time are of those launches{then}")
    return notes


def apart(doc: Results | ProfileResults, w: Workload) -> Workload:
    """`w` read kernel by kernel where `doc` is a profile of several programs' reports read together
    (`ProfileResults.programs`): no step to add their times to, a note that says why. `w` itself
    for any other file."""
    programs = getattr(doc, "programs", 1)
    if programs == 1:
        return w
    note = (f"the profile holds the launches of {programs} programs, profiled apart and read together: each "
            "kernel is read alone, their times add up to no step")
    return replace(w, step_ms=None, is_step=False, notes=[*w.notes, note], programs=programs)


def workload(doc: Results | ProfileResults, measured: bool = True) -> Workload:
    """`doc` as a `Workload`. A run's kernels that were not verified and timed are left out and
    named in the notes; a sweep is read at its largest size (its `kernels`), as `show` reads it.
    Each kernel's verdict is against the measured roofs where the file has them, or against the
    theoretical roofs alone unless `measured` (two GPUs' files, whose measured roofs differ in kind)."""
    if doc.kernels_are_a_step:
        return Workload(doc.kind_name, doc.device, [_profiled(doc, k, measured) for k in doc.kernels],
                        doc.total_time_ms, is_step=True)
    notes = []
    untimed = [k.name for k in doc.kernels if not k.timed]
    if untimed:
        notes.append(f"not verified and timed, so left out: {', '.join(untimed)}")
    if doc.sweep:
        notes.append(f"a size sweep: read at its largest size, {doc.problem.problem.text()}")
    raised = {b.level: b.by for b in doc.beaten if b.used >= b.seen} if measured else {}  # not capped at the peak
    return Workload(doc.kind_name, doc.device, [_run(doc, k, measured) for k in doc.kernels if k.timed], None,
                    doc.problem.problem.text(), notes, reference=_reference(doc), compute_level=doc.compute_level,
                    raised_by=raised)


def _reference(doc: Results) -> KernelWork | None:
    """A run's cuBLAS reference as a kernel with its work alone, in the run's precision (no bytes
    or launch recorded)."""
    ref = doc.reference
    if ref is None or not ref.time_ms:
        return None
    return KernelWork(name=ref.name, key=(ref.name,), launches=1, time_ms=float(ref.time_ms),
                      flops={doc.precision: float(doc.problem.problem.flops)}, bytes={}, bytes_counted={},
                      occupancy=None, spread=None, verdict=None, main=doc.precision)


def _run(doc: Results, k: KernelRecord, measured: bool = True) -> KernelWork:
    by_level = level_bytes(k.model, k.counted)
    return KernelWork(
        name=k.name, key=(k.name,), launches=1, time_ms=float(k.time_ms),
        flops={doc.precision: float(doc.problem.problem.flops)},  # the key of its precision's roof
        main=doc.precision, bytes={LEVELS[lvl]: b.nbytes for lvl, b in by_level.items()},
        bytes_counted={LEVELS[lvl]: b.counted for lvl, b in by_level.items()},
        occupancy=k.occupancy.occupancy if k.occupancy else None,
        spread=k.timing.range if k.timing else None,  # compare's noise band: the wider reading
        verdict=doc.verdict(k, measured), threads_per_block=k.threads_per_block,
        blocks=k.waves.blocks if k.waves else None, registers=k.registers,
        smem_bytes=(k.static_smem_bytes or 0, k.dynamic_smem_bytes or 0) if k.static_smem_bytes is not None else None,
        joules=k.energy.joules_per_launch if k.energy is not None else None, params=dict(k.params) or None)


def _profiled(doc: ProfileResults, k: ProfiledKernel, measured: bool = True) -> KernelWork:
    grid = tuple(k.grid) if k.grid else None
    block = tuple(k.block) if k.block else None
    return KernelWork(
        name=k.name, key=(k.name, grid, block), launches=k.launches, time_ms=float(k.time_ms),
        flops={p: float(v) for p, v in k.credible_flops.items() if v}, main=k.dominant,
        bytes={lvl: float(v) for lvl, v in k.bytes.items() if v},
        bytes_counted={lvl: True for lvl, v in k.bytes.items() if v},
        occupancy=k.occupancy.occupancy if k.occupancy else None,
        spread=None, verdict=doc.verdict(k, measured), threads_per_block=k.threads_per_block,
        blocks=grid[0] * grid[1] * grid[2] if grid else None, registers=k.registers,
        smem_bytes=(k.static_smem_bytes or 0, k.dynamic_smem_bytes or 0), uncounted=tuple(k.uncounted(doc.device)))
