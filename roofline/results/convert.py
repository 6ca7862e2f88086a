"""Results documents from data the model holds: a program's profile from its profiled launches,
and Nsight Compute's counts attached to a run's kernels, by name. (A run, a sweep or a tile
search becomes a document in `roofline.collect`, above the measuring side.)"""

from __future__ import annotations

import datetime as _dt
from dataclasses import replace

from .. import provenance
from ..errors import UsageError
from ..model.arch import ArchLimits
from ..model.device import DeviceSpec
from ..nsight.names import unique_labels
from ..nsight.launches import Launch, group
from ..model.occupancy import calculate
from ..model.traffic import CountedTraffic
from ..model.units import plural
from .profile import LEVEL_KEYS, Attribution, OwnedWork, ProfileResults, kernel_from_group
from .schema import Results


def with_counters(doc: Results, counted: dict[str, CountedTraffic], launches: dict[str, Launch] | None = None) -> Results:
    """`doc` with each kernel named in `counted` carrying what Nsight Compute counted for it, and
    each named in `launches` (its profiled launch) the timeline of that launch where it was sampled
    over its run (`results.timeline`)."""
    from .timeline import launch_timeline

    def update(k) -> dict:
        out = {"counted": counted[k.name]} if k.name in counted else {}
        x = (launches or {}).get(k.name)
        timeline = launch_timeline(x, doc.device) if x is not None else None
        return {**out, **({"timeline": timeline} if timeline is not None else {})}

    kernels = [k.model_copy(update=update(k)) if k.name in counted else k for k in doc.kernels]
    return doc.model_copy(update={"kernels": kernels})


def _configured(limits: ArchLimits, smem_config_bytes: int | None) -> ArchLimits:
    """`limits` with the SM's shared memory the launch's configured carveout
    (`launch__shared_mem_config_size`, bytes), as Nsight Compute's own occupancy calculator
    takes it: the driver picks a carveout per launch, and the shared-memory block limit is what
    fits in it (a --set full report of cuDNN, CUTLASS and PyTorch kernels on the H200 agrees with
    ncu's `launch__occupancy_limit_shared_mem` launch for launch). Unchanged where the report
    gives none, or one above the SM's maximum."""
    if not smem_config_bytes or smem_config_bytes > limits.smem_per_sm_bytes:
        return limits
    return replace(limits, smem_per_sm_bytes=smem_config_bytes)


