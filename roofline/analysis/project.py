"""The same work on another GPU: each kernel's floors there, a lower bound for the step and an
estimate that keeps the kernel's measured fraction of its binding roof (`roofline project`).

For every kernel of a results file (`work.workload`) and every target GPU (a preset: nothing was
measured there, so its roofs are the datasheet's theoretical ones, `model.presets`):

- floors: the counted FLOPs per precision and bytes per level at each roof, divided by the share of
  the GPU the grid keeps busy (`model.waves`), on both GPUs alike, except at the L2 and the DRAM,
  which serve the whole chip however many SMs are busy (`roofs.SHARED_LEVELS`, as `show` reads them):

      floor[level] = amount[level] / roof[level] / utilization     (L2, DRAM: / 1)

  with the theoretical roofs of both GPUs (the file's measured ceilings have no counterpart on the
  target, so the kernel's time here is read against theoretical roofs too). Utilization uses each
  GPU's SM count and the blocks per SM the occupancy calculator gives for the kernel's registers,
  threads and shared memory on that GPU's per-SM limits (`model.occupancy.calculate`, `arch.ARCHS`);
  where the launch configuration is unknown, both sides use 1 and the kernel is flagged.
- fraction here = the binding floor here / the measured time here (1.0: on its roof);
- estimate on the target = the target's floor at the level that binds here / fraction: the kernel
  runs at the same fraction of its binding roof. Where another level binds on the target, the kernel
  is flagged and the estimate is that level's floor / fraction;
- lower bound = the target's binding floor.

Levels are compared where both GPUs have a roof: a memory level the target's preset has no roof for
(L2 outside sm_80 and sm_90) is dropped on both sides and the kernel flagged. Work whose compute roof
the target lacks (FP8 tensor on an sm_80 or sm_86 GPU, BF16 tensor on a V100) cannot run there as
it is: the kernel is flagged and left out of the sums, and counted. So is a split_k whose tile's blocks add
its slices together where the target cannot hold all its blocks at once. A block that cannot launch on the target (more
shared memory than its SM has: Hopper's cuBLAS kernels on an Ada GPU) is flagged and projected
without waves on either GPU: a library would launch another kernel for the same work there.

A profile's kernels add up to the step: its lower bound and estimate are the sums over the kernels
kept. A run's kernels are alternatives solving one problem: each has its own figures and there is no
sum; its cuBLAS reference, when recorded, is projected from the floor of the run's precision alone
(FP32, or its tensor roof). A ladder kernel the target cannot build (wgmma and TMA are sm_90a only)
is left out.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..errors import UsageError
from ..ladder import families
from ..model.device import DeviceSpec, from_preset
from ..model.occupancy import calculate
from ..model.roofs import COMPUTE_LEVEL, SHARED_LEVELS, Roofs
from ..model.units import gflops, ms_at
from ..model.waves import Waves, waves_of
from ..results.profile import ProfileResults
from ..results.schema import Results
from .work import KernelWork, Workload, apart, workload

MEMORY_LEVEL = {"dram": "DRAM", "l2": "L2", "l1": "L1", "smem": "SMEM"}  # level key -> roof level
THEORETICAL = "theoretical roofs of the preset's datasheet figures (nothing was measured on it)"
_KEY_OF_LEVEL = {level: key for key, level in COMPUTE_LEVEL.items()}  # 'BF16 tensor' -> 'bf16_tensor'


def _here(measured: bool) -> str:
    """The note on the 'here' columns against `show`'s reading, which divides its floors by the
    same busy share but reads the file's measured ceilings where it records some (`measured`)."""
    if not measured:
        return ("'here' reads each kernel as the projection does, at the theoretical roofs with each floor divided by "
                "the share of the GPU its grid keeps busy, as `show` does (the file records no measured ceiling)")
    return ("'here' reads each kernel as the projection does, at the theoretical roofs with each floor divided by the "
            "share of the GPU its grid keeps busy; `show` divides by that share too but reads the measured ceilings "
            "(each at least the best rate the file saw, never above its theoretical roof), so the two may name "
            "different roofs and distances")


