"""The timeline a profiled kernel's results record: its run as intervals of Nsight Compute's PM
sampling (`model.timeline`), kept with what the samples add up to against the kernel's own counts,
and read back as phases."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from typing import Annotated, Literal

from pydantic import Field

from ..model import timeline as model
from ..model.peaks import PRECISIONS
from ..model.roofs import Roofs
from ..model.waves import Waves
from ..nsight.launches import LEVELS as LEVEL_KEYS
from .base import _Model

Share = Annotated[float, Field(ge=0, le=1.5, allow_inf_nan=False)]  # a unit's share of its peak (a sample may pass 1)
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]
SIGNIFICANT = 5  # digits kept per value: a 1,000-interval timeline is ~100 kB of JSON


def _round(values: list[float | None]) -> list[float | None]:
    return [float(f"{v:.{SIGNIFICANT}g}") if v is not None else None for v in values]


CLOCK_APART = 0.1  # a sampled launch's median clock this far from its timed calls' is another clock
MAX_SPAN = 1.5  # the busy intervals' span over the launch's duration: a sample past its end, never 1.5 times it


class Timeline(_Model):
    """One launch of the kernel over its run (the longest, where it had several): interval starts
    (µs from the first one with an SM busy) and lengths, the share of the SMs busy, the SM clock
    (GHz; null where no SM issued), each unit's share of its peak (`model.timeline.SHARE_OF` keys),
    FLOPs per precision and bytes per level per interval (the kernel's counts split over them), and
    `closure`: what the samples add up to against the launch's own figures (1.0: the same)."""

    source: str = Field(description="what sampled it: Nsight Compute's PM sampling, and its interval")
    t_us: Annotated[list[Amount], Field(min_length=1)]
    dt_us: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]]
    busy: list[Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]]
    clock_ghz: list[Annotated[float, Field(gt=0, le=10, allow_inf_nan=False)] | None]
    shares: dict[Literal[tuple(model.SHARE_OF)], list[Share]] = {}  # type: ignore[valid-type]
    flops: dict[Literal[PRECISIONS], list[Amount]] = {}  # type: ignore[valid-type]
    bytes: dict[Literal[LEVEL_KEYS], list[Amount]] = {}  # type: ignore[valid-type]
    closure: dict[Literal["time", "dram", "blocks"], Annotated[float, Field(ge=0, allow_inf_nan=False)]] = Field(
        {}, description="sampled / whole-launch: 'time' (intervals with an SM busy over the duration), 'dram' "
                        "(sampled DRAM throughput at the datasheet bandwidth over the counted bytes), 'blocks' "
                        "(blocks launched over the grid's)")

    def model_post_init(self, _context) -> None:
        n = len(self.t_us)
        lists = {"dt_us": self.dt_us, "busy": self.busy, "clock_ghz": self.clock_ghz,
                 **{f"shares.{k}": v for k, v in self.shares.items()}, **{f"flops.{k}": v for k, v in self.flops.items()},
                 **{f"bytes.{k}": v for k, v in self.bytes.items()}}
        for name, values in lists.items():
            if len(values) != n:
                raise ValueError(f"timeline.{name}: {len(values)} values for {n} intervals")
        back = next((i for i in range(1, n) if self.t_us[i] < self.t_us[i - 1]), None)
        if back is not None:
            raise ValueError(f"timeline.t_us: interval {back} starts at {self.t_us[back]:g} µs, before the one ahead of "
                             f"it ({self.t_us[back - 1]:g} µs); intervals are in time order")
        typical = sorted(self.dt_us)[n // 2] if self.dt_us else 0.0
        gap = next((i for i in range(1, n)
                    if self.t_us[i] - self.t_us[i - 1] - self.dt_us[i - 1] > model.MAX_GAP_INTERVALS * typical), None)
        if gap is not None:
            late = self.t_us[gap] - self.t_us[gap - 1] - self.dt_us[gap - 1]
            raise ValueError(f"timeline.t_us: interval {gap} starts at {self.t_us[gap]:g} µs, {late:g} µs after the "
                             "one before it ends; the intervals of one run follow each other")
        if self.closure.get("time", 0.0) > MAX_SPAN:
            raise ValueError(f"timeline.closure.time: {self.closure['time']:g}: the busy intervals cannot span "
                             f"{self.closure['time']:g} times the launch's duration")

    @classmethod
    def of(cls, iv: model.Intervals, source: str, closure: dict[str, float]) -> "Timeline":
        """The record of `iv`, each value to `SIGNIFICANT` digits."""
        return cls(source=source, t_us=_round(iv.t_us), dt_us=_round(iv.dt_us), busy=_round(iv.busy),
                   clock_ghz=_round(iv.clock_ghz), shares={k: _round(v) for k, v in iv.shares.items()},
                   flops={k: _round(v) for k, v in iv.flops.items()}, bytes={k: _round(v) for k, v in iv.nbytes.items()},
                   closure=closure)

    def intervals(self) -> model.Intervals:
        """The recorded intervals; without FLOPs and bytes where `cut_short` (a file written before
        such counts were left unsplit holds the whole launch's counts split over part of it)."""
        cut = self.cut_short
        return model.Intervals(list(self.t_us), list(self.dt_us), list(self.busy), list(self.clock_ghz),
                               {k: list(v) for k, v in self.shares.items()},
                               {} if cut else {k: list(v) for k, v in self.flops.items()},
                               {} if cut else {k: list(v) for k, v in self.bytes.items()})

    def phases(self) -> list[model.Phase]:
        """The phases of the intervals sampled (`model.timeline.phases`): of the start of the run only
        where `cut_short`."""
        return model.phases(self.intervals())

    @property
    def covered(self) -> float | None:
        """The share of the launch's duration the busy intervals span (`closure`'s 'time'); None
        where the file does not say."""
        return self.closure.get("time")

    @property
    def cut_short(self) -> bool:
        """Whether the samples cover only the start of the launch: less than `model.timeline.COVERED`
        of it, and more than `model.timeline.ROUNDING` intervals short of its end (a launch of a few
        intervals falls short of its duration by the part of an interval at each end, not by
        samples missing). Nsight Compute stopped sampling before the launch ended."""
        return model.in_part(self.covered, list(self.dt_us))

    def cut_note(self, name: str) -> str | None:
        """One line on a timeline `cut_short`, for kernel `name`: what it covers of the launch (whose
        duration is the busy intervals' span over `covered`), what that leaves out, and how to sample
        the whole run; None where it covers the run."""
        if not self.cut_short:
            return None
        launch_ms = sum(self.dt_us) / self.covered / 1e3  # `cut_short`: some intervals, and 0 < covered
        step = sorted(self.dt_us)[len(self.dt_us) // 2]
        return (f"{name}: the samples cover the first {100 * self.covered:.0f} % of its {launch_ms:,.4g} ms launch "
                f"({len(self.t_us):,} samples, one every {step:,.3g} µs): Nsight Compute stopped sampling before it "
                "ended, so its phases are of that part, its tail wave is not seen and its counts are not split over "
                "the intervals; to sample the whole run, profile it with ncu --section PmSampling "
                f"--pm-sampling-interval {model.interval_ns(launch_ms)} (its duration over "
                f"{model.WHOLE_RUN_SAMPLES:,} samples, in ns) --pm-sampling-buffer-size {model.WHOLE_RUN_BUFFER_BYTES} "
                f"({model.WHOLE_RUN_BUFFER_BYTES >> 30} GiB: the buffer the samples are kept in) and read the report with roofline profile --import")


@dataclass(frozen=True)
class TimedKernel:
    """A kernel of a results file (a profile's or a run's) that records a timeline, with what its
    table and chart read beside it: its time (ms, all its launches in a profile, one in a run), the
    precision key of its work, its FLOP/s and FLOPs per DRAM byte over the whole launch (None where
    not counted), the roofs it is read against (at `clock_mhz`, the clock it ran at on average) and
    its grid's waves (None without a grid and an occupancy)."""

    name: str
    time_ms: float
    timeline: Timeline
    key: str | None
    gflops: float | None
    dram_intensity: float | None
    roofs: Roofs
    waves: Waves | None
    clock_mhz: float | None = None  # the SM clock `roofs` are read at (None: the device's own)
    label: str = ""  # its name, with its launch configuration where kernels of the file share the name
    timed_mhz: float | None = None  # a run's: the median SM clock NVML read through its timed calls (None: not read)

    def __post_init__(self):
        if not self.label:
            object.__setattr__(self, "label", self.name)

    @property
    def sampled_mhz(self) -> float | None:
        """The median SM clock of its sampled intervals (MHz); None where no interval has one."""
        clocks = [c for c in self.timeline.clock_ghz if c]
        return statistics.median(clocks) * 1e3 if clocks else None

    @property
    def clock_apart(self) -> bool:
        """Whether its sampled launch ran more than `CLOCK_APART` from the clock NVML read through its
        timed calls (a run's, `timed_mhz`): a run apart from them, or NVML's reading not the SMs' clock
        (`render.timeline_tables.other_clocks` tells which by the launches' durations)."""
        sampled = self.sampled_mhz
        return bool(self.timed_mhz and sampled) and abs(sampled - self.timed_mhz) > CLOCK_APART * self.timed_mhz


def timeline_of(g, device) -> Timeline | None:
    """The timeline of the longest sampled launch of kernel group `g` (`nsight.launches.KernelGroup`)
    on `device` (`launch_timeline`); None where no launch of it holds PM sampling."""
    sampled = [x for x in g.launches if x.sampled is not None]
    return launch_timeline(max(sampled, key=lambda y: y.time_ns), device) if sampled else None


def launch_timeline(x, device) -> Timeline | None:
    """The timeline of launch `x` (`nsight.launches.Launch`) on `device` (its DRAM bandwidth checks
    the sampled DRAM throughput); None where it holds no PM sampling with the SMs' active cycles."""
    if x.sampled is None:
        return None
    t_ns, values = list(x.sampled.t_ns), {k: list(v) for k, v in x.sampled.values.items()}
    iv = model.intervals(t_ns, values, dict(x.flops), dict(x.nbytes))
    if iv is None:
        return None
    blocks = x.grid[0] * x.grid[1] * x.grid[2] if x.grid else None
    closure = model.closure(iv, t_ns, values, x.time_ns, x.nbytes.get("dram"), device.peak_dram_gbps, blocks)
    if model.in_part(closure.get("time"), iv.dt_us):  # the start of the run: the whole launch's counts are not its
        iv = replace(iv, flops={}, nbytes={})
    step = sorted(iv.dt_us)[len(iv) // 2]
    try:
        return Timeline.of(iv, f"Nsight Compute's PM sampling, one sample every {step * 1e3:,.0f} ns", closure)
    except ValueError:  # samples no model holds (a non-finite value): the launch keeps its counts, not its timeline
        return None


def with_phases(document):
    """`document` (a results file as dumped: dicts and lists) with each recorded timeline's phases
    beside its samples (`phases`: name, intervals first and last, time µs and share of the run, SMs
    busy, the busiest unit and its mean share, time at the roof µs, every unit's mean share) and
    whether it covers only the start of the run (`cut_short`: its phases are of that part, its FLOPs
    and bytes left empty), for `show --json`: derived from the samples, not stored. A timeline the
    model cannot read is left as it is."""
    if isinstance(document, list):
        return [with_phases(x) for x in document]
    if not isinstance(document, dict):
        return document
    out = {k: with_phases(v) for k, v in document.items()}
    recorded = out.get("timeline")
    if isinstance(recorded, dict) and "t_us" in recorded:
        try:
            timeline = Timeline.model_validate(recorded)
            found = timeline.phases()
        except ValueError:
            return out
        if timeline.cut_short:  # the start of the run only: the whole launch's counts are not its
            recorded = {**recorded, "flops": {}, "bytes": {}}
        out["timeline"] = {**recorded, "cut_short": timeline.cut_short, "phases": [
            {"name": p.name, "first": p.first, "last": p.last, "time_us": round(p.time_us, 3),
             "share": round(p.share, 4), "busy": round(p.busy, 4), "roof": p.roof,
             "roof_share": round(p.roof_share, 4), "at_roof_us": round(p.at_roof_us, 3),
             "shares": {k: round(v, 4) for k, v in p.shares.items()}} for p in found]}
    return out
