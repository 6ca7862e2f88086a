"""Two results files of one kind (two profiles, or two runs), kernel by kernel: `compare_work`.

Each file is read through `analysis.work`; kernels are matched by name and launch configuration (by
name alone where the configuration changed and the name is unique in both). Per kernel (`Delta`)
and for a profile's step: the change in time, FLOP/s, bytes per level, occupancy and fraction of
the binding roof, read as noise (inside the runs' spread, or a profile's fixed `NOISE`) or as
faster/slower with its cause.

Two runs add, per kernel, the speedup, the registers and the two-roof reading of each file
(`Results.floors`: model GMEM bytes at peak DRAM bandwidth, FLOPs at the peak of the problem's
precision) with whether the kernel moved toward that floor (`roof_move`). "Toward its roof" reads
each file against its own device, so across GPUs it says whether the kernel uses its GPU better,
while the speedup also holds the change of GPU. The comparison of runs holds the reference's
times, the two problems and the kernels in both files not timed in both (`Untimed`); `notes` say
which differences come from the device (peaks, the compile target and its per-SM limits, the L2
state) or the files (a sweep, different problems).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field, replace

from ..errors import UsageError
from ..model.presets import same_gpu
from ..model.problem import Problem
from ..model.roofs import Verdict
from ..model.timing import Pairing, paired
from ..model.units import gflops, plural
from ..results.profile import ProfileResults
from ..results.schema import KernelRecord, Results
from ..results.sweep_point import at_size, holds, sizes
from .work import KernelWork, Workload, phase_notes, workload

NOISE = 0.02  # a profile's time change under 2 % is called noise (docs/compare.md says why)
NOISE_US = 1.0  # ... and so is one under 1 us per launch: a short kernel's duration varies by that much
CAUSE = 0.05  # a level's bytes must change by at least 5 % to be named as the cause of a time change
NO_ROOF = "(none)"  # the step's kernels that no roof binds (neither work nor bytes counted), by `time_by_roof`
SHOWN_NAMES = {"l1/shared": "L1/shared"}  # a shown level's name where upper case does not give it
# a binding roof's level -> the shown level of its bytes (a compute roof has none)
BINDING_LEVEL = {"DRAM": "dram", "L2": "l2", "L1": "l1/shared", "SMEM": "l1/shared"}
SAME = 0.02  # a change of a run's time over its two-roof floor below 2 % is no move either way


def _change(before: float | None, after: float | None) -> float | None:
    """after / before - 1 (-0.38 = 38 % less), None unless both are known and before is not 0."""
    if before is None or after is None or not before:
        return None
    return after / before - 1.0


def _rate(flops: dict[str, float], time_ms: float) -> float | None:
    """GFLOP/s of all the counted FLOPs in `time_ms`; None where none were counted."""
    total = sum(flops.values())
    return gflops(total, time_ms) if total and time_ms else None


def _binding(v: Verdict | None) -> str | None:
    """The level whose roof binds in reading `v` ('DRAM', 'BF16 tensor'), None where none does."""
    b = v.binding if v is not None else None
    return b.level if b is not None else None


def _bytes_read(v: Verdict | None) -> str | None:
    """Whose bytes reading `v` read: where a memory roof binds, its floor's ('counted': Nsight
    Compute's, or 'model'); where a compute roof binds, 'counted' if any level's were counted; None
    without a reading or a binding roof."""
    if v is None or v.binding is None:
        return None
    if v.binding.level in BINDING_LEVEL:  # a memory roof binds: whose bytes its floor reads
        return "counted" if v.binding.counted else "model"
    return "counted" if any(f.counted for f in v.floors) else "model"


def _tied(vb: Verdict | None, va: Verdict | None) -> bool:
    """Whether two readings bind at different levels but one names the other's as near (within
    `model.roofs.TIE`): `Verdict.agrees` across the two files."""
    return bool(vb is not None and va is not None and _binding(vb) and _binding(va) and _binding(vb) != _binding(va)
                and vb.agrees(va))


def _roof_values(vb: Verdict | None, va: Verdict | None) -> tuple[float | None, float | None]:
    """Each reading's roof at the level that binds in `va` (after), None where a reading lacks it."""
    level = _binding(va)
    def at(v: Verdict | None) -> float | None:
        f = next((f for f in v.floors if f.level == level), None) if v is not None and level else None
        return f.roof.value if f is not None else None
    return at(vb), at(va)


def _fraction(v: Verdict) -> float | None:
    """The binding floor over the measured time: the fraction of its binding roof a kernel reaches."""
    t = v.times_floor
    return 1.0 / t if t else None


@dataclass(frozen=True)
class LevelChange:
    """Bytes at one memory level ('dram', 'l2', 'l1', 'smem') before and after; `counted` False where
    both sides hold the model's bytes rather than Nsight Compute's."""

    level: str
    before: float
    after: float
    counted: bool

    @property
    def change(self) -> float | None:
        return _change(self.before, self.after)


def roof_move(floors: tuple[Verdict | None, Verdict | None] | None) -> str:
    """A run's kernel against the binding floors of its two-roof readings, before and after:
    'closer' when after sits nearer its floor than before did (by more than SAME), 'further',
    'same'; 'below its floor' when either run beat its floor (the model's bytes were more than the
    hardware moved, so the distance means nothing); '-' unless both were timed."""
    if floors is None or floors[0] is None or floors[1] is None:
        return "-"
    b, a = floors[0].times_floor, floors[1].times_floor
    if min(a, b) < 1:
        return "below its floor"
    if abs(a - b) <= SAME * b:
        return "same"
    return "closer" if a < b else "further"


