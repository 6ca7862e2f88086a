"""The results document, schema 4: typed models that validate files and that every renderer reads.

Units are in the key names or fixed: bytes, milliseconds, GFLOP/s, GB/s (1 GB = 1e9 bytes). The
keys of the design contract stay at their paths (schema 1's `device.name`, `kernels[].gflops`,
`kernels[].occupancy`, `kernels[].model.arithmetic_intensity`, ...). The value types of the model
side are used as they are: `DeviceSpec`, `Occupancy`, `ModelFigures`, `CountedTraffic`, `Timing`.

A file stands alone: everything its reading needs is in it, and nothing in `roofline.results`
imports the kernel families (`roofline.ladder`) or the measuring code (`roofline.measure`), so a
file written before a kernel family changed reads as it was written. Two readers above ask the
families for what a file does not hold, by a kernel's name, and do without it for a name they do
not know: a sweep's chart for each ladder kernel's technique (its colour) and `project` for a
ladder kernel's grid on another GPU's SMs (its waves there).

What schema 4 changed from 3: each kernel at each size of a sweep records its traffic model there
(`sweep[].kernels[].model`) and the waves its grid took (`waves`), which schema 3 left to be
rebuilt from the kernel families of the day. What schema 3 changed from 2: a kernel may be the
user's own (`tile_source` "user", its launch in `source`, its check at a ragged shape in `ragged`)
and may have no traffic model (`model` null). What schema 2 changed from 1: `unwritten_elements`
is `nan_or_unwritten_elements`; kernels record `tile_source` (where their tile came from);
`model.smem_bytes` is written; derived figures (`floors`, `verdict`) are no longer stored: they
follow from the rest (`model.roofs.verdict`). Files of schemas 1 to 3 are migrated when read
(`store.parse`, with a note), their missing models filled by whoever reads them with the kernel
families at hand (`store.load`'s `upgrade`, `ladder.upgrade`).

Checks beyond types and ranges use only what the file records (`checks`), never today's ladder
code: kernel names are unique, each kernel's model FLOPs equal the problem's 2*M*N*K and its
intensity FLOPs over GMEM bytes, each rate its FLOPs over its time, each occupancy its warps over
the SM's, each kernel's waves its blocks over the device's SMs x its blocks per SM, the device's
peaks its cores, clocks and bus width, and no rate exceeds what the device can do in the
problem's precision (`roofs.OVER_PEAK`: a kernel at 150x the FP32 peak is a corrupt file, not a
measurement).

Precisions. A run's problem is FP32 (`dtype` "float32") or on the tensor cores ("bf16", "fp16",
"tf32": inputs in that precision, FP32 accumulate, B stored N x K, layout "TN"). Its rates are
checked against, and its floors read against, the roof of that precision: FP32's, or
`device.peaks_gflops["bf16_tensor"]` and its siblings (`model.precision.Precision.key`); a file
whose device records no such peak cannot be checked and is refused. cuBLAS runs in TF32
(`reference.tf32`) only for a TF32 problem.
"""

from __future__ import annotations

import math
import statistics
from typing import Annotated, ClassVar, Literal

from pydantic import Field, PrivateAttr, model_validator

from ..defaults import SCHEMA  # the version, where the command line's help reads it too
from ..errors import UsageError
from ..model.arch import limits_for_cc, parse_arch
from ..model.device import DeviceSpec
from ..model.occupancy import Occupancy
from ..model.problem import Problem
from ..model.roofs import (COMPUTE_LEVEL, OVER_PEAK, ROOF_OF_LEVEL, SHARED_LEVELS, Beaten, Roofs, Verdict, at_least_seen,
                           level_bytes, plain_verdict, verdict)
from ..model.energy import Energy
from ..model.timing import Timing, mark_throttled, paired
from ..model.traffic import CountedTraffic, ModelFigures
from ..model.units import Millis, Rate, Size, figure
from ..model.units import gflops as gflops_of
from ..model.verify import TOLERANCE
from ..model.waves import Waves
from ..model.precision import BY_FILE_DTYPE
from .base import _Model
from .checks import agree, check_device, check_occupancy, check_waves
from .timeline import TimedKernel, Timeline

# no control characters, nor the invisible format ones (bidirectional overrides, zero widths)
# that would reorder or hide a line of a table on a terminal
PRINTABLE = r"^[^\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]+$"
Name = Annotated[str, Field(min_length=1, max_length=64, pattern=PRINTABLE)]
TileSource = Literal["ladder", "flag", "tuned", "built-in", "default", "variant", "user", "shape"]


