"""The projection document (`roofline project`: `analysis.project.Projection`): its `--json`
(checked against `models.ProjectJson`) and its view (`render.project`'s tables and step lines,
every target's notes, the chart written)."""

from __future__ import annotations

from pathlib import Path

from ..analysis.project import Projection, to_dict
from . import models
from .registry import DocumentKind, register


class ProjectKind(DocumentKind):
    name = "project"
    types = (Projection,)
    model = models.ProjectJson

    def json(self, obj: Projection) -> dict:
        return models.checked(self.model, to_dict(obj))

    def notes(self, obj: Projection) -> list[str]:
        """Its notes and every target's."""
        return obj.notes + [n for t in obj.targets for n in t.notes]

    def view(self, obj: Projection, width: int, out: Path | None = None, **context) -> list:
        from ..render.lines import Note
        from ..render.project import project_tables, step_lines

        return [*project_tables(obj, width), *step_lines(obj), *map(Note, self.notes(obj)),
                *([f"wrote {out}"] if out is not None else [])]


KIND = register(ProjectKind())
