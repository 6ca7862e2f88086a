"""A profile's GPU time, work and floors by the op or the module that launched its kernels
(`ProfileResults.attribution`): what `show --by op` and `--by module` print.

Each owned row (the launches of one kernel owned by one op, phase and module) is read as its kernel
is (`ProfileResults.verdict`: the roofs at the kernel's clock, its grid's waves, the precisions its
verdict credits) on the row's own summed FLOPs and bytes. An op's (or module's) *floor* is the sum of
its rows' binding floors: its kernels run one after another, so each is held to its own roof, and
the op at its roofs takes that long; its *binding* roof is the one that holds the largest part of
that floor. A module's figures include its submodules' (the module tree is inclusive); a backward
kernel counts in the module of the forward op it differentiates; the optimizer's kernels, which
update every module's parameters at once, are a row of their own, '(optimizer)'.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..model.peaks import PRECISIONS
from ..model.presets import same_gpu
from ..model.roofs import verdict
from ..model.traffic import CountedTraffic
from ..results.profile import OwnedWork, ProfileResults, level_intensity
from .compare import MATCHED, commands_note  # what two profiles of one program share, and their commands

KEYS = ("op", "module")
NO_MODULE = "(no module)"
OPTIMIZER = "(optimizer)"  # the module view's row for the optimizer's kernels, which no module owns


@dataclass
class OwnerRow:
    """One op in one phase (`phase`; None for a module, whose phases are in `phase_ms`), or one
    module with its submodules: GPU time (ms), launches, FLOPs per precision key and bytes per
    level summed, the floor (ms, None where no row had a roof to read) and the roof binding most of
    it, and its kernels by name with their time, the longest first; `program_ms`: the same launches'
    time in the program, where a PyTorch profiler trace of the step gave every one of them theirs."""

    name: str
    phase: str | None
    time_ms: float = 0.0
    launches: int = 0
    flops: dict[str, float] = field(default_factory=dict)
    nbytes: dict[str, float] = field(default_factory=dict)
    floor_ms: float | None = None
    binding: str | None = None
    near: str | None = None  # a roof within 5 % of the binding one over most of its floor (`Verdict.near`)
    kernels: list[tuple[str, float]] = field(default_factory=list)
    phase_ms: dict[str, float] = field(default_factory=dict)
    depth: int = 0
    program_ms: float | None = None  # its launches' time in the program (a trace's); None where one lacks it
    _program: list = field(default_factory=list, repr=False)
    _by_level: dict[str, float] = field(default_factory=dict, repr=False)
    _near: dict[str, float] = field(default_factory=dict, repr=False)  # floor ms where that roof is as near
    _by_kernel: dict[str, float] = field(default_factory=dict, repr=False)

    @property
    def times_floor(self) -> float | None:
        """Its time over its floor (1.0: every kernel at its roof); None without a floor."""
        return self.time_ms / self.floor_ms if self.floor_ms else None

    @property
    def work(self) -> dict[str, float]:
        """Its FLOPs by precision key, CUDA-core FP16 left out (Nsight Compute's HFMA counts hold
        register moves in kernels that do no FP16 math: `ProfiledKernel.credible_flops`)."""
        return {k: v for k, v in self.flops.items() if k in PRECISIONS and v and k != "fp16"}

    @property
    def main_precision(self) -> str | None:
        """The precision key ('bf16_tensor', 'fp32', ...) of most of its `work`; None for an op or
        module none of whose floating-point work was counted."""
        return max(self.work.items(), key=lambda kv: (kv[1], kv[0]))[0] if self.work else None

    def gflops(self) -> float | None:
        """Its rate in its main precision: those FLOPs over its GPU time, in GFLOP/s; None without."""
        p = self.main_precision
        return self.flops[p] / self.time_ms / 1e6 if p and self.time_ms > 0 else None

    def intensity(self, level: str) -> float | None:
        """FLOP of its main precision per byte its kernels moved at `level` ('dram', 'l2', 'l1':
        L1 and shared memory, which share one data path), summed over its launches; None without."""
        p = self.main_precision
        return level_intensity(self.flops[p] if p else None, self.nbytes, level)

    def add(self, w: OwnedWork, kernel_name: str, floor: tuple[str, float, str | None] | None) -> None:
        self.time_ms += w.time_ms
        self.launches += w.launches
        self._program.append(w.program_ms)
        for k, v in w.flops.items():
            self.flops[k] = self.flops.get(k, 0.0) + v
        for k, v in w.bytes.items():
            self.nbytes[k] = self.nbytes.get(k, 0.0) + v
        self.phase_ms[w.phase] = self.phase_ms.get(w.phase, 0.0) + w.time_ms
        self._by_kernel[kernel_name] = self._by_kernel.get(kernel_name, 0.0) + w.time_ms
        if floor is not None:
            level, ms, near = floor
            self.floor_ms = (self.floor_ms or 0.0) + ms
            self._by_level[level] = self._by_level.get(level, 0.0) + ms
            if near is not None:
                self._near[near] = self._near.get(near, 0.0) + ms

    def close(self) -> "OwnerRow":
        self.program_ms = sum(self._program) if self._program and None not in self._program else None
        self.kernels = sorted(self._by_kernel.items(), key=lambda kv: (-kv[1], kv[0]))
        self.binding = max(self._by_level.items(), key=lambda kv: kv[1])[0] if self._by_level else None
        near = max(self._near.items(), key=lambda kv: kv[1], default=None)
        self.near = near[0] if near and near[0] != self.binding and near[1] >= 0.5 * (self.floor_ms or 0) else None
        return self


def row_floor(doc: ProfileResults, w: OwnedWork) -> tuple[str, float] | None:
    """The binding roof and floor (ms) of owned row `w`, read as its kernel is on the row's own
    work and bytes; None where none of its figures meets a roof."""
    v = _row_verdict(doc, w)
    b = v.binding
    return (b.level, b.floor_ms) if b is not None and b.floor_ms else None


def _row_verdict(doc: ProfileResults, w: OwnedWork):
    """`row_floor`'s verdict (`model.roofs.verdict`) of owned row `w`."""
    k = doc.kernels[w.kernel]
    credited = {p: w.flops[p] for p in k.credible_flops if p in w.flops}
    traffic = CountedTraffic(dram_bytes=w.bytes.get("dram"), l2_bytes=w.bytes.get("l2"), l1_bytes=w.bytes.get("l1"),
                             smem_bytes=w.bytes.get("smem"))
    return verdict(None, doc.roofs(k), w.time_ms, traffic, measured=True, flops_by_precision=credited,
                   waves=doc.waves(k))


