"""The roofline's arithmetic in one place: roofs per memory level and compute unit, the ridge
point, floors, and the verdict (which roof binds a kernel and how far below it the kernel runs),
as data. Sentences are written by the renderers (`render.text`), never here.

Roofs (theoretical; each may also be measured, `measure.ceilings`):
  FP32  FP32 cores x 2 FLOP per FMA x max SM clock (NVML: nvmlDeviceGetNumGpuCores, max clocks)
  DRAM  2 transfers per clock x max memory clock x bus width / 8 (NVML; the bus width is read:
        the H200 reports 6016 bits, not 6144)
  SMEM  SMs x 32 banks x 4 bytes x SM clock (CUDA programming guide, "Shared Memory": 32 banks of
        4 bytes per clock; 128 B/clock/SM in the architecture whitepapers). L1 shares this path.
  L2    per-clock L2 bytes x SM clock where known (`peaks.memory_peaks`).
  Other precisions (FP64, FP16, the tensor-core ones) per SM per clock x SMs x clock
        (`peaks.compute_peaks`); a profiled kernel is read against the roof of each precision it
        uses, and the slowest of those floors is its compute floor.

A kernel's floor at a level is the time its bytes (or FLOPs) take at that level's roof; the
highest floor binds: no implementation of this traffic runs faster. Bytes are the model's
(`traffic.ModelFigures`) or, for a profiled kernel, what Nsight Compute counted
(`traffic.CountedTraffic`), each read against the level that serves it: the model's GMEM bytes
are the requests the L2 serves (the L2 roof), its DRAM bytes the compulsory bytes and the L2's
misses (`dram`, the DRAM roof), its SMEM and L1 bytes the shared-memory data path's. Seed lesson
000 reads a kernel with two roofs by hand: 137.4 GFLOP at 56.3 TFLOP/s is 2.44 ms; 4.29 GB at
960 GB/s is 4.47 ms; the kernel ran 6.996 ms, 1.56x its memory floor. Here those 4.29 GB are L2
requests: at the H200's 15,354 GB/s L2 they take 0.28 ms, and the 0.41 GB its waves fetch from
DRAM 0.09 ms at 4,800 GB/s, so FP32 (2.05 ms at 66,908 GFLOP/s) binds.

A measured ceiling is a lower bound on what a level sustains. Where a rate the same file
measured went past one (`at_least_seen`), the ceiling is raised to that rate, never above its
level's theoretical roof (a rate measured on this card is at most its ceiling; the measurement
was low), and a note says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .traffic import CountedTraffic, ModelFigures
from .units import ms_at, per_clock_giga
from .waves import Waves

SMEM_BANKS = 32
SMEM_BANK_BYTES = 4
MEMORY_LEVELS = ("DRAM", "L2", "SMEM", "L1")
SHARED_LEVELS = ("DRAM", "L2")  # served to the whole chip: their floors are not scaled to the SMs a grid keeps busy
ROOF_OF_LEVEL = {"DRAM": "DRAM", "L2": "L2", "SMEM": "SMEM", "L1": "SMEM"}  # L1 and shared memory share a data path
LAUNCH = "launch"  # the floor of an empty kernel's launch: a kernel near it is launch-bound
# A rate or bandwidth (a kernel's, or a ceiling measured on the device) above this many times the
# theoretical peak it is read against is impossible: a results file holding one is corrupt. The
# margin covers a clock a little above the nominal one and timing granularity, nothing more.
OVER_PEAK = 1.1
# Compute levels by precision key (`peaks.PRECISIONS`): the name a floor and a roof carry.
COMPUTE_LEVEL = {"fp64": "FP64", "fp32": "FP32", "fp16": "FP16", "fp64_tensor": "FP64 tensor",
                 "fp16_tensor": "FP16 tensor", "bf16_tensor": "BF16 tensor", "tf32_tensor": "TF32 tensor",
                 "fp8_tensor": "FP8 tensor", "fp4_tensor": "FP4 tensor", "int8_tensor": "INT8 tensor"}


def dram_gbps(mem_clock_mhz: float, bus_width_bits: int) -> float:
    """Peak DRAM bandwidth in GB/s: 2 transfers per clock x clock (MHz) x bus width (bits) / 8.
    H200: 2 x 3201 MHz x 6016 bit / 8 = 4814 GB/s."""
    return 2 * per_clock_giga(bus_width_bits / 8, mem_clock_mhz)


def fp32_gflops(cores: int, sm_clock_mhz: float) -> float:
    """Peak FP32 rate in GFLOP/s: cores x 2 FLOP per FMA x SM clock (MHz).
    H200: 16896 x 2 x 1980 MHz = 66,908 GFLOP/s."""
    return per_clock_giga(2 * cores, sm_clock_mhz)


def smem_gbps(sm_count: int, sm_clock_mhz: float) -> float:
    """Shared-memory bandwidth of the whole GPU in GB/s: SMs x 32 banks x 4 B x clock (MHz).
    H200: 132 x 32 x 4 B x 1980 MHz = 33,454 GB/s."""
    return per_clock_giga(sm_count * SMEM_BANKS * SMEM_BANK_BYTES, sm_clock_mhz)


def ridge_point(compute_gflops: float, memory_gbps: float) -> float:
    """Arithmetic intensity (FLOP/byte) at which a memory roof meets a compute roof."""
    return compute_gflops / memory_gbps


def attainable_gflops(ai: float, compute_gflops: float, memory_gbps: float) -> float:
    """The roofline: min(compute roof, AI x bandwidth), in GFLOP/s for AI in FLOP/byte."""
    return min(compute_gflops, ai * memory_gbps)


@dataclass(frozen=True)
class Roof:
    """One ceiling: `level` is a compute level ('FP32', 'BF16 tensor', ...: value in GFLOP/s) or a
    memory level ('DRAM', 'L2', 'SMEM': value in GB/s)."""

    level: str
    value: float
    measured: bool
    seen: bool = False  # a measured ceiling raised to the best rate its file saw (`at_least_seen`)
    # where a measured ceiling is another measurement's, not its own ('FP16 cuBLAS': a BF16 tensor ceiling
    # read from cuBLAS's FP16 product, in files measured before BF16 was: `device.DeviceSpec.roofs`)
    borrowed: str | None = None


@dataclass(frozen=True)
class Roofs:
    """A device's ceilings: theoretical FP32 and DRAM always, SMEM when the SM count and clock are
    known, L2 and the other precisions (`compute`: level name -> GFLOP/s) where known, and the
    measured ones (FP32, DRAM, L2, SMEM, `measured_compute`) once measured."""

    fp32_gflops: float
    dram_gbps: float
    smem_gbps: float | None = None
    measured_fp32_gflops: float | None = None
    measured_dram_gbps: float | None = None
    l2_gbps: float | None = None
    measured_l2_gbps: float | None = None
    measured_smem_gbps: float | None = None
    compute: tuple[tuple[str, float], ...] = ()
    measured_compute: tuple[tuple[str, float], ...] = ()
    launch_ms: float | None = None  # an empty kernel's measured launch time: a floor under every kernel
    raised: tuple[str, ...] = ()  # levels whose measured ceiling is the best rate seen (`at_least_seen`)
    fp16_for: tuple[str, ...] = ()  # compute levels whose measured ceiling is cuBLAS's FP16 rate (`Roof.borrowed`)

    @property
    def ridge_point(self) -> float:
        """The theoretical ridge point in FLOP/byte (FP32 over DRAM)."""
        return ridge_point(self.fp32_gflops, self.dram_gbps)

    def _theory(self) -> dict[str, float | None]:
        return {"FP32": self.fp32_gflops, "DRAM": self.dram_gbps, "SMEM": self.smem_gbps, "L2": self.l2_gbps,
                **dict(self.compute)}

    def _measured(self) -> dict[str, float | None]:
        return {"FP32": self.measured_fp32_gflops, "DRAM": self.measured_dram_gbps, "L2": self.measured_l2_gbps,
                "SMEM": self.measured_smem_gbps, **dict(self.measured_compute)}

    def roof(self, level: str, measured: bool = True) -> Roof | None:
        """The roof for `level` ('FP32', 'DRAM', 'L2', 'SMEM', 'L1', 'BF16 tensor', ... or a precision
        key such as 'bf16_tensor'): the measured one when `measured` and known, else the
        theoretical one; None when the device has none for that level."""
        name = ROOF_OF_LEVEL.get(level, COMPUTE_LEVEL.get(level, level))
        theory, found = self._theory().get(name), self._measured().get(name)
        if measured and found:
            seen = name in self.raised
            return Roof(name, found, True, seen, "FP16 cuBLAS" if name in self.fp16_for and not seen else None)
        return Roof(name, theory, False) if theory else None

    def capped(self) -> "Roofs":
        """These roofs with every measured ceiling at most the theoretical one of its level (a
        ceiling measured at one clock does not hold for a kernel that ran at a lower one)."""
        theory = self._theory()

        def cap(level: str, value: float | None) -> float | None:
            top = theory.get(level)
            return min(value, top) if value and top else value

        return replace(self, measured_fp32_gflops=cap("FP32", self.measured_fp32_gflops),
                       measured_smem_gbps=cap("SMEM", self.measured_smem_gbps),
                       measured_compute=tuple((lvl, cap(lvl, v)) for lvl, v in self.measured_compute))

    def all(self) -> list[Roof]:
        """Every roof, theoretical then measured: FP32, DRAM, SMEM, L2, other precisions; then the
        measured FP32, DRAM, L2, SMEM and precisions."""
        out = [Roof(name, v, False) for name, v in self._theory().items() if v]
        return out + [Roof(name, v, True) for name, v in self._measured().items() if v]


@dataclass(frozen=True)
class LevelBytes:
    """Bytes one launch moves at `level`; `counted` when Nsight Compute counted them, else the model's."""

    level: str
    nbytes: float
    counted: bool


