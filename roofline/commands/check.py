"""`roofline check`: the regression gate.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..console import present
from ..outcome import Outcome, Plain
from .reading import _one_kind, read

if TYPE_CHECKING:
    from ..analysis.check import Check


MOUNT = dict(short_help="Fail when a kernel got slower than in a baseline (for CI).")


def command(
    new: Path = typer.Argument(..., metavar="NEW.json", help="The results or profile file to check."),
    baseline: Path = typer.Option(..., "--baseline", metavar="OLD.json", help="The results or profile file to check against."),
    max_drop: str = typer.Option("5%", "--max-drop", metavar="5%|0.05", help="The slowdown allowed beyond noise."),
    as_json: bool = typer.Option(False, "--json", help="Print the reading as JSON."),
):
    """Exit 0 when no kernel in both files got slower than --max-drop beyond its noise, 1 naming
    those that did; across GPU models each kernel's fraction of its binding roof is compared
    instead of its time. Kernels in one file only are listed and never fail the check."""

    present(view(check(new, baseline, max_drop)), as_json)


def check(new: Path, baseline: Path, max_drop: str | float = "5%"):
    """`new` against `baseline` as a regression gate (`analysis.check.check`): `max_drop` as '5%'
    or 0.05. Returns a `analysis.check.Check`. Raises UsageError for a bad `max_drop` (not in
    (0, 10]), an unreadable file, a profile against a run file, runs of different problems or no
    kernel in common."""
    from ..analysis.check import check as check_results
    from ..analysis.check import parse_max_drop
    drop = parse_max_drop(str(max_drop))  # a bad option is named before any file is read
    docs = read(new, "check"), read(baseline, "check")
    _one_kind("check", (new, baseline), docs)
    from ..results.grades import GradeResults
    if any(isinstance(d, GradeResults) for d in docs):
        from ..analysis import grade_changes
        return grade_changes.compare(docs[1], docs[0], drop)
    result = check_results(*docs, drop)
    result.comparison.notes[:0] = [note for d in docs for note in d.read_notes]
    return result


def view(result: Check) -> Outcome:
    """A regression check: its reading as JSON or as lines; exit code 1 when it did not pass."""
    from ..analysis.grade_changes import GradeChanges, lines
    if isinstance(result, GradeChanges):
        return Outcome(result.to_dict(), lambda width: [Plain(line) for line in lines(result)],
                       failed=not result.passed)
    from ..render.changes import check_lines

    return Outcome(result.to_dict(), lambda width: [Plain(line) for line in check_lines(result)],
                   failed=not result.passed)
