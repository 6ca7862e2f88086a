"""What a command returns, for the terminal to show: its JSON document, its view (the tables and
lines a person reads), its notes, warnings and failures. One `Outcome` per command, made here
from what `roofline.api` returned (which tables, which lines, what is a failure); the console
presents every outcome alike (`console.present`): the document alone on stdout under --json,
else the view; notes on stderr as 'roofline: note: ...', warnings as 'roofline: warning: ...',
failures as 'roofline: error: ...' and exit code 1.

The rendering modules load when a view is drawn, not before: `occupancy` and `kernels` import
neither CuPy nor matplotlib.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from .analysis.check import Check
    from .analysis.compare import WorkComparison
    from .analysis.whatif import WhatIf
    from .api import KernelListing, OccupancyReport, ProfileReport, RunReport, Starter, TuneReport
    from .model.device import DeviceSpec


class Note(str):
    """A view's line for standard error, as a note ('roofline: note: ...'), in its place among
    the view's lines (after the tables it is about)."""


class Plain(str):
    """A view's line written as it is, never wrapped to the terminal's width (a file name, a
    command to type, a list of names)."""


@dataclass(frozen=True)
class Outcome:
    """What a command returns. `document`: its JSON (None: it has none). `view`: the tables and
    lines for a terminal of a width (rich renderables and strings; `Note` and `Plain` lines as
    they say), drawn in place of the document. `notes` and `warnings` go to stderr under either
    form, after what stdout shows, or before it with `notes_first` (notes on the reading itself:
    a merge, a fallback). `asides`: plain lines on stderr beside the document under --json (what
    the view says on stdout about files written). `failures`: one error line each on stderr, then
    exit code 1; `failed`: exit code 1 with nothing more to say (the view said it)."""

    document: Any = None
    view: Callable[[int], Iterable[Any]] | None = None
    notes: tuple[str, ...] = ()
    notes_first: bool = False
    warnings: tuple[str, ...] = ()
    asides: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    failed: bool = False
    usage: bool = False  # the failures are the input's (a spec's reference that fails): exit code 2

    def to_json(self) -> str:
        """The document as the command prints it."""
        return json.dumps(self.document, indent=1)

    @property
    def exit_code(self) -> int:
        """2 for failures of the input (`usage`), 1 for other failures (or `failed`), else 0."""
        return (2 if self.usage else 1) if self.failures or self.failed else 0


def results_view(doc, width: int, list_failures: bool = False) -> list:
    """A run's (or a sweep's) tables and verdicts: the sweep first, the run table and its timing,
    the counters, one verdict per kernel; with `list_failures`, why each kernel not drawn is not."""
    from .render.tables import (
        below_floor_note,
        counters_tables,
        energy_lines,
        run_tables,
        sweep_below_floor_note,
        sweep_tables,
        timing_lines,
        verdict_lines,
    )

    shown: list = []
    if doc.sweep:
        shown += sweep_tables(doc, width)
        shown += [line for line in [sweep_below_floor_note(doc)] if line]
    shown += run_tables(doc, width)
    shown += timing_lines(doc)
    shown += energy_lines(doc)
    shown += [line for line in [below_floor_note(doc)] if line]
    shown += counters_tables(doc, width)
    shown += verdict_lines(doc)
    if list_failures:
        for k in doc.kernels:
            if not k.timed:
                why = k.error or f"{k.name}: {'verified, not timed' if k.verified else 'not verified'}"
                shown.append(f"not drawn: {why}")
    return shown


def _dump(doc):
    from .results.store import dump

    return dump(doc)


def run(report: RunReport, out: Path, sweep: bool) -> Outcome:
    """A run: its results; the tables, then where they were written and how to draw them."""
    kind = " --kind sweep" if sweep else ""
    return Outcome(_dump(report.results),
                   lambda width: [*results_view(report.results, width),
                                  f"results written to {out}; draw them with: "
                                  f"roofline plot --results {out}{kind} --out chart.png"],
                   tuple(report.notes), warnings=tuple(report.warnings), failures=tuple(report.failures))


def profile(done: ProfileReport, out: Path, top: int) -> Outcome:
    """A profile (or an import): its document; its `top` kernels, then where it was written."""

    def view(width: int) -> list:
        from .render.tables import profile_tables

        return [*profile_tables(done.results, width, top),
                f"profile written to {out}; draw it with: roofline plot --results {out} --out profile.png"]

    return Outcome(_dump(done.results), view, tuple(done.notes), failures=tuple(done.failures))


