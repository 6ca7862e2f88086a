"""`roofline compare`: two files of one kind, kernel by kernel (two runs, two profiles, two grade
files, as their kind compares them: `roofline.documents`); with --max-drop, the regression gate:
exit 1 naming each kernel that got slower than that and than its noise."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..console import present
from ..errors import UsageError
from ..outcome import Outcome

MOUNT = dict(short_help="Compare two results files, kernel by kernel (profiles by op or module too); with --max-drop, "
                        "fail on a slowdown (CI).")
RENAMED = {"--out": "--chart FILE draws each kernel's move",
           "--force": "--across-sizes (compares runs of different problem sizes too; --force is new's: replace a file)"}


def command(
    before: Path = typer.Argument(..., metavar="BEFORE.json", help="The earlier (baseline) results, profile or grade file."),
    after: Path = typer.Argument(..., metavar="AFTER.json", help="The later results, profile or grade file."),
    max_drop: Optional[str] = typer.Option(None, "--max-drop", metavar="5%|0.05",
                                           help="Gate: exit 1 when a kernel got slower than this and than its noise "
                                                "(across GPU models: its fraction of its binding roof)."),
    chart_out: Optional[Path] = typer.Option(None, "--chart", metavar="FILE",
                                             help="Also draw each kernel's move (.png/.svg/.pdf)."),
    force: bool = typer.Option(False, "--across-sizes", help="Compare runs of different problem sizes too, each "
                                                             "kernel read per FLOP (its FLOP/s, bytes per FLOP)."),
    as_json: bool = typer.Option(False, "--json", help="Print the changes (or the gate's reading) as JSON."),
    by: str = typer.Option("kernel", "--by", metavar="kernel|op|module",
                           help="Two profiles by kernel, by the op that launched it (PyTorch or jax), or by module."),
):
    """Per kernel in both files (two profiles, or two runs): the change in time, FLOP/s, bytes per
    level, occupancy and fraction of its binding roof, with its cause where the counters show one
    and noise called noise; the kernels in one file only; across GPUs, which differences come
    from the device. With --max-drop, a gate for CI: exit 0 when no kernel in both files got
    slower than that and than its noise, 1 naming those that did; kernels in one file only are
    listed and never fail it."""
    from .. import documents
    from .show import BY

    if by not in BY:
        raise UsageError(f"{{by}} takes {', '.join(BY)}, got {by!r}", "by")
    if by != "kernel":
        if max_drop is not None or chart_out is not None or force:
            raise UsageError("{by} " + by + " prints two profiles' time by " + by + "; {max_drop}, {chart_out} and "
                             "{force} read them kernel by kernel", "by", ["max_drop", "chart_out", "force"])
        result = documents.compare_by(before, after, by)
        present(Outcome(documents.to_json(result), lambda width: documents.view(result, width)), as_json)
        return
    if max_drop is not None:
        if chart_out is not None:
            raise UsageError("{max_drop} gates the two files: it prints its reading and draws no chart; drop "
                             "{chart_out}", "max_drop", ["chart_out"])
        if force:
            raise UsageError("{max_drop} gates two files of one problem; {force} compares files of different "
                             "problems, which no gate reads", "max_drop", ["force"])
        present(gate(documents.check(after, before, max_drop)), as_json)
        return
    result = documents.compare(before, after, force, chart_out)
    present(view(result, before, after, chart_out), as_json)


def view(result, before: Path, after: Path, chart_out: Path | None) -> Outcome:
    """Two files compared (`documents.compare`): the changes as JSON; their kind's tables and lines,
    the chart written."""
    from .. import documents

    return Outcome(documents.to_json(result),
                   lambda width: documents.view(result, width, before=before, after=after, out=chart_out))


def gate(result) -> Outcome:
    """The gate's reading (`documents.check`) as JSON or as lines, the comparison's notes on stderr
    (a sweep read at one of its sizes, a change of GPU); exit code 1 when it did not pass."""
    from .. import documents

    return Outcome(documents.to_json(result), lambda width: documents.view(result, width),
                   notes=tuple(result.notes), failed=not result.passed)
