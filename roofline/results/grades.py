"""Grade files (`"kind": "grade"`): kernels and callables of any signature, each verified, timed
and graded against its speed of light (`model.sol`), with its integrity flags
(`model.integrity`). `roofline schema grade` prints the JSON Schema.

Per entry: what it computes (`workload`, `sizes`, `work`), how it was checked (`checks`), its
time (`time_ms`, the median of `timing`), its speed of light (`t_sol_ms` and the `terms` it is the
largest of, `binding`), `share` = t_sol_ms / time_ms, the `score` against `baseline_ms` where a
baseline was given, what Nsight Compute counted with `--profile` (`counted`), and `flags`. An
entry that failed has `error` and no time; one `refused` declared work that made it faster than
light by REFUSED_SHARE or more. The document's figures are checked for agreement when read (a
share that is not its two times' ratio, a T_SOL that is not its largest term), so an edited
file is refused with the field named.
"""

from __future__ import annotations

import math
from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from ..model.device import DeviceSpec
from ..model.integrity import CODES
from ..model.roofs import COMPUTE_LEVEL
from ..model import sol
from ..model.sol import FASTER_THAN_LIGHT
from ..model.occupancy import Occupancy
from ..model.peaks import PRECISIONS
from ..model.timing import Timing
from .schema import Name, _Document, _Model

GRADE_SCHEMA = 1
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
_CLOSE = 1e-6  # relative agreement the consistency checks ask of figures the tool derived


class WorkRecord(_Model):
    """One launch's work: FLOPs per precision key, compulsory bytes read and written, and where
    the figures come from (a formula, 'declared', or the buffers' bytes)."""

    flops: dict[Literal[PRECISIONS], NonNegative] = {}  # type: ignore[valid-type]
    bytes_read: NonNegative = 0.0
    bytes_written: NonNegative = 0.0
    source: str = "declared"


class TermRecord(_Model):
    """A term of T_SOL: the level ('FP32', 'BF16 tensor', 'DRAM', 'launch'), its amount (FLOPs or
    bytes), the roof (GFLOP/s, GB/s; ms for the launch floor), whether measured, the ms allowed."""

    level: str
    amount: NonNegative
    roof: Positive
    measured: bool
    ms: NonNegative


class CheckRecord(_Model):
    """One output's comparison with the reference (' (new inputs)' after its name: the second launch)."""

    name: str
    rel_error: NonNegative | None = None
    tolerance: NonNegative
    passed: bool
    reason: str | None = None


class FlagRecord(_Model):
    """An integrity flag: its code, one sentence of evidence, the figures by name."""

    code: Literal[CODES]  # type: ignore[valid-type]
    evidence: str
    figures: dict[str, float] = {}


class CountedRecord(_Model):
    """What Nsight Compute counted over one profiled call: kernels launched, DRAM bytes, FLOPs per
    precision, the excess traffic (counted DRAM bytes over compulsory bytes) and the floor that
    binds with the counted bytes."""

    kernels: Annotated[int, Field(ge=0)]
    dram_bytes: NonNegative | None = None
    flops: dict[Literal[PRECISIONS], NonNegative] = {}  # type: ignore[valid-type]
    excess: NonNegative | None = None
    binding: str | None = None
    names: list[str] = []


class KernelsRecord(_Model):
    """The kernels of a callable's calls from CUPTI's activity records (`measure.activity`), medians
    over `calls` calls each from an idle device: the span from the first kernel's start to the last
    one's end, the busy time (the union of their intervals), the launches and the streams."""

    span_ms: NonNegative
    busy_ms: NonNegative
    launches: Annotated[int, Field(ge=0)]
    streams: Annotated[int, Field(ge=0)]
    calls: Annotated[int, Field(ge=1)]