@dataclass(frozen=True)
class Delta:
    """What changed for one kernel in both files (or for the step). Times in ms, rates in GFLOP/s,
    occupancy 0-1, fractions of the binding roof 0-1 (where a roof binds); `noise` the relative
    time change inside which a difference is called noise, and `noise_from` where it comes from
    ('spread': the launches' (max - min) / median of the two runs; 'fixed': `NOISE`). A run's
    kernel adds its registers and the two-roof reading of each file (`Results.floors`), from which
    `roof_move` says whether it moved toward its binding floor."""

    label: str
    before_ms: float
    after_ms: float
    before_gflops: float | None
    after_gflops: float | None
    levels: list[LevelChange]
    before_occupancy: float | None
    after_occupancy: float | None
    before_fraction: float | None
    after_fraction: float | None
    noise: float
    noise_from: str
    configuration: str | None = None  # 'grid x block -> grid x block' where matched by name alone
    launch: str | None = None  # a profiled kernel's 'grid x block' (after's)
    across: bool = False  # different GPU models: read by the fraction of the binding roof, not the time
    registers: tuple[int | None, int | None] | None = None  # a run's kernel: registers per thread, before and after
    floors: tuple[Verdict | None, Verdict | None] | None = None  # a run's kernel: its two-roof readings
    joules: tuple[float, float] | None = None  # joules per launch before and after, where both files measured them
    # runs whose kernels were timed in rounds with the reference: each file's paired % of its reference
    vs_reference: tuple[Pairing, Pairing] | None = None
    # the level whose roof binds in each file's reading ('L2', 'SMEM', 'BF16 tensor'), where one binds
    binding: tuple[str | None, str | None] = (None, None)
    # the two readings bind at different levels, one naming the other's as near (`Verdict.agrees`):
    # a tie the ceilings cannot order, not a move
    tied: bool = False
    # whose bytes each reading read: 'counted' (Nsight Compute's, at some level) or 'model'; None unknown
    bytes_read: tuple[str | None, str | None] = (None, None)
    # each file's roof at the level that binds after (GFLOP/s or GB/s), where both have one
    roof_values: tuple[float | None, float | None] = (None, None)
    per_flop: bool = False  # runs of two problem sizes (--across-sizes): read per FLOP, not per launch
    # the step: its kernels' ms by the roof that binds each (its verdict), before and after (`_step`)
    time_by_roof: tuple[dict[str, float], dict[str, float]] | None = None
    # the step: (kernels gone, their ms), (kernels new, their ms): the matching's unmatched kernels (`match`)
    unmatched: tuple[tuple[int, float], tuple[int, float]] | None = None

    @property
    def roofs_differ(self) -> bool:
        """Across GPU models: whether the roof that binds after stands elsewhere on the other GPU
        (more than 1 % apart), so that a move of the fraction may be the GPU's, not the kernel's."""
        b, a = self.roof_values
        return bool(self.across and b and a and abs(a / b - 1.0) > 0.01)

    @property
    def binding_moved(self) -> str | None:
        """'L2 -> SMEM' where another roof binds after than before (the fractions of `reading` are then
        of two roofs), else None; None too where the two are `tied` (one reading names the other's
        roof within 5 %: the ceilings cannot order them)."""
        b, a = self.binding
        if not (b and a and b != a and not self.tied):
            return None
        rb, ra = self.bytes_read
        basis = f" (read from the {rb} bytes before, the {ra} after)" if rb and ra and rb != ra else ""
        return f"{b} -> {a}{basis}"

    @property
    def time_change(self) -> float:
        return self.after_ms / self.before_ms - 1.0

    @property
    def speedup(self) -> float:
        """Before's time over after's (a run: the median time of one launch)."""
        return self.before_ms / self.after_ms

    @property
    def roof_move(self) -> str:
        """A run's kernel: 'closer', 'further', 'same' or 'below its floor' (`roof_move`)."""
        return roof_move(self.floors)

    @property
    def gflops_change(self) -> float | None:
        return _change(self.before_gflops, self.after_gflops)

    @property
    def fraction_change(self) -> float | None:
        return _change(self.before_fraction, self.after_fraction)

    @property
    def fraction_move(self) -> str:
        """'60.1 % -> 63.2 %': the share of its binding roof before and after, as shares (a relative
        change of a share reads as points)."""
        def share_of(x: float | None) -> str:
            return f"{100 * x:.1f} %" if x is not None else "-"
        return f"{share_of(self.before_fraction)} -> {share_of(self.after_fraction)}"

    @property
    def slowdown(self) -> float | None:
        """How much worse after is (0.08 = 8 % worse, negative better): the time change on one GPU
        model; across models before's fraction of the binding roof over after's, minus 1 (None
        where no roof binds in both)."""
        if self.per_flop and not self.across:  # another size: the time of a FLOP, the inverse of the rate
            return self.before_gflops / self.after_gflops - 1.0 if self.before_gflops and self.after_gflops else None
        if not self.across:
            return self.time_change
        if not self.before_fraction or not self.after_fraction:
            return None
        return self.before_fraction / self.after_fraction - 1.0

    @property
    def is_noise(self) -> bool:
        s = self.slowdown
        return s is None or abs(s) <= self.noise

    @property
    def cause(self) -> str | None:
        """'DRAM bytes -38 %, time -31 %': the level whose roof binds the kernel (after a slowdown,
        before a speed-up) where its bytes changed in the direction of the change by at least CAUSE
        (5 %), else the level whose bytes changed most that way, with an aside saying that level is
        not the binding one (or that a compute roof binds); None for noise or no such level. Across GPU
        models the sentence ends with the share of the binding roof before and after ('60.1 % ->
        63.2 % of its roof')."""
        if self.is_noise:
            return None
        sign = 1 if self.slowdown > 0 else -1
        if self.time_by_roof is not None and not self.across and not self.per_flop:
            return self._roof_cause(sign)
        moved = [(change * sign, lc, change) for lc in self.shown_levels
                 if (change := self.level_change(lc)) is not None and change * sign >= CAUSE]
        if not moved:
            return None
        # the level whose roof binds (after a slowdown, before a speed-up: what holds it back), where
        # its bytes moved that way; else the level that moved most, and an aside says it does not bind
        primary = self.binding[1] if sign > 0 else self.binding[0]
        level = BINDING_LEVEL.get(primary or "")
        _, lc, change = next((m for m in moved if m[1].level == level), None) or max(moved, key=lambda m: m[0])
        if self.across:
            tail = f"{self.fraction_move} of its roof"
        elif self.per_flop:
            tail = f"FLOP/s {pct(self.gflops_change)}"
        else:
            tail = f"time {pct(self.time_change)}"
        per = " per FLOP" if self.per_flop else ""
        shown = {x.level for x in self.shown_levels if self.level_change(x) is not None}
        if primary is None or primary == "launch" or lc.level == level:
            aside = ""
        elif level is None:  # a compute roof binds: no level of bytes holds it back
            aside = f" ({primary} binds it, not these bytes)"
        elif level in shown:
            aside = f" (not the level that binds it, {primary}, whose bytes did not move as much)"
        else:
            aside = f" (not the level that binds it, {primary}, whose bytes the two files do not count alike)"
        return f"{SHOWN_NAMES.get(lc.level, lc.level.upper())} bytes{per} {pct(change)}, {tail}{aside}"

    def _roof_cause(self, sign: int) -> str | None:
        """The step's cause: the roof whose kernels' time moved most in the direction of its change
        (`time_by_roof`; kernels gone and new included), when by at least CAUSE of the step's
        change; 'DRAM-bound kernels -0.612 ms (DRAM bytes -7.7 %), time -6.0 %'. A whole step has
        no roof of its own: its time is its kernels', each bound by its own."""
        before, after = self.time_by_roof
        moved = {roof: after.get(roof, 0.0) - before.get(roof, 0.0) for roof in {*before, *after}}
        total = self.after_ms - self.before_ms
        roof, ms = max(moved.items(), key=lambda m: m[1] * sign, default=(None, 0.0))
        if roof is None or ms * sign <= 0 or abs(ms) < CAUSE * abs(total):
            return None
        level = BINDING_LEVEL.get(roof, roof.lower())
        bytes_moved = next((lc.change for lc in self.shown_levels if lc.level == level and lc.change is not None), None)
        also = f" ({SHOWN_NAMES.get(level, level.upper())} bytes {pct(bytes_moved)})" if bytes_moved is not None else ""
        named = f"{roof}-bound kernels" if roof != NO_ROOF else "kernels no roof binds"
        (gone, gone_ms), (new, new_ms) = self.unmatched or ((0, 0.0), (0, 0.0))
        swapped = (f"; of the step's kernels, {plural(gone, 'kernel')} gone ({gone_ms:.3f} ms) and {new} new "
                   f"({new_ms:.3f} ms)" if gone or new else "")
        return f"{named} {ms:+.3f} ms{also}, time {pct(self.time_change)}{swapped}"

    def level_change(self, lc: LevelChange) -> float | None:
        """A level's change of bytes, per FLOP across sizes (the FLOPs of each side are its rate times its time)."""
        if not self.per_flop or lc.change is None:
            return lc.change
        if not (self.before_gflops and self.after_gflops and lc.before):
            return None
        flops_b, flops_a = self.before_gflops * self.before_ms, self.after_gflops * self.after_ms
        return (lc.after / flops_a) / (lc.before / flops_b) - 1.0

    @property
    def shown_levels(self) -> list[LevelChange]:
        """The levels as the tables show them: DRAM, L2, and L1 with shared memory as one
        ('l1/shared', one data path, as `show`'s AI L1 counts it) where both sides count them alike."""
        out = [lc for lc in self.levels if lc.level not in ("l1", "smem")]
        parts = [lc for lc in self.levels if lc.level in ("l1", "smem")]
        if parts and len({lc.counted for lc in parts}) == 1:
            out.append(LevelChange("l1/shared", sum(lc.before for lc in parts), sum(lc.after for lc in parts),
                                   parts[0].counted))
        return out

    @property
    def reference_move(self) -> str | None:
        """Two runs timed in rounds: how the kernel's paired % of its reference moved, read by the two
        CI95s (`model.timing.paired`): 'higher' or 'lower' where they do not overlap and the
        percentage moved by more than the pair's noise band (`noise`, the band the reading column
        uses, so that the two columns never disagree), else 'same'; None without both pairings or
        both intervals. Unlike the time, this reading holds across a device whose clock or
        temperature moved between the runs, since each file's kernel and reference shared their
        rounds."""
        if self.vs_reference is None:
            return None
        b, a = self.vs_reference
        if b.ci95 is None or a.ci95 is None:
            return None
        if a.ci95[0] <= b.ci95[1] and b.ci95[0] <= a.ci95[1]:
            return "same"
        if not b.pct or abs(a.pct / b.pct - 1.0) <= self.noise:
            return "same"
        return "higher" if a.pct > b.pct else "lower"

    @property
    def reading(self) -> str:
        """'noise', 'faster' or 'slower' (across GPU models: 'not measured' where no roof binds,
        'closer'/'further' from the binding roof)."""
        if self.slowdown is None:
            return "not measured"
        if self.is_noise:
            return "noise"
        if self.across:
            return "further" if self.slowdown > 0 else "closer"
        return "slower" if self.slowdown > 0 else "faster"

    def to_dict(self) -> dict:
        return {"kernel": self.label, "launch": self.launch, "configuration_changed": self.configuration,
                "time_ms": [self.before_ms, self.after_ms], "time_change": self.time_change,
                "gflops": [self.before_gflops, self.after_gflops], "gflops_change": self.gflops_change,
                "bytes": {lc.level: {"before": lc.before, "after": lc.after, "change": lc.change,
                                     **({"change_per_flop": self.level_change(lc)} if self.per_flop else {}),
                                     "counted": lc.counted} for lc in self.levels},
                "occupancy": [self.before_occupancy, self.after_occupancy],
                "fraction_of_roof": [self.before_fraction, self.after_fraction],
                "fraction_change": self.fraction_change,
                "slowdown": self.slowdown, "per_flop": self.per_flop, "noise": self.noise, "noise_from": self.noise_from,
                "reading": self.reading,
                "binding": list(self.binding), "binding_tied": self.tied,
                "cause": self.cause, **({"joules": list(self.joules)} if self.joules else {}),
                **({"pct_of_reference": [p.pct for p in self.vs_reference],
                    "pct_ci95": [list(p.ci95) if p.ci95 else None for p in self.vs_reference],
                    "pct_move": self.reference_move} if self.vs_reference else {})}


