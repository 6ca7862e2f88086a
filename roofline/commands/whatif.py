"""`roofline whatif`: each kernel of a run or a profile at a fraction of the roof that binds it,
and the step with it (`analysis.whatif`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..console import present, share
from ..defaults import DEFAULT_TARGET
from ..errors import UsageError
from ..outcome import Outcome

MOUNT = dict(short_help="What each kernel saves at a fraction of its roof, and the step with it.")
RENAMED = {"--out": "--chart FILE draws time share against headroom"}


def command(
    results: Path = typer.Argument(..., metavar="RESULTS.json", help="A results or profile file."),
    target: float = typer.Option(DEFAULT_TARGET, "--target", parser=share, metavar="FRACTION",
                                 help="The share of its binding roof each kernel is imagined at: 0.8 or 80%, in (0, 1]."),
    chart_out: Optional[Path] = typer.Option(None, "--chart", metavar="FILE",
                                             help="Also draw time share against headroom (.png/.svg/.pdf)."),
    as_json: bool = typer.Option(False, "--json", help="Print the what-if as JSON instead."),
):
    """Per kernel: its time now, at the roof that binds it and at --target of that roof, the ms
    saved and, for a profile, the step's time and speed-up with only that kernel improved
    (Amdahl), ranked by saving, with the cumulative step."""
    present(view(whatif(results, target, chart_out), chart_out), as_json)


def whatif(path: Path, target: float = DEFAULT_TARGET, chart_out: Path | None = None):
    """Every kernel of the results or profile file `path` at `target` (0 < target <= 1) of the
    roof that binds it, ranked by the ms it saves, with the step's time and speed-up for a
    profile (`analysis.whatif`); with `chart_out`, its chart drawn there (`render.whatif`).
    Raises UsageError for a bad target (checked first), an unreadable file, a file without a
    verified and timed kernel or a bad chart path."""
    from .. import documents
    from ..analysis.whatif import check_target
    from ..analysis.whatif import whatif as whatif_of
    from ..render import chart
    from ..render import whatif as whatif_view

    target = check_target(target)
    if chart_out is not None:
        chart.check_output(chart_out, [path], param="chart_out")
    doc = documents.load(path, "whatif")
    result = whatif_of(doc, target)
    result.notes[:0] = doc.read_notes
    if not result.kernels:  # a run whose kernels all failed, or none recorded: nothing to read
        raise UsageError(f"{path}: no verified and timed kernel to read; run the kernels again "
                         "(roofline run) or give another results file")
    if chart_out is not None:
        whatif_view.draw(result, chart_out, Path(path).name)
    return result


def view(result, chart_out: Path | None) -> Outcome:
    """What each kernel saves at its target: its JSON, its kind's tables and lines, the chart written."""
    from .. import documents

    return Outcome(documents.to_json(result), lambda width: documents.view(result, width, out=chart_out))
