"""The profile results document: every kernel of a program as Nsight Compute counted it, each
read against the roof of its own precision (`"kind": "profile"`).

Per kernel (launches of one kernel at one configuration, grouped): `name` (a name people
recognise, `nsight.names`) and `demangled`, `launches`, `time_ms` (total), `median_ms`,
`time_share` (of the profiled GPU time, 0..1), `precision` and `tensor_core`, `flops` per
precision key (`model.peaks.PRECISIONS`), `gflops` (the dominant precision's rate), `bytes`
(`dram`, `l2`, `l1`, `smem`), grid, block, registers, shared memory, the theoretical `occupancy`
from the project's calculator, the `achieved_occupancy` ncu measured, the SM clock the kernel
ran at (`clock_mhz`), the replay `passes` ncu took, the DRAM bytes read and written apart
(`dram_read_bytes`, `dram_write_bytes`) and the launches' places in the profiled launch sequence
(`launch_order`) where the profile recorded them (null in profiles made before), and the provenance of every figure:
`counted` (figure -> metric), `derived` (figure -> formula over metrics) and `missing` (figure ->
where to get it). A figure the report lacks is absent (or null), never zero. The binding roof and
how far below it a kernel runs are derived (`verdict`), never stored.

Units: ms, bytes, GFLOP/s (GOP/s for INT8), MHz, fractions 0..1.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Annotated, ClassVar, Literal

from pydantic import Field, PrivateAttr, model_validator

from ..model.device import DeviceSpec
from ..nsight.launches import KernelGroup, precision_key
from ..model.occupancy import Occupancy
from ..model.peaks import NO_PRECISION, PRECISION_NAMES, PRECISIONS, TENSOR, UNKNOWN_PRECISION
from ..model.roofs import (COMPUTE_LEVEL, OVER_PEAK, ROOF_OF_LEVEL, SHARED_LEVELS, Beaten, Roofs, Verdict, at_least_seen,
                           level_bytes, verdict)
from ..model.traffic import CountedTraffic
from ..model.units import Count, Millis
from ..model.waves import Waves, waves_of
from .checks import check_device, check_occupancy
from .schema import PRINTABLE, _Document, _Model
from .timeline import TimedKernel, Timeline, timeline_of

# A profile's own schema version: it did not change when a run's went to 4.
PROFILE_SCHEMA = 3

Precision = Literal[PRECISION_NAMES + (NO_PRECISION, UNKNOWN_PRECISION)]  # type: ignore[valid-type]
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Dim3 = Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=3, max_length=3)]
LEVEL_KEYS = ("dram", "l2", "l1", "smem")
WORK = {"fp64": ("fp64",), "fp32": ("fp32",), "fp16": ("fp16",), "tensor": TENSOR}


class ProfiledKernel(_Model):
    """One kernel at one configuration, its launches summed."""

    name: Annotated[str, Field(min_length=1, pattern=PRINTABLE)]
    demangled: str
    launches: Annotated[int, Field(ge=1)]
    time_ms: Millis
    median_ms: Millis
    time_share: Fraction
    precision: Precision
    tensor_core: bool
    flops: dict[Literal[PRECISIONS], Count] = {}  # type: ignore[valid-type]
    gflops: Annotated[float, Field(ge=0, le=1e8, allow_inf_nan=False)] | None = None
    bytes: dict[Literal[LEVEL_KEYS], Count] = {}  # type: ignore[valid-type]
    bank_conflicts: Count | None = None
    grid: Dim3 | None = None
    block: Dim3 | None = None
    threads_per_block: Annotated[int, Field(ge=1, le=1024)] | None = None
    registers: Annotated[int, Field(ge=0, le=255)] | None = None
    static_smem_bytes: Annotated[int, Field(ge=0)] | None = 0
    dynamic_smem_bytes: Annotated[int, Field(ge=0)] | None = 0
    occupancy: Occupancy | None = None
    achieved_occupancy: Fraction | None = None
    clock_mhz: Annotated[float, Field(gt=0, le=1e4)] | None = Field(
        None, description="the SM clock the launches ran at (time-weighted), MHz; its roofs are read at it")
    passes: Annotated[int, Field(ge=1)] | None = Field(None, description="replay passes ncu took for one launch")
    counted: dict[str, str] = Field({}, description="figure -> the metric (or counts added up) it was read from")
    derived: dict[str, str] = Field({}, description="figure -> the formula over metrics it was derived by "
                                                    "(a rate times a time or cycles)")
    missing: dict[str, str] = Field({}, description="figure the report lacks -> the ncu option that brings it")
    notes: list[str] = Field([], description="remarks on its counts (tensor inputs without a roof, sparsity)")
    dram_read_bytes: Count | None = Field(
        None, description="DRAM bytes read, over its launches (dram__bytes_read.sum or a stand-in); null where "
                          "not counted apart from those written")
    dram_write_bytes: Count | None = Field(
        None, description="DRAM bytes written, over its launches (dram__bytes_write.sum or a stand-in); null "
                          "where not counted apart from those read")
    launch_order: list[Annotated[int, Field(ge=0)]] | None = Field(
        None, description="the 0-based places of its launches in the profiled launch sequence (the report's "
                          "launch ID order), ascending; null where the profile did not record them")
    timeline: Timeline | None = Field(
        None, description="its longest launch over its run, from Nsight Compute's PM sampling (--timeline, or a "
                          "report made with --section PmSampling); null without one")

    @property
    def dominant(self) -> str | None:
        """The precision key of the kernel's `precision` and `tensor_core` ('bf16_tensor', 'fp32';
        None for a data-movement kernel or one whose work was not counted): the work its rate and
        intensities count."""
        return precision_key(self.precision, self.tensor_core)

    @property
    def credible_flops(self) -> dict[str, float]:
        """The operations its verdict reads: every precision it counted, but CUDA-core FP16 only
        when that is the kernel's own (elsewhere ncu's HFMA count holds register moves,
        `nsight.launches`); none for a data-movement kernel."""
        if self.dominant is None:
            return {}
        return {k: v for k, v in self.flops.items() if k != "fp16" or self.dominant == "fp16"}

    @property
    def traffic(self) -> CountedTraffic:
        """The bytes as the model's `CountedTraffic` (DRAM, L2, L1, shared memory)."""
        b = self.bytes
        return CountedTraffic(dram_bytes=b.get("dram"), l2_bytes=b.get("l2"), l1_bytes=b.get("l1"),
                              smem_bytes=b.get("smem"), bank_conflicts=self.bank_conflicts)

    def uncounted(self, device: DeviceSpec) -> list[str]:
        """The kinds of work ('fp64', 'fp32', 'fp16'; 'tensor' when no tensor-core operation was
        counted, 'other tensor' when some input types were; of those `device` has; 'fp32 ADD/MUL'
        and the like where some instruction kinds of a precision were not counted) and the memory
        levels ('dram', 'l2', 'l1', 'smem') the report did not count for this kernel: a roof for
        them cannot be placed, or its floor is only a lower bound."""
        has = set(device.peaks_gflops or {"fp32": device.peak_fp32_gflops})
        out = []
        for kind, keys in WORK.items():
            lacking = [k for k in keys if k in has and k in self.missing]
            if lacking:
                out.append("other tensor" if kind == "tensor" and len(lacking) < len([k for k in keys if k in has])
                           else kind)
        out += [m for m in self.missing if " " in m and m.split(" ")[0] in has]  # counted in part
        return out + [level for level in LEVEL_KEYS if level in self.missing]

    def intensity(self, level: str) -> float | None:
        """FLOP (of the dominant precision) per byte at `level` (`level_intensity`); None without
        work or bytes."""
        return level_intensity(self.flops.get(self.dominant) if self.dominant else None, self.bytes, level)


