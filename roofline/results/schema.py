"""The results document, schema 2: typed models that validate files and that every renderer reads.

Units are in the key names or fixed: bytes, milliseconds, GFLOP/s, GB/s (1 GB = 1e9 bytes). The
keys of the design contract stay at their paths (schema 1's `device.name`, `kernels[].gflops`,
`kernels[].occupancy`, `kernels[].model.arithmetic_intensity`, ...). The value types of the model
side are used as they are: `DeviceSpec`, `Occupancy`, `ModelFigures`, `CountedTraffic`, `Timing`.

What schema 2 changed from 1: `unwritten_elements` is `nan_or_unwritten_elements`; kernels record
`tile_source` (where their tile came from); `model.smem_bytes` is written; derived figures
(`floors`, `verdict`) are no longer stored: they follow from the rest (`model.roofs.verdict`).
Files of schema 1 are migrated when read (`store.load`).

Checks beyond types and ranges: kernel names are unique, each kernel's model FLOPs equal the
problem's 2*M*N*K, and no rate exceeds what the device can do (a kernel at 150x the FP32 peak is
a corrupt file, not a measurement).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..measure.timing import Timing
from ..model.device import DeviceSpec
from ..model.occupancy import Occupancy
from ..model.problem import Problem
from ..model.roofs import Verdict, verdict
from ..model.traffic import CountedTraffic, ModelFigures
from ..model.units import Millis, Rate, Size

SCHEMA = 2
PLAUSIBLE_OVER_PEAK = 1.5  # a rate above this many times the device's best compute roof is impossible


class _Model(BaseModel):
    # Unknown keys are kept (other tools may add their own); a frozen model is never mutated.
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)


class ProblemRecord(_Model):
    """The SGEMM solved: C (m x n) = alpha * A (m x k) @ B (k x n) + beta * C."""

    m: Size
    n: Size
    k: Size
    dtype: str = "float32"
    alpha: float = 1.0
    beta: float = 0.0
    layout: str = "row-major"

    @property
    def problem(self) -> Problem:
        """As the model's `Problem`."""
        return Problem(self.m, self.n, self.k)


class Reference(_Model):
    """cuBLAS on the same problem: median rate and time, with its timing samples."""

    name: str = "cublas"
    via: str = "cupy.matmul"
    tf32: bool = False
    gflops: Rate
    time_ms: Millis
    timing: Timing | None = None
    sm_clock_mhz_before_after: list[int | None] = []


class KernelRecord(_Model):
    """One kernel of a run, in three parts: compiled (registers, shared and local memory,
    occupancy; null when it did not compile), verified (against cuBLAS), timed (null unless
    verified and timed). `error` says why a kernel stopped short."""

    name: Annotated[str, Field(min_length=1)]
    summary: str = ""
    template: str = ""
    params: dict[str, int] = {}
    tile_source: str = "ladder"
    threads_per_block: Annotated[int, Field(ge=1, le=1024)]
    dynamic_smem_bytes: Annotated[int, Field(ge=0)] = 0
    registers: Annotated[int, Field(ge=1, le=255)] | None
    static_smem_bytes: Annotated[int, Field(ge=0)] | None
    local_bytes: Annotated[int, Field(ge=0)] | None = None
    occupancy: Occupancy | None
    driver_active_blocks_per_sm: int | None = None
    verified: bool
    rel_error: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None
    nan_or_unwritten_elements: Annotated[int, Field(ge=0)] | None = None
    error: str | None = None
    gflops: Rate | None
    time_ms: Millis | None
    pct_of_reference: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None
    timing: Timing | None = None
    sm_clock_mhz_before_after: list[int | None] = []
    model: ModelFigures
    measured: CountedTraffic | None = None

    @property
    def timed(self) -> bool:
        """Verified and timed: the only kernels ever drawn."""
        return self.verified and self.gflops is not None and self.time_ms is not None


class Skipped(_Model):
    """A kernel left out of the run, and why (e.g. cp.async on a GPU older than sm_80)."""

    name: str
    reason: str


