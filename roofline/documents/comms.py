"""The communication document (`roofline comms`: `analysis.comms.CommsReport`): its `--json`
(checked against `models.comms_model()`) and its view (`render.comms_tables`, the chart written)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from ..analysis.comms import CommsReport
from . import models
from .registry import DocumentKind, register


def comms_json(result: CommsReport) -> dict:
    """The report as `--json` prints it, before its check against the model."""
    return {"link": asdict(result.link) if result.link else None, "notes": result.notes,
            "nccl_tests": asdict(result.reference) if result.reference else None,
            "ranks": [asdict(s) | {"overlapped_span_us": s.overlapped_span_us} for s in result.ranks],
            "collectives": [asdict(a) for a in result.collectives], "kernels": [asdict(a) for a in result.kernels]}


class CommsKind(DocumentKind):
    name = "comms"
    types = (CommsReport,)

    @property
    def model(self):
        return models.comms_model()

    def json(self, obj: CommsReport) -> dict:
        return models.checked(self.model, comms_json(obj))

    def view(self, obj: CommsReport, width: int, out: Path | None = None, **context) -> list:
        from ..render.comms_tables import comms_tables
        from ..render.lines import Plain

        return list(comms_tables(obj, width)) + ([Plain(f"wrote {out}")] if out is not None else [])


KIND = register(CommsKind())