def level_intensity(flops: float | None, nbytes: dict[str, float], level: str) -> float | None:
    """`flops` per byte of `nbytes` (bytes by level key) at `level` ('dram', 'l2', 'l1'; 'l1' counts
    the L1 and shared-memory bytes, which share one data path); None without work or bytes."""
    moved = nbytes.get(level, 0) + (nbytes.get("smem", 0) if level == "l1" else 0)
    return flops / moved if flops and moved else None


class CommandEnergy(_Model):
    """The GPU's energy over one unprofiled run of the profiled command (`profile --energy`): NVML's
    energy counter read before it started and after it ended (start-up and idle included), the
    seconds between, and the run's exit code. Per kernel it cannot be had: under ncu each kernel
    is replayed, serialised, with its counters collected."""

    joules: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    seconds: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    exit_code: int | None = None

    @property
    def watts(self) -> float:
        """The average board power over the run."""
        return self.joules / self.seconds


class OwnedWork(_Model):
    """The launches of one kernel (`kernel`: its place in the document's `kernels`, from 0) owned by
    one op in one phase and module, summed: what `show --by op` and `--by module` add up."""

    op: Annotated[str, Field(min_length=1)]
    phase: Literal["forward", "backward", "optimizer"]
    module: str | None = None
    launcher: str
    kernel: Annotated[int, Field(ge=0)]
    launches: Annotated[int, Field(ge=1)]
    time_ms: Millis
    flops: dict[Literal[PRECISIONS], Count] = {}  # type: ignore[valid-type]
    bytes: dict[Literal[LEVEL_KEYS], Count] = {}  # type: ignore[valid-type]
    launch_order: list[Annotated[int, Field(ge=0)]] | None = Field(
        None, description="these launches' 0-based places in the report's launch sequence, ascending (null in "
                          "profiles made before they were recorded): which op ran right after which")
    program_ms: Millis | None = Field(
        None, description="these launches' GPU time in the program as a PyTorch profiler trace of the same step "
                          "recorded it (its kernels' durations, summed; no replay, no cache flush): the time the "
                          "profiler gives the op. Null without a trace, or where a launch matched no kernel of it")