def share(x: float) -> str:
    """0.05 -> '5 %', 0.0363 -> '3.63 %': a threshold or a noise band, unsigned."""
    return f"{x * 100:.3g} %"


def pct(x: float) -> str:
    """-0.38 -> '-38 %', 0.004 -> '+0.4 %'."""
    v = x * 100
    return f"{v:+.0f} %" if abs(v) >= 10 else f"{v:+.1f} %"


@dataclass(frozen=True)
class Untimed:
    """A run's kernel in both files but not verified and timed in both, so in no `Delta` (and in
    `gone` or `new` where one file timed it): in each file its median ms and two-roof reading (None
    where not timed there), its registers and occupancy, as the run table shows them."""

    label: str
    before_ms: float | None
    after_ms: float | None
    before_occupancy: float | None
    after_occupancy: float | None
    registers: tuple[int | None, int | None]
    floors: tuple[Verdict | None, Verdict | None]
    speedup = None  # no speedup without both times
    vs_reference = None  # nor a pairing with the reference
    reference_move = None

    @property
    def roof_move(self) -> str:
        return roof_move(self.floors)


@dataclass(frozen=True)
class PhaseChange:
    """One kernel with a timeline in both files (`results.timeline`), its run before and after:
    time (ms, all its launches), each phase's share of the time ('fill', 'steady', 'drain', 'tail';
    absent: no such phase), the SMs busy in its tail wave, and the steady part's busiest unit
    (`model.timeline.SHARE_OF` key) and its share of its peak there (0..1)."""

    kernel: str
    before_ms: float
    after_ms: float
    before_shares: dict[str, float]
    after_shares: dict[str, float]
    before_tail_busy: float | None
    after_tail_busy: float | None
    before_steady: float | None
    after_steady: float | None
    before_unit: str | None = None
    after_unit: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def phase_changes(before, after, pairs: list[tuple[KernelWork, KernelWork, bool]]) -> list[PhaseChange]:
    """The kernels of two results files (profiles, or runs) as the kernel table matched them
    (`pairs`, from `match`: by name, and launch configuration in a profile, a configuration that
    changed included) that record a timeline of the whole run in both (not `cut_short`), with phases
    in both (`model.timeline.MIN_PHASE_INTERVALS`); labelled as the kernel table labels them (by
    after's launch configuration)."""
    def read(k):
        phases = {p.name: p for p in k.timeline.phases()}
        steady = phases.get("steady")
        return ({n: p.share for n, p in phases.items()}, phases["tail"].busy if "tail" in phases else None,
                steady.roof_share if steady else None, steady.roof if steady else None)

    def by_key(doc, by_name: bool) -> dict:
        if by_name:  # a run's kernels, matched by name (`analysis.work.KernelWork.key`)
            return {(k.name,): k for k in doc.kernels}
        return {(k.name, tuple(k.grid) if k.grid else None, tuple(k.block) if k.block else None): k
                for k in doc.kernels}

    by_name = bool(pairs) and len(pairs[0][0].key) == 1
    theirs, ours = by_key(after, by_name), by_key(before, by_name)
    out = []
    for b, a, _ in pairs:
        k, other = ours.get(b.key), theirs.get(a.key)
        # a timeline of the start of the run only (`Timeline.cut_short`) has no phases of the whole run to compare
        if k is None or other is None or any(x.timeline is None or x.timeline.cut_short or not x.timeline.phases()
                                             for x in (k, other)):
            continue
        (sb, tb, yb, ub), (sa, ta, ya, ua) = read(k), read(other)
        out.append(PhaseChange(a.label, k.time_ms, other.time_ms, sb, sa, tb, ta, yb, ya, ub, ua))
    return out