def level_bytes(figures: ModelFigures | None, counted: CountedTraffic | None = None) -> dict[str, LevelBytes]:
    """Bytes per level for one kernel: DRAM (counted, else the model's DRAM bytes where it worked
    them out: `traffic.ModelFigures.dram_bytes`), L2 (counted, else the model's GMEM bytes: the
    requests the L2 serves), SMEM (counted, else the bytes the model says the banks serve, else
    its per-thread accesses x 4), L1 (counted, else the model's sectors for a kernel that reads
    global memory directly). Without a model (`figures` None), counted only."""
    c = counted or CountedTraffic()
    gmem = figures.gmem_bytes if figures else None
    dram = figures.dram_bytes if figures else None
    smem = (figures.smem_served_bytes or figures.smem_bytes) if figures else None
    l1 = figures.l1_bytes if figures else None
    out = {}
    for level, found, model in (("DRAM", c.dram_bytes, dram), ("L2", c.l2_bytes, gmem),
                                ("L1", c.l1_bytes, l1), ("SMEM", c.smem_bytes, smem)):
        if found:
            out[level] = LevelBytes(level, float(found), True)
        elif model:
            out[level] = LevelBytes(level, float(model), False)
    return out


def intensities(figures: ModelFigures | None, counted: CountedTraffic | None = None,
                flops: float | None = None) -> dict[str, float]:
    """Arithmetic intensity (FLOP/byte) per level, for the chart: 'GMEM (model)' (the L2's
    requests), or 'L1 (model)' for a kernel that reads A and B from global memory directly (its
    L1 serves most of its requests, and its verdict reads the L1 sectors: `verdict`), 'DRAM
    (model)' (where worked out) and 'SMEM (model)' from the model, 'L2 (counted)' and 'DRAM
    (counted)' from Nsight Compute's counts when present. A kernel without a model (`figures`
    None) needs `flops` and has counted levels only."""
    f = float(figures.flops if figures else flops)
    out = {}
    if figures is not None:
        if figures.l1_bytes:
            out["L1 (model)"] = f / figures.l1_bytes
        else:
            out["GMEM (model)"] = f / figures.gmem_bytes
        if figures.dram_bytes:
            out["DRAM (model)"] = f / figures.dram_bytes
    smem = (figures.smem_served_bytes or figures.smem_bytes) if figures is not None else None
    if smem:
        out["SMEM (model)"] = f / smem
    if counted is not None:
        for name, value in (("L2 (counted)", counted.l2_bytes), ("DRAM (counted)", counted.dram_bytes)):
            if value:
                out[name] = f / value
    return out