class Attribution(_Model):
    """Who launched the profiled kernels (`traces.nvtx`, `traces.ops`): `source` says from what
    (the NVTX ranges the profile recorded, or a PyTorch profiler trace), `owned` holds the owned
    launches summed per op, phase, module and kernel; launches without an owner are in no row."""

    source: str
    owned: list[OwnedWork] = []
    notes: list[str] = []
    program_source: str | None = Field(None, description="where each launch's time in the program came from (a "
                                                         "PyTorch profiler trace of the same step); null without one")

    @property
    def time_ms(self) -> float:
        """GPU time of the owned launches, ms."""
        return sum(w.time_ms for w in self.owned)

    @property
    def program_ms(self) -> float | None:
        """GPU time of the owned launches in the program (`OwnedWork.program_ms` summed), ms; None
        where any row lacks it."""
        times = [w.program_ms for w in self.owned]
        return sum(times) if times and all(t is not None for t in times) else None


class ProfileResults(_Document):
    """A profile of one program (or an imported report): the device, how it was profiled, and its kernels by
    total time."""

    kind_name: ClassVar[str] = "profile"
    kernels_are_a_step: ClassVar[bool] = True  # its kernels add up to `total_time_ms`
    schema_version: Literal[3] = Field(PROFILE_SCHEMA, alias="schema")
    kind: Literal["profile"] = "profile"
    created: str | None = None
    tool: str | None = None
    device: DeviceSpec
    command: list[str] | None = None
    report: str | None = None
    read_with: str = ""
    kernel_regex: str | None = None
    launch_skip: Annotated[int, Field(ge=0)] = 0
    launch_count: Annotated[int, Field(ge=1)] | None = None
    from_start: bool = True
    launches_profiled: Annotated[int, Field(ge=1)]
    exit_code: int | None = None
    total_time_ms: Millis
    command_energy: CommandEnergy | None = None  # profile --energy: the GPU's energy over an unprofiled run
    kernels: Annotated[list[ProfiledKernel], Field(min_length=1)]
    attribution: Attribution | None = Field(None, description="the op, phase and module that launched each kernel, "
                                                              "where the profile recorded them (profile --ops)")
    notes: list[str] = []
    # reports made apart (each its own program or process) whose launches the file holds together;
    # more than one: the kernels' times add up to no one program's step
    programs: Annotated[int, Field(ge=1)] = 1
    _seen: tuple | None = PrivateAttr(default=None)  # (id, best rate per level), worked out once

    @model_validator(mode="after")
    def _consistent(self) -> "ProfileResults":
        check_device(self.device)
        launches = sum(k.launches for k in self.kernels)
        if launches != self.launches_profiled:
            raise ValueError(f"launches_profiled: {self.launches_profiled}, but the kernels hold {launches}")
        total = sum(k.time_ms for k in self.kernels)
        if abs(total - self.total_time_ms) > 1e-6 * total + 1e-9:
            raise ValueError(f"total_time_ms: {self.total_time_ms:g}, but the kernels add up to {total:g}")
        places: set[int] = set()
        for i, k in enumerate(self.kernels):
            if abs(k.time_share - k.time_ms / total) > 1e-6:
                raise ValueError(f"kernels[{i}].time_share: {k.time_share:g}, but its time gives {k.time_ms / total:g}")
            _check_kernel(f"kernels[{i}]", k, self.device)
            if k.launch_order is not None:
                if (len(k.launch_order) != k.launches or k.launch_order != sorted(set(k.launch_order))
                        or places & set(k.launch_order)):
                    raise ValueError(f"kernels[{i}].launch_order: {len(k.launch_order)} places for {k.launches} "
                                     "launches, or places out of order or taken by another launch")
                places |= set(k.launch_order)
        if self.attribution is not None:
            owned: dict[int, int] = {}
            for i, w in enumerate(self.attribution.owned):
                if w.kernel >= len(self.kernels):
                    raise ValueError(f"attribution.owned[{i}].kernel: {w.kernel}, but there are {len(self.kernels)} "
                                     "kernels")
                owned[w.kernel] = owned.get(w.kernel, 0) + w.launches
            over = [i for i, n in owned.items() if n > self.kernels[i].launches]
            if over:
                raise ValueError(f"attribution: more launches of kernels[{over[0]}] owned than were profiled")
            if self.attribution.time_ms > total * (1 + 1e-6) + 1e-9:
                raise ValueError(f"attribution: {self.attribution.time_ms:g} ms owned, more than the "
                                 f"{total:g} ms profiled")
        return self

    @property
    def cap_reached(self) -> bool:
        """True when as many launches were profiled as the cap allowed: later ones were not."""
        return self.launch_count is not None and self.launches_profiled >= self.launch_count

    def roofs(self, k: ProfiledKernel) -> Roofs:
        """The ceilings kernel `k` is read against: at the SM clock it ran at where the report
        recorded one (`DeviceSpec.roofs_at`), every measured ceiling at least the best rate this
        profile counted at its level (`roofs.at_least_seen`, as a run's: `seen_rates`), and without
        the launch floor: Nsight Compute's duration leaves the launch out, so an empty kernel's
        event-timed launch is no floor for it."""
        return _without_launch(at_least_seen(self.device.roofs_at(k.clock_mhz), self.seen_rates())[0])

    @property
    def beaten(self) -> tuple[Beaten, ...]:
        """The measured ceilings (at the device's own clocks) a rate this profile counted went past,
        and what is read in their place."""
        return at_least_seen(self.device.roofs, self.seen_rates())[1]

    def seen_rates(self) -> dict[str, tuple[float, str, bool]]:
        """The best rate this profile counted at each level (level -> (GFLOP/s or GB/s, the kernel,
        True: counted)): each kernel's credited FLOPs per precision and counted bytes per level over
        its time, over the SMs its grid kept busy except at the L2 and the DRAM, which serve the whole
        chip (as the floors are read, `roofs.verdict`). A rate Nsight Compute counted on this card
        is at most the ceiling of its level."""
        if self._seen is None or self._seen[0] != id(self):
            best: dict[str, tuple[float, str, bool]] = {}

            def see(level: str, rate: float, by: str) -> None:
                if rate > 0 and (level not in best or rate > best[level][0]):
                    best[level] = (rate, by, True)

            for k in self.kernels:
                if not k.time_ms:
                    continue
                waves = self.waves(k)
                busy = waves.utilization if waves is not None else 1.0
                for key, flops in k.credible_flops.items():
                    if key in COMPUTE_LEVEL:
                        see(COMPUTE_LEVEL[key], flops / (k.time_ms * 1e6 * busy), k.name)
                for b in level_bytes(None, k.traffic).values():
                    share = 1.0 if b.level in SHARED_LEVELS else busy
                    see(ROOF_OF_LEVEL[b.level], b.nbytes / (k.time_ms * 1e6 * share), k.name)
            self._seen = (id(self), best)
        return self._seen[1]

    def verdict(self, k: ProfiledKernel, measured: bool = True) -> Verdict:
        """Kernel `k` against the roof of each precision it counted and each memory level it moved
        bytes through, measured roofs where known (the theoretical ones alone unless `measured`), at
        its clock (`roofs`): the same reading as `Results.verdict` on what ncu counted. A roof whose
        data the report lacks is not placed."""
        return verdict(None, self.roofs(k), k.time_ms, k.traffic, measured=measured,
                       flops_by_precision=k.credible_flops, waves=self.waves(k))

    def nominal_verdict(self, k: ProfiledKernel) -> Verdict:
        """`verdict` against the nominal roofs (the device's clocks, not the kernel's), each measured
        ceiling at least what the profile counted (`roofs`)."""
        return verdict(None, _without_launch(at_least_seen(self.device.roofs, self.seen_rates())[0]), k.time_ms,
                       k.traffic, measured=True,
                       flops_by_precision=k.credible_flops, waves=self.waves(k))

    def nominal_clock_mhz(self, level: str) -> float | None:
        """The clock the nominal roof of `level` assumes ('BF16 tensor': the tensor clock; other
        compute levels and SMEM/L1: the SM clock); None for DRAM and L2, whose roofs do not follow
        the SM clock."""
        if level in ("DRAM", "L2"):
            return None
        return _nominal_clock(self.device, "tensor" in level and level != "FP64 tensor")

    def timed_kernels(self) -> list[TimedKernel]:
        """Its kernels that record a timeline, the longest first, as the timeline views read them."""
        shared = Counter(k.name for k in self.kernels)
        return [TimedKernel(k.name, k.time_ms, k.timeline, k.dominant, k.gflops, k.intensity("dram"), self.roofs(k),
                            self.waves(k), k.clock_mhz,
                            launch_label(k.name, k.grid, k.block) if shared[k.name] > 1 else k.name)
                for k in self.kernels if k.timeline is not None]

    def waves(self, k: ProfiledKernel) -> Waves | None:
        """The waves kernel `k`'s grid takes on this device at its theoretical occupancy (None
        without a grid or an occupancy)."""
        occ = k.occupancy
        return waves_of(tuple(k.grid), self.device.sm_count, occ.active_blocks_per_sm) if occ and k.grid else None

    def missing(self) -> dict[str, list[int]]:
        """Each figure the report lacks (of those the device has a roof or use for), with the
        indices of the kernels that lack it, longest first: what the output must say is not there."""
        has = set(self.device.peaks_gflops or {})
        out: dict[str, list[int]] = {}
        for i, k in enumerate(self.kernels):
            for what in k.missing:
                key = what.split(" ")[0]
                if key in PRECISIONS and has and key not in has:
                    continue  # a precision this GPU does not have
                out.setdefault(what, []).append(i)
        return out