class _Document(_Model):
    # What reading the file noted (a migration from an older schema), kept beside the document and
    # never written back: `read_notes`.
    _read_notes: list[str] = PrivateAttr(default_factory=list)
    # What the document is, as the document registry (`roofline.documents`) and refusals name it:
    # 'run', 'profile', 'grade' (a `results.store.KIND_NAMES` key).
    kind_name: ClassVar[str] = ""
    # Whether its kernels are the parts of one program step, their times adding up to the step's
    # GPU time (a profile), rather than alternatives that each solve one problem (a run).
    kernels_are_a_step: ClassVar[bool] = False

    @property
    def read_notes(self) -> list[str]:
        """One-line notes on how the file was read (e.g. migrated from schema 3), for the reader to
        show; empty for a file of the current schema."""
        return list(self._read_notes)

    def __eq__(self, other) -> bool:
        # Two documents are equal by what they hold; how each was read (its notes) is not part of it.
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__ and self.__pydantic_extra__ == other.__pydantic_extra__


# The file's name of each input precision (`problem.dtype`) and the model's (`Problem.dtype`).
# The layout each precision's operands are stored in (`model.problem`): FP32 row-major A (M x K)
# and B (K x N); the tensor-core precisions "TN", A M x K and B N x K, both K-contiguous.


class ProblemRecord(_Model):
    """The GEMM solved. FP32 (`dtype` "float32", layout "row-major"): C (m x n) = alpha * A (m x k)
    @ B (k x n) + beta * C. A tensor-core precision ("bf16", "fp16", "tf32"; layout "TN"): B is
    stored n x k and C = alpha * A @ B^T + beta * C, accumulated and stored in FP32."""

    m: Size
    n: Size
    k: Size
    dtype: Literal["float32", "bf16", "fp16", "tf32"] = "float32"
    alpha: float = 1.0
    beta: float = 0.0
    layout: str = "row-major"

    @model_validator(mode="after")
    def _layout(self) -> "ProblemRecord":
        want = BY_FILE_DTYPE[self.dtype].layout
        if self.layout != want:
            raise ValueError(f"its layout is {self.layout!r}, but a {self.dtype} problem is stored {want!r}")
        return self

    @property
    def problem(self) -> Problem:
        """As the model's `Problem`, with its precision ("float32" -> "fp32")."""
        return Problem(self.m, self.n, self.k, BY_FILE_DTYPE[self.dtype].dtype)


class Reference(_Model):
    """cuBLAS on the same problem: median rate and time, with its timing samples."""

    name: str = "cublas"
    via: str = "cupy.matmul"
    tf32: bool = False  # TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32): only for a TF32 problem
    gflops: Rate
    time_ms: Millis
    timing: Timing | None = None
    sm_clock_mhz_before_after: list[int | None] = []
    energy: Energy | None = None  # a loop of its launches, with --energy (`model.energy`)


class RoundsRecord(_Model):
    """How a run's kernels and reference were timed together (`measure.rounds`): the rounds, the
    launches each got per round (`burst`), the highest SM clock any sample saw, the share of it
    below which a sample counts as throttled, the seconds the rounds took, and where each sample's
    clock was read: 'launch' (NVML polled while each launch ran) or 'burst' (before and after each
    burst: files written before the polling)."""

    rounds: Annotated[int, Field(ge=1)]
    burst: Annotated[int, Field(ge=1)]
    top_clock_mhz: Annotated[int, Field(ge=1)] | None = None
    full_clock_share: Annotated[float, Field(gt=0, le=1)] | None = None
    seconds: Annotated[float, Field(ge=0)] | None = None
    clock_read_per: Literal["launch", "burst"] = "burst"


class RaggedRecord(_Model):
    """A user kernel's verification at a problem whose sizes are no multiple of a tile."""

    problem: ProblemRecord
    passed: bool
    rel_error: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    nan_or_unwritten_elements: Annotated[int, Field(ge=0)] = 0
    reason: str | None = None


