"""What each kernel of a results file could save if it ran at a chosen fraction of the roof that
binds it (`roofline whatif`), and, for a profile of one step, what that saving does to the step
(Amdahl's law: only the improved kernel's time changes).

Per kernel, from its measured time `t` and its binding floor `f` (`model.roofs.Verdict.binding`:
its counted FLOPs or bytes at that roof, measured roofs where the file has them):

    time at the target   t_target = min(t, f / target)     (a kernel already past the target keeps t)
    saved                s = t - t_target
    a profile's step     step_after = step - s, speed-up = step / step_after
    cumulative           step - (s of this kernel and every kernel ranked above it)
    a run                speed-up alone = t / t_target (its kernels are alternatives: no step)

The fusion what-if (a profile whose kernels record `launch_order`, `dram_read_bytes` and
`dram_write_bytes`): walking the launches in the order they ran, each launch A followed at once by
a launch B (places p and p + 1), both bound by a memory roof (DRAM or L2) and both with their
DRAM bytes read and written counted apart, could hand B what A writes without DRAM. Per launch,
a kernel's figures are its group's means (total over launches):

    bytes passing        b = min(A's DRAM bytes written, B's DRAM bytes read)
    saved                s = min(2 b / DRAM roof, t_A, t_B)   (written once and read once less;
                         the measured DRAM roof where the file has one, as the DRAM floor uses)

summed per (A kernel, B kernel) over every place they follow each other, ranked by s, the top
`FUSION_TOP` with the step after and its speed-up (Amdahl). Pairs share kernels, so their
savings do not add.

A profile that records who launched its kernels (`ProfileResults.attribution`) is read by op too:
each op (in each phase) at the target, every owned row of it (the launches of one kernel) held to
its own binding floor as a kernel is (`analysis.owners.row_floor`), `t_target = min(t, f / target)`
per row, summed; and, where the owned rows record their launches' places, the op fusion what-if:
each launch followed at once by a launch of another op (or of the same op in another module), both
memory-bound with their DRAM bytes counted apart, passes the bytes computed above, summed per pair
of ops (op and phase) over every place they meet, ranked by the ms saved, the top `FUSION_TOP`.

Kernels are ranked by `s`, the largest first. A kernel with no binding floor (neither work nor
bytes counted) gets no figure and is counted in the notes; its floor is never guessed. Times in
ms; `target` a fraction of the roof in (0, 1].
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from ..errors import UsageError
from ..model.roofs import ROOF_OF_LEVEL, Roof
from ..model.units import ms_at, plural
from ..results.profile import ProfileResults
from ..results.schema import Results
from .work import KernelWork, Workload, apart, phase_notes, workload

DEFAULT_TARGET = 0.8
STEP_TOLERANCE = 1e-6  # relative: a profile's kernels must add up to its step's GPU time

# Where a profile lacks what the fusion what-if needs.
FUSION_NOTE = ("no fusion what-if: it needs each launch's place in the launch order and its DRAM bytes read and "
               "written apart (dram__bytes_read.sum, dram__bytes_write.sum), to see one kernel's output pass "
               "through DRAM into the next; this profile holds {lacking}: profile again with this version of "
               "roofline (roofline profile records both{imported})")
FUSION_TOP = 5  # kernel pairs the fusion what-if reports
MIN_SAVED_MS = 0.0005  # a fusion saving less (0.000 ms as its table prints it) is no candidate: not listed
MEMORY_ROOFS = ("DRAM", "L2")  # the binding roofs that make a kernel memory-bound here


@dataclass(frozen=True)
class KernelWhatIf:
    """One kernel at the target. Times in ms; None where the kernel has no binding floor (or, for
    the step columns, where the file has no step)."""

    name: str
    label: str  # the name, with the launch configuration where two kernels share a name
    roof: str | None  # the binding roof's level ('DRAM', 'BF16 tensor', 'L1'); None: no floor
    roof_measured: bool | None  # its value was measured on the device (else the datasheet's)
    time_ms: float
    floor_ms: float | None  # at the binding roof
    target_ms: float | None  # at `target` of the binding roof, never more than `time_ms`
    saved_ms: float | None
    time_share: float | None  # of the step (a profile); None for a run
    step_ms_after: float | None  # the step with only this kernel improved (a profile)
    speedup: float | None  # of the step (a profile) or of the kernel alone (a run)
    cumulative_step_ms: float | None  # the step with this kernel and all ranked above it improved
    # what the file did not count (`ProfiledKernel.uncounted`: 'fp32', 'dram'): for a kernel without a floor,
    # why; for one with a floor, that floor is only a lower bound (None: all counted)
    not_counted: tuple[str, ...] | None = None
    cumulative_speedup: float | None = None  # the step over `cumulative_step_ms`
    joules: float | None = None  # a run's kernel measured with --energy: joules per launch now
    roof_seen: bool = False  # its measured ceiling was raised to the best rate its run saw (`roofs.at_least_seen`)
    roof_borrowed: str | None = None  # where its measured ceiling came from when not its own ('FP16 cuBLAS': `Roof.borrowed`)

    def to_json(self) -> dict:
        return {"name": self.name, "label": self.label, "roof": self.roof, "roof_measured": self.roof_measured,
                "roof_seen": self.roof_seen, "roof_borrowed": self.roof_borrowed,
                "time_ms": self.time_ms, "floor_ms": self.floor_ms, "target_ms": self.target_ms,
                "saved_ms": self.saved_ms, "time_share": self.time_share, "step_ms_after": self.step_ms_after,
                "speedup": self.speedup, "cumulative_step_ms": self.cumulative_step_ms,
                "cumulative_speedup": self.cumulative_speedup, "not_counted": None if self.not_counted is None else list(self.not_counted),
                **({"joules": self.joules} if self.joules is not None else {})}


@dataclass(frozen=True)
class FusionWhatIf:
    """One kernel followed at once by another (`first` then `second`, each a kernel's label),
    summed over every place in the launch order where they do so: the DRAM bytes the first writes
    and the second reads (`passing_bytes`, the smaller of the two per launch, added up) and the ms
    fusing them would save at the DRAM roof (`roof_gbps`, measured or the datasheet's), never more
    than the shorter launch; the step after and its speed-up (Amdahl)."""

    first: str
    second: str
    first_roof: str  # the binding roof of each ('DRAM' or 'L2')
    second_roof: str
    occurrences: int
    passing_bytes: float
    saved_ms: float
    roof_gbps: float
    roof_measured: bool
    step_ms_after: float
    speedup: float

    def to_json(self) -> dict:
        return asdict(self)  # every field, in order


@dataclass(frozen=True)
class OpWhatIf:
    """One op in one phase (`analysis.owners`) at the target: its time now, its floor (each of its
    kernels at its own roof; None where none has one), at the target, saved, the roof binding most
    of its floor, its launches, and the step with only this op improved (Amdahl). Times in ms."""

    op: str
    phase: str
    time_ms: float
    floor_ms: float | None
    target_ms: float
    saved_ms: float
    binding: str | None
    launches: int
    step_ms_after: float
    speedup: float

    def to_json(self) -> dict:
        return asdict(self)  # every field, in order


@dataclass(frozen=True)
class OpFusionWhatIf:
    """A launch of one op followed at once by a launch of another (`first`, `second`: op and phase,
    'aten::mul (backward)'), summed over every place they meet: the DRAM bytes passing and the ms
    fusing them saves at the DRAM roof (as `FusionWhatIf`), the step after and its speed-up."""

    first: str
    second: str
    occurrences: int
    passing_bytes: float
    saved_ms: float
    roof_gbps: float
    roof_measured: bool
    step_ms_after: float
    speedup: float

    def to_json(self) -> dict:
        return asdict(self)  # every field, in order


@dataclass(frozen=True)
class PhaseWhatIf:
    """One kernel of a results file with a timeline (`results.timeline`): the ms its fill, drain and
    tail wave take, and what each would take at the steady phase's rate (its work on the steady
    phase's busiest unit, with that unit at the share of its peak it holds in the steady phase:
    `model.timeline.Phase.at_rate_us`), over all its launches (each
    read as its longest, sampled one); the step (programs profiled apart: the kernel) with the tail
    wave gone (a size-aware tile, every SM busy to the end) and with the fill gone (a deeper
    pipeline, an earlier start). Times in ms."""

    kernel: str
    time_ms: float
    steady_share: float  # the steady phase's busiest unit's share of its peak there, 0..1
    fill_ms: float
    fill_saved_ms: float
    drain_ms: float
    drain_saved_ms: float
    tail_ms: float
    tail_saved_ms: float
    tail_busy: float | None  # the SMs busy in the tail wave, 0..1 (None: no tail)
    of: str  # what the two times below are of: 'step' (one program's step) or 'kernel' (programs read apart)
    ms_without_tail: float  # that step's (or kernel's) time with the tail wave gone
    ms_without_fill: float  # and with the fill gone
    steady_unit: str = "-"  # that unit (`model.timeline.SHARE_OF` key)

    def to_json(self) -> dict:
        return asdict(self)  # every field, in order


@dataclass(frozen=True)
class WhatIf:
    """Every kernel of a file at `target` of its binding roof, ranked by the time it saves (those
    without a floor last). `step_ms` and the step columns only for a profile (`kind` 'profile',
    `is_step`)."""

    kind: str  # 'profile' or 'run'
    device: str
    target: float
    step_ms: float | None
    kernels: list[KernelWhatIf]
    problem: str | None = None
    notes: list[str] = field(default_factory=list)
    fusion: list[FusionWhatIf] = field(default_factory=list)  # a profile's top kernel pairs, by saving
    is_step: bool = False  # its kernels are one step's parts (a profile), not alternatives (a run)
    ops: list[OpWhatIf] | None = None  # a profile with owners: every op at the target, by saving
    op_fusion: list[OpFusionWhatIf] | None = None  # and its top op pairs, where the launches' places are recorded
    phases: list[PhaseWhatIf] | None = None  # a profile's kernels with a timeline: their phases at the steady rate

    @property
    def ranked(self) -> list[KernelWhatIf]:
        """The kernels with a floor, by saving."""
        return [k for k in self.kernels if k.saved_ms is not None]

    @property
    def no_roof(self) -> list[KernelWhatIf]:
        return [k for k in self.kernels if k.saved_ms is None]

    @property
    def kernels_ms(self) -> float:
        """The kernels' times added up (a profile: the step's profiled GPU time)."""
        return math.fsum(k.time_ms for k in self.kernels)

    @property
    def saved_ms(self) -> float:
        """Every kernel with a floor at the target, together (a profile's kernels run one after
        another, so their savings add)."""
        return math.fsum(k.saved_ms for k in self.ranked)

    @property
    def step_ms_after(self) -> float | None:
        return None if self.step_ms is None else self.step_ms - self.saved_ms

    def to_json(self) -> dict:
        return {"kind": self.kind, "device": self.device, "target": self.target, "problem": self.problem,
                "step_ms": self.step_ms, "step_ms_after_all": self.step_ms_after,
                "saved_ms_all": self.saved_ms if self.step_ms is not None else None,
                "kernels": [k.to_json() for k in self.kernels], "fusion": [f.to_json() for f in self.fusion],
                **({"ops": [o.to_json() for o in self.ops]} if self.ops is not None else {}),
                **({"op_fusion": [f.to_json() for f in self.op_fusion]} if self.op_fusion is not None else {}),
                **({"phases": [p.to_json() for p in self.phases]} if self.phases is not None else {}),
                "notes": list(self.notes)}


def check_target(target: float) -> float:
    """`target` as a fraction of the roof. Raises UsageError unless 0 < target <= 1."""
    if not isinstance(target, (int, float)) or not math.isfinite(target) or not 0 < target <= 1:
        given = f"{target:g} ({100 * target:g} %)" if isinstance(target, (int, float)) and math.isfinite(target) \
            else repr(target)
        raise UsageError(f"{{target}}: {given} is not a fraction of the roof in (0, 1], e.g. 0.8 or 80 %", "target")
    return float(target)


def whatif(doc: Results | ProfileResults, target: float = DEFAULT_TARGET) -> WhatIf:
    """Every kernel of `doc` (`analysis.work.workload`) at `target` (0 < target <= 1) of its
    binding roof, ranked by the ms saved (module docstring). Raises UsageError for a target out
    of range, or a profile whose kernels do not add up to its step."""
    target = check_target(target)
    w = apart(doc, workload(doc))
    if w.is_step and w.step_ms is not None:
        total = math.fsum(k.time_ms for k in w.kernels)
        if abs(total - w.step_ms) > STEP_TOLERANCE * w.step_ms:
            raise UsageError(f"the profile's kernels add up to {total:g} ms, not its step's {w.step_ms:g} ms")
    rows = [_kernel(k, target, w, list(k.uncounted)) for k in w.kernels]
    with_floor = sorted((r for r in rows if r.saved_ms is not None), key=lambda r: (-r.saved_ms, -r.time_ms))
    without = sorted((r for r in rows if r.saved_ms is None), key=lambda r: -r.time_ms)
    if w.step_ms is not None:
        done, cumulative = 0.0, []
        for r in with_floor:
            done += r.saved_ms
            cumulative.append(replace(r, cumulative_step_ms=w.step_ms - done,
                                      cumulative_speedup=w.step_ms / (w.step_ms - done)))
        with_floor = cumulative
    # a profile's own caveats (how it was made: several programs' reports read together, say) hold
    # for its reading here too
    notes = (list(doc.notes) if doc.kernels_are_a_step else []) + _notes(w, with_floor, without, target)
    pairs: list[FusionWhatIf] = []
    ops = op_pairs = None
    if w.is_step:  # a step's launches, one after another: what passes between two of them
        pairs, fusion_notes = fusion(doc, w)
        notes += fusion_notes
        if getattr(doc, "attribution", None) is not None and w.step_ms:
            ops = by_op(doc, target, w.step_ms)
            op_pairs, op_notes = op_fusion(doc, w)
            notes += op_notes
    timed = doc.timed_kernels()
    phases = by_phase(doc, w.step_ms if w.is_step else None, timed)
    shown = {p.kernel for p in phases}
    notes += phase_notes("by phase", [k.label for k in timed if k.timeline.cut_short],
                         [k.label for k in timed if k.clock_apart and k.label in shown],
                         "show says how much, and how to sample the whole run", ", taken over to the timed time")
    return WhatIf(w.kind, w.device.name, target, w.step_ms, with_floor + without, w.problem, notes, pairs, w.is_step,
                  ops, op_pairs, phases or None)


def by_phase(doc: ProfileResults, step_ms: float | None, timed: list | None = None) -> list[PhaseWhatIf]:
    """Each kernel of results file `doc` (a profile or a run) that records a timeline of its whole
    run (not `cut_short`) with phases, its phases at the steady phase's rate (`PhaseWhatIf`), by the
    ms its fill, drain and tail wave lose together; `step_ms` the step's profiled GPU time (None for programs
    profiled apart and for a run's kernels, alternatives: then each kernel's own time is what the
    tail and fill are taken from). A phase's work on the steady phase's busiest unit, at the share
    of its peak it holds there, takes `model.timeline.Phase.at_rate_us`; the phase saves the rest
    of its time, never less than nothing. `timed`: the file's `timed_kernels()` where the caller has
    them already."""
    out = []
    for k in doc.timed_kernels() if timed is None else timed:
        tl = k.timeline
        # a timeline of the start of the run only has no tail or drain to take away (`Timeline.cut_short`)
        phases = {p.name: p for p in tl.phases()} if not tl.cut_short else {}
        steady = phases.get("steady")
        if not steady or not steady.roof_share:
            continue
        unit, level = steady.roof, steady.roof_share
        scale = k.time_ms / (sum(tl.dt_us) / 1e3)  # every launch read as the one sampled
        base = step_ms if step_ms is not None else k.time_ms

        def spent(name: str) -> tuple[float, float]:
            p = phases.get(name)
            if p is None:
                return 0.0, 0.0
            return p.time_us / 1e3 * scale, max(0.0, p.time_us - p.at_rate_us(unit, level)) / 1e3 * scale

        (fill, fill_saved), (drain, drain_saved), (tail, tail_saved) = spent("fill"), spent("drain"), spent("tail")
        out.append(PhaseWhatIf(k.label, k.time_ms, level, fill, fill_saved, drain, drain_saved, tail, tail_saved,
                               phases["tail"].busy if "tail" in phases else None,
                               "step" if step_ms is not None else "kernel", base - tail_saved, base - fill_saved,
                               unit))
    return sorted(out, key=lambda p: (-(p.tail_saved_ms + p.fill_saved_ms + p.drain_saved_ms), p.kernel))


def by_op(doc: ProfileResults, target: float, step_ms: float) -> list[OpWhatIf]:
    """Every op (in each phase) of profile `doc`'s attribution at `target` of its kernels' own roofs,
    by the ms saved (module docstring); `step_ms` the step's profiled GPU time."""
    from .owners import row_floor

    rows: dict[tuple[str, str], list] = {}
    for owned in doc.attribution.owned:
        floor = row_floor(doc, owned)
        row = rows.setdefault((owned.op, owned.phase), [0.0, 0.0, None, 0, {}])
        row[0] += owned.time_ms
        row[3] += owned.launches
        if floor is None:
            row[1] += owned.time_ms
            continue
        level, floor_ms = floor
        row[1] += min(owned.time_ms, floor_ms / target)
        row[2] = (row[2] or 0.0) + floor_ms
        row[4][level] = row[4].get(level, 0.0) + floor_ms
    out = []
    for (op, phase), (time_ms, at_target, floor_ms, launches, levels) in rows.items():
        saved = time_ms - at_target
        binding = max(levels.items(), key=lambda kv: kv[1])[0] if levels else None
        out.append(OpWhatIf(op, phase, time_ms, floor_ms, at_target, saved, binding, launches, step_ms - saved,
                            step_ms / (step_ms - saved)))
    return sorted(out, key=lambda o: (-o.saved_ms, -o.time_ms, o.op, o.phase))


