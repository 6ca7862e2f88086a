"""`roofline plot`: the roofline, a size sweep or the energy roofline drawn from results files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..console import one_of, present
from ..defaults import DEFAULT_RESULTS, PLOT_KINDS
from ..errors import UsageError
from ..outcome import Outcome, Plain
from .reading import given_paths, show_all


MOUNT = dict(short_help="Draw the roofline or a size sweep from results files.")


def command(
    results_paths: Optional[list[Path]] = typer.Option(None, "--results", metavar="PATH",
                                                       help="Results file(s) (repeatable; default "
                                                            f"{DEFAULT_RESULTS})."),
    out: Path = typer.Option(Path("roofline.png"), "--out", metavar="FILE",
                             help="Chart file: .png, .svg or .pdf; .html for the interactive report."),
    kind: str = typer.Option("roofline", "--kind", parser=one_of(*PLOT_KINDS), metavar="roofline|sweep|energy",
                             help="roofline; sweep (GFLOP/s against size); energy (GFLOP/J against intensity, "
                                  "of a run --energy)."),
    measured: bool = typer.Option(False, "--measured", help="Add points at the bytes Nsight Compute counted."),
    highlight: Optional[list[str]] = typer.Option(None, "--highlight", metavar="NAME",
                                                  help="Draw this kernel (its exact name in the results) bold and fade the others (repeatable)."),
):
    """Draw the hierarchical roofline chart, a size sweep (--kind sweep) or the energy roofline of
    a run made with --energy (--kind energy) from recorded results (no GPU needed)."""

    present(view(plot(given_paths(results_paths), out, kind, measured, highlight), out))


def plot(paths: list[Path], out: Path, kind: str = "roofline", measured: bool = False,
         highlight: list[str] | None = None) -> list[str]:
    """Draw the roofline (or, for `kind` 'sweep', the size sweep; 'energy', the energy roofline:
    `render.energy_chart`) of the results in `paths` into
    `out`, atomically; a profile's chart for a profile (`render.profile_chart`). The kernels named
    in `highlight` are drawn bold, the rest faded. Returns one-line notes. Raises UsageError for
    bad input, a highlighted name the results do not hold, or an output path that cannot be
    written. An `out` ending in .html is the interactive report (`render.html_report`: roofline,
    sweep and table in one file); it raises RunError when Plotly is not installed."""
    from ..results.profile import ProfileResults
    from ..render import chart
    from ..render import energy_chart
    from .. import files
    from ..render import html_report
    from ..render import profile_chart
    from ..render import roofline_chart
    from ..render import sweep_chart
    if kind not in PLOT_KINDS:
        raise UsageError(f"{{kind}} takes {', '.join(PLOT_KINDS)}, got {kind!r}", "kind")
    if kind != "roofline" and measured:
        raise UsageError(f"{{measured}} applies to {{kind}} roofline; a{'n energy chart' if kind == 'energy' else ' sweep'} "
                         "has no counters", "measured", ["kind"])
    as_html = html_report.is_report(out)
    if as_html:
        html_report.check_output(out, paths)
    else:
        chart.check_output(out, paths, html=True)
    docs, notes = show_all(paths, "plot")
    doc = docs[0]
    from ..results.grades import GradeResults
    if isinstance(doc, GradeResults):
        if highlight or kind != "roofline" or as_html or measured:
            raise UsageError(f"{paths[0]} is a grade file: drawn as one roofline chart (.png, .svg or .pdf), without "
                             "{highlight}, {kind} or {measured}", mentions=["highlight", "kind", "measured"])
        from ..render import grade_chart
        grade_chart.draw(doc, out)
        return notes + [f"not drawn (not graded): {e.name}" for e in doc.entries if not e.graded]
    if highlight and not isinstance(doc, ProfileResults):
        known = [k.name for d in docs for k in d.kernels]
        for name in highlight:
            if name not in known:
                raise UsageError(f"{{highlight}} {name!r}: no such kernel in these results; they hold {', '.join(known)}",
                                 "highlight")
            if not any(k.timed for d in docs for k in d.kernels if k.name == name):
                notes.append(f"--highlight {name}: it was not verified and timed, so it is not drawn")
    if len(docs) > 1:  # runs in several precisions: one roofline, each kernel against its own roof
        if kind != "roofline" or as_html:
            raise UsageError(f"{', '.join(str(p) for p in paths)}: runs in several precisions "
                             f"({', '.join(d.problem.dtype for d in docs)}) are drawn together only on a roofline "
                             "chart (.png, .svg or .pdf); give one precision's files for the "
                             + ("HTML report" if as_html else "sweep"))
        notes += [f"{d.problem.problem.text()} holds a size sweep: the roofline shows its largest size" for d in docs
                  if d.sweep]
        try:
            roofline_chart.draw_many(docs, out, measured, highlight)
        except UsageError as exc:
            raise exc.prefixed(f"{', '.join(str(p) for p in paths)}: ") from None
        return notes
    if isinstance(doc, ProfileResults):
        if highlight:
            raise UsageError("{highlight} applies to run results; a profile's chart shows its top kernels", "highlight")
        if kind != "roofline":
            raise UsageError(f"{paths[0]} is a profile of a program, which has no "
                             + ("size sweep; drop {kind} sweep" if kind == "sweep" else
                                "energy per kernel (ncu replays each kernel); drop {kind} energy"), "kind")
        if measured:
            notes.append("a profile's points are all measured by Nsight Compute; --measured adds nothing")
        if not any(k.intensity(level) for k in doc.kernels for level in ("dram", "l2", "l1")):
            notes.append(f"no kernel can be placed on the roofline: the report holds no operations, or no bytes, "
                         f"for any of them; roofline show --results {files.shown_path(paths[0])} lists what is missing "
                         "and the ncu option that collects it")
        if as_html:
            html_report.write(doc, out, paths, notes=notes)
        else:
            profile_chart.draw(doc, out)
        return notes
    if as_html and kind == "energy":
        raise UsageError("the energy roofline is drawn as .png, .svg or .pdf, not in the HTML report")
    if as_html:
        if kind == "sweep" and not doc.sweep:
            raise UsageError(f"{paths[0]} holds no size sweep; make one with roofline run --all --sizes 512,1024,4096")
        html_report.write(doc, out, paths, measured, highlight, notes)
        return notes
    if doc.sweep and kind != "sweep":
        notes.append(f"{paths[0]} holds a size sweep: the roofline shows its largest size, "
                     f"{doc.problem.problem.text()} (--kind sweep draws every size)")
    try:
        if kind == "sweep":
            sweep_chart.draw(doc, out, highlight)
        elif kind == "energy":
            energy_chart.draw(doc, out)
        else:
            roofline_chart.draw(doc, out, measured, highlight)
    except UsageError as exc:  # the output path was checked above: this is about the data
        raise exc.prefixed(f"{', '.join(str(p) for p in paths)}: ") from None
    return notes


def view(notes: list[str], out: Path) -> Outcome:
    """A chart drawn: the notes on what was read, then the file written."""
    return Outcome(view=lambda width: [Plain(f"wrote {out}")], notes=tuple(notes), notes_first=True)