@dataclass
class WorkComparison:
    """Two results files of one kind, kernel by kernel (`analysis.work`): the matched kernels
    (after's order), the step of a profile (None for runs), the kernels in one file only (labels),
    and one line per difference that comes from the device or the files. Runs add every kernel in
    both files in after's order (`in_both`: its `Delta`, or `Untimed` where one file did not time
    it), the reference's median ms before and after and the two problems."""

    kind: str
    before: Workload
    after: Workload
    kernels: list[Delta]
    step: Delta | None
    gone: list[str]
    new: list[str]
    notes: list[str]
    in_both: list[Delta | Untimed] = field(default_factory=list)
    reference_ms: tuple[float, float] | None = None  # runs: cuBLAS's median ms, before and after
    problems: tuple[Problem, Problem] | None = None  # runs: the problems of before and after
    phases: list[PhaseChange] = field(default_factory=list)  # profiles: kernels with a timeline in both
    # those of `notes` on what compare's tables show alone ('bound x', 'of roof', the bytes), which a
    # gate that prints none of them leaves out
    table_notes: tuple[str, ...] = ()

    @property
    def per_flop(self) -> bool:
        """Runs of two problem sizes (--across-sizes): each kernel read per FLOP (`Delta.per_flop`)."""
        return any(d.per_flop for d in self.kernels)

    @property
    def same_device(self) -> bool:
        return same_gpu(self.before.device.name, self.after.device.name)

    @property
    def is_step(self) -> bool:
        """Whether the kernels compared are the parts of a program step (two profiles), not
        alternatives solving one problem (two runs)."""
        return self.before.is_step

    @property
    def held(self) -> tuple[float, float]:
        """The share of each file's kernel time the matched kernels hold (`held`): before's, after's."""
        return held(self.before, self.after, self.kernels)

    @property
    def reference_speedup(self) -> float | None:
        """The reference's time before over after (runs; None for profiles)."""
        return self.reference_ms[0] / self.reference_ms[1] if self.reference_ms else None

    def to_dict(self) -> dict:
        """The `--json` document (keys in docs/compare.md)."""
        return {"kind": self.kind, "before_device": self.before.device.name, "after_device": self.after.device.name,
                "same_device": self.same_device, "noise_fixed": NOISE, "cause_threshold": CAUSE,
                "step": self.step.to_dict() if self.step else None,
                "kernels": [d.to_dict() for d in self.kernels], "gone": self.gone, "new": self.new,
                "reference_speedup": self.reference_speedup,
                **({"phases": [p.to_dict() for p in self.phases]} if self.phases else {}), "notes": self.notes}