class KernelRecord(_Model):
    """One kernel of a run, in three parts: compiled (registers, shared and local memory,
    occupancy; null when it did not compile), verified (against cuBLAS), timed (null unless
    verified and timed). `error` says why a kernel stopped short. A user's kernel has its launch
    description in `source` (keys as in its file's header) and `model` null without tiles."""

    name: Name
    summary: str = ""
    template: str = ""
    params: dict[str, int] = {}
    tile_source: TileSource = "ladder"
    threads_per_block: Annotated[int, Field(ge=1, le=1024)]
    dynamic_smem_bytes: Annotated[int, Field(ge=0)] = 0
    registers: Annotated[int, Field(ge=1, le=255)] | None
    static_smem_bytes: Annotated[int, Field(ge=0)] | None
    local_bytes: Annotated[int, Field(ge=0)] | None = None
    compiler: str | None = None  # which compiler built it, and its version: 'nvcc 13.0.88', 'NVRTC 12.9'
    occupancy: Occupancy | None
    driver_active_blocks_per_sm: Annotated[int, Field(ge=0)] | None = None
    verified: bool
    rel_error: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None
    nan_or_unwritten_elements: Annotated[int, Field(ge=0)] | None = None
    error: str | None = None
    gflops: Rate | None
    time_ms: Millis | None
    pct_of_reference: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    timing: Timing | None = None
    sm_clock_mhz_before_after: list[int | None] = []
    energy: Energy | None = None  # a loop of its launches, with --energy (`model.energy`)
    model: ModelFigures | None
    # What Nsight Compute counted for it (bytes per level, FLOPs): in the file as `measured`.
    counted: CountedTraffic | None = Field(None, alias="measured")
    source: dict[str, str] | None = None
    ragged: RaggedRecord | None = None
    waves: Waves | None = None
    timeline: Timeline | None = Field(None, description="its launch over its run, from Nsight Compute's PM "
                                                        "sampling (run --timeline); null without one")

    @property
    def timed(self) -> bool:
        """Verified and timed: the only kernels ever drawn."""
        return self.verified and self.gflops is not None and self.time_ms is not None

    @property
    def user(self) -> bool:
        """The user's own kernel rather than one of the ladder's."""
        return self.tile_source == "user"


class Skipped(_Model):
    """A kernel left out of the run, and why (e.g. cp.async on a GPU older than sm_80)."""

    name: str
    reason: str


class SweepReference(_Model):
    """cuBLAS at one size of a sweep."""

    gflops: Rate
    time_ms: Millis | None = None


class SweepKernel(_Model):
    """One kernel at one size of a sweep: its rate and time there, its traffic model at that size
    (`model`; null for a user kernel without tiles), and the waves its grid took there."""

    name: Name
    gflops: Rate | None
    time_ms: Millis | None = None
    verified: bool
    pct_of_reference: float | None = None
    params: dict[str, int] = {}  # the tile a dispatching kernel chose at this size (else: the run's)
    waves: Waves | None = None  # its waves there
    model: ModelFigures | None = None  # its traffic model at this size (schema 4)

    @property
    def timed(self) -> bool:
        """Verified and timed."""
        return self.verified and self.gflops is not None


class SweepPoint(_Model):
    """Every kernel at one problem size."""

    problem: ProblemRecord
    reference: SweepReference
    kernels: Annotated[list[SweepKernel], Field(min_length=1)]


class TuneSummary(_Model):
    """The outcome of `roofline run --tune`: candidates searched, how many compiled and verified, the
    winning tile and its rate."""

    kernel: str
    candidates: Annotated[int, Field(ge=1)]
    valid: Annotated[int, Field(ge=0)] | None = None
    verified: Annotated[int, Field(ge=1)]
    winner: dict[str, Annotated[int, Field(ge=1)]]
    expression: str
    winner_gflops: Rate

    @model_validator(mode="after")
    def _counts(self) -> "TuneSummary":
        """Each count within the one before it: the candidates, those valid, those verified."""
        if self.valid is not None and self.valid > self.candidates:
            raise ValueError(f"tune.valid: {self.valid} of {self.candidates} candidates")
        if self.verified > (self.valid if self.valid is not None else self.candidates):
            raise ValueError(f"tune.verified: {self.verified}, more than the {self.valid or self.candidates} "
                             "candidates it could verify")
        return self