@dataclass(frozen=True)
class ProjectedKernel:
    """One kernel on one target. Times in ms; floors per level name ('FP32', 'BF16 tensor', 'DRAM',
    'L2', 'L1', 'SMEM'); `estimate_ms`, `gflops` and the floors there None when `left_out`."""

    label: str
    time_here_ms: float
    level_here: str | None  # the binding level here, theoretical roofs, common levels
    floor_here_ms: float | None
    fraction: float | None  # floor here / time here
    floors_ms: dict[str, float]  # on the target
    level: str | None  # the binding level on the target
    floor_ms: float | None  # the target's binding floor: the lower bound
    estimate_ms: float | None
    gflops: float | None  # the kernel's main precision's FLOPs (show's rate) over the estimate; None without FLOPs
    utilization_here: float | None
    utilization: float | None  # the share of the target's SMs its grid keeps busy
    flags: list[str] = field(default_factory=list)
    left_out: str | None = None  # why it is out of the sums
    not_compared: tuple[str, ...] = ()  # levels with bytes but no roof on one of the GPUs

    @property
    def binding_changed(self) -> bool:
        return self.level is not None and self.level_here is not None and self.level != self.level_here


@dataclass(frozen=True)
class TargetProjection:
    """All kernels on one target. For a profile, `lower_bound_ms`, `estimate_ms` and `here_ms` are
    sums over the kernels kept (`left_out` counts the others, `left_out_ms` their time here); None
    where no kernel is kept (none has a roof on both GPUs: an import without counters), as for a run."""

    device: DeviceSpec
    kernels: list[ProjectedKernel]
    lower_bound_ms: float | None
    estimate_ms: float | None
    here_ms: float | None
    left_out: int
    left_out_ms: float
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Projection:
    """A results file's kernels projected onto each target GPU."""

    kind: str  # 'profile' or 'run'
    device: DeviceSpec  # where it was measured
    step_ms: float | None  # the profiled step here (a profile)
    problem: str | None
    targets: list[TargetProjection]
    notes: list[str] = field(default_factory=list)
    is_step: bool = False  # the kernels are one step's parts, summed per target (a profile), not alternatives


def _utilization(k: KernelWork, dev: DeviceSpec) -> tuple[Waves | None, str | None]:
    """The kernel's waves on `dev` (None, with why, where its launch configuration is unknown or its
    block cannot launch there: the reason starts with 'cannot launch')."""
    if not (k.blocks and k.threads_per_block and k.registers is not None and k.smem_bytes is not None):
        return None, "launch configuration not recorded: waves not counted"
    try:
        occ = calculate(dev.arch_limits, max(1, k.registers), k.threads_per_block, *k.smem_bytes)
    except UsageError as exc:
        return None, f"occupancy not computed on {dev.arch}: {exc}"
    if occ.active_blocks_per_sm == 0:
        return None, f"cannot launch on the {dev.name}: {occ.reason}"
    return waves_of((k.blocks,), dev.sm_count, occ.active_blocks_per_sm), None


def _amounts(k: KernelWork) -> dict[str, float]:
    """Level name -> FLOPs or bytes."""
    out = {COMPUTE_LEVEL[p]: v for p, v in k.flops.items() if v}
    out.update({MEMORY_LEVEL[lvl]: v for lvl, v in k.bytes.items() if v and lvl in MEMORY_LEVEL})
    return out


def _roof(roofs: Roofs, level: str) -> float | None:
    roof = roofs.roof(level, measured=False)
    return roof.value if roof else None