def by_owner(doc: ProfileResults, key: str = "op", inclusive: bool = True) -> list[OwnerRow]:
    """The profile's owned launches summed by `key`: 'op' (one row per op and phase) or 'module'
    (one row per module, its submodules included, in tree order: each module before its children,
    children the longest first; with `inclusive` False, each module's own launches alone, which
    add up to the owned time once). Raises ValueError for another key, or a profile without
    attribution."""
    if key not in KEYS:
        raise ValueError(f"by {key!r}: give op or module")
    if doc.attribution is None:
        raise ValueError("the profile records no owners")
    verdicts = [_row_verdict(doc, w) for w in doc.attribution.owned]
    rows: dict[tuple[str, str | None], OwnerRow] = {}
    for w, v in zip(doc.attribution.owned, verdicts):
        b = v.binding
        floor = (b.level, b.floor_ms, v.near.level if v.near else None) if b is not None and b.floor_ms else None
        name = doc.kernels[w.kernel].name
        if key == "op":
            places = [(w.op, w.phase)]
        else:  # the module and every module around it
            parts = w.module.split(".") if w.module else [OPTIMIZER if w.phase == "optimizer" else NO_MODULE]
            places = [(".".join(parts[:i + 1]), None) for i in range(len(parts))]
            if not inclusive:  # the module alone, not those around it
                places = places[-1:]
        for place in places:
            row = rows.get(place)
            if row is None:
                row = rows[place] = OwnerRow(place[0], place[1], depth=place[0].count(".") if key == "module" else 0)
            row.add(w, name, floor)
    closed = [r.close() for r in rows.values()]
    if key == "op":
        return sorted(closed, key=lambda r: (-r.time_ms, r.name, r.phase or ""))
    return _tree(closed)


def _tree(rows: list[OwnerRow]) -> list[OwnerRow]:
    """Module rows in tree order: each before its children, siblings the longest first. A row whose
    parent has no row (its own launches alone, and the parent launched none itself) hangs from its
    nearest ancestor that has one, or from the top."""
    names = {r.name for r in rows}
    children: dict[str | None, list[OwnerRow]] = defaultdict(list)
    for r in rows:
        parts = r.name.split(".")
        parent = next((p for i in range(len(parts) - 1, 0, -1) if (p := ".".join(parts[:i])) in names), None)
        children[parent].append(r)
    out: list[OwnerRow] = []

    def walk(parent: str | None) -> None:
        for r in sorted(children.get(parent, []), key=lambda r: (-r.time_ms, r.name)):
            out.append(r)
            walk(r.name)

    walk(None)
    return out


@dataclass(frozen=True)
class Owners:
    """`show --by op|module` of a profile: its rows (`by_owner`), the profiled and the owned GPU
    time (ms), where the owners were read from, and the notes of that reading; `program_source`: where
    the rows' time in the program came from (None: none has one)."""

    key: str
    source: str
    total_ms: float
    owned_ms: float
    rows: list[OwnerRow]
    notes: list[str]
    program_source: str | None = None

    def to_json(self) -> dict:
        """The document `show --by KEY --json` prints (`documents.owners.OwnersJson`)."""
        total = self.total_ms or 1.0
        return {"kind": "owners", "by": self.key, "source": self.source, "total_time_ms": self.total_ms,
                "owned_time_ms": self.owned_ms,
                "program_source": self.program_source,
                "rows": [{"name": r.name, "phase": r.phase, "depth": r.depth, "time_ms": r.time_ms,
                          "program_ms": r.program_ms, "share": r.time_ms / total, "launches": r.launches, "flops": r.flops, "bytes": r.nbytes,
                          "floor_ms": r.floor_ms, "times_floor": r.times_floor, "binding": r.binding,
                          "phase_ms": r.phase_ms, "kernels": [{"name": k, "time_ms": ms} for k, ms in r.kernels]}
                         for r in self.rows],
                "notes": self.notes}