class Results(_Document):
    """A results file. `kernels` are one problem's; a size sweep adds `sweep` (every size, the
    largest also in `kernels`); a tile search adds `tune`."""

    kind_name: ClassVar[str] = "run"
    kernels_are_a_step: ClassVar[bool] = False  # alternatives, each solving `problem`
    schema_version: Literal[4] = Field(SCHEMA, alias="schema")
    created: str | None = None
    tool: str | None = None
    device: DeviceSpec
    problem: ProblemRecord
    reference: Reference
    kernels: list[KernelRecord]
    skipped: list[Skipped] = []
    sweep: Annotated[list[SweepPoint], Field(min_length=1)] | None = None
    tune: TuneSummary | None = None
    l2: Literal["cold", "warm"] | None = None  # the L2 at each timed launch (None: not recorded)
    timed_in_rounds: RoundsRecord | None = None  # None: each kernel timed on its own (files before rounds)
    _seen: tuple | None = PrivateAttr(default=None)  # (id, (`roofs`, `beaten`)), worked out once
    # the rates the whole file saw, for a run read at one size of its sweep (`sweep_point.at_size`): its
    # ceilings stay the file's, not those of the one size
    _file_rates: dict | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _consistent(self) -> "Results":
        dev, ref = self.device, self.reference
        _check_device(dev)
        problem = self.problem.problem
        peak = _peak(dev, problem)
        flops = problem.flops
        if ref.tf32 and problem.dtype != "tf32":
            raise ValueError(f"reference.tf32: true, but the problem is {self.problem.dtype}; cuBLAS runs TF32 "
                             "tensor cores only for a TF32 problem")
        top = self.timed_in_rounds.top_clock_mhz if self.timed_in_rounds else None
        _check_samples("reference", ref.time_ms, ref.timing, top)
        _rate("reference", ref.gflops, ref.time_ms, flops, peak)
        _check_energy("reference", ref.energy)
        seen = set()
        for i, k in enumerate(self.kernels):
            where = f"kernels[{i}]"
            if k.name in seen or k.name == ref.name:
                raise ValueError(f"{where}.name: {k.name!r} " + ("appears twice" if k.name in seen
                                                                   else "is the reference's name"))
            seen.add(k.name)
            _check_kernel(where, k, flops, dev)
            _check_energy(where, k.energy)
            if k.timed:
                _check_samples(where, k.time_ms, k.timing, top)  # the samples first: they are what was measured
                _rate(where, k.gflops, k.time_ms, flops, peak)
                if k.pct_of_reference is not None:
                    pairs = paired(k.timing, ref.timing) if k.timing and ref.timing else None
                    agree(f"{where}.pct_of_reference", k.pct_of_reference,
                          pairs.pct if pairs else 100 * ref.time_ms / k.time_ms)
            if k.waves is not None:
                check_waves(where, k.waves, dev.sm_count, k.occupancy.active_blocks_per_sm if k.occupancy else None)
        _check_launch(dev, ref, self.kernels)
        _check_sweep(self.sweep or [], problem, dev, self.device.sm_count)
        return self

    @property
    def precision(self) -> str:
        """The key of the compute roof this run's FLOPs are read against (`peaks.PRECISIONS`):
        'fp32', or the tensor-core roof of its precision ('bf16_tensor', 'fp16_tensor',
        'tf32_tensor')."""
        return self.problem.problem.precision_key

    @property
    def compute_level(self) -> str:
        """The name of that roof ('FP32', 'BF16 tensor', ...: `roofs.COMPUTE_LEVEL`)."""
        return COMPUTE_LEVEL[self.precision]

    def peak_gflops(self, measured: bool = False) -> float | None:
        """The compute roof of this run's precision in GFLOP/s: the theoretical peak (for FP32
        `device.peak_fp32_gflops`, else `device.peaks_gflops[precision]`), or with `measured`
        the measured ceiling (None where not measured). The schema has checked that the
        theoretical one is recorded."""
        roof = self.device.roofs.roof(self.precision, measured)
        return None if roof is None or roof.measured != measured else roof.value

    def timed_kernels(self) -> list[TimedKernel]:
        """Its kernels that record a timeline (`run --timeline`), the longest first, as the timeline
        views read them: their work the problem's, in its precision."""
        flops = self.problem.problem.flops
        out = []
        for k in sorted((k for k in self.kernels if k.timeline is not None and k.time_ms), key=lambda k: -k.time_ms):
            dram = k.counted.dram_bytes if k.counted is not None else None
            clocks = [c for c in (k.timing.sm_clock_mhz or ()) if c] if k.timing is not None else []
            out.append(TimedKernel(k.name, k.time_ms, k.timeline, self.precision, k.gflops,
                                   flops / dram if dram else None, self.roofs, k.waves,
                                   timed_mhz=statistics.median(clocks) if clocks else None))
        return out

    @property
    def roofs(self) -> Roofs:
        """The device's roofs with every measured ceiling at least what this file saw at its level
        (`roofs.at_least_seen`; `beaten` lists the ceilings that changed): what every verdict and
        chart of the file reads."""
        return self._at_least_seen()[0]

    @property
    def beaten(self) -> tuple[Beaten, ...]:
        """The measured ceilings a rate in this file went past, and what is read in their place."""
        return self._at_least_seen()[1]

    def _at_least_seen(self) -> tuple[Roofs, tuple[Beaten, ...]]:
        # worked out once per document: keyed by its identity, since model_copy carries private state over
        if self._seen is None or self._seen[0] != id(self):
            self._seen = (id(self), at_least_seen(self.device.roofs, self.seen_rates()))
        return self._seen[1]

    def seen_rates(self) -> dict[str, tuple[float, str, bool]]:
        """The best rate this file measured at each level (level -> (GFLOP/s or GB/s, who, from
        counted bytes); who is 'wgmma_ws', or 'wgmma_ws at 2048x2048x2048' for a sweep's size other
        than the one the file is read at): the FLOP rate of the reference and of every timed kernel in the problem's
        precision, at every size of a sweep; each kernel's bytes per level over its time, counted
        where Nsight Compute counted them, else the model's request counts (GMEM at the L2, SMEM,
        L1), which match the counters to a few percent. Not the model's DRAM bytes, an estimate,
        nor the GMEM requests of a kernel whose L1 serves them (`roofs.verdict`'s 'L1'), nor modelled
        bytes that would have moved faster than their level's theoretical roof (a cache nearer the
        SMs served some: the model overcounts there, the ceiling is not shown low)."""
        best: dict[str, tuple[float, str, bool]] = dict(self._file_rates or {})

        def see(level: str, rate: float | None, by: str, counted: bool = False) -> None:
            if rate and (level not in best or rate > best[level][0]):
                best[level] = (rate, by, counted)

        level, theoretical = self.compute_level, self.device.roofs
        read_at = self.problem.problem.text()
        points = [(self.reference, self.kernels, read_at)] + \
            [(p.reference, p.kernels, p.problem.problem.text()) for p in self.sweep or []]
        for reference, kernels, at in points:
            def who(name: str) -> str:  # a size other than the one the file is read at is named
                return name if at == read_at else f"{name} at {at}"
            see(level, reference.gflops, who("cuBLAS"))
            for k in kernels:
                if not k.timed or not k.time_ms:
                    continue
                busy = k.waves.utilization if k.waves is not None else 1.0  # the SMs its grid kept busy
                see(level, k.gflops / busy, who(k.name))
                for b in level_bytes(k.model, getattr(k, "counted", None)).values():
                    if not b.counted and (b.level == "DRAM" or (b.level == "L2" and k.model.direct)):
                        continue
                    share = 1.0 if b.level in SHARED_LEVELS else busy  # the chip's L2 and DRAM, as their floors
                    rate, roof = b.nbytes / (k.time_ms * 1e6 * share), ROOF_OF_LEVEL[b.level]
                    theory = theoretical.roof(roof, False)
                    if not b.counted and theory is not None and rate > theory.value:
                        continue  # modelled bytes past the level's roof: a cache served some, no rate seen
                    see(roof, rate, who(k.name), b.counted)
        return best

    def verdict(self, k: KernelRecord, measured: bool = True) -> Verdict:
        """The hierarchical reading of kernel `k`: the compute roof of the problem's precision (FP32,
        or its tensor-core roof: `precision`) and every memory level with bytes, against
        the measured roofs where known (at least what the file saw: `roofs`; the theoretical ones
        alone unless `measured`), with Nsight Compute's bytes where counted."""
        flops = self.problem.problem.flops
        return verdict(k.model, self.roofs, k.time_ms, k.counted, measured=measured, flops=flops,
                       waves=k.waves, fits_in_l2=self.fits_in_l2(self.problem.problem), precision=self.precision)

    def model_verdict(self, k: KernelRecord) -> Verdict:
        """`verdict` of kernel `k` from the model's bytes alone, its counted ones left out: what a run
        without `--profile` would read (`render.text.counters_phrase` says where the two differ)."""
        return verdict(k.model, self.roofs, k.time_ms, None, flops=self.problem.problem.flops, waves=k.waves,
                       fits_in_l2=self.fits_in_l2(self.problem.problem), precision=self.precision)

    def fits_in_l2(self, problem: Problem) -> bool:
        """Whether `problem`'s A, B and C fit in the device's L2 together (False where its size is
        not recorded) and the run kept the L2 warm: then even the first reads are L2 hits and no
        DRAM floor of modelled bytes binds. With a cold L2 (flushed before each timed launch, the
        default) the compulsory bytes come from DRAM."""
        return self.l2 == "warm" and self.device.fits_in_l2(problem.working_set_bytes)

    def sweep_verdict(self, point: "SweepPoint", name: str) -> Verdict | None:
        """The reading of kernel `name` at one size of the sweep: the model and waves the file
        records for it there, against the measured roofs and the launch floor, with the time
        measured there. None for a kernel not timed there, or without a model there (a user
        kernel without tiles; a schema 3 file read without the kernel families to fill it)."""
        k = next((x for x in point.kernels if x.name == name), None)
        if k is None or not k.timed or k.model is None:
            return None
        p = point.problem.problem
        time_ms = k.time_ms if k.time_ms is not None else p.flops / (k.gflops * 1e6)
        return verdict(k.model, self.roofs, time_ms, None, measured=True, waves=k.waves,
                       fits_in_l2=self.fits_in_l2(p), precision=self.precision)

    def floors(self, k: KernelRecord) -> Verdict:
        """The plain two-roof reading of kernel `k`: model GMEM bytes against the peak DRAM
        bandwidth, FLOPs against the peak rate of the problem's precision (FP32, or its
        tensor-core roof; the compute floor alone for a kernel without a model)."""
        p = self.problem.problem
        return plain_verdict(k.model, self.device.roofs, k.time_ms, flops=p.flops, waves=k.waves,
                             fits_in_l2=self.fits_in_l2(p), precision=self.precision)


