"""The graded part of `roofline run`: kernels of any signature and callables verified, timed and
graded against their speed of light, each in a process of its own (`run FILE.cu` whose file declares
`// roofline arg:` lines, `run MODULE:FUNCTION --spec FILE.toml`, `run SPEC.toml`)."""

from __future__ import annotations

import shlex
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..defaults import DEFAULT_GRADES
from ..errors import RunError, UsageError
from ..outcome import Outcome, Plain

if TYPE_CHECKING:
    from ..model.device import DeviceSpec
    from ..model.timing import TimingOptions
    from ..progress import Progress
    from ..results.grades import GradeResults


@dataclass(frozen=True)
class GradeReport:
    """A finished grade: the document (also written to the grade file), notes, and failures (one
    line each: an entry that did not compile, verify or run; the command exits 1) and usage
    failures (a reference that failed: the spec's error; the command exits 2)."""

    results: "GradeResults"
    notes: list[str]
    failures: list[str]
    usage_failures: list[str] = field(default_factory=list)


def workloads(targets: list[str], spec: Path | None = None, sizes: list[str] | None = None,
              sweep: str | None = None, compiling: tuple[str | None, tuple[str, ...]] = (None, ())) -> list:
    """The workloads `targets` name: FILE.cu (its `// roofline` lines, with a .toml of its stem
    beside it, compiled as `compiling` adds to its settings: `gemm.compile_settings`),
    MODULE:FUNCTION or FILE.py:FUNCTION (declared by the spec file `spec`), or a
    spec file FILE.toml naming its `callable`; at the sizes `sizes` ('NAME=VALUE') set, and with
    `sweep` ('NAME=V1,V2,...') each workload that declares NAME once per value. A target may be a
    `workload.spec.Workload` already read (`run FILE.cu`: the file read once, its settings the
    caller's). Raises UsageError (one line) for a target that names nothing, a spec that does not
    parse, or a size no workload declares."""
    from ..workload import spec as specs
    if not targets and spec is not None:
        targets = [str(spec)]
    if not targets:
        raise UsageError("give what to grade: FILE.cu, MODULE:FUNCTION or FILE.py:FUNCTION (with {spec} FILE.toml)",
                         mentions=["spec"])
    out = []
    callables = any(isinstance(x, (str, Path)) and ":" in str(x) and not str(x).endswith((".cu", ".toml"))
                    for x in targets)
    for t in targets:
        read = isinstance(t, specs.Workload)  # a kernel file its caller read already (`ladder.user.load`)
        text = str(t.path) if read else str(t)
        if read or text.endswith(".cu") or Path(text).suffix in (".cuh", ".cu"):
            if spec is not None and not callables:
                raise UsageError(f"{{spec}} declares callables; {text} is declared by its own '// roofline' lines "
                                 "(or a .toml of its stem beside it)", "spec")
            w = t if read else specs.load_kernel(Path(text))
            if not read and (compiling[0] is not None or compiling[1]):
                w = replace(w, build=w.build.given(*compiling))
            out.append(w)
        elif text.endswith(".toml"):
            target = specs.callable_in(Path(text))
            if target is None:
                raise UsageError(f"{text}: names no callable (callable = \"MODULE:FUNCTION\"); give a .cu file with it")
            out.append(specs.load_callable(target, Path(text)))
        elif ":" in text:
            out.append(specs.load_callable(text, spec))
        else:
            raise UsageError(f"{text!r}: give a .cu file, MODULE:FUNCTION, FILE.py:FUNCTION or a spec file .toml")
    overrides: dict[str, int] = {}
    for item in sizes or []:
        if "=" not in item:
            raise UsageError(f"{{size}} {item!r}: write NAME=VALUE, e.g. C=8192", "size")
        key, value = (s.strip() for s in item.split("=", 1))
        if key in overrides:
            raise UsageError(f"{{size}} {key} is given twice", "size")
        try:
            overrides[key] = specs.parse_size_value(value, key)
        except UsageError as exc:
            raise UsageError(f"{{size}} {exc.message}", "size") from None
    for key in overrides:
        if not any(key in w.sizes for w in out):
            known = sorted({k for w in out for k in w.sizes})
            raise UsageError(f"{{size}} {key}: no workload declares that size (theirs: {', '.join(known) or 'none'})",
                             "size")
    out = [w.resized({k: v for k, v in overrides.items() if k in w.sizes}) for w in out]
    if sweep is not None:
        key, _, values = sweep.partition("=")
        key = key.strip()
        try:
            steps = [specs.parse_size_value(v, key) for v in values.split(",") if v.strip()]
        except UsageError as exc:
            raise UsageError(f"{{sweep}} {exc.message}", "sweep") from None
        if not key or not steps:
            raise UsageError(f"{{sweep}} {sweep!r}: write NAME=V1,V2,..., e.g. C=1024,2048,4096", "sweep")
        if not any(key in w.sizes for w in out):
            raise UsageError(f"{{sweep}} {key}: no workload declares that size", "sweep")
        if key in overrides:
            raise UsageError(f"{{sweep}} {key} and {{size}} {key} both set it; give one", "sweep", ["size"])
        out = [w.resized({key: v}) if key in w.sizes else w for w in out for v in (steps if key in w.sizes else [0])]
    for w in out:
        w.work()
        if w.path is not None:
            w.launch()
    names = [(w.name, w.workload_text()) for w in out]
    for n in names:
        if names.count(n) > 1:
            raise UsageError(f"{n[0]} is given twice for {n[1]}; name one otherwise ('// roofline name:')")
    return out


