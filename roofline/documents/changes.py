"""The comparison documents: two runs or two profiles kernel by kernel ('compare':
`analysis.compare.WorkComparison`), the regression gate's reading of them ('check':
`analysis.check.Check`), and two grade files entry by entry, as compare or as the gate reads them
('grade-changes': `analysis.grade_changes.GradeChanges`). Each with its `--json` (checked against
its model in `documents.models`) and its view."""

from __future__ import annotations

from pathlib import Path

from ..analysis.check import Check
from ..analysis.compare import WorkComparison
from ..analysis.grade_changes import GradeChanges
from . import models
from .registry import DocumentKind, register


class CompareKind(DocumentKind):
    name = "compare"
    types = (WorkComparison,)
    model = models.CompareJson

    def json(self, obj: WorkComparison) -> dict:
        return models.checked(self.model, obj.to_dict())

    def view(self, obj: WorkComparison, width: int, before: Path | None = None, after: Path | None = None,
             out: Path | None = None, **context) -> list:
        """Its tables, the notes, the kernels in one file only (one a line: a profile's labels are
        long) naming `before` and `after`, then the chart written to `out`."""
        from ..render.changes import change_tables
        from ..render.lines import Note, Plain

        shown = [*change_tables(obj, width), *map(Note, obj.notes)]
        for path, which, names in ((before, "gone", obj.gone), (after, "new", obj.new)):
            if names:
                shown.append(Plain("\n".join([f"{which}, only in {path}:", *(f"  {name}" for name in names)])))
        return shown + ([f"wrote {out}"] if out is not None else [])


class CheckKind(DocumentKind):
    name = "check"
    types = (Check,)
    model = models.CheckJson

    def json(self, obj: Check) -> dict:
        return models.checked(self.model, obj.to_dict())

    def view(self, obj: Check, width: int, **context) -> list:
        from ..render.changes import check_lines
        from ..render.lines import Plain

        return [Plain(line) for line in check_lines(obj)]


class GradeChangesKind(DocumentKind):
    name = "grade-changes"
    types = (GradeChanges,)
    model = models.GradeChangesJson

    def json(self, obj: GradeChanges) -> dict:
        return models.checked(self.model, obj.to_dict())

    def view(self, obj: GradeChanges, width: int, **context) -> list:
        from ..analysis.grade_changes import lines
        from ..render.lines import Plain

        return [Plain(line) for line in lines(obj)]


COMPARE = register(CompareKind())
CHECK = register(CheckKind())
GRADE_CHANGES = register(GradeChangesKind())