TIE = 0.05  # another floor within 5 % of the binding one is as near: both roofs are named


@dataclass(frozen=True)
class Floor:
    """The time one level alone allows: its bytes (or the FLOPs) at its roof, in ms."""

    level: str
    floor_ms: float
    roof: Roof
    counted: bool  # the bytes were counted by Nsight Compute rather than modelled
    # Why a floor of modelled bytes never binds: 'L2' (a DRAM floor: A, B and C fit in a warm L2,
    # so even the first reads are hits), 'L1' (an L2 floor: the model counts a kernel's L1
    # requests, which L1 mostly serves).
    aside: str | None = None


@dataclass(frozen=True)
class Verdict:
    """Which floor binds a kernel and, given its measured time, how far it sits from it."""

    floors: tuple[Floor, ...]
    time_ms: float | None
    waves: Waves | None = None  # the grid's waves; the floors are already divided by their utilization

    @property
    def binding(self) -> Floor | None:
        """The highest floor: the resource that bounds this kernel (None for a profiled kernel with
        neither work nor bytes counted). A floor set `aside` is not a candidate."""
        return max((f for f in self.floors if not f.aside), key=lambda f: f.floor_ms, default=None)

    @property
    def near(self) -> Floor | None:
        """The next-highest floor where it is within TIE of the binding one (a kernel at two roofs at
        once: which binds is within what the ceilings' own measurement can tell), else None."""
        b = self.binding
        others = sorted((f for f in self.floors if not f.aside and f is not b and f.floor_ms), key=lambda f: -f.floor_ms)
        if b is None or not b.floor_ms or not others or others[0].floor_ms < (1 - TIE) * b.floor_ms:
            return None
        return others[0]

    @property
    def named(self) -> tuple[str, ...]:
        """The levels this verdict names: the binding one, and the one as near (`near`) where there is one."""
        b, n = self.binding, self.near
        return tuple(f.level for f in (b, n) if f is not None)

    def agrees(self, other: "Verdict") -> bool:
        """Whether `other` (the same kernel read from other bytes: the model's, or the counted ones) names
        the roof this one binds at or this one names the roof `other` binds at: the same binding level, or
        one's binding level the other's as near (two floors within TIE, which the ceilings' own
        measurement cannot order)."""
        b, o = self.binding, other.binding
        return b is not None and o is not None and (b.level in other.named or o.level in self.named)

    @property
    def l2_resident(self) -> bool:
        """Whether the DRAM floor was set aside because the working set fits in a warm L2."""
        return any(f.aside == "L2" for f in self.floors)

    @property
    def times_floor(self) -> float | None:
        """Measured time over the binding floor (1.0 = on the roof; below 1, the hardware moved
        fewer bytes than the model counts (caches and broadcasts) or, for counted bytes, faster
        than the bandwidth ceiling says); None without a time or a floor."""
        b = self.binding
        return None if self.time_ms is None or b is None or not b.floor_ms else self.time_ms / b.floor_ms

    def floor(self, level: str) -> Floor | None:
        """The floor of `level`, or None when it was not computed."""
        return next((f for f in self.floors if f.level == level), None)


