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
    gated kernel by kernel."""

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