def grade(targets: list, out: Path = DEFAULT_GRADES, spec: Path | None = None, sizes: list[str] | None = None,
          baseline: str | list[str] | None = None, profile: bool = False, gpu: str | None = None,
          timing: TimingOptions | None = None, progress: Progress | None = None,
          sweep: str | None = None, compiling: tuple[str | None, tuple[str, ...]] = (None, ())) -> GradeReport:
    """Verify, time and grade each of `targets` (`workloads`) against its speed of light on this
    GPU (`model.sol`, the measured ceilings, cached once measured), each in a process of its own
    (`measure.graded_child`); with `profile`, count one call of each under Nsight Compute; score
    the entries of each workload against `baseline` (one or several, each the name of an entry
    graded here, a grade file whose entry of the same workload gives the time, or a callable
    MODULE:FUNCTION graded here with the first target's spec). `sweep` ('NAME=V1,V2') grades each
    at several values of one size. `timing`: each launch's timeout, the budget per entry and the
    full-clock share (`model.timing.TimingOptions`; its L2 is always flushed). `compiling`: the
    command line's compiler and options for kernel files named by path (`workloads`). Each
    kernel's compiler is chosen before any GPU work (`measure.toolchain.pinned`), and a note says
    which built it. Writes the grade file `out` atomically.

    Raises UsageError for bad input before any GPU work, RunError when there is no GPU. An entry
    that fails is kept with its error (`GradeReport.failures`); a reference that fails is a usage
    failure (`usage_failures`), the other entries kept."""
    from ..progress import Progress
    from .. import files
    from ..results import store
    from .. import grading
    from ..measure import ceilings, nvml
    from ..measure.graded_child import grade_in_child, request_for
    from ..results.grades import GradeResults
    progress = progress or Progress()
    from ..model.timing import TimingOptions
    timing = (timing or TimingOptions()).checked()
    items = workloads(targets, spec, sizes, sweep, compiling)
    from ..ladder.user import workload_kernel
    from .gemm import compiled_note, pin_compilers
    items = [replace(w, build=pin_compilers([workload_kernel(w)])[0].build) if w.path is not None else w
             for w in items]
    baselines = [baseline] if isinstance(baseline, str) else list(baseline or [])
    by_name: list[str] = []  # entries graded here whose time scores their workload's others
    from_files: dict[str, tuple[str, float]] = {}  # workload -> (file, time) from grade files
    for base in baselines:
        if Path(base).is_file():
            from .. import documents
            wanted = "a baseline file is a grade file (roofline run writes one for a kernel it grades)"
            try:
                doc = documents.load_kind(Path(base), "grade", reads=wanted,
                                          why=" (roofline run writes one for a kernel it grades)")
            except UsageError as exc:
                raise UsageError(f"{{baseline}} {exc.message}", "baseline") from None
            for e in doc.entries:
                if e.graded:
                    from_files.setdefault(e.workload, (Path(base).name, e.time_ms))
        elif any(w.name == base for w in items):
            by_name.append(base)
        elif ":" in base:
            from ..workload.spec import load_callable
            first = items[0]
            spec_of = spec or (first.spec_file if first.target is not None else None)
            if spec_of is None:
                raise UsageError(f"{{baseline}} {base}: a callable baseline needs a spec declaring its args "
                                 "({spec} FILE.toml)", "baseline", ["spec"])
            b = load_callable(base, spec_of)
            items.append(b.resized({k: v for k, v in first.sizes.items() if k in b.sizes}))
            by_name.append(b.name)
        else:
            raise UsageError(f"{{baseline}} {base!r}: no entry of that name is graded here, and no such file",
                             "baseline")
    files.check_results_out(out, profile=False, kind="grade")
    if gpu is not None:
        nvml.select_gpu(gpu)
    nvml.require_gpu()
    device = nvml.describe()
    progress.expect(1 + len(items) * (2 if profile else 1))
    progress.step("DRAM, FP32 and tensor ceilings (cached once measured); the launch floor")
    device = ceilings.measure(device).attach(device)
    from ..measure.graded import launch_floor_ms
    launch_ms = launch_floor_ms(device.l2_bytes)
    entries, failures, usage_failures, notes, whys = [], [], [], [], []
    for w in items:
        progress.step(f"{w.name}: {w.workload_text()}")
        request = request_for(w, device.pci_bus_id, device.l2_bytes, timing.budget_s, timing.full_clock_share,
                          timeout_s=timing.timeout_s)
        try:
            run = grade_in_child(w, request, timing.timeout_s)
        except UsageError as exc:
            usage_failures.append(f"{w.name}: {exc}")
            from ..measure.graded import GradedRun
            run = GradedRun(workload=w, error=str(exc))
        counted = None
        if profile and run.verified:
            progress.step(f"{w.name}: one call under Nsight Compute")
            counted, note = _count_grade(w, device)
            notes += [note] if note else []
        if run.compiler and w.path is not None:
            notes.append(compiled_note(w.name, run.compiler, w.build.text, workload_kernel(w).target(device.arch)))
        whys.append(run.kernels_why)
        e = grading.entry(run, device, launch_ms, counted)
        if e.error and f"{w.name}: {e.error}" not in usage_failures:
            failures.append(f"{w.name}: {e.error}")
        entries.append(e)
    entries = grading.with_baseline(entries, by_name, from_files)
    notes += grading.activity_notes(whys)
    if from_files:
        missed = sorted({e.workload for e in entries if e.score is None and e.graded} - set(from_files))
        notes += [f"no baseline for {w}: the baseline file grades no entry of it" for w in missed]
    for w in items:
        work, buffered = w.work(), sum(a.nbytes(w.sizes) for a in w.args if a.buffer)
        if w.work_formula and w.bytes_read is None and not 0.5 <= work.nbytes / buffered <= 2:
            notes.append(f"{w.name}: {w.work_formula} counts {work.nbytes / 1e6:,.1f} MB of compulsory bytes, its "
                         f"buffers hold {buffered / 1e6:,.1f} MB; is the formula's dtype the buffers'?")
    if baselines and not any(e.score is not None for e in entries):
        from ..model.sol import SCORE_HEADROOM
        notes.append(f"no entry has a score: the baseline {', '.join(baselines)} was not graded, or has no entry of the same "
                     f"workload, or runs within {SCORE_HEADROOM:.0%} of its speed of light (the speed-up column still "
                     "compares them)")
    import datetime as _dt
    from .. import provenance
    doc = GradeResults(created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                       tool=provenance.tool(), device=device, launch_ms=launch_ms,
                       entries=entries, notes=notes)
    store.save(doc, out)
    return GradeReport(doc, notes, failures, usage_failures)