def _peak(dev: DeviceSpec, problem: Problem) -> tuple[str, float]:
    """The name and value (GFLOP/s) of the theoretical compute roof `problem`'s rates are checked
    against: FP32's for an FP32 problem, its tensor-core roof (`device.peaks_gflops`) otherwise.
    Raises ValueError for a device that records no such roof."""
    key = problem.precision_key
    roof = dev.roofs.roof(key, measured=False)
    if roof is None:
        raise ValueError(f"device.peaks_gflops: no {key} peak, so the {problem.dtype.upper()} rates cannot be checked "
                         f"against a {COMPUTE_LEVEL[key]} roof; the file's device lacks its per-precision peaks "
                         "(re-create it with roofline run)")
    return roof.level, roof.value


def _rate(where: str, gflops: float, time_ms: float | None, flops: float, peak: tuple[str, float]) -> None:
    """A measured rate: no faster than the device allows in its precision (`peak`: the roof's
    name and GFLOP/s; `roofs.OVER_PEAK`), and equal to FLOPs over its time."""
    level, value = peak
    if gflops > OVER_PEAK * value:
        raise ValueError(f"{where}.gflops: {gflops:,.0f} GFLOP/s is {gflops / value:,.3g}x the device's {level} peak "
                         f"of {figure(value)} GFLOP/s, which no kernel can reach; the file looks corrupt")
    if time_ms is not None:
        agree(f"{where}.gflops", gflops, gflops_of(flops, time_ms))