def launch_label(name: str, grid, block) -> str:
    """`name` with its launch configuration ('name [256x50x1 blocks of 128x1x1]'), as the tables tell
    apart kernels that share a name; `name` alone without a grid and a block. `LAUNCH_LABEL` reads
    the suffix back."""
    if not grid or not block:
        return name
    return f"{name} [{'x'.join(map(str, grid))} blocks of {'x'.join(map(str, block))}]"


LAUNCH_LABEL = re.compile(r" \[\d+x\d+x\d+ blocks of \d+x\d+x\d+\]$")  # the suffix `launch_label` adds


def _nominal_clock(device: DeviceSpec, tensor: bool) -> float | None:
    """The clock, MHz, the device's nominal tensor-core (`tensor`) or CUDA-core roofs assume."""
    return (device.tensor_clock_mhz if tensor else None) or device.peak_clock_mhz or device.max_sm_clock_mhz


def _without_launch(roofs: Roofs) -> Roofs:
    return replace(roofs, launch_ms=None)


def _check_kernel(where: str, k: ProfiledKernel, device: DeviceSpec) -> None:
    """A kernel's figures must agree with each other and stay within what the device can do."""
    if k.precision not in (NO_PRECISION, UNKNOWN_PRECISION) and k.dominant is None:
        raise ValueError(f"{where}.precision: {k.precision!r} with tensor_core {str(k.tensor_core).lower()} is not "
                         "a precision any GPU runs")
    if k.precision in (NO_PRECISION, UNKNOWN_PRECISION) and (k.tensor_core or k.gflops is not None):
        raise ValueError(f"{where}: precision {k.precision!r} (no floating-point work counted) with a rate or "
                         "tensor_core true")
    if k.precision == UNKNOWN_PRECISION and not k.missing:
        raise ValueError(f"{where}.precision: 'unknown', but no figure is missing")
    if k.dominant is not None:
        work = k.flops.get(k.dominant, 0.0)
        if not work or k.gflops is None:
            raise ValueError(f"{where}.flops: no {k.dominant} operations counted for a {k.precision} kernel")
        rate = work / (k.time_ms * 1e6)
        if abs(k.gflops - rate) > 1e-3 * rate:
            raise ValueError(f"{where}.gflops: {k.gflops:,.6g}, but its {k.dominant} operations over its time give "
                             f"{rate:,.6g}; the file looks hand-edited or corrupt")
        peak = (device.peaks_gflops or {}).get(k.dominant)
        nominal = _nominal_clock(device, k.dominant in TENSOR and k.dominant != "fp64_tensor")
        if peak and k.clock_mhz and nominal:
            peak *= max(1.0, k.clock_mhz / nominal)
        if peak and k.gflops > OVER_PEAK * peak:
            raise ValueError(f"{where}.gflops: {k.gflops:,.0f} is {k.gflops / peak:.3g}x the device's {k.dominant} peak "
                             f"of {peak:,.0f} GFLOP/s, which no kernel can reach; the file looks corrupt")
    dram = k.bytes.get("dram")
    for way in ("read", "write"):
        part = getattr(k, f"dram_{way}_bytes")
        if part is not None and dram is not None and part > dram * 1.01 + 1:
            raise ValueError(f"{where}.dram_{way}_bytes: {part:,.0f} is more than all its DRAM bytes ({dram:,.0f})")
    if k.median_ms > k.time_ms * (1 + 1e-9):
        raise ValueError(f"{where}.median_ms: {k.median_ms:g} is more than the {k.launches} launches' total {k.time_ms:g}")
    threads = k.block[0] * k.block[1] * k.block[2] if k.block else None
    if threads != k.threads_per_block:
        raise ValueError(f"{where}.threads_per_block: {k.threads_per_block}, but its block {k.block} has {threads}")
    occ = k.occupancy
    if occ is not None and (k.registers is None or occ.registers_per_thread != max(1, k.registers)
                            or occ.threads_per_block != threads):
        raise ValueError(f"{where}.occupancy: computed for {occ.registers_per_thread} registers and "
                         f"{occ.threads_per_block} threads, but the kernel has {k.registers} and {threads}")
    if occ is not None:
        own = device.limits is not None and occ.arch == device.arch
        check_occupancy(f"{where}.occupancy", occ, device.limits.max_warps_per_sm if own else None)
    for level, peak in (("dram", device.peak_dram_gbps), ("l2", device.roofs.l2_gbps)):
        moved = k.bytes.get(level)
        if moved and peak and moved / (k.time_ms * 1e6) > OVER_PEAK * peak:
            raise ValueError(f"{where}.bytes.{level}: {moved:,.0f} bytes in {k.time_ms:g} ms is "
                             f"{moved / (k.time_ms * 1e6):,.0f} GB/s, above the device's {peak:,.0f}; the file looks corrupt")