def _count_grade(w, device: DeviceSpec) -> tuple:
    """What Nsight Compute counted over one call of `w` (a child under ncu, profiling from
    cudaProfilerStart), or (None, why not)."""
    from .. import grading
    from ..measure.graded_child import command, request_for
    from ..nsight.run import Options as ProfileOptions
    from .profile import NothingLaunched, profile
    request = request_for(w, device.pci_bus_id, device.l2_bytes, None, None, mode="profile")
    try:
        with tempfile.TemporaryDirectory(prefix="roofline-grade-") as tmp:
            done = profile(command(request, Path(tmp)), Path(tmp) / "profile.json", ProfileOptions(from_start=False),
                           command_stdout_to_stderr=True)
    except NothingLaunched:  # evidence in itself: the call launched no kernel
        from ..results.grades import CountedRecord
        return CountedRecord(kernels=0), None
    except (RunError, UsageError) as exc:
        return None, f"{w.name}: not counted: {exc}"
    return grading.counted_of(done.results, w.work(), device.roofs), None


def view(report, out: Path) -> Outcome:
    """A grade: its document; the table and evidence, then where it was written. Usage failures
    (a reference that fails) exit 2, others 1."""
    from .. import documents

    failures = tuple(report.usage_failures) + tuple(report.failures)
    return Outcome(documents.to_json(report.results),
                   lambda width: [*documents.view(report.results, width),
                                  Plain(f"grades written to {out}; draw them with: roofline plot {shlex.quote(str(out))} "
                                        "--out grades.png")],
                   failures=failures, usage=bool(report.usage_failures))