def op_fusion(doc: ProfileResults, w: Workload, top: int = FUSION_TOP) -> tuple[list[OpFusionWhatIf] | None, list[str]]:
    """The op fusion what-if of profile `doc` (module docstring): the `top` pairs of ops by ms saved,
    or None with a note where the owned rows record no launch places; and one-line notes."""
    at: dict[int, object] = {}  # place in the launch order -> its owned row
    for owned in doc.attribution.owned:
        for place in owned.launch_order or ():
            at[place] = owned
    if not at:
        return None, ["op fusion: this profile's owners record no launch places (it was made before they were); "
                      "profile again with this version of roofline for the ops that run one right after another"]
    split = [k.dram_read_bytes is not None and k.dram_write_bytes is not None for k in doc.kernels]
    found: dict[tuple[str, str], list[float]] = {}
    dram: dict[int, Roof] = {}
    for place in sorted(at):
        a, b = at[place], at.get(place + 1)
        if b is None or (a.op, a.phase, a.module) == (b.op, b.phase, b.module):
            continue
        if _unusable(w, a.kernel, split) or _unusable(w, b.kernel, split):
            continue
        passing, saved = _passing(doc, a.kernel, b.kernel, dram)
        tally = found.setdefault((f"{a.op} ({a.phase})", f"{b.op} ({b.phase})"), [0, 0.0, 0.0, dram[a.kernel]])
        tally[0] += 1
        tally[1] += passing
        tally[2] += saved
    step = w.step_ms
    pairs = [OpFusionWhatIf(first, second, int(n), passing, saved, roof.value, roof.measured, step - saved,
                            step / (step - saved)) for (first, second), (n, passing, saved, roof) in found.items()
             if saved >= MIN_SAVED_MS]  # less: what the first writes and the next reads is next to nothing
    pairs.sort(key=lambda p: (-p.saved_ms, -p.passing_bytes, p.first, p.second))
    if not pairs:
        return [], ["op fusion: no launch of a memory-bound op with its DRAM bytes read and written counted apart "
                    "runs right before one of another op"]
    shown = f"the top {top} shown" if len(pairs) > top else "all shown"
    return pairs[:top], [f"op fusion: {plural(len(pairs), 'pair')} of ops whose memory-bound launches run one right "
                         f"after the other, passing bytes worth {MIN_SAVED_MS * 2:g} ms or more, {shown}; pairs share "
                         "ops, so their savings do not add"]


