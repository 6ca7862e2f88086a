"""The run kind: a run's results (`roofline run`, a size sweep, a tile search; `results.schema`).
Several files merge, one document per precision; its view is the run table, timing, counters and
verdicts; its chart the roofline, the size sweep or the energy roofline, or the HTML report."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..results import store
from ..results.schema import Results
from .registry import ChartRequest, register
from .work_kind import WorkKind


def results_view(doc: Results, width: int, list_failures: bool = False) -> list:
    """A run's (or a sweep's) tables and verdicts: the sweep first, the run table and its timing,
    the counters, one verdict per kernel; with `list_failures`, why each kernel not drawn is not."""
    from ..render.tables import (below_floor_note, columns_note, counters_notes, counters_tables, energy_lines,
                                 run_tables, sweep_below_floor_note, sweep_tables, timing_lines, verdict_lines)
    from ..render.text import ceiling_lines, dram_note
    from ..render.timeline_tables import timeline_lines, timeline_tables

    shown: list = []
    if doc.sweep:
        shown += sweep_tables(doc, width)
        shown += [line for line in [sweep_below_floor_note(doc)] if line]
    shown += run_tables(doc, width)
    shown += timing_lines(doc)
    shown += [line for line in [columns_note(doc)] if line]
    shown += energy_lines(doc)
    shown += [line for line in [below_floor_note(doc)] if line]
    shown += counters_tables(doc, width)
    shown += counters_notes(doc)
    shown += timeline_tables(doc, width, None) + timeline_lines(doc, None)  # a run's rungs: every one
    shown += ceiling_lines(doc)
    shown += [line for line in [dram_note(doc)] if line]
    shown += verdict_lines(doc)
    if list_failures:
        for k in doc.kernels:
            if not k.timed:
                why = k.error or f"{k.name}: {'verified, not timed' if k.verified else 'not verified'}"
                shown.append(f"not drawn: {why}")
    return shown


class RunKind(WorkKind):
    name = "run"
    types = (Results,)
    model = Results
    file_kind = None
    title = store.KIND_NAMES["run"]
    short = "a run's results"
    pair = "two runs' results"
    merges = True
    read_by = ("show", "plot", "compare", "whatif", "project")

    def combine(self, paths: list[Path], docs: list, notes: list[str]) -> list:
        return store.by_precision(docs, [str(p) for p in paths], notes)

    def json(self, obj: Results):
        return store.dump(obj)

    def view(self, obj: Results, width: int, list_failures: bool = False, **context) -> list:
        return results_view(obj, width, list_failures)

    def shown(self, paths: list[Path], docs: list):
        from ..render.lines import Note

        doc = docs[0]
        ahead = ([Note(f"{paths[0]} holds a size sweep: GFLOP/s at every size first, then the tables of the "
                       f"largest, {doc.problem.problem.text()}")] if doc.sweep else [])
        from ..results.timeline import with_phases

        document = with_phases(store.dump(doc) if len(docs) == 1 else [store.dump(d) for d in docs])  # several precisions
        return document, lambda width: [*ahead, *(x for d in docs for x in results_view(d, width, True))]

    def chart(self, request: ChartRequest, docs: list, notes: list[str]) -> list[str]:
        from ..render import energy_chart, html_report, roofline_chart, sweep_chart

        paths, out, kind, measured, highlight = (request.paths, request.out, request.kind, request.measured,
                                                 request.highlight)
        doc = docs[0]
        if kind in ("op", "module"):
            raise UsageError(f"{{kind}} {kind} draws a profile of a PyTorch or JAX program by who launched its kernels; "
                             f"{paths[0]} is {self.title}", "kind")
        if kind == "timeline":
            return self.timeline_chart(docs, request, notes)
        if highlight:
            known = [k.name for d in docs for k in d.kernels]
            for name in highlight:
                if name not in known:
                    raise UsageError(f"{{highlight}} {name!r}: no such kernel in these results; they hold "
                                     f"{', '.join(known)}", "highlight")
                if not any(k.timed for d in docs for k in d.kernels if k.name == name):
                    notes.append(f"--highlight {name}: it was not verified and timed, so it is not drawn")
        if len(docs) > 1:  # runs in several precisions: one roofline, each kernel against its own roof
            if kind != "roofline" or request.as_html:
                raise UsageError(f"{request.sources}: runs in several precisions "
                                 f"({', '.join(d.problem.dtype for d in docs)}) are drawn together only on a roofline "
                                 "chart (.png, .svg or .pdf); give one precision's files for the "
                                 + ("HTML report" if request.as_html else "sweep"))
            notes += [f"{d.problem.problem.text()} holds a size sweep: the roofline shows its largest size"
                      for d in docs if d.sweep]
            try:
                roofline_chart.draw_many(docs, out, measured, highlight)
            except UsageError as exc:
                raise exc.prefixed(f"{request.sources}: ") from None
            return notes
        if request.as_html and kind == "energy":
            raise UsageError("the energy roofline is drawn as .png, .svg or .pdf, not in the HTML report")
        if request.as_html:
            if kind == "sweep" and not doc.sweep:
                raise UsageError(f"{paths[0]} holds no size sweep; make one with roofline run --all --sweep "
                                 "512,1024,4096")
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
        except UsageError as exc:  # the output path was checked up front: this is about the data
            raise exc.prefixed(f"{request.sources}: ") from None
        return notes


KIND = register(RunKind())
