"""`roofline plot`: the roofline, a size sweep or the energy roofline of results files, a profile's
chart or a grade file's, as their kind draws them (`roofline.documents.chart`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..console import one_of, present
from ..defaults import DEFAULT_RESULTS, PLOT_KINDS, default_reads
from ..outcome import Outcome, Plain

MOUNT = dict(short_help="Draw the roofline, a size sweep, a profile by op or module, or kernels over their runs from results files.")
DEFAULT_CHARTS = {"op": "ops.png", "module": "modules.png"}  # else KIND.png: roofline.png, timeline.png, ...
RENAMED = {"--results": "give the files as arguments: roofline plot FILE [FILE ...] --out chart.png",
           "--by": "--kind op or --kind module (show's --by is plot's --kind)"}


def command(
    paths: Optional[list[Path]] = typer.Argument(None, metavar="RESULTS...",
                                                 help=f"Results, profile or grade file(s) (default {DEFAULT_RESULTS}, else the profile or grade file that alone is here)."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="PATH",
                                       help="Chart file: .png, .svg or .pdf; .html for the interactive report "
                                            "(default: KIND.png, roofline.png for the roofline; ops.png and "
                                            "modules.png by op and module)."),
    kind: str = typer.Option("roofline", "--kind", parser=one_of(*PLOT_KINDS),
                             metavar="|".join(PLOT_KINDS),
                             help="roofline; sweep (GFLOP/s against size); energy (GFLOP/J against intensity, "
                                  "of a run --energy); op or module (a profile's time and floor by PyTorch or jax op, "
                                  "or by module); timeline (kernels over their runs: profile --timeline, run "
                                  "--timeline, or a report imported with PM sampling)."),
    measured: bool = typer.Option(False, "--measured", help="Add points at the bytes Nsight Compute counted."),
    highlight: Optional[list[str]] = typer.Option(None, "--highlight", metavar="NAME",
                                                  help="Draw this kernel (its exact name in the results) bold and "
                                                       "fade the others; with --kind timeline, draw these kernels' "
                                                       "runs (repeatable)."),
):
    """Draw the hierarchical roofline chart, a size sweep (--kind sweep), the energy roofline of
    a run made with --energy (--kind energy), a profile's time and floor by op or module
    (--kind op, --kind module), or its kernels over their runs (--kind timeline) from recorded
    results (no GPU needed)."""
    from .. import documents

    out = out or Path(DEFAULT_CHARTS.get(kind, f"{kind}.png"))  # a timeline chart never lands on the roofline's
    notes = documents.chart(list(paths or [default_reads()]), out, kind, measured, highlight)
    present(view(notes, out))


def view(notes: list[str], out: Path) -> Outcome:
    """A chart drawn: the notes on what was read, then the file written."""
    return Outcome(view=lambda width: [Plain(f"wrote {out}")], notes=tuple(notes), notes_first=True)
