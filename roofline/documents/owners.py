"""The owners documents: `show PROFILE --by op|module` (`analysis.owners.Owners`) and `compare BEFORE
AFTER --by op|module` (`analysis.owners.OwnerChanges`), each its `--json` model (`OwnersJson`,
`OwnerChangesJson`, below), its view and its registry entry. The whole of a kind in one module: the
registry finds it by itself (`registry.kinds`), `roofline schema owners` prints its model."""

from __future__ import annotations

from typing import Literal, Optional

from ..analysis.owners import OwnerChanges, Owners
from .models import JsonModel, Number
from .registry import DocumentKind, register


class OwnerKernelJson(JsonModel):
    """One kernel of an op or module: its GPU time over the launches the row owns."""

    name: str
    time_ms: Number


class OwnerRowJson(JsonModel):
    """One op in one phase (`phase`; null for a module, whose time per phase is in `phase_ms`), or one
    module with its submodules (`depth`: 0 for a model's outermost module): GPU time (ms), share of
    the profiled time, launches, FLOPs per precision and bytes per level summed, the floor (ms, each
    kernel at its own roof; null without one), time over it, the roof binding most of it, kernels;
    `program_ms`: the same launches' GPU time in the program, from a PyTorch profiler trace of the
    step (null without one: `time_ms` is Nsight Compute's, each launch replayed alone)."""

    name: str
    phase: Optional[str]
    depth: int
    time_ms: Number
    program_ms: Optional[Number] = None
    share: Number
    launches: int
    flops: dict[str, Number]
    bytes: dict[str, Number]
    floor_ms: Optional[Number]
    times_floor: Optional[Number]
    binding: Optional[str]
    phase_ms: dict[str, Number]
    kernels: list[OwnerKernelJson]


class OwnersJson(JsonModel):
    """`roofline show PROFILE --by op|module --json`: a profile's GPU time by the PyTorch op (and
    phase) or the module that launched its kernels (`analysis.owners`), with where that was read from."""

    kind: Literal["owners"]
    by: Literal["op", "module"]
    source: str
    program_source: Optional[str] = None
    total_time_ms: Number
    owned_time_ms: Number
    rows: list[OwnerRowJson]
    notes: list[str]


class OwnerChangeJson(JsonModel):
    """One op (in one phase; null for a module) or module in two profiles: its time in each (ms; null
    where it is not in that profile), after / before - 1, and its time over its floor in each."""

    name: str
    phase: Optional[str]
    before_ms: Optional[Number]
    after_ms: Optional[Number]
    change: Optional[Number]
    before_times_floor: Optional[Number]
    after_times_floor: Optional[Number]


class OwnerChangesJson(JsonModel):
    """`roofline compare BEFORE AFTER --by op|module --json`: every op or module of either profile,
    the largest change in time first."""

    kind: Literal["owner-changes"]
    by: Literal["op", "module"]
    before: str
    after: str
    before_time_ms: Number
    after_time_ms: Number
    rows: list[OwnerChangeJson]
    notes: list[str]



class OwnersKind(DocumentKind):
    name = "owners"
    types = (Owners,)
    model = OwnersJson

    def view(self, obj: Owners, width: int, **context) -> list:
        from ..render.owner_tables import rows_tables

        return rows_tables(obj, width)


class OwnerChangesKind(DocumentKind):
    name = "owner-changes"
    types = (OwnerChanges,)
    model = OwnerChangesJson

    def view(self, obj: OwnerChanges, width: int, **context) -> list:
        from ..render.lines import Note
        from ..render.owner_tables import changes_tables

        return [*changes_tables(obj, width), *map(Note, obj.notes)]


KIND = register(OwnersKind())
CHANGES = register(OwnerChangesKind())