def owners_of(doc: ProfileResults, key: str) -> Owners:
    """`by_owner(doc, key)` with what the profile says of its attribution. Raises ValueError as
    `by_owner` does."""
    rows = by_owner(doc, key)
    a = doc.attribution
    return Owners(key, a.source, doc.total_time_ms, a.time_ms, rows, list(a.notes),
                  a.program_source if any(r.program_ms is not None for r in rows) else None)


@dataclass(frozen=True)
class OwnerChange:
    """One op (in one phase) or module in two profiles: its time (ms) and its time over its floor in
    each (None where it is not in that profile, or has no floor there)."""

    name: str
    phase: str | None
    before_ms: float | None
    after_ms: float | None
    before_times_floor: float | None
    after_times_floor: float | None

    @property
    def change(self) -> float | None:
        """after / before - 1 (0.10: 10 % slower); None where either is missing."""
        return self.after_ms / self.before_ms - 1 if self.before_ms and self.after_ms is not None else None


@dataclass(frozen=True)
class OwnerChanges:
    """`compare BEFORE AFTER --by op|module`: every op (or module) of either profile, the largest
    change in time first, and the two profiles' total times."""

    key: str
    before: str
    after: str
    before_ms: float
    after_ms: float
    rows: list[OwnerChange]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """The document `compare --by KEY --json` prints (`documents.owners.OwnerChangesJson`)."""
        return {"kind": "owner-changes", "by": self.key, "before": self.before, "after": self.after,
                "before_time_ms": self.before_ms, "after_time_ms": self.after_ms,
                "rows": [{"name": r.name, "phase": r.phase, "before_ms": r.before_ms, "after_ms": r.after_ms,
                          "change": r.change, "before_times_floor": r.before_times_floor,
                          "after_times_floor": r.after_times_floor} for r in self.rows],
                "notes": self.notes}


def compare_owners(before: ProfileResults, after: ProfileResults, key: str, names: tuple[str, str]) -> OwnerChanges:
    """Two profiles' GPU time by `key` ('op' or 'module'), op (and phase) or module path matched by
    name (`names`: how the two files are called), the largest change in milliseconds first. Raises
    ValueError as `by_owner` does."""
    a = {(r.name, r.phase): r for r in by_owner(before, key)}
    b = {(r.name, r.phase): r for r in by_owner(after, key)}
    rows = []
    for name, phase in list(a) + [k for k in b if k not in a]:
        x, y = a.get((name, phase)), b.get((name, phase))
        rows.append(OwnerChange(name, phase, x.time_ms if x else None, y.time_ms if y else None,
                                x.times_floor if x else None, y.times_floor if y else None))
    rows.sort(key=lambda r: (-abs((r.after_ms or 0.0) - (r.before_ms or 0.0)), r.name, r.phase or ""))
    notes = []
    if not same_gpu(before.device.name, after.device.name):
        notes.append(f"different GPUs: {before.device.name} before, {after.device.name} after; each time holds the "
                     "change of GPU")
    elif (before.device.measured_dram_gbps is None) != (after.device.measured_dram_gbps is None):
        which = "first" if before.device.measured_dram_gbps is not None else "second"
        notes.append(f"'x floor' reads measured ceilings in the {which} file and datasheet roofs in the other (made or "
                     "imported where the GPU's ceilings were not measured): a floor moves with that alone")
    notes += commands_note(before, after)
    shared = [r for r in rows if r.before_ms is not None and r.after_ms is not None]
    held_b = sum(r.before_ms for r in shared) / before.attribution.time_ms if before.attribution.time_ms else 1.0
    held_a = sum(r.after_ms for r in shared) / after.attribution.time_ms if after.attribution.time_ms else 1.0
    if not shared:
        notes.append(f"the profiles share no {key}: they are of different programs, and each row is of one alone")
    elif min(held_b, held_a) < MATCHED:
        notes.append(f"the {len(shared)} {key}(s) in both profiles hold {100 * held_b:.3g} % of the first's owned "
                     f"time and {100 * held_a:.3g} % of the second's: the change is mostly of {key}s only one has")
    for side, doc in (("before", before), ("after", after)):
        share = doc.attribution.time_ms / doc.total_time_ms if doc.total_time_ms else 0.0
        if share < 0.99:
            notes.append(f"{names[0] if side == 'before' else names[1]}: {share:.1%} of its GPU time is owned; the rest "
                         "is in no row")
    return OwnerChanges(key, names[0], names[1], before.total_time_ms, after.total_time_ms, rows, notes)