def grade_problem(problem_path: Path, candidate_paths: list[Path], out: Path = DEFAULT_GRADES, gpu: str | None = None,
                  timing: TimingOptions | None = None, progress: Progress | None = None,
                  sizes: list[str] | None = None) -> GradeReport:
    """A kernel benchmark's problem (`workload.problem`: a PyTorch Model with get_inputs and
    get_init_inputs) and its candidates (files with a ModelNew) graded on this GPU
    (`measure.problem_grade`), the reference and each candidate in a process of its own
    (`measure.problem_child`): each an entry of the grade file `out`, written atomically, every
    candidate scored against the reference. The work is the reference's own, read on the meta
    device: no spec is written by hand. A GPU MODE task's reference (`workload.gpumode`) is graded
    on each benchmark case of its `task.yml`, the candidates its submissions (`custom_kernel`),
    every case an entry per file, scored against the reference's time on that case; `sizes`
    (NAME=VALUE, arguments of its generate_input) grades the cases they pick alone
    (`workload.problem.cases`).

    Raises UsageError for a file that is no problem or no candidate (read, not imported), or a
    reference the meta device cannot read, before any GPU work; RunError when there is no GPU. A
    candidate that fails its import, its check or its calls, or ends its process, is kept with its
    error (`GradeReport.failures`)."""
    import datetime as _dt

    from .. import files, grading, provenance
    from ..measure import ceilings, nvml
    from ..measure.graded import launch_floor_ms
    from ..measure.problem_child import grade_each, request_for
    from ..model import sol
    from ..model.timing import TimingOptions
    from ..progress import Progress
    from ..results import store
    from ..results.grades import GradeResults
    from ..workload import gpumode
    from ..workload import problem as problems

    progress = progress or Progress()
    timing = (timing or TimingOptions()).checked()
    import importlib
    import importlib.util
    if importlib.util.find_spec("cupy") is not None:  # imported before the candidates: its events are in the harness
        importlib.import_module("cupy")
    with problems.pytorch_defaults():  # a GPU MODE task: a problem per benchmark case, each read here first
        each = [problems.load(problem_path, case) for case in problems.cases(problem_path, sizes)]
        found = [problems.work(loaded) for loaded in each]
        listed = len(problems.cases(problem_path)) if sizes else len(each)
    for c in candidate_paths:  # imported by the child that grades it, not here
        problems.declares_candidate(c)
    names = ["reference"] + [c.stem for c in candidate_paths]
    if len(set(names)) < len(names):
        raise UsageError(f"two candidates share a name ({', '.join(names[1:])}); give each file its own name")
    files.check_results_out(out, profile=False, kind="grade")
    if gpu is not None:
        nvml.select_gpu(gpu)
    nvml.require_gpu(f"the reference and the candidates are checked and timed on a GPU only; without one, `roofline "
                     f"kernels {problem_path} --gpu NAME` gives the problem's work and speed of light on a GPU named "
                     "(e.g. h200)")
    device = nvml.describe()
    progress.expect(3)
    progress.step("DRAM, FP32 and tensor ceilings (cached once measured); the launch floor")
    device = ceilings.measure(device).attach(device)
    launch_ms = launch_floor_ms(device.l2_bytes)
    title = each[0].name if len(each) == 1 else \
        f"{problem_path.resolve().parent.name} ({len(each)}{'' if listed == len(each) else f' of {listed}'} cases)"
    progress.step(f"{title}: the reference and {len(candidate_paths)} candidate(s), checked and timed, "
                  "each in a process of its own")
    runs = grade_each([request_for(problem_path, c, device.pci_bus_id, device.l2_bytes, timing.budget_s,
                                   timing.full_clock_share, case=loaded.case)
                       for loaded in each for c in [None, *candidate_paths]])
    progress.step("graded")
    entries, notes = [], [f"{title}: each timed call on inputs of its own, drawn before the timing (where its work "
                          "was read from: each entry's line under the table)"]
    said: dict[str, list[str]] = {}  # a reading's warning -> the cases it is of
    for i, (loaded, work) in enumerate(zip(each, found)):
        mine = runs[i * len(names):(i + 1) * len(names)]
        ran, moves = sol.on_device(work.work, device.roofs)  # work in a precision this GPU has no roof for
        graded = grading.with_baseline([grading.problem_entry(r, loaded.name, ran, device, launch_ms) for r in mine],
                                       ["reference"])
        entries += graded
        for w in work.warnings:  # a warning several cases share: said once, naming them
            said.setdefault(w, []).append(loaded.name)
        notes += [f"{loaded.name}: {m}" for m in moves] + grading.emulation_notes(graded, ran, device, launch_ms) + \
            [f"{loaded.name}: the reference disagrees with a second instance of itself ({r.self_check}): each candidate "
             "is checked against an answer that moves" for r in mine if r.self_check]
    notes[1:1] = gpumode.said_once(said, problem_path.resolve().parent.name, len(each)) + \
        grading.activity_notes([r.kernels_why for r in runs])
    if len(each) > 1:  # as GPU MODE ranks a submission: the geometric mean of its times over every case
        notes += _geomeans(entries, names, title, listed)
    failures = [f"{e.name}: {e.error}" if len(each) == 1 else f"{e.workload}, {e.name}: {e.error}"
                for e in entries if e.error]
    doc = GradeResults(created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                       tool=provenance.tool(), device=device, launch_ms=launch_ms, entries=entries, notes=notes)
    store.save(doc, out)
    return GradeReport(doc, notes, failures)