def verdict(figures: ModelFigures | None, roofs: Roofs, time_ms: float | None = None,
            counted: CountedTraffic | None = None, measured: bool = True,
            levels: tuple[str, ...] = MEMORY_LEVELS, flops: float | None = None,
            flops_by_precision: dict[str, float] | None = None, waves: Waves | None = None,
            fits_in_l2: bool = False, precision: str = "fp32") -> Verdict:
    """The floors of one kernel at the FP32 roof and each memory level in `levels` that has both
    bytes and a roof, against the measured roofs when `measured` (and known), else the theoretical
    ones; with `time_ms`, the distance from the binding one. `verdict(fig, roofs, t, measured=False,
    levels=("DRAM",))` is the plain two-roof reading: model GMEM bytes against peak DRAM bandwidth,
    FLOPs against peak FP32. The model's FLOPs (`figures.flops`, or `flops`) are read against the
    roof of `precision` (a `peaks.PRECISIONS` key: 'bf16_tensor' for a BF16 GEMM), FP32 unless
    said. A kernel without a model (`figures` None) needs `flops` and has
    floors at its compute roof and the counted levels only. A profiled kernel gives `flops_by_precision`
    (precision key -> FLOPs, `peaks.PRECISIONS`) instead: one compute floor per precision with
    work and a roof. Floors are (and `binding` picks among) per level: each unit runs apart, so the
    slowest alone bounds the time. With the grid's `waves` (`model.waves`), the floors of the units each
    SM has to itself (compute, shared memory, L1) are divided by the share of the GPU the grid keeps
    busy: 32 blocks on 132 block slots, such a floor 4.1x higher. The L2's and the DRAM's are not: they
    serve the whole chip, and a few SMs draw far more than their share of them (one H200 SM moves
    much more than 1/132 of the DRAM's bytes), so a floor divided so would be no floor.
    Where the device's launch latency was measured (`Roofs.launch_ms`), it is a floor too: a
    1x1x1 problem is bound by it, not by 0.000 ms of FP32 work. With `fits_in_l2` (A, B and C
    together no larger than the L2, and the L2 warm), a DRAM floor of modelled bytes is kept but
    set aside ('L2') and never binds: even the first reads are L2 hits. So is the L2 floor of the
    model's GMEM requests ('L1'), when L1 is among `levels`, for a kernel whose model has an L1
    level (naive, gmem_coalescing): those are the L1's requests, most of which it serves (at
    4096^3 gmem_coalescing's 550 GB of requests reach the L2 as 21 GB); and for a kernel that
    reads global memory directly with no L1 level modelled (no shared memory, no `thread-x`
    declared to count its sectors: `traffic.ModelFigures.direct`), whose requests are the L1's all
    the same: the public ladder's coalescing kernel, 549.8 GB of them at the L2 roof a floor of
    35.8 ms, ran in 22.1 ms. Counted bytes stay."""
    busy = waves.utilization if waves is not None else 1.0
    by_precision = {precision: figures.flops if figures else flops} if flops_by_precision is None else flops_by_precision
    floors = []
    for key, amount in by_precision.items():
        roof = roofs.roof(key, measured)
        if amount and roof is not None:
            floors.append(Floor(roof.level, ms_at(amount, roof.value) / busy, roof, flops_by_precision is not None))
    by_level = level_bytes(figures, counted)
    for level in levels:
        roof = roofs.roof(level, measured)
        if level in by_level and roof is not None:
            b = by_level[level]
            aside = None
            if level == "DRAM" and not b.counted and fits_in_l2:
                aside = "L2"
            elif level == "L2" and not b.counted and figures is not None and (
                    ("L1" in levels and figures.l1_bytes) or (figures.direct and not figures.l1_bytes)):
                aside = "L1"
            shared = level in SHARED_LEVELS  # the chip's, not the busy SMs' share of it
            floors.append(Floor(level, ms_at(b.nbytes, roof.value) / (1.0 if shared else busy), roof, b.counted, aside))
    if roofs.launch_ms:
        floors.append(Floor(LAUNCH, roofs.launch_ms, Roof(LAUNCH, roofs.launch_ms, True), False))
    return Verdict(tuple(floors), time_ms, waves)


