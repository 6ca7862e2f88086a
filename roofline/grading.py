"""A graded run as an entry of a grade file: its speed of light on the device's roofs
(`model.sol`), share and score, what Nsight Compute counted, and every integrity flag
(`model.integrity`) with its evidence. What the GPU said is `measure.graded`'s; this module only
reads it."""

from __future__ import annotations

from dataclasses import asdict, replace

from .files import from_cwd
from .measure import activity
from .measure.activity import CallKernels
from .measure.candidate import patched_flags
from .measure.graded import GradedRun
from .model import integrity, sol
from .model.integrity import Flag
from .model.device import DeviceSpec
from .model.roofs import Roofs, verdict
from .model.traffic import CountedTraffic
from .results.grades import CheckRecord, CountedRecord, FlagRecord, GradeEntry, KernelsRecord, TermRecord, WorkRecord
from .results.profile import ProfileResults


def counted_of(profile: ProfileResults, work: sol.Work, roofs: Roofs) -> CountedRecord:
    """What a profile of one call counted: kernels, DRAM bytes and FLOPs summed over them, the
    excess traffic (counted DRAM bytes over the compulsory ones) and the floor that binds with
    the counted bytes and FLOPs (`model.roofs.verdict`)."""
    dram = [k.bytes.get("dram") for k in profile.kernels]
    dram_bytes = float(sum(d for d in dram if d)) if any(d is not None for d in dram) else None
    flops: dict[str, float] = {}
    for k in profile.kernels:
        for key, v in k.flops.items():
            flops[key] = flops.get(key, 0.0) + float(v)
    floors = verdict(None, roofs, flops=0.0, flops_by_precision=flops or {"fp32": 0.0},
                     counted=CountedTraffic(dram_bytes=dram_bytes) if dram_bytes else None, levels=("DRAM",))
    binding = floors.binding.level if floors.binding is not None else None
    excess = dram_bytes / work.nbytes if dram_bytes is not None and work.nbytes else None
    launches = sum(k.launches for k in profile.kernels)
    return CountedRecord(kernels=launches, dram_bytes=dram_bytes, flops=flops, excess=excess, binding=binding,
                         names=[k.name for k in profile.kernels][:16])


def late_work(async_ms: tuple[float, float] | None, kernels: CallKernels | None) -> Flag | None:
    """The async_return flag of a timed call: its wall clock to an idle device past its events
    (`integrity.async_return`), else its kernels' span from CUPTI's records past them
    (`integrity.kernels_past_events`); None for neither, or nothing timed."""
    if async_ms is None:
        return None
    late = integrity.async_return(*async_ms)
    if late is None and kernels is not None:
        late = integrity.kernels_past_events(async_ms[0], kernels.span_ms, kernels.streams)
    return late


def kernels_record(kernels: CallKernels | None) -> KernelsRecord | None:
    """The grade file's record of a call's kernels from CUPTI (`measure.activity.CallKernels`)."""
    return None if kernels is None else KernelsRecord(**asdict(kernels))


def problem_roofs(device: DeviceSpec, launch_ms: float | None) -> Roofs:
    """The roofs a problem's entries are read against: `device`'s, with the launch floor measured in
    this grading where there is one."""
    return replace(device.roofs, launch_ms=launch_ms or device.roofs.launch_ms)


def emulated_light(work: sol.Work, roofs: Roofs, l2_bytes: int | None) -> sol.SpeedOfLight | None:
    """A problem's speed of light with its FP32 matrix products done as 3xTF32 on the tensor cores,
    where that is faster than FP32 on `roofs` (`sol.fp32_on_tensor_cores`); else None."""
    emulated = sol.fp32_on_tensor_cores(work, roofs)
    return sol.speed_of_light(emulated, roofs, l2_bytes) if emulated is not None else None


def fp32_accurate(run) -> bool:
    """Whether a problem's run (`measure.problem_grade.ProblemRun`) answered as FP32 does: the
    reference, or a candidate every output of whose every draw is within `sol.EMULATED_TOLERANCE`
    of it. Only such a run's time is read against 3xTF32's bound (`emulated_light`): a faster one
    in lower precision is flagged as before."""
    if run.reference:
        return True
    errors = [o.rel_error for d in run.check.draws for o in d.outputs] if run.check is not None else []
    return bool(errors) and all(e is not None and e <= sol.EMULATED_TOLERANCE for e in errors)


