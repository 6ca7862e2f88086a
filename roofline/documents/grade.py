"""The grade kind: a grade file (`roofline run` (graded), `results.grades`). Read alone; its view is its
table and evidence; its chart one roofline (no sweep, no highlight, no HTML report); two grade
files compare entry by entry (`analysis.grade_changes`), and only with each other."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..results import store
from ..results.grades import GradeResults
from .registry import ChartRequest, ReadKind, register


def grade_view(doc: GradeResults, width: int) -> list:
    """A grade file's table and its lines, its notes as note lines."""
    from ..render.grade_tables import grade_lines, grade_tables
    from ..render.lines import Note

    return [*grade_tables(doc, width), *grade_lines(doc), *map(Note, doc.notes)]


class GradeKind(ReadKind):
    name = "grade"
    types = (GradeResults,)
    model = GradeResults
    file_kind = "grade"
    title = store.KIND_NAMES["grade"]
    short = "a grade file"
    pair = "two grade files"
    read_by = ("show", "plot", "compare")
    paired_alone = True

    def parse(self, data, source: str, reads: str | None):
        return store.parse(data, source, profile=True, reads=reads)

    def json(self, obj: GradeResults):
        return store.dump(obj)

    def view(self, obj: GradeResults, width: int, **context) -> list:
        return grade_view(obj, width)

    def shown(self, paths: list[Path], docs: list):
        doc = docs[0]
        return store.dump(doc), lambda width: grade_view(doc, width)

    def chart(self, request: ChartRequest, docs: list, notes: list[str]) -> list[str]:
        from ..render import grade_chart

        doc = docs[0]
        if request.as_html:
            raise UsageError(f"{request.paths[0]} is a grade file: drawn as one roofline chart (.png, .svg or .pdf), "
                             f"not as an HTML report ({request.out.name})")
        if request.highlight or request.kind != "roofline" or request.measured:
            raise UsageError(f"{request.paths[0]} is a grade file: drawn as one roofline chart (.png, .svg or .pdf), "
                             "without {highlight}, {kind} or {measured}", mentions=["highlight", "kind", "measured"])
        grade_chart.draw(doc, request.out)
        left = [e.name for e in doc.entries if not e.graded]
        if len(left) > grade_chart.MAX_NAMED:  # as the chart's own footer: counted, not listed
            return notes + [f"not drawn: {len(left)} entries not graded ({', '.join(left[:3])}, ...); roofline show gives "
                            "each one's reason"]
        return notes + [f"not drawn (not graded): {name}" for name in left]

    def compare(self, docs: tuple, paths: tuple[Path, Path], force: bool, chart_out: Path | None):
        from ..analysis import grade_changes

        if chart_out is not None:
            raise UsageError("{chart_out} draws the moves of profiles and runs; two grade files are compared as a table",
                             "chart_out")
        return grade_changes.compare(*docs)

    def check(self, docs: tuple, drop: float):
        from ..analysis import grade_changes

        return grade_changes.compare(docs[1], docs[0], drop)


KIND = register(GradeKind())
