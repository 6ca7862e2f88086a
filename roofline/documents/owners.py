"""The owners document (`show PROFILE --by op|module`: `analysis.owners.Owners`): its `--json`
(checked against `models.OwnersJson`). Its view is the profile kind's (`documents.profile`)."""

from __future__ import annotations

from ..analysis.owners import Owners
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


KIND = register(OwnersKind())
