"""Two grade files entry by entry (`compare`), and as a regression gate (`check`).

Entries are matched by name and workload (what is computed, at which sizes). Per match: both
times and their 95 % confidence intervals, the share of the speed of light before and after, the
time's change, and the flags each carries. A move counts only beyond noise: the two medians' CI95s
must not overlap. Files graded on two GPU models are read on each entry's time over its T_SOL on
its own GPU (the inverse of its share of the speed of light), not on its time: another card's
speed is no change of the code. An entry not graded on either side (a flag refused it, it failed
its check) has no move. The gate fails an entry that got slower by more than `max_drop` beyond
noise, one graded before and not now, and one that gained a flag.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UsageError
from ..results.grades import GradeEntry, GradeResults


@dataclass(frozen=True)
class GradeChange:
    """One entry in both files: `before` and `after`, the time's relative change (after / before -
    1; None unless both were timed), `move` ('faster', 'slower', 'same' within the CI95s, or '-'),
    the flags gained, and why the gate fails it (None: it passes)."""

    name: str
    workload: str
    before: GradeEntry
    after: GradeEntry
    change: float | None
    move: str
    new_flags: tuple[str, ...] = ()
    failure: str | None = None


@dataclass
class GradeChanges:
    """The matched entries, the names only one file has, and the gate's threshold."""

    changes: list[GradeChange]
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    max_drop: float | None = None
    gpus: tuple[str, str] = ("", "")  # the GPU each file was graded on

    @property
    def basis(self) -> str:
        """'time' where both files come from one GPU model, else 'share' (module docstring)."""
        return "time" if self.gpus[0] == self.gpus[1] else "share"

    @property
    def notes(self) -> list[str]:
        """What the comparison says beside its reading: that the GPU changed, and what is read instead."""
        if self.basis == "time":
            return []
        return [f"the GPU changed ({self.gpus[0]} -> {self.gpus[1]}): each entry's change is that of its time over "
                "its T_SOL on its own GPU (its share of the speed of light), not of its time"]

    @property
    def passed(self) -> bool:
        """Whether no matched entry fails the gate, and none of the baseline's is missing (a gate:
        `max_drop` set)."""
        return not any(c.failure for c in self.changes) and not (self.max_drop is not None and self.only_before)

    def to_dict(self) -> dict:
        """JSON form: per entry both times, shares, the change, the move, flags gained, failure."""
        return {"passed": self.passed, "max_drop": self.max_drop, "only_before": self.only_before,
                "only_after": self.only_after, "gpus": list(self.gpus), "basis": self.basis,
                "entries": [{"name": c.name, "workload": c.workload, "before_ms": c.before.time_ms,
                             "after_ms": c.after.time_ms, "before_share": c.before.share,
                             "after_share": c.after.share, "change": c.change, "move": c.move,
                             "new_flags": list(c.new_flags), "failure": c.failure} for c in self.changes]}


def _reading(e: GradeEntry, by_share: bool) -> tuple[float, list[float] | None]:
    """An entry's time and CI95 (ms), or both over its T_SOL (`by_share`: files of two GPU models)."""
    scale = 1 / e.t_sol_ms if by_share and e.t_sol_ms else 1.0
    return e.time_ms * scale, [x * scale for x in e.ci95_ms] if e.ci95_ms else None


def _move(a: GradeEntry, b: GradeEntry, by_share: bool = False) -> tuple[float | None, str]:
    """(after / before - 1, 'faster', 'slower' or 'same' beyond the CI95s) of two graded entries, on
    their times or (`by_share`) their times over their T_SOL; (None, '-') where either is not graded."""
    if not (a.graded and b.graded) or not a.time_ms or not b.time_ms or (by_share and not (a.t_sol_ms and b.t_sol_ms)):
        return None, "-"
    (ta, ca), (tb, cb) = _reading(a, by_share), _reading(b, by_share)
    change = tb / ta - 1
    if ca and cb:
        return change, "slower" if cb[0] > ca[1] else "faster" if cb[1] < ca[0] else "same"
    return change, "slower" if tb > ta else "faster" if tb < ta else "same"