def fusion(doc: ProfileResults, w: Workload | None = None, top: int = FUSION_TOP) -> tuple[list[FusionWhatIf], list[str]]:
    """The fusion what-if of profile `doc` (module docstring): the `top` kernel pairs by ms saved,
    and one-line notes (`FUSION_NOTE` where the profile lacks the launch order or the DRAM split;
    the launches left out for lacking it; the pairs' savings overlap). `w` is `workload(doc)`
    when the caller has it. Bytes in bytes, times in ms."""
    w = w or workload(doc)
    ordered = [k.launch_order is not None for k in doc.kernels]
    split = [k.dram_read_bytes is not None and k.dram_write_bytes is not None for k in doc.kernels]
    if not any(o and s for o, s in zip(ordered, split)):
        lacking = ("neither" if not any(ordered) and not any(split) else
                   "no launch order" if not any(ordered) else "no DRAM bytes read and written apart")
        imported = ("; a report imported must hold dram__bytes_read.sum and dram__bytes_write.sum"
                    if doc.command is None else "")
        return [], [FUSION_NOTE.format(lacking=lacking, imported=imported)]
    at: dict[int, int] = {}  # place in the launch order -> kernel index
    for i, k in enumerate(doc.kernels):
        for place in k.launch_order or ():
            at[place] = i
    step = w.step_ms
    found: dict[tuple[int, int], list[float]] = {}  # (A, B) -> [occurrences, bytes passing, ms saved]
    unusable: dict[str, set[int]] = {"not memory-bound": set(), "no DRAM split": set()}
    dram: dict[int, Roof] = {}
    for place in sorted(at):
        a, b = at[place], at.get(place + 1)
        if b is None or doc.kernels[a].name == doc.kernels[b].name:  # the same kernel again: the chunks of one call
            continue  # (a _foreach_ op's launches over its tensor lists, its tail at a grid of its own) pass nothing
        why = [_unusable(w, i, split) for i in (a, b)]
        if any(why):
            for i, reason in zip((a, b), why):
                if reason:
                    unusable[reason].add(i)
            continue
        passing, saved = _passing(doc, a, b, dram)
        tally = found.setdefault((a, b), [0, 0.0, 0.0])
        tally[0] += 1
        tally[1] += passing
        tally[2] += saved
    pairs = []
    for (a, b), (n, passing, saved) in found.items():
        if saved < MIN_SAVED_MS:  # what the first writes and the next reads is next to nothing
            continue
        roof = dram[a]
        pairs.append(FusionWhatIf(w.kernels[a].label, w.kernels[b].label, w.kernels[a].verdict.binding.level,
                                  w.kernels[b].verdict.binding.level, int(n), passing, saved, roof.value,
                                  roof.measured, step - saved, step / (step - saved)))
    pairs.sort(key=lambda p: (-p.saved_ms, -p.passing_bytes, p.first, p.second))
    notes = []
    if pairs:
        shown = f"the top {top} shown" if len(pairs) > top else "all shown"
        notes.append(f"fusion: {plural(len(pairs), 'pair')} of memory-bound kernels that run one right after the "
                     f"other, passing bytes worth {MIN_SAVED_MS * 2:g} ms or more, {shown}; pairs share kernels, so "
                     "their savings do not add")
    else:
        notes.append("fusion: no two memory-bound kernels with their DRAM bytes read and written counted apart "
                     "run one right after the other in this profile")
    if unusable["no DRAM split"]:
        notes.append(f"fusion: {plural(len(unusable['no DRAM split']), 'kernel')} next to another left out of it: "
                     "their DRAM bytes read and written were not counted apart")
    if doc.kernel_regex:
        notes.append(f"fusion: only kernels matching {doc.kernel_regex!r} were profiled, so two launches next to "
                     "each other here may have had others between them")
    return pairs[:top], notes