def emulation_notes(entries: list[GradeEntry], work: sol.Work, device: DeviceSpec,
                    launch_ms: float | None = None) -> list[str]:
    """One note for each graded entry faster than its speed of light by the margin and not flagged
    for it: its FP32 products may have run as 3xTF32 (`emulated_light`, on the roofs `problem_entry`
    read it against)."""
    emulated = emulated_light(work, problem_roofs(device, launch_ms), device.l2_bytes)
    if emulated is None:
        return []
    return [f"{e.name}: {e.share:.2f}x faster than its speed of light at FP32's roof, within 3xTF32's "
            f"({emulated.ms:.4g} ms): FP32 matrix products can run FP32-accurate on the tensor cores, three "
            "TF32 products each, so this is not flagged" for e in entries
            if e.share is not None and e.share > sol.FASTER_THAN_LIGHT and not e.flags]


def activity_notes(whys: list[str | None]) -> list[str]:
    """One note for the runs whose calls' kernels CUPTI did not record (`whys`: each run's
    `kernels_why`), where CUPTI itself was missing: the events and the wall clock alone timed them."""
    missing = sorted({w for w in whys if w and w != activity.NO_KERNEL})
    return [f"kernel times from CUPTI's activity records not taken: {w}; the events and the wall clock to an "
            "idle device timed the calls" for w in missing]


def entry(run: GradedRun, device: DeviceSpec, launch_ms: float | None = None,
          counted: CountedRecord | None = None) -> GradeEntry:
    """The grade file's entry for `run` on `device` (its measured roofs where measured), with the
    launch floor `launch_ms` (an empty kernel's time; None: none known) and, profiled, `counted`.

    A verified and timed run gets T_SOL, its share and the flags its figures raise. It is
    `refused` (no share) when its work never reached the GPU while it was timed, or when its share
    reaches `sol.REFUSED_SHARE` without that explanation: its declared work or bytes are wrong,
    and the error says by how much."""
    w = run.workload
    work = w.work()
    roofs = replace(device.roofs, launch_ms=launch_ms or device.roofs.launch_ms)
    light = sol.speed_of_light(work, roofs, device.l2_bytes)
    flags = list(run.flags)
    time_ms = run.timing.median_ms if run.timing is not None else None
    error, refused = run.error, False
    if time_ms is not None:
        flags += [f for f in [late_work(run.async_ms, run.kernels)] if f]
        no_work = integrity.no_gpu_work(time_ms, light, roofs.launch_ms,
                                        counted.kernels if counted else None,
                                        counted.dram_bytes if counted else None)
        if no_work:
            flags.append(no_work)
            refused, error = True, f"not graded: {no_work.evidence}"
        fast = integrity.faster_than_light(time_ms, light)
        if fast and not no_work:
            flags.append(fast)
            if light.ms / time_ms >= sol.REFUSED_SHARE:
                refused = True
                b = light.binding
                error = (f"refused: its declared work makes it {light.ms / time_ms:.2f}x faster than light "
                         f"({time_ms:.4g} ms against T_SOL {light.ms:.4g} ms, {b.level} {b.amount:,.0f} at "
                         f"{b.roof:,.0f}); declare the FLOPs and bytes it really has")
        if counted is not None:
            flags += [f for f in [integrity.tensor_work_missing(work.flops, counted.flops)] if f]
    ci = run.timing.ci95_ms if run.timing is not None else None
    graded = time_ms is not None and not refused and run.verified
    return GradeEntry(
        name=run.name, kind=run.kind, source=w.target or str(from_cwd(w.path)), workload=w.workload_text(),
        sizes=dict(w.sizes),
        work=WorkRecord(flops=dict(work.flops), bytes_read=work.bytes_read, bytes_written=work.bytes_written,
                        source=work.source),
        checks=[CheckRecord(**asdict(c)) for c in run.checks], verified=run.verified, error=error, refused=refused, timing=run.timing, time_ms=time_ms,
        ci95_ms=list(ci) if ci else None, t_sol_ms=light.ms,
        terms=[TermRecord(level=t.level, amount=t.amount, roof=t.roof, measured=t.measured, ms=t.ms)
               for t in light.terms],
        binding=light.binding.level if light.binding else None, missing_roofs=list(light.missing),
        share=sol.share(light.ms, time_ms) if graded else None,
        grid=list(run.grid) if run.grid else None, block=list(run.block) if run.block else None,
        registers=run.registers, static_smem_bytes=run.static_smem_bytes, dynamic_smem_bytes=run.dynamic_smem_bytes,
        local_bytes=run.local_bytes, occupancy=run.occupancy, compiler=run.compiler,
        event_ms=run.async_ms[0] if run.async_ms else None, wall_ms=run.async_ms[1] if run.async_ms else None,
        kernels=kernels_record(run.kernels), counted=counted,
        flags=[FlagRecord(code=f.code, evidence=f.evidence, figures=f.figures) for f in flags])