def tune(report: TuneReport, out: Path) -> Outcome:
    """A tile search: every candidate's results; the ten fastest, then the winner and where it is kept."""
    doc, t = report.results, report.results.tune

    def view(width: int) -> list:
        from .render.tables import run_tables

        top = sorted((k for k in doc.kernels if k.timed), key=lambda k: -k.gflops)[:10]
        return [*run_tables(doc.model_copy(update={"kernels": top}), width),
                f"winner {t.expression}: {t.winner_gflops:,.0f} GFLOP/s; {t.valid} of {t.candidates} tiles "
                f"compiled, {t.verified} verified; kept in {report.cache}; all candidates in {out}"]

    return Outcome(_dump(doc), view)


def plot(notes: list[str], out: Path) -> Outcome:
    """A chart drawn: the notes on what was read, then the file written."""
    return Outcome(view=lambda width: [Plain(f"wrote {out}")], notes=tuple(notes), notes_first=True)


def grade_view(doc, width: int) -> list:
    """A grade file's table and its lines."""
    from .render.grade_tables import grade_lines, grade_tables

    return [*grade_tables(doc, width), *grade_lines(doc), *map(Note, doc.notes)]


def grade(report, out: Path) -> Outcome:
    """A grade: its document; the table and evidence, then where it was written. Usage failures
    (a reference that fails) exit 2, others 1."""
    failures = tuple(report.usage_failures) + tuple(report.failures)
    return Outcome(_dump(report.results),
                   lambda width: [*grade_view(report.results, width),
                                  Plain(f"grades written to {out}; draw them with: roofline plot --results {out} "
                                        "--out grades.png")],
                   failures=failures, usage=bool(report.usage_failures))


def show(paths: list[Path], docs: list, notes: list[str]) -> Outcome:
    """Results read (`api.show_all`: one document per precision, or a profile): the notes on the
    merge first; the document (a list of them for several precisions); each document's tables,
    a profile's notes after its table."""
    doc = docs[0]
    if getattr(doc, "kind", None) == "grade":
        return Outcome(_dump(doc), lambda width: grade_view(doc, width), tuple(notes), notes_first=True)
    if getattr(doc, "kind", None) == "profile":
        def view(width: int) -> list:
            from .render.tables import profile_tables

            return [*profile_tables(doc, width, None), *map(Note, doc.notes)]

        return Outcome(_dump(doc), view, tuple(notes), notes_first=True)
    ahead = ([Note(f"{paths[0]} holds a size sweep: GFLOP/s at every size first, then the tables of the "
                   f"largest, {doc.problem.problem.text()}")] if doc.sweep else [])
    document = _dump(doc) if len(docs) == 1 else [_dump(d) for d in docs]  # several precisions: a list
    return Outcome(document, lambda width: [*ahead, *(x for d in docs for x in results_view(d, width, True))],
                   tuple(notes), notes_first=True)


def occupancy(report: OccupancyReport, plot_out: Path | None) -> Outcome:
    """An occupancy: its JSON; its table, why it cannot launch, the target's answer, the chart written."""
    wrote = [f"wrote {plot_out}"] if plot_out is not None else []

    def view(width: int) -> list:
        from .render.tables import occupancy_table

        occ = report.occupancy
        return [occupancy_table(occ), *([f"cannot launch: {occ.reason}"] if occ.reason else []),
                *([report.target_text] if report.target_text else []), *wrote]

    return Outcome(report.to_json(), view, asides=tuple(wrote))


def device(spec: DeviceSpec) -> Outcome:
    """A GPU's figures: as JSON with its arch and ridge point; its table, their sources, the
    roofs of every precision and level, and a note on the tensor cores' clock where it differs."""
    from dataclasses import asdict

    def view(width: int) -> list:
        from .render.tables import device_source, device_table, peaks_tables
        from .render.text import tensor_clock_note

        clock = tensor_clock_note(spec.tensor_clock_mhz, spec.max_sm_clock_mhz)
        return [device_table(spec), device_source(spec), *peaks_tables(spec, width), *([clock] if clock else [])]

    return Outcome(dict(asdict(spec), arch=spec.arch, ridge_point_flop_per_byte=round(spec.ridge_point, 2)), view)