def _shape(key: tuple) -> str:
    """A profiled kernel's launch configuration, '2x66 x 384' (grid x block, trailing 1s dropped)."""
    if len(key) < 3 or key[1] is None:
        return "-"

    def dims(d):
        d = list(d or ())
        while len(d) > 1 and d[-1] == 1:
            d.pop()
        return "x".join(map(str, d))
    return f"{dims(key[1])} x {dims(key[2])}"


def _levels(b: KernelWork | None, a: KernelWork | None, before: dict | None = None, after: dict | None = None,
            counted: bool = True) -> list[LevelChange]:
    bb = before if before is not None else b.bytes
    ab = after if after is not None else a.bytes
    out = []
    for lvl in ("dram", "l2", "l1", "smem"):
        if lvl not in bb or lvl not in ab:
            continue
        cb = b.bytes_counted.get(lvl) if b else counted
        ca = a.bytes_counted.get(lvl) if a else counted
        if cb != ca:  # counted on one side, the model's on the other: not the same measure
            continue
        out.append(LevelChange(lvl, bb[lvl], ab[lvl], bool(cb)))
    return out


MATCHED = 0.5  # two profiles whose kernels in common hold less of either step's time are said to differ


def commands_note(before: ProfileResults, after: ProfileResults) -> list[str]:
    """The note where two profiles record different commands (a change of program or of its
    arguments), else none."""
    cb, ca = before.command, after.command
    if cb and ca and cb != ca:
        return [f"the profiles record different commands ({' '.join(cb)[:80]} before, {' '.join(ca)[:80]} "
                "after): a change of program, or of its arguments, is part of every change below"]
    return []


def held(wb: Workload, wa: Workload, deltas: list[Delta]) -> tuple[float, float]:
    """The share of each file's kernel time (0..1; 1 for a file with none) that the matched kernels
    `deltas` hold: before's, after's."""
    total_b, total_a = math.fsum(k.time_ms for k in wb.kernels), math.fsum(k.time_ms for k in wa.kernels)
    return (math.fsum(d.before_ms for d in deltas) / total_b if total_b else 1.0,
            math.fsum(d.after_ms for d in deltas) / total_a if total_a else 1.0)


def _other_programs(before, after, wb: Workload, wa: Workload, deltas: list[Delta]) -> list[str]:
    """Notes where two profiles may not be of one program: the commands they record differ, or the
    kernels they share hold less than `MATCHED` of either step's GPU time (the step's change is then
    mostly of kernels one file alone holds)."""
    notes = commands_note(before, after)
    held_b, held_a = held(wb, wa, deltas)
    if min(held_b, held_a) < MATCHED:
        notes.append(f"the {len(deltas)} kernel(s) the profiles share hold {100 * held_b:.3g} % of the first step's "
                     f"GPU time and {100 * held_a:.3g} % of the second's: the step's change is mostly of kernels "
                     "only one of them ran")
    return notes


def _delta(b: KernelWork, a: KernelWork, profile: bool, configuration: str | None = None,
           across: bool = False, floors: tuple[Verdict | None, Verdict | None] | None = None,
           per_flop: bool = False) -> Delta:
    spreads = [s for s in (b.spread, a.spread) if s is not None]
    # the runs' spread where both files have one; a file without samples (a sweep's point, an older
    # file) has an unknown spread, not a nil one: the fixed band at least
    known = not profile and spreads and (len(spreads) == 2 or spreads[0] >= NOISE)
    noise, source = (max(spreads), "spread") if known else (NOISE, "fixed")
    if profile:  # 1 us of one launch's duration is noise too, however short the kernel
        noise = max(noise, NOISE_US * 1e-3 * b.launches / b.time_ms)
    return Delta(a.name, b.time_ms, a.time_ms, b.main_gflops, a.main_gflops, _levels(b, a), b.occupancy,
                 a.occupancy, _fraction(b.verdict), _fraction(a.verdict), noise, source, configuration,
                 _shape(a.key) if profile else None,
                 across, None if profile else (b.registers, a.registers), floors,
                 (b.joules, a.joules) if b.joules is not None and a.joules is not None else None,
                 binding=(_binding(b.verdict), _binding(a.verdict)), tied=_tied(b.verdict, a.verdict),
                 bytes_read=(_bytes_read(b.verdict), _bytes_read(a.verdict)),
                 roof_values=_roof_values(b.verdict, a.verdict), per_flop=per_flop)


