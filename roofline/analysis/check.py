"""The regression gate: a new results file against a baseline (`compare_work`), failing where a
matched kernel got slower by more than a threshold and by more than its noise.

On one GPU model a kernel's slowdown is its time after over before, minus 1. Across GPU models the
times hold the change of GPU, so the slowdown is read from each kernel's fraction of its binding
roof (each file against its own GPU's theoretical roofs): before's fraction over after's, minus 1, which is the
same figure on one GPU. Kernels in one file only are listed and never fail the gate, but on one GPU
model a run's kernel that the baseline verified and timed and the new file ran without (a wrong
answer, a failed launch) fails it; a profile's
whole step (its GPU time) is gated as a kernel is, on one GPU model, so that kernels replaced by
others cannot hide a slower step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UsageError
from .compare import Delta, Untimed, WorkComparison, compare_work
from ..results.profile import ProfileResults
from ..results.schema import Results
from ..results.sweep_point import holds, sizes

DEFAULT_MAX_DROP = 0.05


def parse_max_drop(text: str) -> float:
    """'5%' or '0.05' -> 0.05. Raises UsageError for anything else, or a value outside (0, 10]
    (1000 %: a tenfold slowdown)."""
    raw = text.strip()
    try:
        value = float(raw[:-1].strip()) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise UsageError(f"{{max_drop}} {text!r}: give a fraction such as 0.05 or a percentage such as 5%",
                         "max_drop") from None
    if not 0 < value <= 10 or value != value:
        raise UsageError(f"{{max_drop}} {text!r}: must be above 0 and at most 1000% (a fraction at most 1: 0.05 "
                         "is 5%)", "max_drop")
    if value > 1 and not raw.endswith("%"):  # 5 would be 500 %: a gate that never fails, meant as 5 %?
        raise UsageError(f"{{max_drop}} {text!r}: a fraction above 1 is a slowdown of over 100 %; write it as a "
                         f"percentage ({value * 100:g}%), or give {value / 100:g} for {value:g} %", "max_drop")
    return value


@dataclass(frozen=True)
class Gated:
    """One matched kernel at the gate: its slowdown (0.08 = 8 % slower; None where the measure is
    missing, e.g. no roof binds it across GPUs) and whether it fails."""

    delta: Delta
    slowdown: float | None
    failed: bool

    def to_dict(self) -> dict:
        return {"kernel": self.delta.label, "launch": self.delta.launch, "slowdown": self.slowdown,
                "noise": self.delta.noise,
                "noise_from": self.delta.noise_from, "failed": self.failed,
                "time_ms": [self.delta.before_ms, self.delta.after_ms],
                "fraction_of_roof": [self.delta.before_fraction, self.delta.after_fraction]}


@dataclass(frozen=True)
class Check:
    """The gate's reading: `measure` is 'time' (one GPU model) or 'fraction of binding roof'."""

    comparison: WorkComparison
    max_drop: float
    measure: str
    kernels: list[Gated]
    step: Gated | None = None  # a profile's whole step on one GPU model: gated like a kernel
    # runs: kernels the baseline verified and timed that the new file ran but did not (a wrong answer, a
    # failed launch): each fails the gate, as a regression no time can measure
    broken: list[str] = field(default_factory=list)

    @property
    def failures(self) -> list[Gated]:
        return [g for g in self.kernels if g.failed] + ([self.step] if self.step and self.step.failed else [])

    @property
    def notes(self) -> list[str]:
        """The comparison's notes that bear on the gate's reading (a sweep read at one of its sizes, a
        change of GPU, of L2 state or of template), which it prints beside it; those on columns only
        compare's tables show (`bound x`, 'of roof', the bytes) are left to compare."""
        return [n for n in self.comparison.notes if n not in self.comparison.table_notes]

    @property
    def passed(self) -> bool:
        return not self.failures and not self.broken

    @property
    def unmeasured(self) -> list[str]:
        return [g.delta.label for g in self.kernels if g.slowdown is None]

    def _named(self, g: Gated) -> str:
        """A failed kernel's name, with its launch ('grid x block') where another kernel of the gate
        shares the name (two launch configurations of one kernel)."""
        twice = sum(1 for k in self.kernels if k.delta.label == g.delta.label) > 1
        return f"{g.delta.label} [{g.delta.launch}]" if twice and g.delta.launch else g.delta.label

    def to_dict(self) -> dict:
        """The `--json` document (keys in docs/check.md)."""
        c = self.comparison
        return {"passed": self.passed, "max_drop": self.max_drop, "measure": self.measure,
                "before_device": c.before.device.name, "after_device": c.after.device.name,
                "failed": [self._named(g) for g in self.failures] + self.broken,
                "not_timed_now": self.broken, "kernels": [g.to_dict() for g in self.kernels],
                "step": self.step.to_dict() if self.step else None,
                "matched_share": list(c.held) if c.is_step else None,
                "not_measured": self.unmeasured, "gone": [g for g in c.gone if g not in self.broken], "new": c.new,
                "notes": c.notes}


def check(new: Results | ProfileResults, baseline: Results | ProfileResults, max_drop: float = DEFAULT_MAX_DROP) -> Check:
    """`new` against `baseline`: a matched kernel fails when its slowdown exceeds both `max_drop`
    and its noise (`Delta.noise`: the runs' spread, or a profile's fixed 2 %). Raises UsageError
    as `compare_work` does (a profile against a run, runs of different problems, where neither is a
    sweep holding the other's size, nothing matched)."""
    if not new.kernels_are_a_step and not baseline.kernels_are_a_step:  # two runs, each solving one problem
        pb, pn = baseline.problem.problem, new.problem.problem
        # compare's message offers --force, which the gate has not: a time is no slowdown there; a
        # size sweep is read at the size the other file holds (`compare._at_common_size`)
        if not any(holds(baseline, p) for p in sizes(new)):
            raise UsageError(f"the baseline solves {pb.text()} and the new file {pn.text()}: a change of problem "
                             "is no slowdown; check against a baseline of the same problem")
    cmp = compare_work(baseline, new)

    def gate(d: Delta) -> Gated:
        return Gated(d, d.slowdown, d.slowdown is not None and d.slowdown > max(max_drop, d.noise))

    # the step too: kernels replaced by others (renamed, fused, split) are not matched, so only the
    # step's time shows what they cost; across GPU models a step's time holds the change of GPU
    step = gate(cmp.step) if cmp.step is not None and cmp.same_device else None
    # on one GPU model only: on another a kernel may not run for the card's own limits (a cooperative
    # split it cannot hold at once), which is no regression of the code
    broken = [u.label for u in cmp.in_both if isinstance(u, Untimed) and u.before_ms is not None
              and u.after_ms is None] if cmp.same_device else []
    return Check(cmp, max_drop, "time" if cmp.same_device else "fraction of binding roof",
                 [gate(d) for d in cmp.kernels], step, broken)