def _passing(doc: ProfileResults, a: int, b: int, dram: dict[int, Roof]) -> tuple[float, float]:
    """(bytes passing, ms saved) where one launch of kernel `a` runs right before one of kernel `b`
    (indices into `doc.kernels`; module docstring): what `a` writes to DRAM and `b` reads, per launch,
    written and read once less at `a`'s DRAM roof (measured where the file has it, as the DRAM
    floor; kept in `dram` by kernel), never more than the shorter launch."""
    ka, kb = doc.kernels[a], doc.kernels[b]
    if a not in dram:
        dram[a] = doc.roofs(ka).roof("DRAM")
    passing = min(ka.dram_write_bytes / ka.launches, kb.dram_read_bytes / kb.launches)
    return passing, min(ms_at(2 * passing, dram[a].value), ka.time_ms / ka.launches, kb.time_ms / kb.launches)


def _unusable(w: Workload, i: int, split: list[bool]) -> str | None:
    """Why kernel `i` cannot take part in a fusion pair, or None."""
    b = w.kernels[i].verdict.binding
    if b is None or b.level not in MEMORY_ROOFS:
        return "not memory-bound"
    return None if split[i] else "no DRAM split"


def _kernel(k: KernelWork, target: float, w: Workload, missing: list[str]) -> KernelWhatIf:
    share = k.time_ms / w.step_ms if w.step_ms else None
    b = k.verdict.binding
    if b is None or not b.floor_ms:
        return KernelWhatIf(k.name, k.label, None, None, k.time_ms, None, None, None, share, None, None, None,
                            not_counted=tuple(missing), joules=k.joules)
    at_target = min(k.time_ms, b.floor_ms / target)
    saved = k.time_ms - at_target
    if w.step_ms is not None:
        after = w.step_ms - saved
        speedup = w.step_ms / after
    else:
        after, speedup = None, k.time_ms / at_target
    return KernelWhatIf(k.name, k.label, b.level, b.roof.measured, k.time_ms, b.floor_ms, at_target, saved, share,
                        after, speedup, None, not_counted=tuple(missing) if missing else None, joules=k.joules,
                        roof_seen=b.roof.seen, roof_borrowed=getattr(b.roof, "borrowed", None))