def _check_samples(where: str, time_ms: float | None, timing: Timing | None, top: int | None = None) -> None:
    """A recorded time is the median of its recorded samples (`Timing.median_ms`), each sample's
    recorded conditions are one per sample, and each throttle mark is what its reasons and clock
    give (`model.timing.mark_throttled`, against the run's top clock `top` where recorded). Samples
    taken in another process (a user kernel's, in rounds of its own: `rounds` None beside a top)
    were marked against that process's top clock, which the file does not hold: their marks are
    not checked against this one."""
    if time_ms is not None and timing is not None:
        agree(f"{where}.time_ms", time_ms, timing.median_ms, "timing.samples_ms (their median)")
    if timing is not None:
        n = len(timing.samples_ms)
        for key in ("rounds", "sm_clock_mhz", "reasons", "power_w", "throttled"):
            values = getattr(timing, key)
            if values is not None and len(values) != n:
                raise ValueError(f"{where}.timing.{key}: {len(values)} values for {n} samples")
        elsewhere = top is not None and timing.rounds is None
        if timing.throttled is not None and timing.reasons is not None and timing.sm_clock_mhz is not None \
                and not elsewhere:
            clocks = list(timing.sm_clock_mhz)
            if top is not None and max((c for c in clocks if c is not None), default=0) > top:
                raise ValueError(f"{where}.timing.sm_clock_mhz: {max(c for c in clocks if c is not None):,} MHz is "
                                 f"above the run's top clock ({top:,} MHz, timed_in_rounds.top_clock_mhz)")
            marks = mark_throttled(list(timing.reasons), clocks if top is not None else [None] * n, top,
                                   timing.full_clock_share or 1.0)
            for i, (mark, recorded) in enumerate(zip(marks, timing.throttled)):
                # files before the clock-only policy also marked a sample for a reason seen at full clock
                older = recorded and not mark and bool(timing.reasons[i])
                if mark != recorded and not older and (mark or top is not None):
                    raise ValueError(f"{where}.timing.throttled[{i}]: {str(recorded).lower()}, but its reasons "
                                     f"({timing.reasons[i] or 'none'}) and clock ({clocks[i]} MHz) make it "
                                     f"{str(mark).lower()}")