def with_baseline(entries: list[GradeEntry], names: list[str],
                  from_files: dict[str, tuple[str, float]] | None = None) -> list[GradeEntry]:
    """`entries` scored against baselines: each graded entry named in `names` gives the time of
    its workload's baseline; `from_files` maps a workload to (a grade file's name, its time) for
    workloads none of `names` covers. Entries without a baseline, or not graded, are returned as
    they are."""
    times = {}
    for e in entries:
        if e.name in names and e.graded and e.workload not in times:
            times[e.workload] = (e.name, e.time_ms)
    for workload, found in (from_files or {}).items():
        times.setdefault(workload, found)
    out = []
    for e in entries:
        base = times.get(e.workload)
        if base is None or not e.graded:
            out.append(e)
            continue
        s = sol.score(e.time_ms, e.t_sol_ms, base[1])
        out.append(e.model_copy(update={"baseline": base[0], "baseline_ms": base[1], "score": s}))
    return out


def problem_entry(run, workload: str, work: sol.Work, device: DeviceSpec, launch_ms: float | None = None) -> GradeEntry:
    """The grade file's entry for one model of a kernel benchmark's problem (`measure.problem_grade.
    ProblemRun`: the reference, or a candidate with its check), `workload` the problem's name and
    `work` the reference's work and compulsory bytes (`workload.problem.work`), read as `entry`
    reads a graded callable: T_SOL on `device`'s roofs, its share, the flags of its check and of
    its time (faster than light, no GPU work), refused where its time is no time for that work."""
    roofs = problem_roofs(device, launch_ms)
    light = sol.speed_of_light(work, roofs, device.l2_bytes)
    flags = list(run.check.flags) if run.check is not None else []
    time_ms = run.timing.median_ms if run.timing is not None else None
    error, refused = run.error, False
    checks = [CheckRecord(name="the reference (what each candidate is checked against)", rel_error=0.0,
                          tolerance=0.0, passed=True)] if run.reference else []
    if run.check is not None:
        for d in run.check.draws:
            checks += [CheckRecord(name=f"{o.name} (draw {d.seed})", rel_error=o.rel_error, tolerance=o.tolerance,
                                   passed=o.passed, reason=o.reason) for o in d.outputs]
        failed = next((d for d in run.check.draws if not d.passed), None)
        if error is None and failed is not None:
            bad = next((o for o in failed.outputs if not o.passed), None)
            error = f"wrong answer on draw {failed.seed}: " + (failed.error or f"{bad.name}: {bad.reason}")
        elif error is None and flags:
            error = f"not graded: {flags[0].evidence}"
    if error is None and run.audit:
        error = f"wrong answer after the timing, on a new draw: {', '.join(run.audit)}"
    if run.patched:
        patched = patched_flags(run.patched, " while it was timed")
        flags += patched
        refused, error = True, error or f"not graded: {patched[0].evidence}"
    late = late_work(run.async_ms, run.kernels)
    if late is not None:
        flags.append(late)
        error = error or f"not graded: {late.evidence}"
    kept = integrity.l2_persisting(run.l2_set_aside)
    if kept is not None:
        flags.append(kept)
        error = error or f"not graded: {kept.evidence}"
    if time_ms is not None and error is None:
        no_work = integrity.no_gpu_work(time_ms, light, roofs.launch_ms)
        emulated = emulated_light(work, roofs, device.l2_bytes) if fp32_accurate(run) else None
        fast = integrity.faster_than_light(time_ms, light, emulated) if not no_work else None
        for f in (no_work, fast):
            if f is not None:
                flags.append(f)
                refused, error = True, f"not graded: {f.evidence}"
    verified = run.verified and not flags
    graded = time_ms is not None and error is None and verified
    ci = run.timing.ci95_ms if run.timing is not None else None
    return GradeEntry(
        name=run.name, kind="callable", source=run.source, workload=workload, sizes={},
        work=WorkRecord(flops=dict(work.flops), bytes_read=work.bytes_read, bytes_written=work.bytes_written,
                        source=work.source),
        checks=checks, verified=verified, error=error, refused=refused, timing=run.timing,
        time_ms=time_ms, ci95_ms=list(ci) if ci else None, t_sol_ms=light.ms,
        terms=[TermRecord(level=t.level, amount=t.amount, roof=t.roof, measured=t.measured, ms=t.ms)
               for t in light.terms],
        binding=light.binding.level if light.binding else None, missing_roofs=list(light.missing),
        share=sol.share(light.ms, time_ms) if graded else None,
        event_ms=run.async_ms[0] if run.async_ms else None, wall_ms=run.async_ms[1] if run.async_ms else None,
        kernels=kernels_record(run.kernels),
        flags=[FlagRecord(code=f.code, evidence=f.evidence, figures=f.figures) for f in flags])
