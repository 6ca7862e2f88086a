"""`roofline compare`: two results files, kernel by kernel.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ..console import present
from ..errors import UsageError
from ..outcome import Note, Outcome, Plain
from .reading import _one_kind, read

if TYPE_CHECKING:
    from ..analysis.compare import WorkComparison


MOUNT = dict(short_help="Compare two results files, kernel by kernel.")


def command(
    before: Path = typer.Argument(..., metavar="BEFORE.json", help="The earlier results or profile file."),
    after: Path = typer.Argument(..., metavar="AFTER.json", help="The later results or profile file."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE", help="Also draw each kernel's move (.png/.svg/.pdf)."),
    force: bool = typer.Option(False, "--force", help="Compare files of different problem sizes too."),
    as_json: bool = typer.Option(False, "--json", help="Print the changes as JSON."),
):
    """Per kernel in both files (two profiles, or two runs): the change in time, FLOP/s, bytes per
    level, occupancy and fraction of its binding roof, with its cause where the counters show one
    and noise called noise; the kernels in one file only; across GPUs, which differences come
    from the device."""

    present(view(compare(before, after, force, out), before, after, out), as_json)


def compare(before: Path, after: Path, force: bool = False, chart_out: Path | None = None) -> WorkComparison:
    """`before` against `after`: two profiles, or two run files (ladder, user kernels, sweeps at
    their largest size), kernel by kernel (`analysis.compare.compare_work`); with `chart_out` each
    matched kernel's move drawn there as an arrow. Raises UsageError for an unreadable file, a
    profile against a run file, runs of different problems (unless `force`), no kernel in common,
    or a bad chart path."""
    from ..render import chart
    from ..render import compare_chart
    from ..analysis.compare import compare_work
    if chart_out is not None:
        chart.check_output(chart_out, [before, after])
    docs = read(before, "compare"), read(after, "compare")
    _one_kind("compare", (before, after), docs)
    from ..results.grades import GradeResults
    if any(isinstance(d, GradeResults) for d in docs):
        from ..analysis import grade_changes
        if chart_out is not None:
            raise UsageError("{out} draws the moves of profiles and runs; two grade files are compared as a table",
                             "out")
        return grade_changes.compare(*docs)
    result = compare_work(*docs, force)
    result.notes[:0] = [note for d in docs for note in d.read_notes]
    if chart_out is not None:
        compare_chart.draw_moves(result, chart_out, Path(before).name, Path(after).name)
    return result


def view(result: WorkComparison, before: Path, after: Path, out: Path | None) -> Outcome:
    """Two files compared: the changes as JSON; their tables, the notes, the kernels in one file
    only (one a line: a profile's labels are long), the chart written. Two grade files: a line
    per entry (`analysis.grade_changes`)."""
    from ..analysis.grade_changes import GradeChanges, lines
    if isinstance(result, GradeChanges):
        return Outcome(result.to_dict(), lambda width: [Plain(line) for line in lines(result)])

    def view(width: int) -> list:
        from ..render.changes import change_tables

        shown = [*change_tables(result, width), *map(Note, result.notes)]
        for path, which, names in ((before, "gone", result.gone), (after, "new", result.new)):
            if names:
                shown.append(Plain("\n".join([f"{which}, only in {path}:", *(f"  {name}" for name in names)])))
        return shown + ([f"wrote {out}"] if out is not None else [])

    return Outcome(result.to_dict(), view)