def kernels(listing: KernelListing, model_only: bool, autotuned_tile: str | None) -> Outcome:
    """The ladder's (or the user's) kernels: the notes first (the offline fallback said where a
    script sees it); the tables, why a kernel is unavailable, what an uncompiled tile lacks; a
    kernel that did not compile or cannot launch is a failure."""
    notes = list(listing.notes)
    if listing.arch is None and not model_only:  # the offline fallback
        notes.insert(0, "no CUDA GPU found and no target given: the traffic model alone; add --arch sm_XY or "
                        "--gpu NAME for registers, spills and occupancy")

    def view(width: int) -> list:
        from .render.tables import kernels_tables

        shown = [*kernels_tables(listing, width), *(row.unavailable for row in listing.rows if row.unavailable)]
        if listing.arch is None and autotuned_tile is not None:
            why = "with --model-only" if model_only else "without a target"
            shown.append(f"--autotuned-tile is not compiled {why}, so the compiler has not checked the tile; "
                         + ("drop --model-only" if model_only else "add --arch sm_XY"))
        return shown

    return Outcome(listing.to_json(), view, tuple(notes), notes_first=True, failures=tuple(listing.errors))


def new(done: Starter, dtype: str) -> Outcome:
    """A starter kernel written: where, its name (and where the name came from), and how to run it."""
    from .files import shown_path

    shown = shown_path(done.path)
    how = " (from the file name; --name NAME sets another)" if done.derived and done.name != done.path.stem else ""
    ladder = "--all" if dtype == "fp32" else "--ladder tensor --all"
    return Outcome(view=lambda width: [Plain(f"wrote {shown}: kernel {done.name}{how}; run it beside the ladder "
                                             f"with: roofline run --source {shlex.quote(shown)} {ladder}")])


def compare(result: WorkComparison, before: Path, after: Path, out: Path | None) -> Outcome:
    """Two files compared: the changes as JSON; their tables, the notes, the kernels in one file
    only (one a line: a profile's labels are long), the chart written. Two grade files: a line
    per entry (`analysis.grade_changes`)."""
    from .analysis.grade_changes import GradeChanges, lines
    if isinstance(result, GradeChanges):
        return Outcome(result.to_dict(), lambda width: [Plain(line) for line in lines(result)])

    def view(width: int) -> list:
        from .render.changes import change_tables

        shown = [*change_tables(result, width), *map(Note, result.notes)]
        for path, which, names in ((before, "gone", result.gone), (after, "new", result.new)):
            if names:
                shown.append(Plain("\n".join([f"{which}, only in {path}:", *(f"  {name}" for name in names)])))
        return shown + ([f"wrote {out}"] if out is not None else [])

    return Outcome(result.to_dict(), view)


def report(document, tables: Callable[[int], list], lines: Callable[[], list[str]], notes: list[str],
           out: Path | None) -> Outcome:
    """A decision over a document (whatif, project): its JSON; its tables and lines, its notes,
    then the chart written."""
    return Outcome(document, lambda width: [*tables(width), *lines(), *map(Note, notes),
                                            *([f"wrote {out}"] if out is not None else [])])


def whatif(result: WhatIf, out: Path | None) -> Outcome:
    """What each kernel saves at its target: `report` of `render.whatif`'s tables and lines."""
    from .render.whatif import lines, tables

    return report(result.to_json(), lambda width: tables(result, width), lambda: lines(result), result.notes, out)


def project(result, out: Path | None) -> Outcome:
    """The work projected onto other GPUs: `report` of `render.project`'s tables and step lines,
    with every target's notes."""
    from .analysis.project import to_dict
    from .render.project import project_tables, step_lines

    return report(to_dict(result), lambda width: project_tables(result, width), lambda: step_lines(result),
                  result.notes + [n for t in result.targets for n in t.notes], out)


def check(result: Check) -> Outcome:
    """A regression check: its reading as JSON or as lines; exit code 1 when it did not pass."""
    from .analysis.grade_changes import GradeChanges, lines
    if isinstance(result, GradeChanges):
        return Outcome(result.to_dict(), lambda width: [Plain(line) for line in lines(result)],
                       failed=not result.passed)
    from .render.changes import check_lines

    return Outcome(result.to_dict(), lambda width: [Plain(line) for line in check_lines(result)],
                   failed=not result.passed)


def schema(document: dict) -> Outcome:
    """A JSON Schema: the document alone."""
    return Outcome(document)


def comms(result, out: Path | None = None) -> Outcome:
    """Communication across ranks: the report as JSON; its tables, then its notes, then the chart written."""
    from dataclasses import asdict

    def view(width: int) -> list:
        from .render.comms_tables import comms_tables

        return list(comms_tables(result, width)) + ([Plain(f"wrote {out}")] if out is not None else [])

    doc = {"link": asdict(result.link) if result.link else None, "notes": result.notes,
           "nccl_tests": asdict(result.reference) if result.reference else None,
           "ranks": [asdict(s) | {"overlapped_span_us": s.overlapped_span_us} for s in result.ranks],
           "collectives": [asdict(a) for a in result.collectives], "kernels": [asdict(a) for a in result.kernels]}
    return Outcome(doc, view, tuple(result.notes))