def project_kernel(k: KernelWork, here: DeviceSpec, target: DeviceSpec,
                   waves_here: Waves | None = None, unavailable: str | None = None) -> ProjectedKernel:
    """`k`, measured on `here`, on `target` (module docstring). `waves_here`: the grid's waves here
    (default: recomputed from the kernel's launch configuration on `here`). `unavailable`: why the
    kernel cannot be built for the target at all (a wgmma rung on an sm_80 GPU): left out."""
    flags: list[str] = []
    amounts = _amounts(k)
    roofs_here, roofs_there = here.roofs, target.roofs
    missing_work = [lvl for lvl in amounts if lvl in COMPUTE_LEVEL.values() and _roof(roofs_there, lvl) is None]
    if waves_here is None and k.blocks:
        waves_here, _ = _utilization(k, here)
    waves_there, why = _utilization(k, target)
    shown_there = waves_there

    def out(left_out: str | None, **kw) -> ProjectedKernel:
        base = dict(label=k.label, time_here_ms=k.time_ms, level_here=None, floor_here_ms=None, fraction=None,
                    floors_ms={}, level=None, floor_ms=None, estimate_ms=None, gflops=None,
                    utilization_here=waves_here.utilization if waves_here else None,
                    utilization=shown_there.utilization if shown_there else None, flags=flags, left_out=left_out)
        base.update(kw)
        return ProjectedKernel(**base)

    if unavailable:
        return out(unavailable)
    if not amounts:
        return out("no FLOPs or bytes counted")
    if missing_work:
        if target.source.startswith("device file"):  # not known, rather than not there
            keys = ", ".join(f"flops_per_sm_per_clock.{_KEY_OF_LEVEL[lvl]}" for lvl in missing_work)
            return out(f"the {target.name}'s {', '.join(missing_work)} rate is not known: its device file gives no "
                       f"{keys}")
        return out(f"the {target.name} has no {', '.join(missing_work)} roof: its work cannot run there as it is")
    if why or waves_here is None:
        if why and why.startswith("cannot launch"):
            why += " (a library would launch another kernel there); waves not counted on either GPU"
        flags.append(why or "waves here unknown: not counted on either GPU")
        waves_here = waves_there = shown_there = None
    busy_here = waves_here.utilization if waves_here else 1.0
    busy_there = waves_there.utilization if waves_there else 1.0
    here_ms, there_ms, dropped = {}, {}, []
    for lvl, amount in amounts.items():
        r_here, r_there = _roof(roofs_here, lvl), _roof(roofs_there, lvl)
        if r_here is None or r_there is None:
            dropped.append(lvl)
            continue
        shared = lvl in SHARED_LEVELS  # the L2 and DRAM serve the whole chip, not the busy SMs' share (as show reads)
        here_ms[lvl] = ms_at(amount, r_here) / (1.0 if shared else busy_here)  # FLOPs at GFLOP/s, bytes at GB/s alike
        there_ms[lvl] = ms_at(amount, r_there) / (1.0 if shared else busy_there)
    # the traffic model's bytes at a level whose floor here is above the measured time were served by
    # a cache nearer the SMs: not a floor of this kernel, on either GPU (counted bytes are kept, flagged below)
    modelled = {MEMORY_LEVEL[lvl] for lvl, counted in k.bytes_counted.items() if not counted and lvl in MEMORY_LEVEL}
    for lvl in [lvl for lvl in here_ms if lvl in modelled and here_ms[lvl] > k.time_ms]:
        flags.append(f"the traffic model's {lvl} bytes take {here_ms[lvl] / k.time_ms:.2f}x the measured time at "
                     f"its theoretical {lvl} roof here (a cache served them): not a floor")
        del here_ms[lvl], there_ms[lvl]
    if not here_ms:
        return out("no level with a roof on both GPUs")
    level_here = max(here_ms, key=here_ms.get)
    level = max(there_ms, key=there_ms.get)
    fraction = here_ms[level_here] / k.time_ms
    if fraction > 1:
        flags.append(f"ran {fraction:.2f}x its theoretical {level_here} roof here (caches served bytes counted "
                     "at that level)")
    if level != level_here:
        flags.append(f"binding roof changes: {level_here} here, {level} on the {target.name}")
    estimate = there_ms[level] / fraction
    flops = k.main_flops  # the work show's rate counts
    return out(None, level_here=level_here, floor_here_ms=here_ms[level_here], fraction=fraction,
               floors_ms=there_ms, level=level, floor_ms=there_ms[level], estimate_ms=estimate,
               gflops=gflops(flops, estimate) if flops else None, not_compared=tuple(dropped))