def compare(before: GradeResults, after: GradeResults, max_drop: float | None = None) -> GradeChanges:
    """`before` against `after`, entry by entry; with `max_drop` (a share of the time: 0.05), the
    gate's failures set. Raises UsageError when no entry is in both."""
    key = {(e.name, e.workload): e for e in before.entries}
    gpus = (before.device.name, after.device.name)
    changes = []
    for b in after.entries:
        a = key.get((b.name, b.workload))
        if a is None:
            continue
        change, move = _move(a, b, by_share=gpus[0] != gpus[1])
        gained = tuple(sorted({f.code for f in b.flags} - {f.code for f in a.flags}))
        failure = None
        if max_drop is not None:
            if a.graded and not b.graded:
                failure = f"graded before, not now: {b.error or 'not verified'}"
            elif gained:
                failure = f"new flag{'s' if len(gained) > 1 else ''}: {', '.join(gained)}"
            elif move == "slower" and change is not None and change > max_drop:
                what = "time" if gpus[0] == gpus[1] else "time over T_SOL"
                failure = f"{change:+.1%} {what} beyond noise (more than {max_drop:.0%})"
        changes.append(GradeChange(b.name, b.workload, a, b, change, move, gained, failure))
    if not changes:
        raise UsageError("the two grade files have no entry in common (matched by name and workload)")
    names_after = {(e.name, e.workload) for e in after.entries}
    return GradeChanges(changes, [n for (n, w) in key if (n, w) not in names_after],
                        [e.name for e in after.entries if (e.name, e.workload) not in key], max_drop, gpus)


# A move read by time over T_SOL (the GPU changed), in words that do not say the time moved
NEARER = {"faster": "nearer its light", "slower": "further from its light"}


def lines(result: GradeChanges) -> list[str]:
    """The GPU change where there is one (a gate says it on stderr instead), one line per matched
    entry, then the names only one file has, then the gate's verdict where it was a gate."""
    out = list(result.notes) if result.max_drop is None else []
    for c in result.changes:
        def cell(e: GradeEntry) -> str:
            why = ", ".join(f.code for f in e.flags) or (
                "refused" if e.refused else "wrong" if any(not k.passed for k in e.checks) else "error" if e.error else "")
            if e.time_ms is None:
                return f"not timed ({why})" if why else "not timed"
            share = f", {100 * e.share:.1f}% of light" if e.share is not None else ""
            return f"{e.time_ms:.4g} ms{share}" + ("" if e.graded or not why else f", not graded ({why})")
        over = "" if result.basis == "time" else " over T_SOL"
        move = c.move if result.basis == "time" else NEARER.get(c.move, c.move)
        change = f" ({c.change:+.1%}{over}, {move})" if c.change is not None else ""
        flags = f"; new flags: {', '.join(c.new_flags)}" if c.new_flags else ""
        verdict = f"; FAIL: {c.failure}" if c.failure else ""
        out.append(f"{c.name}: {cell(c.before)} -> {cell(c.after)}{change}{flags}{verdict}")
    if result.only_before:
        out.append(f"only before: {', '.join(result.only_before)}")
    if result.only_after:
        out.append(f"only after: {', '.join(result.only_after)}")
    if result.max_drop is not None:
        bad = sum(1 for c in result.changes if c.failure)
        gone = (f"; {len(result.only_before)} of the baseline's entries not in the new file, each a failure for a grade "
                "gate (the new file is to hold every entry the baseline does)") if result.only_before else ""
        out.append("gate passed" if result.passed else
                   f"gate failed: {bad} of {len(result.changes)} matched entries slower, newly flagged or no longer "
                   f"graded{gone}")
    return out