class SweepReference(_Model):
    """cuBLAS at one size of a sweep."""

    gflops: Rate
    time_ms: Millis | None = None


class SweepKernel(_Model):
    """One kernel at one size of a sweep."""

    name: Annotated[str, Field(min_length=1)]
    gflops: Rate | None
    time_ms: Millis | None = None
    verified: bool
    pct_of_reference: float | None = None

    @property
    def timed(self) -> bool:
        """Verified and timed."""
        return self.verified and self.gflops is not None


class SweepPoint(_Model):
    """Every kernel at one problem size."""

    problem: ProblemRecord
    reference: SweepReference
    kernels: list[SweepKernel]


class TuneSummary(_Model):
    """The outcome of `roofline tune`: candidates searched, how many compiled and verified, the
    winning tile and its rate."""

    kernel: str
    candidates: int
    valid: int | None = None
    verified: int
    winner: dict[str, int]
    expression: str
    winner_gflops: Rate


class Results(_Model):
    """A results file. `kernels` are one problem's; a size sweep adds `sweep` (every size, the
    largest also in `kernels`); a tile search adds `tune`."""

    schema_version: Literal[2] = Field(SCHEMA, alias="schema")
    created: str | None = None
    tool: str | None = None
    device: DeviceSpec
    problem: ProblemRecord
    reference: Reference
    kernels: list[KernelRecord]
    skipped: list[Skipped] = []
    sweep: Annotated[list[SweepPoint], Field(min_length=1)] | None = None
    tune: TuneSummary | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "Results":
        flops = self.problem.problem.flops
        ceiling = PLAUSIBLE_OVER_PEAK * max(self.device.peak_fp32_gflops, self.device.measured_fp32_gflops or 0)
        _plausible("reference.gflops", self.reference.gflops, ceiling, self.device.peak_fp32_gflops)
        seen = set()
        for i, k in enumerate(self.kernels):
            if k.name in seen:
                raise ValueError(f"kernels[{i}].name: kernel {k.name!r} appears twice")
            seen.add(k.name)
            if abs(k.model.flops - flops) > 1e-9 * flops:
                raise ValueError(f"kernels[{i}].model.flops: {k.model.flops:g}, but the problem's 2*M*N*K "
                                 f"is {flops:g}")
            if k.timed:
                _plausible(f"kernels[{i}].gflops", k.gflops, ceiling, self.device.peak_fp32_gflops)
        sizes = set()
        for i, point in enumerate(self.sweep or []):
            p = point.problem
            if (p.m, p.n, p.k) in sizes:
                raise ValueError(f"sweep[{i}].problem: {p.problem.text()} appears twice in the sweep")
            sizes.add((p.m, p.n, p.k))
            for j, k in enumerate(point.kernels):
                if k.timed:
                    _plausible(f"sweep[{i}].kernels[{j}].gflops", k.gflops, ceiling, self.device.peak_fp32_gflops)
        return self


    def verdict(self, k: KernelRecord) -> Verdict:
        """The hierarchical reading of kernel `k`: FP32 and every memory level with bytes, against
        the measured roofs where known, with Nsight Compute's bytes where counted."""
        return verdict(k.model, self.device.roofs, k.time_ms, k.measured, measured=True)

    def floors(self, k: KernelRecord) -> Verdict:
        """The plain two-roof reading of kernel `k`: model GMEM bytes against the peak DRAM
        bandwidth, FLOPs against the peak FP32 rate."""
        return verdict(k.model, self.device.roofs, k.time_ms, measured=False, levels=("DRAM",))


def _plausible(where: str, gflops: float, ceiling: float, peak: float) -> None:
    if gflops > ceiling:
        shown = f"{peak:,.0f}" if peak >= 100 else f"{peak:.3g}"
        raise ValueError(f"{where}: {gflops:,.0f} GFLOP/s is {gflops / peak:,.3g}x the device's FP32 peak of "
                         f"{shown} GFLOP/s, which no kernel can reach; the file looks corrupt")


def json_schema() -> dict:
    """The JSON Schema of a results file (schema 2), for other tools."""
    return Results.model_json_schema(by_alias=True)
