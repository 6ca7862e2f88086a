"""The owners documents: `show PROFILE --by op|module` (`analysis.owners.Owners`) and `compare BEFORE
AFTER --by op|module` (`analysis.owners.OwnerChanges`), each its `--json` (checked against
`models.OwnersJson`, `models.OwnerChangesJson`) and its view."""

from __future__ import annotations

from ..analysis.owners import OwnerChanges, Owners
from . import models
from .registry import DocumentKind, register


class OwnersKind(DocumentKind):
    name = "owners"
    types = (Owners,)
    model = models.OwnersJson

    def json(self, obj: Owners) -> dict:
        return models.checked(self.model, obj.to_json())

    def view(self, obj: Owners, width: int, **context) -> list:
        from ..render.owner_tables import rows_tables

        return rows_tables(obj, width)


class OwnerChangesKind(DocumentKind):
    name = "owner-changes"
    types = (OwnerChanges,)
    model = models.OwnerChangesJson

    def json(self, obj: OwnerChanges) -> dict:
        return models.checked(self.model, obj.to_json())

    def view(self, obj: OwnerChanges, width: int, **context) -> list:
        from ..render.lines import Note
        from ..render.owner_tables import changes_tables

        return [*changes_tables(obj, width), *map(Note, obj.notes)]


KIND = register(OwnersKind())
CHANGES = register(OwnerChangesKind())
