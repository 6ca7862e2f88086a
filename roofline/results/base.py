"""The base of every model of a results file: unknown keys kept (other tools may add their own),
never mutated once read."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    # Unknown keys are kept (other tools may add their own); a frozen model is never mutated.
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)
