"""The speed of light of problems in a kernel benchmark's format on a GPU, offline: each problem's
work and compulsory bytes as its reference declares them to PyTorch (`workload.problem.work`, read
on the meta device) against the GPU's roofs (`model.sol.speed_of_light`: the measured ceilings where
the device records them, else its datasheet's). What `roofline kernels problem.py --gpu NAME`
prints: the least time any candidate can take, before a candidate exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import UsageError
from ..model.device import DeviceSpec
from ..model import sol
from ..model.sol import SpeedOfLight, speed_of_light
from ..progress import Progress
from ..workload import gpumode
from ..workload.problem import MissingModule, ProblemWork, cases, is_task, load, pytorch_defaults, work


@dataclass(frozen=True)
class ProblemBound:
    """One problem (`name`, from `path`): what its reference does (`work`, its FLOPs in the precisions
    this GPU runs them at) and its speed of light; `counted`, the FLOPs by precision as they were
    counted, where this GPU has no roof for some and `sol.on_device` moved them (FP4 read at FP8's
    roof), else None."""

    name: str
    path: Path
    work: ProblemWork
    sol: SpeedOfLight
    counted: dict[str, float] | None = None

    def to_json(self) -> dict:
        w = self.work.work
        b = self.sol.binding
        counted = self.counted if self.counted is not None else w.flops
        return {"name": self.name, "path": str(self.path), "flops": dict(w.flops), "flops_counted": dict(counted),
                "bytes_read": w.bytes_read,
                "bytes_written": w.bytes_written, "work_source": w.source,
                "inputs": [[t.name, list(t.shape), t.dtype] for t in self.work.inputs],
                "outputs": [[t.name, list(t.shape), t.dtype] for t in self.work.outputs],
                "t_sol_ms": self.sol.ms, "bound": b.level if b is not None else None,
                "terms": [{"level": t.level, "amount": t.amount, "roof": t.roof, "measured": t.measured, "ms": t.ms}
                          for t in self.sol.terms],
                "no_roof": list(self.sol.missing), "warnings": list(self.work.warnings)}


@dataclass(frozen=True)
class ProblemBounds:
    """The problems given, on `device` (its name), in the order given, with notes."""

    device: str
    rows: list[ProblemBound]
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # one line per problem that could not be read
    missing_only: bool = False  # every error a package this Python lacks (a failure to run, not bad input)

    def to_json(self) -> dict:
        return {"kind": "problems", "device": self.device, "problems": [r.to_json() for r in self.rows],
                "errors": list(self.errors), "notes": list(self.notes)}


def _labels(paths: list[Path]) -> dict:
    """Each path's name for a table: its stem where the files share one folder, else the fewest
    trailing parts of its path, from its folder on, that tell every file apart
    (`level1/1_Square_matrix_multiplication_`; `a/x/p` beside `b/x/p`)."""
    parts = {p: Path(p).resolve().with_suffix("").parts for p in paths}
    if len({Path(p).resolve().parent for p in paths}) <= 1:
        return {p: Path(p).stem for p in paths}
    for k in range(2, max(len(v) for v in parts.values()) + 1):
        named = {p: "/".join(v[-k:]) for p, v in parts.items()}
        if len(set(named.values())) == len(set(map(str, named))):
            return named
    return {p: str(Path(p)) for p in paths}


def _arguments(paths: list[Path]) -> dict:
    """Each GPU MODE task of `paths` -> the arguments its cases take (`gpumode.arguments`); a file
    that is no task, or whose task file cannot be read, is left out (it is said as it is read)."""
    found = {}
    for path in paths:
        try:
            if is_task(Path(path)):
                found[path] = gpumode.arguments(Path(path))
        except UsageError:
            continue
    return found


def bounds(paths: list[Path], device: DeviceSpec, sizes: list[str] | None = None,
           progress: Progress | None = None) -> ProblemBounds:
    """Every problem file of `paths` on `device`. A file that is not a problem, or whose reference
    cannot be read on the meta device (`workload.problem`), is one line of `errors` and the others
    are read; given alone, it raises UsageError with that line (MissingModule, a RunError, where it
    imports a package this Python lacks; `missing_only` says every error is one). A problem is
    named by its file's stem, or, where the files come from more than one folder, by its folder and
    stem (`level1/1_Square_matrix_multiplication_` beside `level3/1_MLP`). A GPU MODE task's reference
    is a problem per benchmark case of its `task.yml`, named by its folder and the case
    (`matmul_py[m=4096,n=5120,k=4096]`: `workload.gpumode`); `sizes` (NAME=VALUE) picks some of
    those cases (`workload.problem.cases`): of several tasks, each by the names it takes, one that
    takes none or has no such case left out in a note (a name no task takes is refused). `progress`
    is told of each problem as its work is counted."""
    rows, errors, moves, missing = [], [], {}, set()
    labels = _labels(paths)
    each = []  # (path, case): a GPU MODE task's file holds a problem per benchmark case
    unpicked: list[Path] = []  # files of several that `sizes` picks no case of
    takes = _arguments(paths) if sizes and len(paths) > 1 else {}
    if takes:  # across several tasks, each picked by the names it takes; a name none takes is a slip
        stray = [n for n in dict.fromkeys(map(gpumode.size_name, sizes)) if not any(n in t for t in takes.values())]
        if stray:
            raise UsageError(f"{{size}} {stray[0]}=...: no task given takes {stray[0]} (they take "
                             f"{', '.join(dict.fromkeys(n for t in takes.values() for n in t))})", "size")
    for path in paths:
        own = [z for z in sizes if gpumode.size_name(z) in takes.get(path, ())] if takes else sizes
        if takes and not own:  # a task that takes none of the names given
            unpicked.append(path)
            continue
        try:
            each += [(path, c) for c in cases(path, own)]
        except UsageError as exc:
            if len(paths) == 1:
                raise
            if sizes and exc.param == "size":  # across many tasks, sizes pick the cases of those that have them
                unpicked.append(path)
            else:
                errors.append(exc.worded({"size": "--size"}))
    if unpicked and not each and not errors:
        raise UsageError(f"{{size}} {' '.join(sizes)}: none of the {len(paths)} problems given has a case with "
                         f"{'these' if len(sizes) > 1 else 'this'}; given one task alone, the line says what its "
                         "cases take", "size")
    unread: set[Path] = set()  # files that did not import: their other cases are not tried again
    failed: dict[tuple[Path, str], list] = {}  # (file, error) -> the cases that failed so (None: its one problem)
    progress = progress or Progress()
    progress.expect(len(each))
    for path, case in each:
        progress.step(f"{Path(path).name}{'' if case is None else f' ({case})'}: its work")
        if path in unread:
            continue
        loaded = None
        try:
            with pytorch_defaults():  # each file read as if alone (one may turn TF32 on as it is imported)
                loaded = load(path, case)
                found = work(loaded)
        except (UsageError, MissingModule) as exc:  # no torch at all is raised, for every file alike
            if len(each) == 1:
                raise
            failed.setdefault((path, str(exc)), []).append(case)
            if isinstance(exc, MissingModule):
                missing.add((path, str(exc)))
            if loaded is None:
                unread.add(path)
            continue
        name = labels[path] if case is None else loaded.name
        moved, lines = sol.on_device(found.work, device.roofs)  # work in a precision the GPU has no roof for
        for line in lines:
            moves[line] = moves.get(line, 0) + 1
        counted = dict(found.work.flops) if lines else None
        found = replace(found, work=moved)
        rows.append(ProblemBound(name, Path(path), found, speed_of_light(found.work, device.roofs), counted))
    measured = any(t.measured for r in rows for t in r.sol.terms)
    notes = [f"T_SOL = max(FLOPs / the roof of their precision (the tensor precisions' times added: they share "
             "the tensor cores), compulsory bytes / DRAM); "
             f"{'measured ceilings where the device records them' if measured else 'the datasheet roofs'} of "
             f"{device.name}; the work as PyTorch's FLOP counter reads the reference on the meta device (matrix "
             "products, convolutions, attention; other ops count no FLOPs, so their bytes bound them)"]
    said: dict[Path, dict[str, list[str]]] = {}  # a file's warnings -> the problems of it they are of
    for r in rows:
        for w in r.work.warnings:
            said.setdefault(r.path, {}).setdefault(w, []).append(r.name)
        for d in r.work.details:  # how its work was read beyond the usual (also in --json's work_source)
            said.setdefault(r.path, {}).setdefault(f"the work: {d}", []).append(r.name)
    for path, warned in said.items():  # a warning several cases of a task share: said once
        notes += gpumode.said_once(warned, Path(path).resolve().parent.name, sum(p == path for p, _ in each))
    notes += [f"{line} ({n} problem{'s' if n > 1 else ''})" for line, n in moves.items()]
    if any(r.work.work.flops.get("tf32_tensor") for r in rows):
        notes.append("FP32 convolutions are read as TF32 tensor work (PyTorch leaves cuDNN's TF32 on: "
                     "torch.backends.cudnn.allow_tf32) and FP32 matrix products as FP32 (its matmul TF32 is off: "
                     "torch.backends.cuda.matmul.allow_tf32), as a reference runs them by default")
    emulated = [r for r in rows if sol.fp32_on_tensor_cores(r.work.work, device.roofs) is not None]
    if emulated:
        fp32, tf32 = device.roofs.roof("fp32", True).value, device.roofs.roof("tf32_tensor", True).value
        within = f"{sol.EMULATED_TOLERANCE:.0e}".replace("e-0", "e-")  # 1e-5
        notes.append(f"FP32 matrix products are bound at FP32's roof; done FP32-accurate as 3xTF32 (three TF32 "
                     f"tensor-core products each) they can run up to {tf32 / sol.EMULATION_PASSES / fp32:.2f}x faster "
                     f"on {device.name}: a candidate that fast, its answers within {within} of the reference's, is "
                     "graded, not flagged faster than light")
    if unpicked:
        names = ", ".join(labels[p] if not is_task(Path(p)) else Path(p).resolve().parent.name for p in unpicked)
        notes.append(f"{' '.join(sizes)} picks no case of {len(unpicked)} of the problems given, left out: {names}")
    if not device.roofs.launch_ms:
        notes.append("no launch floor: T_SOL here is the work's alone; `roofline run` on the GPU also measures an "
                     "empty kernel's launch and counts it in the bound (a problem under a few microseconds is bound "
                     "by it)")
    if any(r.sol.missing for r in rows):
        notes.append("work in a precision this GPU has no roof for is left out of its bound (no_roof): the bound is "
                     "then lower than light, never higher")
    listed_wrong = len(errors)  # task files that list no case: the user's to mend
    for (path, why), cases_failed in failed.items():  # a task's cases failing alike said once, naming them
        tried = [c for p, c in each if p == path]
        which = "" if cases_failed == tried or path in unread else \
            f" (case{'s' if len(cases_failed) > 1 else ''} {', '.join(map(str, cases_failed))} of {len(tried)})"
        errors.append(f"{path}{which}: {why.removeprefix(f'{path}: ')}" if which else why)
    return ProblemBounds(device.name, rows, notes, errors,
                         missing_only=bool(errors) and not listed_wrong and set(failed) <= missing)
