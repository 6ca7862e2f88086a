"""`roofline project`: the same work on another GPU: each kernel's floors, a lower bound and an
estimate (`analysis.project`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..console import present
from ..outcome import Outcome

MOUNT = dict(short_help="The same work on another GPU: floors, lower bound and estimate per kernel.")
RENAMED = {"--out": "--chart FILE draws the bar chart"}


def command(
    results: Path = typer.Argument(..., metavar="RESULTS.json", help="A results or profile file."),
    gpus: list[str] = typer.Option(..., "--gpu", metavar="NAME",
                                   help="A preset GPU (or device file, mygpu.toml) to project onto (repeatable)."),
    chart_out: Optional[Path] = typer.Option(None, "--chart", metavar="FILE",
                                             help="Also draw the bar chart (.png/.svg/.pdf)."),
    as_json: bool = typer.Option(False, "--json", help="Print the projection as one JSON document."),
):
    """Per kernel, on each target GPU: its floors (counted FLOPs and bytes against the preset's
    theoretical roofs, waves with its SM count), a lower bound, and an estimate at the fraction of
    its binding roof it reached here; for a profile, the step's."""
    present(view(project(results, gpus, chart_out), chart_out), as_json)


def project(path: Path, gpus: list[str], chart_out: Path | None = None):
    """The kernels of the results file at `path` projected onto each preset GPU in `gpus`
    (`analysis.project.project`), and with `chart_out` its bar chart drawn there. Raises UsageError
    for an unreadable file, an unknown GPU name (listing the presets) or a bad chart path."""
    from .. import documents
    from ..analysis.project import project as project_results
    from ..render import chart
    from ..render import project as project_view

    fmt = chart.check_output(chart_out, [path], param="chart_out") if chart_out is not None else None
    doc = documents.load(path, "project")
    result = project_results(doc, gpus)
    result.notes[:0] = doc.read_notes
    if chart_out is not None:
        project_view.draw(result, chart_out, fmt)
    return result


def view(result, chart_out: Path | None) -> Outcome:
    """The work projected onto other GPUs: its JSON, its kind's tables and step lines with every
    target's notes, the chart written."""
    from .. import documents

    return Outcome(documents.to_json(result), lambda width: documents.view(result, width, out=chart_out))