def _unavailable(k: KernelWork, is_step: bool, target: DeviceSpec) -> str | None:
    """Why a ladder kernel of a run cannot be built for `target` (`Family.runs_on`: wgmma and TMA
    are sm_90a only, cp.async needs sm_80), or None. A step's kernels (a profile's) are a
    program's, never the ladder's."""
    family = None if is_step else families.BY_NAME.get(k.name)
    if family is None:
        return None
    if not family.runs_on(target.compute_capability):
        return family.unavailable_reason(target.arch).removeprefix(f"{k.name} ")
    return _not_resident(k, family, target)


def _not_resident(k: KernelWork, family, target: DeviceSpec) -> str | None:
    """Why a kernel whose blocks wait for each other (split_k adding a tile's slices on all its
    blocks: `KernelSpec.cooperative`) cannot run on `target` as it ran here: its blocks outnumber
    the blocks the target holds at once (its occupancy there times its SMs), or None."""
    try:
        cooperative = bool(k.params) and family.spec(k.params).cooperative
    except UsageError:
        return None
    waves, _ = _utilization(k, target) if cooperative else (None, None)
    if waves is None or waves.blocks <= waves.block_slots:
        return None
    return (f"its {waves.blocks:,} blocks add their slices together, so all must be resident at once, and the "
            f"{target.name} holds {waves.block_slots:,}: it cannot run there as it ran here (split_k there "
            "picks its own tile and split)")


def project(doc: Results | ProfileResults, gpus: list[str]) -> Projection:
    """`doc`'s kernels on each GPU named in `gpus` (preset names, `model.presets`). Raises
    UsageError for an unknown GPU name (listing the presets) or no name at all."""
    if not gpus:
        raise UsageError("{gpus} is empty: give at least one GPU, a preset name or a device file", "gpus")
    targets = list({d.name: d for d in (from_preset(name) for name in gpus)}.values())  # a GPU named twice, once
    w: Workload = apart(doc, workload(doc))
    kernels = [(k, k.verdict.waves if k.verdict is not None else None) for k in w.kernels]
    notes = list(w.notes) + [_here(w.device.has_measured_ceilings)]
    ref = w.reference
    if ref is not None:
        kernels.append((ref, None))
        notes.append(f"{ref.name} (the reference) has no bytes or launch recorded: projected from its "
                     f"{w.compute_level} floor alone")
    out = []
    for target in targets:
        rows = [project_kernel(k, w.device, target, waves, _unavailable(k, w.is_step, target)) for k, waves in kernels]
        kept = [r for r in rows if r.left_out is None]
        gone = [r for r in rows if r.left_out is not None]
        tnotes = [f"{target.name}: " + (THEORETICAL if not target.source.startswith("device file") else
                                        f"theoretical roofs of its {target.source.split(';')[0]} (nothing was "
                                        "measured on it)")]
        for lvl in dict.fromkeys(lvl for r in rows for lvl in r.not_compared):
            n = sum(lvl in r.not_compared for r in rows)
            lacks = target.name if _roof(target.roofs, lvl) is None else w.device.name
            tnotes.append(f"{lvl} not compared for {n} kernel(s): the {lacks} has no theoretical {lvl} roof")
        if gone:  # why, grouped: the reasons repeat (a roof the target lacks), the kernels are in the table
            why = list(dict.fromkeys(r.left_out for r in gone))
            shown = why[0] if len(why) == 1 else "; ".join(f"{sum(r.left_out == y for r in gone)}: {y}"
                                                          for y in why[:3])
            more = f"; {len(why) - 3} more reasons in --json" if len(why) > 3 else ""
            tnotes.append(f"{len(gone)} kernel(s) left out{' of the sums' if w.is_step else ''}: "
                          f"{shown}{more} (each named in the table)")
        step = w.is_step and bool(kept)  # no kernel with a roof on both GPUs: no step to sum
        out.append(TargetProjection(
            device=target, kernels=rows,
            lower_bound_ms=sum(r.floor_ms for r in kept) if step else None,
            estimate_ms=sum(r.estimate_ms for r in kept) if step else None,
            here_ms=sum(r.time_here_ms for r in kept) if step else None,
            left_out=len(gone), left_out_ms=sum(r.time_here_ms for r in gone), notes=tnotes))
    return Projection(w.kind, w.device, w.step_ms, w.problem, out, notes, w.is_step)