# A kernel's SM clock read more than this above the device's maximum is no clock it ran at: ncu's
# elapsed cycles per second of a launch of a few microseconds (seen on the H200: 2,081 to 2,257 MHz
# for 2-5 us kernels of a Llama step, whose GPU tops out at 1,980 MHz).
CLOCK_OVER_MAX = 1.03


def kernel_from_group(g: KernelGroup, name: str, total_ms: float, occupancy: Occupancy | None,
                      device: DeviceSpec) -> ProfiledKernel:
    """A `ProfiledKernel` named `name` from launches grouped by `nsight.launches.group`, its
    precision read knowing which of `device`'s precisions the report did not count."""
    x = g.first
    has = list(device.peaks_gflops or {"fp32": device.peak_fp32_gflops})
    dominant = g.dominant
    flops = g.flops
    rate = flops[dominant] / (g.time_ms * 1e6) if dominant else None
    sources, derived = g.sources, set(g.derived)
    clock, notes = g.sm_clock_hz, list(g.notes)
    top = device.max_sm_clock_mhz
    if clock and top and clock / 1e6 > CLOCK_OVER_MAX * top:  # elapsed cycles over a launch too short to time them
        notes.append(f"its SM clock reads {clock / 1e6:,.0f} MHz, above {device.name}'s maximum of {top:,.0f} MHz "
                     "(a launch too short for its elapsed cycles over time): its roofs are read at the maximum")
        clock = top * 1e6
    return ProfiledKernel(
        name=name, demangled=x.demangled, launches=g.count, time_ms=g.time_ms, median_ms=g.median_ms,
        time_share=g.time_ms / total_ms, precision=g.precision(g.uncounted(has)),
        tensor_core=bool(dominant and "tensor" in dominant),
        flops=flops, gflops=rate, bytes={k: v for k, v in g.nbytes.items() if k in LEVEL_KEYS},
        bank_conflicts=sum(b for b in (y.bank_conflicts for y in g.launches) if b is not None)
        if any(y.bank_conflicts is not None for y in g.launches) else None,
        grid=list(x.grid) if x.grid else None, block=list(x.block) if x.block else None,
        threads_per_block=x.threads_per_block, registers=x.registers,
        static_smem_bytes=x.static_smem_bytes, dynamic_smem_bytes=x.dynamic_smem_bytes, occupancy=occupancy,
        achieved_occupancy=min(1.0, g.achieved_occupancy) if g.achieved_occupancy is not None else None,
        clock_mhz=clock / 1e6 if clock else None, passes=g.passes,
        counted={k: v for k, v in sources.items() if k not in derived},
        derived={k: v for k, v in sources.items() if k in derived},
        missing={k: v for k, v in g.missing.items() if k in has or k not in TENSOR}, notes=notes,  # no roof: not missed
        dram_read_bytes=g.dram_read_bytes, dram_write_bytes=g.dram_write_bytes, launch_order=g.launch_order,
        timeline=timeline_of(g, device),
    )