def _geomeans(entries: list, names: list[str], title: str, listed: int) -> list[str]:
    """A note per model of `names` (the reference first) graded on every case of `entries`: the
    geometric mean of its times (ms) over the cases, and the candidate's speed-up over the reference
    at that mean; one saying which were not graded on every case. `listed`: the task's cases, of
    which `entries` may hold some (GPU MODE ranks over all)."""
    import math

    means, short = {}, []
    cases = len({e.workload for e in entries})
    for name in names:
        times = [e.time_ms for e in entries if e.name == name and e.graded and e.time_ms]
        if len(times) == cases:
            means[name] = math.exp(sum(math.log(t) for t in times) / len(times))
        else:
            short.append(f"{name} ({len(times)} of {cases})")
    how = "as GPU MODE ranks a submission" if cases == listed else f"GPU MODE ranks a submission over all {listed}"
    lines = [f"{title}: geometric mean of the times over the {cases} cases ({how}): "
             + ", ".join(f"{n} {m * 1e3:,.1f} µs" + (f" ({means['reference'] / m:.2f}x the reference)"
                                                     if n != "reference" and "reference" in means else "")
                         for n, m in means.items())] if means else []
    if short:
        lines.append(f"{title}: no geometric mean for what was not graded on every case: {', '.join(short)}")
    return lines