def to_dict(p: Projection) -> dict:
    """The JSON document of `roofline project --json` (keys in docs/project.md)."""
    def kernel(r: ProjectedKernel) -> dict:
        return {"kernel": r.label, "time_here_ms": r.time_here_ms, "binding_here": r.level_here,
                "floor_here_ms": r.floor_here_ms, "fraction_of_roof": r.fraction,
                "floors_ms": r.floors_ms, "binding": r.level, "floor_ms": r.floor_ms,
                "estimated_ms": r.estimate_ms, "estimated_gflops": r.gflops,
                "utilization_here": r.utilization_here, "utilization": r.utilization,
                "binding_changed": r.binding_changed, "flags": r.flags, "left_out": r.left_out,
                "not_compared": list(r.not_compared)}

    return {
        "kind": p.kind, "measured_on": p.device.name, "problem": p.problem, "step_ms": p.step_ms,
        "roofs": "theoretical", "notes": p.notes,
        "targets": [{
            "gpu": t.device.name, "source": t.device.source,
            "step": {"lower_bound_ms": t.lower_bound_ms, "estimated_ms": t.estimate_ms, "here_ms": t.here_ms,
                     "left_out": t.left_out, "left_out_here_ms": t.left_out_ms},
            "kernels": [kernel(r) for r in t.kernels], "notes": t.notes,
        } for t in p.targets],
    }


# --- the method's error against published figures (bench/public_figures.json) ---

@dataclass(frozen=True)
class PairError:
    """One published cross-GPU pair: per kernel (ladder name, published GFLOP/s, projected GFLOP/s,
    absolute relative error), and the median and worst error."""

    name: str
    gpu: str
    rows: list[tuple[str, float, float, float]]

    @property
    def median(self) -> float:
        return statistics.median(r[3] for r in self.rows)

    @property
    def worst(self) -> float:
        return max(r[3] for r in self.rows)


def published_errors(doc: Results, figures: dict) -> list[PairError]:
    """The projection of `doc` (a run) against each pair of `figures` (the format of
    bench/public_figures.json: `pairs`, each with `gpu`, `problem` 'MxNxK' and `kernels`, each with
    `kernel` (a ladder name or 'cublas') and `gflops` or `time_ms`). Raises UsageError when a pair's
    problem is not the run's, or a kernel is not in it."""
    out = []
    flops = doc.problem.problem.flops
    for pair in figures["pairs"]:
        if pair["problem"] != doc.problem.problem.text():
            raise UsageError(f"{pair['name']}: figures at {pair['problem']}, the run at {doc.problem.problem.text()}")
        rows_by = {r.label: r for r in project(doc, [pair["gpu"]]).targets[0].kernels}
        rows = []
        for fig in pair["kernels"]:
            r = rows_by.get(fig["kernel"])
            if r is None or r.gflops is None:
                raise UsageError(f"{pair['name']}: {fig['kernel']} has no projection")
            published = fig["gflops"] if "gflops" in fig else gflops(flops, fig["time_ms"])
            rows.append((fig["kernel"], published, r.gflops, abs(r.gflops - published) / published))
        out.append(PairError(pair["name"], pair["gpu"], rows))
    return out