class GradeEntry(_Model):
    """One graded kernel or callable (see the module)."""

    name: Name
    kind: Literal["kernel", "callable"]
    source: str
    workload: str
    sizes: dict[str, Annotated[int, Field(ge=1)]] = {}
    work: WorkRecord
    checks: list[CheckRecord] = []
    verified: bool
    error: str | None = None
    refused: bool = False
    timing: Timing | None = None
    time_ms: Positive | None = None
    ci95_ms: list[NonNegative] | None = None
    t_sol_ms: NonNegative
    terms: list[TermRecord] = []
    binding: str | None = None
    missing_roofs: list[str] = []
    share: Positive | None = None
    baseline: str | None = None
    baseline_ms: Positive | None = None
    score: Positive | None = None
    grid: list[Annotated[int, Field(ge=1)]] | None = None
    block: list[Annotated[int, Field(ge=1)]] | None = None
    registers: Annotated[int, Field(ge=1, le=255)] | None = None
    static_smem_bytes: Annotated[int, Field(ge=0)] | None = None
    dynamic_smem_bytes: Annotated[int, Field(ge=0)] | None = None
    local_bytes: Annotated[int, Field(ge=0)] | None = None
    occupancy: Occupancy | None = None
    compiler: str | None = None  # a kernel's compiler and its version: 'nvcc 13.0.88', 'NVRTC 12.9'
    event_ms: NonNegative | None = None
    wall_ms: NonNegative | None = None
    kernels: KernelsRecord | None = None
    counted: CountedRecord | None = None
    flags: list[FlagRecord] = []

    @property
    def graded(self) -> bool:
        """Verified, timed and not refused: a time and a share to read."""
        return self.verified and self.time_ms is not None and not self.refused and self.error is None

    @model_validator(mode="after")
    def _consistent(self) -> "GradeEntry":
        if self.score is not None and self.baseline_ms and self.time_ms:  # a derived figure, re-derived (`model.sol.score`): a file written under an
            # earlier rule (a score against a baseline at its speed of light) reads as this version scores it
            object.__setattr__(self, "score", sol.score(self.time_ms, self.t_sol_ms, self.baseline_ms))
        if self.t_sol_ms > 0 and not self.terms:
            raise ValueError("t_sol_ms without the terms it is the largest of")
        if self.terms:
            bound, top = sol.bound(self.terms)  # tensor precisions share the tensor cores: their times add
            if not math.isclose(bound, self.t_sol_ms, rel_tol=_CLOSE, abs_tol=1e-12):
                tensor = [t.ms for t in self.terms if sol.is_tensor(t.level)]
                raise ValueError(f"t_sol_ms {self.t_sol_ms:g} is not its largest term's {top.ms:g}"
                                 + (f" nor its tensor terms' sum {sum(tensor):g}" if len(tensor) > 1 else ""))
            if self.binding is not None and not math.isclose(
                    next((t.ms for t in self.terms if t.level == self.binding), -1.0), top.ms, rel_tol=_CLOSE):
                raise ValueError(f"binding {self.binding!r} is not its largest term ({top.level})")
            nbytes = self.work.bytes_read + self.work.bytes_written
            levels = {COMPUTE_LEVEL.get(k, k): v for k, v in self.work.flops.items() if v}
            for t in self.terms:
                want = nbytes if t.level == "DRAM" else 0.0 if t.level == "launch" else levels.get(t.level)
                if want is None or not math.isclose(t.amount, want, rel_tol=_CLOSE):
                    raise ValueError(f"terms: the {t.level} term's {t.amount:g} is not its work's {want or 0:g}")
        if not self.verified and (self.share is not None or self.score is not None):
            raise ValueError("a share or score for an entry not verified")
        if self.refused and (self.share is not None or self.score is not None):
            raise ValueError("a share or score for an entry refused")
        if self.verified and not self.checks:
            raise ValueError("verified, with no checks")
        if self.time_ms is not None and self.timing is None:
            raise ValueError("time_ms without the timing it is the median of")
        if self.graded and self.t_sol_ms > 0 and self.share is None:
            raise ValueError("share: missing for a verified, timed entry")
        if any(f.code == "faster_than_light" for f in self.flags) and (
                self.time_ms is None or self.t_sol_ms / self.time_ms <= FASTER_THAN_LIGHT):
            raise ValueError("flags: faster_than_light, but its time is not under its speed of light by the margin")
        if self.timing is not None and self.time_ms is not None and \
                not math.isclose(self.timing.median_ms, self.time_ms, rel_tol=_CLOSE):
            raise ValueError(f"time_ms {self.time_ms:g} is not its timing's median {self.timing.median_ms:g}")
        if self.share is not None:
            if self.time_ms is None:
                raise ValueError("share without time_ms")
            if not math.isclose(self.share, self.t_sol_ms / self.time_ms, rel_tol=_CLOSE):
                raise ValueError(f"share {self.share:g} is not t_sol_ms / time_ms = {self.t_sol_ms / self.time_ms:g}")
        if self.score is not None and (self.baseline_ms is None or self.time_ms is None):
            raise ValueError("score without baseline_ms and time_ms")
        if self.verified and any(not c.passed for c in self.checks):
            raise ValueError("verified, but a check failed")
        return self


class GradeResults(_Document):
    """A grade file: the device (its measured ceilings, the roofs T_SOL is read against), the L2
    at each timed launch, the launch floor and whether it was measured in this run, the entries."""

    kind_name: ClassVar[str] = "grade"
    schema_version: Literal[1] = Field(GRADE_SCHEMA, alias="schema")
    kind: Literal["grade"] = "grade"
    created: str | None = None
    tool: str | None = None
    device: DeviceSpec
    l2: Literal["cold", "warm"] = "cold"
    launch_ms: Positive | None = None
    entries: Annotated[list[GradeEntry], Field(min_length=1)]
    notes: list[str] = []

    @model_validator(mode="after")
    def _names(self) -> "GradeResults":
        seen = set()
        names = {e.name for e in self.entries}
        for i, e in enumerate(self.entries):
            launch = next((t for t in e.terms if t.level == "launch"), None)
            if launch is not None and (self.launch_ms is None or not math.isclose(launch.roof, self.launch_ms,
                                                                                  rel_tol=_CLOSE)):
                raise ValueError(f"entries[{i}]: its launch floor {launch.roof:g} ms is not the file's launch_ms")
            if e.baseline is not None and e.baseline not in names and not e.baseline.endswith(".json"):
                raise ValueError(f"entries[{i}].baseline: {e.baseline!r} is no entry of the file, nor a grade file")
            key = (e.name, e.workload)
            if key in seen:
                raise ValueError(f"entries[{i}].name: {e.name!r} appears twice for {e.workload}")
            seen.add(key)
        return self

    def entry(self, name: str) -> GradeEntry | None:
        """The first entry named `name`, or None."""
        return next((e for e in self.entries if e.name == name), None)