def plain_verdict(figures: ModelFigures | None, roofs: Roofs, time_ms: float | None = None,
                  flops: float | None = None, waves: Waves | None = None, fits_in_l2: bool = False,
                  precision: str = "fp32") -> Verdict:
    """The theoretical reading: the hierarchy of `verdict` at the theoretical roofs alone: the
    FLOPs against the peak rate of `precision` (FP32, or a GEMM's tensor-core roof), the model's
    GMEM requests against the peak L2 bandwidth (where the device has one; set aside for a kernel that
    reads A and B directly, whose requests are its L1's: `verdict`), its DRAM bytes (where
    worked out) against the peak DRAM bandwidth, its SMEM and L1 bytes against the shared-memory
    data path: the `bound x` column and the kernels listing. The compute floor alone without a
    model (`figures` None, `flops` given). `fits_in_l2` as in `verdict`."""
    return verdict(figures, roofs, time_ms, measured=False, levels=MEMORY_LEVELS, flops=flops, waves=waves,
                   fits_in_l2=fits_in_l2, precision=precision)


def memory_floor(v: Verdict) -> Floor | None:
    """The highest memory floor of `v` that can bind (none set aside), or None."""
    return max((f for f in v.floors if f.level in ROOF_OF_LEVEL and not f.aside), key=lambda f: f.floor_ms,
               default=None)


