"""Two results files side by side: for each kernel in both, the speedup, the change in registers,
occupancy and binding roof, and whether it moved toward that roof.

"Toward its roof" reads each file against its own device: the time over the binding floor of the
two-roof reading (`Results.floors`: model GMEM bytes at peak DRAM bandwidth, FLOPs at peak FP32)
went down. So across GPUs it says whether the kernel uses its GPU better, while the speedup also
holds the change of GPU; `notes` says which differences come from the device (peaks, the
compile target and its per-SM limits, the reference's own speedup).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError
from ..model.roofs import Verdict
from .schema import KernelRecord, Results

SAME = 0.02  # a change of the time over the floor below 2 % is no move either way


@dataclass(frozen=True)
class KernelChange:
    """One kernel in both files. `speedup` is before's median time over after's (None unless both
    were timed); `before_reading` and `after_reading` the two-roof readings (None when not timed)."""

    name: str
    before: KernelRecord
    after: KernelRecord
    speedup: float | None
    before_reading: Verdict | None
    after_reading: Verdict | None

    @property
    def roof_move(self) -> str:
        """'closer' when after sits nearer its binding floor than before did (by more than SAME),
        'further', 'same'; 'below its floor' when either run beat its floor (the model's bytes
        were more than the hardware moved, so the distance means nothing); '-' unless both timed."""
        if self.before_reading is None or self.after_reading is None:
            return "-"
        b, a = self.before_reading.times_floor, self.after_reading.times_floor
        if min(a, b) < 1:
            return "below its floor"
        if abs(a - b) <= SAME * b:
            return "same"
        return "closer" if a < b else "further"


@dataclass(frozen=True)
class Comparison:
    """`before` and `after`, the kernels in both (after's order), the names in one only, the
    reference's speedup, and one line per difference that comes from the device or the files
    (different problems, a size sweep read at its largest size)."""

    before: Results
    after: Results
    changes: list[KernelChange]
    only_before: list[str]
    only_after: list[str]
    reference_speedup: float
    notes: list[str]

    @property
    def same_device(self) -> bool:
        """Both files come from the same GPU model."""
        return self.before.device.name == self.after.device.name


def _reading(doc: Results, k: KernelRecord) -> Verdict | None:
    return doc.floors(k) if k.timed else None


def compare(before: Results, after: Results, force: bool = False) -> Comparison:
    """Compare `before` with `after`. Raises UsageError when they solve different problems (unless
    `force`: times are then compared as they are, per launch) or share no kernel."""
    pb, pa = before.problem.problem, after.problem.problem
    if pb != pa and not force:
        raise UsageError(f"the files solve different problems ({pb.text()} and {pa.text()}); their times do not "
                         "compare; pass --force to compare them anyway")
    by_name = {k.name: k for k in before.kernels}
    changes = []
    for k in after.kernels:
        old = by_name.get(k.name)
        if old is None:
            continue
        speedup = old.time_ms / k.time_ms if old.timed and k.timed else None
        changes.append(KernelChange(k.name, old, k, speedup, _reading(before, old), _reading(after, k)))
    if not changes:
        raise UsageError("the two files have no kernel in common; compare runs of the same kernels")
    after_names = {k.name for k in after.kernels}
    return Comparison(before, after, changes,
                      [k.name for k in before.kernels if k.name not in after_names],
                      [k.name for k in after.kernels if k.name not in by_name],
                      before.reference.time_ms / after.reference.time_ms, _notes(before, after, pb != pa))


def _ratio(a: float, b: float) -> str:
    return f"{b / a:.2f}x"


def _notes(before: Results, after: Results, different_problems: bool) -> list[str]:
    db, da = before.device, after.device
    notes = [f"the {which} file holds a size sweep: compared at its largest size, {doc.problem.problem.text()}"
             for which, doc in (("first", before), ("second", after)) if doc.sweep]
    if different_problems:
        notes.append(f"different problems ({before.problem.problem.text()} and {after.problem.problem.text()}): "
                     "speedups compare the time of one launch of each")
    if db.name != da.name:
        notes.append(f"different GPUs: {db.name} before, {da.name} after; the speedups hold the change of GPU, "
                     "'roof' reads each run against its own GPU's roofs")
        notes.append(f"peak FP32 {db.peak_fp32_gflops:,.0f} -> {da.peak_fp32_gflops:,.0f} GFLOP/s "
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