def _notes(w: Workload, ranked: list[KernelWhatIf], without: list[KernelWhatIf], target: float) -> list[str]:
    notes = list(w.notes)
    if not w.device.has_measured_ceilings:
        notes.append(f"each 'roof' is a theoretical peak of the {w.device.name}: the file records no ceiling measured "
                     "on it")
    if not w.is_step and w.programs == 1:  # a run's alternatives (programs apart say so themselves)
        notes.append(f"no step column: a run's kernels are alternatives that each solve the whole {w.problem} "
                     "problem, not parts of one step, so each is read alone (its own time at the target, its "
                     "speed-up alone)")
    # a roof raised to this kernel's own rate at the size read (its floor its time): no bound on it
    own = [r.label for r in ranked if r.roof_seen and r.floor_ms and r.time_ms <= r.floor_ms * 1.005
           and w.raised_by.get(ROOF_OF_LEVEL.get(r.roof, r.roof)) == r.name]
    if own:
        notes.append(f"{', '.join(own)}: the measured ceiling of the roof that binds {'it' if len(own) == 1 else 'each'} "
                     f"was below the rate {'it' if len(own) == 1 else 'each'} reached, so that roof is "
                     f"{'its' if len(own) == 1 else 'their'} own rate and 'at roof' where {'it runs' if len(own) == 1 else 'they run'} "
                     "now: no bound on what could be saved; the measurement is low (roofline device --measure again)")
    past = [r for r in ranked if r.saved_ms == 0]
    if past:
        notes.append(f"{plural(len(past), 'kernel')} already at or past {100 * target:g} % of the roof that binds them, "
                     "so saving nothing at this target")
    partial = [r for r in ranked if r.not_counted and r.saved_ms]
    if partial:  # an uncounted roof may bind instead: the floor is a lower bound, the saving an upper one
        shown = "; ".join(f"{r.label} ({', '.join(r.not_counted)})" for r in partial[:3])
        more = f" and {len(partial) - 3} more" if len(partial) > 3 else ""
        notes.append(f"{plural(len(partial), 'kernel')} ({math.fsum(r.saved_ms for r in partial):.3f} ms saved) read "
                     f"against a floor that is only a lower bound, the report not counting all their work and bytes, "
                     f"so their savings are upper bounds: {shown}{more}; roofline show says how to count them")
    if without:
        shown = "; ".join(f"{r.label} ({', '.join(r.not_counted) or 'no work or bytes'} not counted)"
                          for r in without[:3])
        more = f" and {len(without) - 3} more" if len(without) > 3 else ""
        ms = math.fsum(r.time_ms for r in without)
        notes.append(f"{plural(len(without), 'kernel')} ({ms:.3f} ms) with no roof, so no saving counted: "
                     f"{shown}{more}")
    return notes