@dataclass(frozen=True)
class Beaten:
    """A measured ceiling that a rate measured in the same file went past: the ceiling's `level`,
    its `measured` value, the `seen` rate (GFLOP/s or GB/s) and who reached it (`by`: a kernel's
    name, 'cuBLAS'; `counted`: from bytes Nsight Compute counted, else from FLOPs or the model's
    request counts), and the value now read at that level (`used`)."""

    level: str
    measured: float
    seen: float
    by: str
    counted: bool
    used: float

    @property
    def memory(self) -> bool:
        """A memory level (GB/s), not a compute one (GFLOP/s)."""
        return self.level in ROOF_OF_LEVEL


def at_least_seen(roofs: Roofs, seen: dict[str, tuple[float, str, bool]]) -> tuple[Roofs, tuple[Beaten, ...]]:
    """`roofs` with every measured ceiling at least what was `seen` at its level (level name, as
    `Roofs.roof` takes it -> (rate, who reached it, whether from counted bytes)), and the ceilings
    that changed. A ceiling below a seen rate is raised to it, compute and memory alike: a rate
    measured on this card is a lower bound on what its level sustains, so the measurement was low.
    A memory ceiling is never raised above its level's theoretical roof, nor lowered (a measured
    value already above that roof stays): a rate past the roof comes from counted bytes (modelled
    ones past it are no rate seen: `results.schema.Results.seen_rates`), where the roof or the
    counter is off, which the verdict then says. Examples: the H200's BF16 tensor ceiling measured from cuBLAS FP16 at 753,834
    GFLOP/s, with cuBLAS BF16 at 771,020 in the same run, reads 771,020; its L2 ceiling measured
    by one __ldcg stream at 7,302 GB/s, with wgmma_tma's counted L2 bytes moving at 10,184 GB/s at
    8192^3, reads 10,184 (plots/counters-h200-bf16-8192.json)."""
    changed, measured, compute = [], {}, dict(roofs.measured_compute)
    for level, (rate, by, counted) in seen.items():
        roof = roofs.roof(level, True)
        if roof is None or not roof.measured or rate <= roof.value:
            continue
        if roof.level in ROOF_OF_LEVEL.values():  # never above the level's theoretical roof: a rate past
            theory = roofs.roof(roof.level, False)  # it comes from bytes the level did not all move
            used = min(rate, theory.value) if theory is not None and not theory.measured else rate
            if used <= roof.value:  # a measured value already at or above its theoretical roof: not lowered
                continue
            measured[roof.level] = used
        else:
            used = rate
            if roof.level == "FP32":
                measured[roof.level] = rate
            else:
                compute[roof.level] = rate
        changed.append(Beaten(roof.level, roof.value, rate, by, counted, used))
    fields = {"DRAM": "measured_dram_gbps", "L2": "measured_l2_gbps", "SMEM": "measured_smem_gbps",
              "FP32": "measured_fp32_gflops"}
    raised = tuple(b.level for b in changed)
    out = replace(roofs, measured_compute=tuple(compute.items()), raised=roofs.raised + raised,
                  **{fields[level]: value for level, value in measured.items()})
    return out, tuple(changed)