def _pairings(before: Results, after: Results, b: KernelRecord, a: KernelRecord) -> tuple[Pairing, Pairing] | None:
    """Each run's paired % of its reference for one kernel (`model.timing.paired`), where both files
    timed it in rounds with their reference; else None."""
    if not (b.timing and a.timing and before.reference.timing and after.reference.timing):
        return None
    pb, pa = paired(b.timing, before.reference.timing), paired(a.timing, after.reference.timing)
    return (pb, pa) if pb and pa else None


def _floor(doc: Results, k: KernelRecord) -> Verdict | None:
    """A run kernel's two-roof reading (`Results.floors`), None unless it was verified and timed."""
    return doc.floors(k) if k.timed else None


def _in_both(before: Results, after: Results, deltas: list[Delta]) -> list[Delta | Untimed]:
    """Every kernel of two runs in both files, in after's order: its `Delta` where both timed it,
    else `Untimed`."""
    timed = {d.label: d for d in deltas}
    old = {k.name: k for k in before.kernels}

    def occupancy(k: KernelRecord) -> float | None:
        return k.occupancy.occupancy if k.occupancy else None

    return [timed.get(k.name) or Untimed(k.name, b.time_ms if b.timed else None, k.time_ms if k.timed else None,
                                         occupancy(b), occupancy(k), (b.registers, k.registers),
                                         (_floor(before, b), _floor(after, k)))
            for k in after.kernels if (b := old.get(k.name)) is not None]


def _step(before: Workload, after: Workload, gone: list[str] = (), new: list[str] = ()) -> Delta:
    """The whole profiled step: its GPU time, all counted FLOPs over it, the bytes of each level
    summed over the kernels that have it, the time-weighted theoretical occupancy, its kernels'
    time by the roof that binds each, and the kernels (labels `gone` of before's, `new` of
    after's: `match`) that only one side ran, with their time."""
    def totals(w: Workload):
        flops = {"all": sum(sum(k.flops.values()) for k in w.kernels)}
        by_level = {}
        for k in w.kernels:
            for lvl, n in k.bytes.items():
                by_level[lvl] = by_level.get(lvl, 0.0) + n
        known = [k for k in w.kernels if k.occupancy is not None]
        t = sum(k.time_ms for k in known)
        occ = sum(k.occupancy * k.time_ms for k in known) / t if t else None
        return flops, by_level, occ

    def by_roof(w: Workload) -> dict[str, float]:
        out: dict[str, float] = {}
        for k in w.kernels:
            roof = _binding(k.verdict) or NO_ROOF
            out[roof] = out.get(roof, 0.0) + k.time_ms
        return out

    def ran_alone(w: Workload, labels) -> tuple[int, float]:
        alone = set(labels)
        return len(alone), sum(k.time_ms for k in w.kernels if k.label in alone)

    fb, bb, ob = totals(before)
    fa, ba, oa = totals(after)
    return Delta("step (profiled GPU time)", before.step_ms, after.step_ms, _rate(fb, before.step_ms),
                 _rate(fa, after.step_ms), _levels(None, None, bb, ba), ob, oa, None, None, NOISE, "fixed",
                 time_by_roof=(by_roof(before), by_roof(after)),
                 unmatched=(ran_alone(before, gone), ran_alone(after, new)))


def match(before: Workload, after: Workload) -> tuple[list[tuple[KernelWork, KernelWork, bool]], list[str], list[str]]:
    """Pairs (before, after, configuration changed) in after's order, then the labels of before's
    kernels not matched (gone) and of after's (new). A kernel matches by its key (name and launch
    configuration for a profile, name for a run); failing that, by name alone where the name is
    unique in both files (its launch configuration changed)."""
    old = before.by_key()
    count_b, count_a = Counter(k.name for k in before.kernels), Counter(k.name for k in after.kernels)
    by_name = {k.name: k for k in before.kernels if count_b[k.name] == 1}
    used, pairs = set(), []
    for k in after.kernels:
        if k.key in old:
            pairs.append((old[k.key], k, False))
            used.add(k.key)
    for k in after.kernels:
        if k.key in old:
            continue
        b = by_name.get(k.name)
        if b is not None and count_a[k.name] == 1 and b.key not in used:
            pairs.append((b, k, True))
            used.add(b.key)
    order = {id(k): i for i, k in enumerate(after.kernels)}
    pairs.sort(key=lambda p: order[id(p[1])])
    matched_after = {id(p[1]) for p in pairs}
    return (pairs, [k.label for k in before.kernels if k.key not in used],
            [k.label for k in after.kernels if id(k) not in matched_after])


def unpaired(before: Workload, after: Workload, pairs: list[tuple[KernelWork, KernelWork, bool]]) -> list[str]:
    """The names in both files that `match` left with a kernel unmatched because the name is not
    unique in one of them (launches of several configurations, a configuration changed: which
    pairs with which is not known), each as 'NAME (2 configurations before, 1 after)'."""
    paired_b, paired_a = {id(b) for b, _, _ in pairs}, {id(a) for _, a, _ in pairs}
    count_b, count_a = Counter(k.name for k in before.kernels), Counter(k.name for k in after.kernels)
    left = {k.name for k in before.kernels if id(k) not in paired_b} | {k.name for k in after.kernels
                                                                       if id(k) not in paired_a}
    return [f"{name} ({count_b[name]} configuration{'s' if count_b[name] > 1 else ''} before, {count_a[name]} after)"
            for name in sorted(left) if count_b[name] and count_a[name] and max(count_b[name], count_a[name]) > 1]


def _ratio(a: float, b: float) -> str:
    return f"{b / a:.2f}x"