def _check_energy(where: str, e: Energy | None) -> None:
    """An energy record's figures are what its loops give: joules per launch the median of
    `loops_j` (where recorded), and the loops' power over their wall clock per launch the joules
    per launch plus the flush's subtracted ones (within 5 %: the medians of products and of their
    factors differ a little); none negative, the flush's less than the whole."""
    if e is None:
        return
    for name in ("joules_per_launch", "subtracted_j"):
        if not math.isfinite(getattr(e, name)) or getattr(e, name) < 0:
            raise ValueError(f"{where}.energy.{name}: {getattr(e, name)} is not a non-negative number of joules")
    if not (math.isfinite(e.watts) and e.watts > 0 and math.isfinite(e.seconds) and e.seconds > 0 and e.launches >= 1):
        raise ValueError(f"{where}.energy: watts, seconds and launches must be positive (got {e.watts}, {e.seconds}, "
                         f"{e.launches})")
    if e.loops_j:
        agree(f"{where}.energy.joules_per_launch", e.joules_per_launch, statistics.median(e.loops_j),
              "energy.loops_j (their median)")
    whole = e.watts * e.seconds / e.launches
    if e.subtracted_j > whole or abs(e.joules_per_launch + e.subtracted_j - whole) > 0.05 * whole:
        raise ValueError(f"{where}.energy: {e.joules_per_launch:.4g} J per launch and {e.subtracted_j:.4g} J of flush "
                         f"do not add up to the loops' {e.watts:,.0f} W x {e.seconds:.4g} s / {e.launches} launches "
                         f"({whole:.4g} J)")


def _check_device(dev: DeviceSpec) -> None:
    try:
        limits_for_cc(dev.compute_capability)
    except (UsageError, ValueError):
        raise ValueError(f"device.compute_capability: {dev.compute_capability!r} is not a compute capability "
                         "like '9.0' that roofline knows") from None
    check_device(dev)


