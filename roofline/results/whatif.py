"""What each kernel of a results file could save if it ran at a chosen fraction of the roof that
binds it (`roofline whatif`), and, for a profile of one step, what that saving does to the step
(Amdahl's law: only the improved kernel's time changes).

Per kernel, from its measured time `t` and its binding floor `f` (`model.roofs.Verdict.binding`:
its counted FLOPs or bytes at that roof, measured roofs where the file has them):

    time at the target   t_target = min(t, f / target)     (a kernel already past the target keeps t)
    saved                s = t - t_target
    a profile's step     step_after = step - s, speed-up = step / step_after
    cumulative           step - (s of this kernel and every kernel ranked above it)
    a run                speed-up alone = t / t_target (its kernels are alternatives: no step)

Kernels are ranked by `s`, the largest first. A kernel with no binding floor (neither work nor
bytes counted) gets no figure and is counted in the notes; its floor is never guessed. Times in
ms; `target` a fraction of the roof in (0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..errors import UsageError
from ..model.units import plural
from .profile import ProfileResults
from .schema import Results
from .work import KernelWork, Workload, workload

DEFAULT_TARGET = 0.8
STEP_TOLERANCE = 1e-6  # relative: a profile's kernels must add up to its step's GPU time

# What the fusion what-if would need and the profile file does not hold.
FUSION_NOTE = ("no fusion what-if: it needs each launch's place in the launch order and its DRAM bytes read and "
               "written apart, to see one kernel's output pass through DRAM into the next; a profile holds its "
               "launches grouped by kernel and configuration, with DRAM bytes read and written together "
               "(dram__bytes.sum), and no version of roofline profile records either yet")


@dataclass(frozen=True)
class KernelWhatIf:
    """One kernel at the target. Times in ms; None where the kernel has no binding floor (or, for
    the step columns, where the file has no step)."""

    name: str
    label: str  # the name, with the launch configuration where two kernels share a name
    roof: str | None  # the binding roof's level ('DRAM', 'BF16 tensor', 'L1'); None: no floor
    roof_measured: bool | None  # its value was measured on the device (else the datasheet's)
    time_ms: float
    floor_ms: float | None  # at the binding roof
    target_ms: float | None  # at `target` of the binding roof, never more than `time_ms`
    saved_ms: float | None
    time_share: float | None  # of the step (a profile); None for a run
    step_ms_after: float | None  # the step with only this kernel improved (a profile)
    speedup: float | None  # of the step (a profile) or of the kernel alone (a run)
    cumulative_step_ms: float | None  # the step with this kernel and all ranked above it improved
    # for a kernel without a floor: what the file did not count (`ProfiledKernel.uncounted`: 'fp32', 'dram')
    not_counted: tuple[str, ...] | None = None
    cumulative_speedup: float | None = None  # the step over `cumulative_step_ms`

    def to_json(self) -> dict:
        return {"name": self.name, "label": self.label, "roof": self.roof, "roof_measured": self.roof_measured,
                "time_ms": self.time_ms, "floor_ms": self.floor_ms, "target_ms": self.target_ms,
                "saved_ms": self.saved_ms, "time_share": self.time_share, "step_ms_after": self.step_ms_after,
                "speedup": self.speedup, "cumulative_step_ms": self.cumulative_step_ms,
                "cumulative_speedup": self.cumulative_speedup, "not_counted": None if self.not_counted is None else list(self.not_counted)}


@dataclass(frozen=True)
class WhatIf:
    """Every kernel of a file at `target` of its binding roof, ranked by the time it saves (those
    without a floor last). `step_ms` and the step columns only for a profile (`kind` 'profile')."""

    kind: str  # 'profile' or 'run'
    device: str
    target: float
    step_ms: float | None
    kernels: list[KernelWhatIf]
    problem: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ranked(self) -> list[KernelWhatIf]:
        """The kernels with a floor, by saving."""
        return [k for k in self.kernels if k.saved_ms is not None]

    @property
    def no_roof(self) -> list[KernelWhatIf]:
        return [k for k in self.kernels if k.saved_ms is None]

    @property
    def kernels_ms(self) -> float:
        """The kernels' times added up (a profile: the step's profiled GPU time)."""
        return math.fsum(k.time_ms for k in self.kernels)

    @property
    def saved_ms(self) -> float:
        """Every kernel with a floor at the target, together (a profile's kernels run one after
        another, so their savings add)."""
        return math.fsum(k.saved_ms for k in self.ranked)

    @property
    def step_ms_after(self) -> float | None:
        return None if self.step_ms is None else self.step_ms - self.saved_ms

    def to_json(self) -> dict:
        return {"kind": self.kind, "device": self.device, "target": self.target, "problem": self.problem,
                "step_ms": self.step_ms, "step_ms_after_all": self.step_ms_after,
                "saved_ms_all": self.saved_ms if self.step_ms is not None else None,
                "kernels": [k.to_json() for k in self.kernels], "notes": list(self.notes)}


def check_target(target: float) -> float:
    """`target` as a fraction of the roof. Raises UsageError unless 0 < target <= 1."""
    if not isinstance(target, (int, float)) or not math.isfinite(target) or not 0 < target <= 1:
        raise UsageError(f"--target: {target!r} is not a fraction of the roof in (0, 1], e.g. 0.8 for 80 %")
    return float(target)


def whatif(doc: Results | ProfileResults, target: float = DEFAULT_TARGET) -> WhatIf:
    """Every kernel of `doc` (`results.work.workload`) at `target` (0 < target <= 1) of its
    binding roof, ranked by the ms saved (module docstring). Raises UsageError for a target out
    of range, or a profile whose kernels do not add up to its step."""
    target = check_target(target)
    w = workload(doc)
    uncounted = ([k.uncounted(doc.device) for k in doc.kernels] if isinstance(doc, ProfileResults)
                 else [[] for _ in w.kernels])
    if w.kind == "profile" and w.step_ms is not None:
        total = math.fsum(k.time_ms for k in w.kernels)
        if abs(total - w.step_ms) > STEP_TOLERANCE * w.step_ms:
            raise UsageError(f"the profile's kernels add up to {total:g} ms, not its step's {w.step_ms:g} ms")
    rows = [_kernel(k, target, w, missing) for k, missing in zip(w.kernels, uncounted)]
    with_floor = sorted((r for r in rows if r.saved_ms is not None), key=lambda r: (-r.saved_ms, -r.time_ms))
    without = sorted((r for r in rows if r.saved_ms is None), key=lambda r: -r.time_ms)
    if w.step_ms is not None:
        done, cumulative = 0.0, []
        for r in with_floor:
            done += r.saved_ms
            cumulative.append(replace(r, cumulative_step_ms=w.step_ms - done,
                                      cumulative_speedup=w.step_ms / (w.step_ms - done)))
        with_floor = cumulative
    return WhatIf(w.kind, w.device.name, target, w.step_ms, with_floor + without, w.problem,
                  _notes(w, with_floor, without, target))


def _kernel(k: KernelWork, target: float, w: Workload, missing: list[str]) -> KernelWhatIf:
    share = k.time_ms / w.step_ms if w.step_ms else None
    b = k.verdict.binding
    if b is None or not b.floor_ms:
        return KernelWhatIf(k.name, k.label, None, None, k.time_ms, None, None, None, share, None, None, None,
                            not_counted=tuple(missing))
    at_target = min(k.time_ms, b.floor_ms / target)
    saved = k.time_ms - at_target
    if w.step_ms is not None:
        after = w.step_ms - saved
        speedup = w.step_ms / after
    else:
        after, speedup = None, k.time_ms / at_target
    return KernelWhatIf(k.name, k.label, b.level, b.roof.measured, k.time_ms, b.floor_ms, at_target, saved, share,
                        after, speedup, None)


def _notes(w: Workload, ranked: list[KernelWhatIf], without: list[KernelWhatIf], target: float) -> list[str]:
    notes = list(w.notes)
    if w.kind == "run":
        notes.append(f"no step column: a run's kernels are alternatives that each solve the whole {w.problem} "
                     "problem, not parts of one step, so each is read alone (its own time at the target, its "
                     "speed-up alone)")
    past = [r for r in ranked if r.saved_ms == 0]
    if past:
        notes.append(f"{plural(len(past), 'kernel')} already at or past {100 * target:g} % of the roof that binds them, "
                     "so saving nothing at this target")
    if without:
        shown = "; ".join(f"{r.label} ({', '.join(r.not_counted) or 'no work or bytes'} not counted)"
                          for r in without[:3])
        more = f" and {len(without) - 3} more" if len(without) > 3 else ""
        ms = math.fsum(r.time_ms for r in without)
        notes.append(f"{plural(len(without), 'kernel')} ({ms:.3f} ms) with no roof, so no saving counted: "
                     f"{shown}{more}")
    if w.kind == "profile":
        notes.append(FUSION_NOTE)
    return notes
