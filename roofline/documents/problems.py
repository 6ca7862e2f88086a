"""The problems document: `roofline kernels problem.py --gpu NAME` (`analysis.problems.ProblemBounds`),
each problem's work, compulsory bytes and speed of light; its `--json` model (`ProblemsJson`, below),
its view and its registry entry, the whole kind in one module."""

from __future__ import annotations

from typing import Literal, Optional

from ..analysis.problems import ProblemBounds
from .models import JsonModel, Number
from .registry import DocumentKind, register


class TermJson(JsonModel):
    """One term of T_SOL: the level, its amount (FLOPs or bytes), the roof, measured or not, ms."""

    level: str
    amount: Number
    roof: Number
    measured: bool
    ms: Number


class ProblemJson(JsonModel):
    """One problem: FLOPs per precision key as this GPU runs them (`flops`) and as counted
    (`flops_counted`: they differ where the GPU has no roof for a precision, FP4 work read at FP8's
    roof on a Hopper), compulsory bytes, where they come from, the tensors it
    reads and returns ([name, shape, dtype]), T_SOL (ms) and the term that sets it, and what reading
    its work met that a user should know (a mask not read, its products counted whole)."""

    name: str
    path: str
    flops: dict[str, Number]
    flops_counted: dict[str, Number] = {}
    bytes_read: Number
    bytes_written: Number
    work_source: str
    inputs: list[list]
    outputs: list[list]
    t_sol_ms: Number
    bound: Optional[str]
    terms: list[TermJson]
    no_roof: list[str]
    warnings: list[str] = []


class ProblemsJson(JsonModel):
    """`roofline kernels PROBLEM.py ... --json`: each problem's speed of light on one GPU."""

    kind: Literal["problems"]
    device: str
    problems: list[ProblemJson]
    errors: list[str]
    notes: list[str]


class ProblemsKind(DocumentKind):
    name = "problems"
    types = (ProblemBounds,)
    model = ProblemsJson

    def view(self, obj: ProblemBounds, width: int, **context) -> list:
        from ..model import sol
        from ..model.peaks import LABELS
        from ..model.units import figure
        from ..render.lines import Note
        from ..render.tables import _fit

        def gflop(r) -> str:
            return ", ".join(f"{figure(v / 1e9)} {LABELS.get(k, k)}" for k, v in r.work.work.flops.items()) or "-"

        def bound(s) -> str:  # tensor precisions added: they share the tensor cores (`model.sol`)
            if s.tensor_shared:
                shared = (t.level.removesuffix(" tensor") for t in s.terms if sol.is_tensor(t.level))
                return " + ".join(shared) + " tensor"
            return s.binding.level if s.binding is not None else "-"

        def ms(x: float) -> str:  # three significant digits at any size: a small problem's bound is not shown as 0.0002
            return f"{x:,.4f}" if x >= 1 or x == 0 else f"{x:.3g}"

        def mb(x: float) -> str:  # a few bytes (a loss's scalar) as such, not in a power of ten
            return f"{figure(x / 1e6)} MB" if x >= 1000 else f"{x:,.0f} B"

        rows = [[r.name, gflop(r), mb(r.work.work.bytes_read), mb(r.work.work.bytes_written),
                 ms(r.sol.ms), bound(r.sol)] for r in obj.rows]
        columns = [("GFLOP", "right"), ("read", "right"), ("written", "right"), ("T_SOL ms", "right"),
                   ("bound", "left")]
        title = f"{obj.device}: the speed of light of {len(obj.rows)} problem{'s' if len(obj.rows) != 1 else ''}"
        return [*_fit(title, ("problem", "left"), columns, rows, width), *map(Note, obj.notes)]


KIND = register(ProblemsKind())