def _check_kernel(where: str, k: KernelRecord, flops: int, dev: DeviceSpec) -> None:
    m = k.model
    if m is None and not k.user:
        raise ValueError(f"{where}.model: missing; only a user's kernel (tile_source 'user') may have no model")
    if m is not None and abs(m.flops - flops) > 1e-9 * flops:
        raise ValueError(f"{where}.model.flops: {m.flops:g}, but the problem's 2*M*N*K is {flops:g}")
    if m is not None:
        agree(f"{where}.model.arithmetic_intensity", m.arithmetic_intensity, m.flops / m.gmem_bytes)
    if k.verified and k.ragged is not None and not k.ragged.passed:
        raise ValueError(f"{where}.verified: true, but it failed the check at the ragged shape")
    occ = k.occupancy
    if occ is not None:
        try:
            parse_arch(occ.arch)
        except UsageError:
            raise ValueError(f"{where}.occupancy.arch: {occ.arch!r} is not a target roofline knows") from None
        for key, value in (("registers_per_thread", k.registers), ("threads_per_block", k.threads_per_block)):
            if value is not None and getattr(occ, key) != value:
                raise ValueError(f"{where}.occupancy.{key}: {getattr(occ, key)}, but the kernel's is {value}")
        own = dev.limits is not None and occ.arch == dev.arch
        check_occupancy(f"{where}.occupancy", occ, dev.limits.max_warps_per_sm if own else None)
    c = k.counted
    if c is not None and k.time_ms:  # counted bytes no GPU moves in that time (as an imported report is checked)
        for level, moved, peak in (("dram", c.dram_bytes, dev.peak_dram_gbps), ("l2", c.l2_bytes, dev.roofs.l2_gbps)):
            if moved and peak and moved / (k.time_ms * 1e6) > OVER_PEAK * peak:
                raise ValueError(f"{where}.measured.{level}_bytes: {moved:,.0f} bytes in {k.time_ms:g} ms is "
                                 f"{moved / (k.time_ms * 1e6):,.0f} GB/s, above the device's {peak:,.0f}; the file looks "
                                 "corrupt")
    if k.verified and ((k.rel_error is not None and k.rel_error > TOLERANCE) or k.nan_or_unwritten_elements):
        raise ValueError(f"{where}.verified: true, but its relative error {k.rel_error} or "
                         f"{k.nan_or_unwritten_elements} NaN elements fail the check (limit {TOLERANCE:g})")


def _check_launch(dev: DeviceSpec, ref: "Reference", kernels: list[KernelRecord]) -> None:
    """No timed launch may be faster than a fifth of an empty kernel's: timing noise and event
    granularity aside, a real kernel never is (a larger gap is a corrupt file, not a run)."""
    floor = dev.launch_latency_ms
    if floor is None:
        return
    for name, t in [("the reference", ref.time_ms)] + [(k.name, k.time_ms) for k in kernels if k.timed]:
        if t < 0.2 * floor:
            raise ValueError(f"device.launch_latency_ms: {floor:g} ms, but {name} ran in {t:g} ms; an empty kernel "
                             "cannot take longer than a real one; the file looks corrupt")


def _check_sweep(sweep: list[SweepPoint], problem: Problem, dev: DeviceSpec, sm_count: int) -> None:
    sizes = set()
    for i, point in enumerate(sweep):
        p = point.problem.problem
        if p.dtype != problem.dtype:
            raise ValueError(f"sweep[{i}].problem.dtype: {point.problem.dtype}, but the run's problem is "
                             f"{problem.dtype}; a sweep is of one precision")
        peak = _peak(dev, p)
        if p in sizes:
            raise ValueError(f"sweep[{i}].problem: {p.text()} appears twice in the sweep")
        sizes.add(p)
        _rate(f"sweep[{i}].reference", point.reference.gflops, point.reference.time_ms, p.flops, peak)
        names = set()
        for j, k in enumerate(point.kernels):
            if k.name in names:
                raise ValueError(f"sweep[{i}].kernels[{j}].name: {k.name!r} appears twice at this size")
            names.add(k.name)
            if k.timed:
                _rate(f"sweep[{i}].kernels[{j}]", k.gflops, k.time_ms, p.flops, peak)
            _check_sweep_kernel(f"sweep[{i}].kernels[{j}]", k, p.flops, sm_count)
    if sweep and problem not in sizes:
        raise ValueError(f"problem: {problem.text()} is not among the sweep's sizes")


def _check_sweep_kernel(where: str, k: SweepKernel, flops: int, sm_count: int) -> None:
    """A kernel at one size of a sweep: its model there is of that size's problem (its FLOPs the
    problem's 2*M*N*K, its intensity FLOPs over GMEM bytes), and its waves there agree with their
    blocks and slots on this device's SMs (`checks.check_waves`). The tile it records is the
    file's own word: it is not checked against today's kernel families."""
    m = k.model
    if m is not None and abs(m.flops - flops) > 1e-9 * flops:
        raise ValueError(f"{where}.model.flops: {m.flops:g}, but this size's 2*M*N*K is {flops:g}")
    if m is not None:
        agree(f"{where}.model.arithmetic_intensity", m.arithmetic_intensity, m.flops / m.gmem_bytes)
    if k.waves is not None:
        check_waves(where, k.waves, sm_count, None)


def json_schema() -> dict:
    """The JSON Schema of a results file (schema 4), for other tools."""
    return Results.model_json_schema(by_alias=True)
