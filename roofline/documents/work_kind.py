"""What the two kinds of file whose kernels are work (a run's, a profile's) share: their kernels
as work rows (`analysis.work`), and comparing two of them kernel by kernel (`analysis.compare`,
`analysis.check`)."""

from __future__ import annotations

from pathlib import Path

from ..ladder import upgrade
from ..results import store
from .registry import ReadKind


class WorkKind(ReadKind):
    """A kind of file whose kernels are work: read through `results.store.parse` (older files
    migrated, `ladder.upgrade.fill` filling what only the kernel families know), compared and
    gated kernel by kernel, its kernels drawn over their runs where it records their timelines."""

    timeline_hint = ("run its kernels again with roofline run --timeline (Nsight Compute samples each over its "
                     "run), or profile a program with roofline profile --timeline")  # how to get timelines

    def timeline_chart(self, docs: list, request, notes: list[str]) -> list[str]:
        """`plot --kind timeline`: the longest kernels of the one file `docs` holds that record a
        timeline (`render.timeline_chart`), drawn into `request.out`; `notes` with how many were
        left out; with --highlight, the kernels named (by name, or by the label that tells kernels
        sharing a name apart) in the order named. Raises UsageError for several files, an HTML report,
        a name no kernel with a timeline has, or a file that records no timeline (saying how to get
        one: `timeline_hint`)."""
        from ..errors import UsageError
        from ..render import timeline_chart

        if request.as_html:
            raise UsageError("{kind} timeline draws a .png, .svg or .pdf; the HTML report shows the kernels' runs "
                             "over time already: roofline plot FILE --out report.html", "kind")
        if len(docs) > 1:
            raise UsageError("{kind} timeline draws one file's kernels over their runs as a .png, .svg or .pdf",
                             "kind")
        timed = docs[0].timed_kernels()
        if not timed:
            raise UsageError(f"{{kind}} timeline: {request.paths[0]} records no kernel over its run; "
                             f"{self.timeline_hint}", "kind")
        if request.highlight:
            for name in request.highlight:  # each matched as the chart matches it (`timeline_chart.timed`)
                if not timeline_chart.timed(docs[0], names=[name]):
                    listed = ", ".join(k.label for k in timed[:10]) + (f", ... ({len(timed) - 10} more)"
                                                                        if len(timed) > 10 else "")
                    raise UsageError(f"{{highlight}} {name!r}: no kernel of {request.paths[0]} with a timeline is so "
                                     f"named; those with one, the longest first: {listed}", "highlight")
            timeline_chart.draw(docs[0], request.out, names=list(request.highlight))
            return notes
        timeline_chart.draw(docs[0], request.out)
        left = len(timed) - timeline_chart.TOP
        return notes + ([f"{left} more kernel{'s' if left > 1 else ''} with a timeline not drawn (the "
                         f"{timeline_chart.TOP} longest are)"] if left > 0 else [])

    def parse(self, data, source: str, reads: str | None):
        return store.parse(data, source, profile=True, upgrade=upgrade.fill, reads=reads)

    def work(self, doc, measured: bool = True):
        from ..analysis.work import workload

        return workload(doc, measured)

    def compare(self, docs: tuple, paths: tuple[Path, Path], force: bool, chart_out: Path | None):
        from ..analysis.compare import compare_work

        result = compare_work(*docs, force)
        result.notes[:0] = [note for d in docs for note in d.read_notes]
        if chart_out is not None:
            from ..render import compare_chart

            compare_chart.draw_moves(result, chart_out, paths[0].name, paths[1].name)
        return result

    def check(self, docs: tuple, drop: float):
        from ..analysis.check import check

        result = check(*docs, drop)
        result.comparison.notes[:0] = [note for d in docs for note in d.read_notes]
        return result
