"""The what-if document (`roofline whatif`: `analysis.whatif.WhatIf`): its `--json` (checked
against `models.WhatIfJson`) and its view (`render.whatif`'s tables and lines, its notes, the
chart written)."""

from __future__ import annotations

from pathlib import Path

from ..analysis.whatif import WhatIf
from . import models
from .registry import DocumentKind, register


class WhatIfKind(DocumentKind):
    name = "whatif"
    types = (WhatIf,)
    model = models.WhatIfJson

    def view(self, obj: WhatIf, width: int, out: Path | None = None, **context) -> list:
        from ..render.lines import Note
        from ..render.whatif import lines, tables

        return [*tables(obj, width), *lines(obj), *map(Note, obj.notes), *([f"wrote {out}"] if out is not None else [])]


KIND = register(WhatIfKind())