def _notes(before: Results, after: Results, different_problems: bool) -> list[str]:
    """Two runs: one line per difference that comes from the files (a sweep, different problems)
    or the device (GPU model and peaks, the GPU itself, the L2 state, the compile target)."""
    db, da = before.device, after.device
    notes = [f"the {which} file holds a size sweep: compared at its largest size, {doc.problem.problem.text()}"
             for which, doc in (("first", before), ("second", after)) if doc.sweep]
    if different_problems:
        notes.append(f"different problems ({before.problem.problem.text()} and {after.problem.problem.text()}): "
                     "speedups compare the time of one launch of each; the reading compares the time of a FLOP "
                     "(FLOP/s), and its cause the bytes per FLOP")
    if not same_gpu(db.name, da.name):
        notes.append(f"different GPUs: {db.name} before, {da.name} after; the speedups hold the change of GPU, "
                     "'roof' reads each run against its own GPU's roofs")
        compute = ""  # a tensor run's own compute roof beside FP32's, where both files record it
        pb, pa = before.peak_gflops(), after.peak_gflops()
        if before.precision == after.precision and before.precision != "fp32" and pb and pa:
            compute = f"peak {before.compute_level} {pb:,.0f} -> {pa:,.0f} GFLOP/s ({_ratio(pb, pa)}), "
        notes.append(f"{compute}peak FP32 {db.peak_fp32_gflops:,.0f} -> {da.peak_fp32_gflops:,.0f} GFLOP/s "
                     f"({_ratio(db.peak_fp32_gflops, da.peak_fp32_gflops)}), peak DRAM {db.peak_dram_gbps:,.0f} -> "
                     f"{da.peak_dram_gbps:,.0f} GB/s ({_ratio(db.peak_dram_gbps, da.peak_dram_gbps)})")
    elif db.pci_bus_id and da.pci_bus_id and db.pci_bus_id != da.pci_bus_id:
        notes.append(f"same GPU model, different GPUs ({db.pci_bus_id} and {da.pci_bus_id})")
    if before.l2 != after.l2:
        notes.append(f"timed with the L2 {before.l2 or 'not recorded'} before and {after.l2 or 'not recorded'} after "
                     "(cold: flushed before each launch): small problems change with it, not only with the code")
    if db.arch != da.arch:
        notes.append(f"compiled for {db.arch} before and {da.arch} after: register counts and occupancy change "
                     "with the compiler's target and the SM's limits, not only with the code")
    return notes


def _at_common_size(before: Results, after: Results) -> tuple[Results, Results, list[str]]:
    """Two runs of different problems read at one size where a file's size sweep holds the other's
    problem (two sweeps: the largest size both hold), each file at that size (`sweep_point.at_size`),
    with a note for each file read at a size other than its largest. Files of one problem, or that
    share no size, come back as they are."""
    if before.problem.problem == after.problem.problem:
        return before, after, []
    common = [p for p in sizes(after) if holds(before, p)]
    if not common:
        return before, after, []
    size = max(common, key=lambda p: (p.flops, p.m, p.n))
    notes = [f"the {which} file holds a size sweep: compared at {size.text()}, one of its sizes, where it keeps "
             "each kernel's time but no timing samples or counters" for which, doc in (("first", before), ("second", after))
             if doc.problem.problem != size]
    return at_size(before, size), at_size(after, size), notes