def from_profile(launches: list[Launch], device: DeviceSpec, *, command: list[str] | None = None,
                 report: str | None = None, read_with: str = "", kernel_regex: str | None = None,
                 launch_skip: int = 0, launch_count: int | None = None, from_start: bool = True,
                 exit_code: int | None = None, notes: list[str] | None = None,
                 owners: tuple[str, list, list[str]] | None = None, trace=None,
                 other_owners: tuple[str, list, list[str]] | None = None) -> ProfileResults:
    """A profile document from profiled launches (at least one): grouped by kernel and
    configuration (`nsight.launches.group`), each kernel named so that different kernels never
    share a name (`nsight.names.unique_labels`, in launch order), each group's theoretical occupancy from
    the calculator on `device`'s per-SM limits where the report gives its registers, shared
    memory and block, ordered by total time. `kernel_regex` ... `from_start` record how a new
    profile was taken (`launch_count` None for an imported report: no cap known). `owners`: (source,
    one `traces.ops.Owner` or None per launch, notes), else the launches' NVTX ranges give them, else
    `trace`'s, else `other_owners` (the form of `owners`: an XLA program's HLO, `traces.hlo`).
    `trace` (`traces.join.Joined`): the launches lined up with a PyTorch profiler trace of
    the same step, which gives each its GPU time in the program, and the NVTX reading the autograd
    number of a backward launch its ranges lack."""
    groups = group(launches)
    total = sum(g.time_ms for g in groups)
    # names told apart in launch order (a stable key): the same '#2' whatever the groups' times
    by_launch = sorted(groups, key=lambda g: min((x.order for x in g.launches if x.order is not None), default=0))
    names = unique_labels([g.first.demangled for g in by_launch])
    kernels, unlike = [], []
    for g in groups:
        x = g.first
        occ = None
        if x.registers is not None and x.threads_per_block and (x.static_smem_bytes is not None
                                                                or x.dynamic_smem_bytes is not None):
            try:
                occ = calculate(_configured(device.arch_limits, x.smem_config_bytes), max(1, x.registers),
                                x.threads_per_block, x.static_smem_bytes or 0, x.dynamic_smem_bytes or 0)
            except UsageError:
                occ = None
        kernels.append(kernel_from_group(g, names[x.demangled], total, occ, device))
        if occ is not None and x.reported_occupancy is not None and abs(occ.occupancy - x.reported_occupancy) > 0.02:
            unlike.append(f"{names[x.demangled]} {100 * occ.occupancy:.1f} % against ncu's {100 * x.reported_occupancy:.1f} %")
    if unlike:
        notes = list(notes or []) + [
            f"theoretical occupancy on {device.name} differs from the one ncu computed on the GPU the report was "
            f"made on for {plural(len(unlike), 'kernel')} ({'; '.join(unlike[:2])}): was it another GPU?"]
    if owners is None and any(x.nvtx for x in launches):
        from ..traces import nvtx
        given = [o.sequence if o is not None else None for o in trace.owners] if trace is not None else None
        found, owner_notes = nvtx.owners([(x.order if x.order is not None else i, x.nvtx, x.process_id)
                                          for i, x in enumerate(launches)], given)
        if any(o is not None for o in found):
            owners = ("NVTX ranges around each launch (ncu --nvtx)", found, owner_notes)
    if owners is None and trace is None:
        owners = other_owners
    from_trace = owners is None and trace is not None
    if from_trace:
        owners = trace.attribution  # its notes are the attribution's already
    program = (trace.source, trace.program_us, [] if from_trace else trace.notes) if trace is not None else None
    index = {g.first.key: i for i, g in enumerate(groups)}  # the order of `kernels`
    attribution = _attribution(launches, index, *owners, program=program) if owners is not None else None
    return ProfileResults(
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        tool=provenance.tool(), device=device, command=command, report=report, read_with=read_with,
        kernel_regex=kernel_regex, launch_skip=launch_skip, launch_count=launch_count,
        from_start=from_start, launches_profiled=len(launches), exit_code=exit_code, total_time_ms=total,
        kernels=kernels, attribution=attribution, notes=list(notes or []))


def _attribution(launches: list[Launch], index: dict[tuple, int], source: str, owners: list,
                 notes: list[str], program: tuple[str, list[float | None], list[str]] | None = None) -> Attribution:
    """The owned launches (`owners[i]` owns `launches[i]`; None: no owner) summed per op, phase,
    module, launcher and kernel (its place in the document's `kernels`, `index` by `Launch.key`),
    longest first; with `program`, each row's time in the program where every launch of it has one."""
    rows: dict[tuple, dict] = {}
    times = program[1] if program is not None else [None] * len(launches)
    for x, o, us in zip(launches, owners, times):
        if o is None:
            continue
        key = (o.op, o.phase, o.module, o.launcher, index[x.key])
        row = rows.setdefault(key, {"launches": 0, "time_ms": 0.0, "flops": {}, "bytes": {}, "launch_order": [],
                                    "program_ms": 0.0})
        row["launches"] += 1
        row["program_ms"] = row["program_ms"] + us / 1e3 if us is not None and row["program_ms"] is not None else None
        if x.order is not None:
            row["launch_order"].append(x.order)
        row["time_ms"] += x.time_ns / 1e6
        for k, v in x.flops.items():
            row["flops"][k] = row["flops"].get(k, 0.0) + v
        for k, v in x.nbytes.items():
            if k in LEVEL_KEYS:
                row["bytes"][k] = row["bytes"].get(k, 0.0) + v
    for row in rows.values():  # every launch's place, or none (a launch the report did not place)
        row["launch_order"] = sorted(row["launch_order"]) if len(row["launch_order"]) == row["launches"] else None
        if program is None:
            row["program_ms"] = None
    owned = [OwnedWork(op=op, phase=phase, module=module, launcher=launcher, kernel=kernel, **row)
             for (op, phase, module, launcher, kernel), row in rows.items()]
    owned.sort(key=lambda w: (-w.time_ms, w.op, w.kernel))
    return Attribution(source=source, owned=owned, notes=list(notes) + (list(program[2]) if program else []),
                       program_source=program[0] if program is not None else None)