def compare_work(before: Results | ProfileResults, after: Results | ProfileResults, force: bool = False) -> WorkComparison:
    """Any two results files of one kind, kernel by kernel. Raises UsageError for a profile
    against a run file, for runs of different problems (unless `force`: times are then compared as
    they are, per launch), or when no kernel matches."""
    sized = []
    if not before.kernels_are_a_step and not after.kernels_are_a_step:  # two runs
        before, after, sized = _at_common_size(before, after)
    # across GPU models each file is read against its GPU's theoretical roofs: a measured roof on
    # one side only (or a different set of them) would move every fraction by the measured/theoretical gap
    across = not same_gpu(before.device.name, after.device.name)
    wb, wa = workload(before, measured=not across), workload(after, measured=not across)
    if wb.is_step != wa.is_step:
        raise UsageError(f"cannot compare a {wb.kind} with a {wa.kind}: a profile's kernels are a program's steps, "
                         "a run's are alternatives for one problem; compare two profiles or two run files")
    profile = wb.is_step
    if not profile:
        pb, pa = before.problem.problem, after.problem.problem
        if pb.dtype != pa.dtype:  # forced or not: a time in one precision says nothing of one in another
            raise UsageError(f"the files solve different problems (in {pb.dtype} and in {pa.dtype}): each is read "
                             "against its own precision's roof; compare runs of one precision")
        if pb != pa and not force:
            held = "".join(f"; the {which} file's sweep holds {', '.join(p.text() for p in sizes(doc))}"
                           for which, doc in (("first", before), ("second", after)) if doc.sweep)
            raise UsageError(f"the files solve different problems ({pb.text()} and {pa.text()}{held}); their times do "
                             "not compare; pass {force} to compare them anyway", mentions=["force"])
    pairs, gone, new = match(wb, wa)
    if not pairs:
        raise UsageError("the two files have no kernel in common; compare runs of the same kernels")
    records = None if profile else ({k.name: k for k in before.kernels}, {k.name: k for k in after.kernels})
    resized = not profile and pb != pa  # --across-sizes: each kernel read per FLOP
    deltas = [_delta(b, a, profile, f"{_shape(b.key)} -> {_shape(a.key)}" if changed else None, across,
                     None if profile else (_floor(before, records[0][b.name]), _floor(after, records[1][a.name])),
                     resized)
              for b, a, changed in pairs]
    if not profile:
        deltas = [replace(d, vs_reference=_pairings(before, after, records[0][b.name], records[1][a.name]))
                  for d, (b, a, _) in zip(deltas, pairs)]
    notes = [] if profile else sized + _notes(before, after, pb != pa)
    tables: list[str] = []

    def table(note: str) -> None:  # a note on a column of compare's tables (`WorkComparison.table_notes`)
        notes.append(note)
        tables.append(note)

    if profile:
        notes += _other_programs(before, after, wb, wa, deltas)
        # a report read from two of its exports (a raw page and a text output) counts more in one: the
        # step's FLOP/s then moves with what was counted, not with the program
        def kinds(k: KernelWork) -> set[str]:  # the precisions a file counted FLOPs of
            return {p for p, n in k.flops.items() if n}
        counted = [a.label for b, a, _ in pairs if kinds(b) != kinds(a)]
        if counted:
            table(f"{plural(len(counted), 'kernel')} counted other kinds of FLOPs in each file "
                  f"({', '.join(counted[:3])}{', ...' if len(counted) > 3 else ''}): the step's FLOP/s sums what each "
                  "file counted, so it moves with that too")
        notes.append(f"a profile has no timing samples: a time change within {share(NOISE)}, or within "
                     f"{NOISE_US:g} us per launch, is called noise")
        if across:
            notes.append(f"different GPUs: {wb.device.name} before, {wa.device.name} after; times hold the change "
                         "of GPU")
        elif bool(before.device.measured_at) != bool(after.device.measured_at):
            which = "first" if before.device.measured_at else "second"
            table(f"'of roof' reads the {which} file against its measured ceilings and the other against its "
                         "theoretical roofs (it records none measured): a move of 'of roof' holds that change of roof, "
                         "not only the kernel's")
    else:
        fixed = sum(1 for d in deltas if d.noise_from == "fixed")
        if fixed:
            notes.append(f"{fixed} kernel(s) without timing samples in one file or both: noise is a fixed "
                         f"{share(NOISE)} there")
    if across:
        notes.append("the fraction of each kernel's binding roof reads each file against its own GPU's theoretical "
                     "roofs: a measured roof has no counterpart on the other GPU")
        if not profile and any(lc.counted for d in deltas for lc in d.levels):
            table("the first table's 'bound x' and 'roof' read the model's bytes, 'of roof' and the reading "
                         "the bytes Nsight Compute counted: where the two differ, the two tables may move apart")
    elif not profile and (before.device.measured_fp32_gflops is not None or after.device.measured_fp32_gflops is not None):
        table("'of roof' reads each kernel as show's verdict does (the measured ceilings, each at least the "
                     "best rate its file saw, and the bytes Nsight Compute counted where it did); 'bound x' is the "
                     "model's bytes at the datasheet roofs")
    bytesless = sum(1 for d in deltas if not d.levels)
    if bytesless:
        table(f"{bytesless} kernel(s) without bytes to compare: bytes are compared where both files counted "
                     "them (Nsight Compute: roofline run --profile, or a profile) or neither did (the model's on both sides), "
                     "never counted bytes against modelled ones")
    if not profile:  # a kernel of one name at another tile (or another version of it) in each file
        templates = [(b.name, records[0][b.name].template, records[1][a.name].template) for b, a, _ in pairs]
        changed = [f"{name} ({tb} -> {ta})" for name, tb, ta in templates if tb and ta and _spelled(tb) != _spelled(ta)]
        if changed:
            notes.append(f"{len(changed)} kernel(s) ran another template in each file, so their change is the kernel's "
                         f"too: {', '.join(changed)}")
    renamed = sum(1 for d in deltas if d.configuration)
    if renamed:
        notes.append(f"{renamed} kernel(s) matched by name alone: their launch configuration changed")
    ambiguous = unpaired(wb, wa, pairs)
    if ambiguous:
        notes.append(f"{len(ambiguous)} kernel name(s) in both files left among the gone and the new: launched at "
                     "several configurations in one file and at others in the other, so which launch pairs with which "
                     f"is not known: {'; '.join(ambiguous)}")
    if profile:
        # a profile of programs profiled apart (`work.apart`) has no step: its kernels are read alone, as whatif does
        pb_, pa_ = getattr(before, "programs", 1), getattr(after, "programs", 1)
        separate = pb_ > 1 or pa_ > 1
        if separate:
            which = ("both profiles hold" if pb_ > 1 and pa_ > 1 else
                     f"the {'first' if pb_ > 1 else 'second'} profile holds")
            notes.append(f"{which} the launches of several programs, profiled apart and read together: each kernel "
                         "is read alone, their times add up to no step, and no step is compared")
    phases = phase_changes(before, after, pairs)
    notes += _sampled_apart(before, after, phases)
    if profile:
        return WorkComparison(wb.kind, wb, wa, deltas, None if separate else _step(wb, wa, gone, new), gone, new,
                              notes, deltas, phases=phases, table_notes=tuple(tables))
    return WorkComparison(wb.kind, wb, wa, deltas, None, gone, new, notes, _in_both(before, after, deltas),
                          (before.reference.time_ms, after.reference.time_ms), (pb, pa),
                          phases=phases, table_notes=tuple(tables))


def _sampled_apart(before, after, phases: list[PhaseChange]) -> list[str]:
    """A note naming the kernels of either file sampled over the start of their run only (left out of
    `phases`), and one naming those of `phases` whose sampled launch, in either file, ran at another
    SM clock than its timed calls (`results.timeline.TimedKernel.clock_apart`, a run's): their phase
    shares are of that launch, as `show` and `whatif` say; none where there are no such kernels."""
    shown = {p.kernel for p in phases}
    timed = [(which, k) for which, doc in (("before", before), ("after", after)) for k in doc.timed_kernels()]
    return phase_notes("over their runs", [f"{k.label} ({which})" for which, k in timed if k.timeline.cut_short],
                       [f"{k.label} ({which})" for which, k in timed if k.clock_apart and k.label in shown],
                       "show says how much")


def _spelled(template: str) -> str:
    """A ladder kernel's template as today's family spells it: a record from before a parameter was
    added (split_k's REDUCERS) gets the value that is the kernel as it ran
    (`families.from_expression`), so that the same kernel in an older file is not another template;
    any other template (a user's kernel) as it is."""
    from ..ladder import families

    try:
        return families.from_expression(template).name_expression
    except UsageError:
        return template
