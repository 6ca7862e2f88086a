"""`roofline profile`: every kernel of a program under Nsight Compute, or a report made elsewhere.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ..console import integer, present
from ..defaults import DEFAULT_LAUNCH_COUNT, DEFAULT_PROFILE
from ..errors import RunError, UsageError
from ..outcome import Outcome

if TYPE_CHECKING:
    from ..nsight.run import Options as ProfileOptions
    from ..model.device import DeviceSpec
    from ..nsight import run as ncu
    from ..results.profile import ProfileResults


PROFILE_HELP = ("Run COMMAND under Nsight Compute and put every kernel it launches on one roofline, each "
                "against the roof of its own precision.")


MOUNT = dict(short_help="Profile every kernel of any CUDA program under Nsight Compute.",
             context_settings={"allow_interspersed_args": False})


def command(
    command: Optional[list[str]] = typer.Argument(None, metavar="-- COMMAND [ARGS]",
                                                  help="The program to profile, after --."),
    kernel_regex: Optional[str] = typer.Option(None, "--kernel-regex", metavar="RE",
                                               help="Profile only kernels whose name matches (ncu -k regex:RE)."),
    launch_skip: int = typer.Option(0, "--launch-skip", parser=integer, metavar="N", help="Skip the first N matching launches."),
    launch_count: int = typer.Option(DEFAULT_LAUNCH_COUNT, "--launch-count", parser=integer, metavar="N",
                                     help="Profile at most N launches (each costs a fraction of a second under ncu)."),
    from_start: bool = typer.Option(True, "--profile-from-start/--no-profile-from-start",
                                    help="Off: profile only between cudaProfilerStart and cudaProfilerStop "
                                         "(torch.cuda.profiler.start/stop)."),
    import_report: Optional[list[Path]] = typer.Option(None, "--import", metavar="REPORT",
                                                 help="Read an existing report instead: .ncu-rep (needs the nsight "
                                                      "extra, or ncu; its PM sampling, if any, read as timelines), any "
                                                      "CSV export of one (raw or details page, any metric set or ncu "
                                                      "version) or ncu's text output (need nothing)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME",
                                      help="With --import: the GPU preset (or device file, mygpu.toml) to "
                                           "read the report against."),
    report: Optional[Path] = typer.Option(None, "--report", metavar="FILE.ncu-rep",
                                          help="Also keep ncu's own report (opens in Nsight Compute's GUI)."),
    out: Path = typer.Option(DEFAULT_PROFILE, "--out", metavar="PATH", help="Results file (written atomically)."),
    as_json: bool = typer.Option(False, "--json", help="Print the profile document instead of the table."),
    top: int = typer.Option(25, "--top", parser=integer, metavar="N", help="Kernels in the table (all are in the results file)."),
    energy: bool = typer.Option(False, "--energy",
                                help="Run the command once more without ncu and record the GPU's energy over it "
                                     "(per kernel, energy cannot be measured under ncu's replay)."),
    trace: Optional[Path] = typer.Option(None, "--trace", metavar="TRACE.json|DIR",
                                         help="With --import: the program's own record of the same step, whose ops "
                                              "own the launches where the report has no NVTX ranges: a PyTorch "
                                              "profiler trace (.json or .json.gz; each launch also takes the time "
                                              "in the program of the trace's kernel it lines up with, show --by "
                                              "op's 'program ms'), or the folder a JAX program dumped its "
                                              "optimized HLO into (XLA_FLAGS='--xla_dump_to=DIR "
                                              "--xla_dump_hlo_as_text'): its jax ops and named_scopes."),
    timeline: bool = typer.Option(False, "--timeline",
                                  help="Also sample each launch's counters over its run (Nsight Compute's PM "
                                       "sampling; each kernel keeps its longest launch): phases, tail wave, the "
                                       "kernel's trajectory (plot --kind timeline). A few more replay passes per "
                                       "launch; reading needs ncu_report 2025.4+. An imported report made with "
                                       "--section PmSampling is read without it."),
    ops: bool = typer.Option(True, "--ops/--no-ops",
                             help="Record the PyTorch op (forward, backward, optimizer) and nn.Module that launched "
                                  "each kernel, from NVTX ranges roofline turns on in the program; in a JAX program, "
                                  "the jax op and named_scope, from the optimized HLO XLA is asked to dump "
                                  "(show --by op|module)."),
):
    """Run COMMAND under Nsight Compute (ncu, clocks untouched, child processes followed) and
    read every kernel it launches against the roof of its own precision (FP64, FP32, FP16/BF16
    on the CUDA cores, FP16/BF16/TF32/FP8/INT8 on the tensor cores) and against DRAM, L2 and
    L1/shared bandwidth: time share, FLOP/s, intensity per level, the binding roof and how far
    below it, theoretical and achieved occupancy. Launches of one kernel at one configuration
    are grouped. Draw the chart with `roofline plot PATH --out chart.png`.

    Overhead: every profiled launch is replayed 8 times on an H200 to collect the counters (ncu's
    --set full takes 38); a training step of 165 launches took 61 s (9 s without ncu; 352 s under
    --set full). Cap it with --launch-count (default 500), narrow it with --kernel-regex, or mark
    one step with cudaProfilerStart/Stop and pass --no-profile-from-start.

    An imported report is read for whatever it holds: each kernel's figures record the metric
    they were counted from or the formula they were derived by, and what the report lacks is
    listed with the ncu option that brings it; no roof is placed without its data.

    Permission: ncu needs the GPU's performance counters. If it reports ERR_NVGPUCTRPERM, run as
    root, or allow them for all users: echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0'
    | sudo tee /etc/modprobe.d/ncu-permissions.conf, then reboot (or reload the nvidia module).

    Example: roofline profile --no-profile-from-start -- python train.py
    """

    if top < 1:
        raise UsageError(f"--top must be 1 or more, got {top}")
    from ..nsight.run import Options as ProfileOptions

    options = ProfileOptions(kernel_regex, launch_skip, launch_count, from_start)
    if import_report:
        if len(import_report) > 1:  # Click keeps the last of a repeated option without a word
            raise UsageError(f"--import takes one report, given {len(import_report)}: import each on its own "
                             "(each to its own --out)")
        if command:
            raise UsageError("give --import REPORT or a command after --, not both")
        if report is not None:
            raise UsageError("--report keeps the report of a new profile; --import reads one that exists")
        if energy:
            raise UsageError("--energy runs the command profiled; an imported report has no command to run")
        if not ops:
            raise UsageError("--no-ops applies to a new profile; an imported report keeps the NVTX ranges it was made "
                             "with (ncu --nvtx)")
        if timeline:
            raise UsageError("--timeline samples a new profile; an imported report holds the PM sampling it was made "
                             "with (ncu --section PmSampling), and its timelines are read from it")
        if options != ProfileOptions():
            raise UsageError("--kernel-regex, --launch-skip, --launch-count and --no-profile-from-start choose what "
                             "a new profile records; an imported report holds what it holds")
        done = import_profile(import_report[0], out, gpu, trace)
    else:
        if gpu is not None:
            raise UsageError("--gpu applies to --import; a new profile reads the GPU it runs on")
        if trace is not None:
            raise UsageError("--trace applies to --import; a new profile records each kernel's op itself (--ops)")
        done = profile(list(command or []), out, options, report, command_stdout_to_stderr=as_json,
                       energy=energy, ops=ops, timeline=timeline)
    present(view(done, out, top), as_json)


@dataclass(frozen=True)
class ProfileReport:
    """A finished profile (or import): the document (also written to the results file), one-line
    notes (the cap reached, rows left out, ncu's warnings) and failures (the command's non-zero
    exit: the command then exits 1, its profiled kernels kept)."""

    results: ProfileResults
    notes: list[str]
    failures: list[str]


def profile(command: list[str], out: Path = DEFAULT_PROFILE, options: ProfileOptions | None = None,
            report_out: Path | None = None, timeout_s: float | None = None,
            command_stdout_to_stderr: bool = False, energy: bool = False, ops: bool = True,
            timeline: bool = False) -> ProfileReport:
    """Run `command` under Nsight Compute (`nsight.run`, clocks untouched, child processes
    followed), read its report as an import would (`nsight.read`), and write every profiled
    kernel, grouped by configuration and read against the roof of its precision, to `out`
    atomically; with `report_out`, keep ncu's `.ncu-rep` there too. This GPU's measured ceilings
    (cached, or measured once the command is done) join the theoretical roofs when the kernels
    ran on it. `command_stdout_to_stderr` sends the command's standard output to standard error
    (for `--json`, which owns standard output). With `energy`, the command runs once more without
    ncu and the GPU's energy over that run is recorded (`measure.energy.command_energy`): per
    kernel, energy cannot be had under ncu's replay. With `ops`, the op and module that launched each
    kernel are recorded: a Python program that imports torch gets PyTorch's NVTX op ranges and a
    range per nn.Module call turned on (`nsight/inject/sitecustomize.py`), which ncu records per
    launch (`--nvtx`) and `traces.nvtx` reads. With `timeline`, each launch's counters are sampled
    over its run (`--section PmSampling`) and each kernel records its longest launch's timeline
    (`results.timeline`).

    Raises UsageError for bad options, an empty command, a program that does not exist, or a
    kernel filter that matches nothing (naming the kernels seen); RunError when ncu is missing, may
    not read the counters, or no kernel was profiled. A command that fails after launching
    kernels is not an error here: its exit code is in the results and in `failures`."""
    from ..nsight.run import Options as ProfileOptions
    from pydantic import ValidationError
    from ..results import convert
    from .. import files
    from .. import nsight
    from ..model.units import plural
    from ..results import store
    from ..nsight import run as ncu
    if not command:  # before the options: what is missing first
        raise UsageError("give the command to profile after --, e.g. roofline profile -- python train.py")
    options = (options or ProfileOptions()).check()
    if report_out is not None and Path(report_out).resolve() == Path(out).resolve():
        raise UsageError(f"{{report}} and {{out}} both name {out}; give them two files", "report", ["out"])
    files.check_results_out(out, profile=True)
    if report_out is not None:
        if not str(report_out).endswith(".ncu-rep"):
            raise UsageError(f"{{report}} {report_out}: give the Nsight Compute report a .ncu-rep name", "report")
        files.check_writable(report_out)
    ncu.find_ncu()
    program = command[0]
    if shutil.which(program) is None:
        if os.sep in program and Path(program).is_file():
            raise UsageError(f"cannot run {program!r}: it is not executable (chmod +x it, or name its interpreter)")
        raise UsageError(f"cannot run {program!r}: no such program" + (
            "" if os.sep in program else " on PATH (give its path, e.g. ./" + program + ")"))
    report = None
    hlo_owners, followed_alone = None, False
    with tempfile.TemporaryDirectory(prefix="roofline-ncu-") as tmp:
        xla = Path(tmp) / "xla" if ops and _python(command) else None
        # where XLA dumps: the folder the user's XLA_FLAGS names, else roofline's own
        dumped = (ncu.xla_dump_folder(os.environ.get("XLA_FLAGS", "")) or xla) if xla is not None else None
        done = ncu.run(command, options, Path(tmp) / "report", timeout_s, command_stdout_to_stderr, ops=ops,
                       timeline=timeline, xla_dump=xla)
        if done.report is None and _signalled(done.returncode) and _xla_ran(dumped):
            if dumped == xla:  # roofline's own folder: the modules of the run that crashed set aside
                shutil.rmtree(xla, ignore_errors=True)
            done = ncu.run(command, options, Path(tmp) / "report", timeout_s, command_stdout_to_stderr, ops=ops,
                           timeline=timeline, xla_dump=xla, children=False)
            followed_alone = True
        if done.report is not None:
            if report_out is not None:
                files.write_atomic(report_out, lambda t: shutil.copyfile(done.report, t))
            try:
                report = nsight.read(done.report, source="the profile")
            except nsight.NoLaunches:
                pass
        if report is not None and dumped is not None:
            hlo_owners = _xla_owners(report.launches, dumped)
    if report is None:
        raise _nothing_profiled(done, options, ops and _python(command), not ops and _python(command), followed_alone)
    launches = report.launches
    device, notes = _profiled_device(report.device)
    if options.launch_count and len(launches) >= options.launch_count:
        notes.append(f"profiled the first {len(launches):,} launches, the cap: later launches were not profiled "
                     "(raise --launch-count, or narrow with --kernel-regex / --launch-skip)")
    if followed_alone:
        notes.append(ALONE)
    notes += list(report.notes)
    notes += [w for w in done.warnings() if "application returned an error code" not in w]
    try:
        doc = convert.from_profile(launches, device, command=list(command), read_with=report.read_with,
                                   kernel_regex=options.kernel_regex, launch_skip=options.launch_skip,
                                   launch_count=options.launch_count, from_start=options.from_start,
                                   exit_code=done.returncode, notes=notes, other_owners=hlo_owners)
    except ValidationError as exc:
        kept = f"; ncu's own report is kept in {report_out}" if report_out is not None else ""
        raise RunError(f"ncu reported figures no GPU reaches ({store.one_line(exc)}){kept}") from None
    if energy:
        doc, note = _with_command_energy(doc, command, timeout_s, command_stdout_to_stderr)
        notes_after = [note]
    else:
        notes_after = []
    replaced = _replaced(out, doc)
    store.save(doc, out)
    notes = list(doc.notes) + _owner_notes(doc) + _kernel_notes(doc) + notes_after + replaced
    failures = [] if done.returncode == 0 else [
        f"the command {_exit(done.returncode)}; the {plural(len(launches), 'launch', 'launches')} profiled before "
        f"that are kept in {out}" + (OPS_HINT if ops and _python(command) and not _signalled(done.returncode) else "")]
    return ProfileReport(doc, notes, failures)


# A JAX step under Nsight Compute 2025.3.1 on an H100: following child processes (XLA's compiler runs in
# them), 1 run of 3 lived and the others died of SIGSEGV before a kernel was profiled; following the
# program's own process, 3 of 3 (bench/jax_ncu_probe.sh, docs/profiling.md). So a crashed XLA program is run again so.
ALONE = ("the command crashed under ncu while ncu followed its child processes, as XLA programs (JAX) do under "
         "Nsight Compute 2025.3; it was profiled again following its own process alone: kernels its child "
         "processes launched are not in this profile")


def _signalled(code: int) -> bool:
    """Whether a program's exit code says a signal ended it (a shell's 128 + N, or Python's -N)."""
    return code < 0 or 128 < code < 160


def _xla_ran(folder: Path | None) -> bool:
    """Whether XLA compiled anything into the dump folder it was given (the program is XLA's)."""
    return folder is not None and Path(folder).is_dir() and any(Path(folder).iterdir())


def _xla_owners(launches: list, folder: Path) -> tuple | None:
    """The launches' owners from the optimized HLO an XLA program (JAX, TensorFlow) dumped into
    `folder` (`traces.hlo.attribute`), or None where it dumped none (a program of another kind)."""
    from ..traces import hlo
    if not Path(folder).is_dir() or not any(Path(folder).glob("*after_optimizations.txt")):
        return None
    return hlo.attribute(launches, folder)


def _with_command_energy(doc: ProfileResults, command: list[str], timeout_s: float | None,
                         stdout_to_stderr: bool) -> tuple[ProfileResults, str]:
    """`doc` with the GPU's energy over one more, unprofiled run of `command` (None where NVML
    reports no energy counter), and the note that says what it is."""
    from ..measure.energy import command_energy
    from ..results.profile import CommandEnergy

    got = command_energy(command, doc.device.pci_bus_id, timeout_s, stdout_to_stderr)
    if got is None:
        return doc, "no energy: NVML reports no energy counter on this GPU"
    joules, seconds, code = got
    record = CommandEnergy(joules=joules, seconds=seconds, exit_code=code)
    return doc.model_copy(update={"command_energy": record}), (
        f"energy: the command run once more without ncu took {joules:,.1f} J of the GPU in {seconds:.1f} s "
        f"({record.watts:,.0f} W on average, start-up and idle included); per kernel, energy cannot be measured "
        "under ncu, which replays each kernel serialised to count it")


def _kernel_notes(doc: ProfileResults, most: int = 8) -> list[str]:
    """Each kernel's remarks on its counts ('kernel: note'), the first `most` of them and a count
    of the rest."""
    found = [f"{k.name}: {n}" for k in doc.kernels for n in k.notes]
    return found[:most] + ([f"and {len(found) - most} more remarks on kernels' counts, in the results file"]
                           if len(found) > most else [])


def _profiled_device(device: DeviceSpec) -> tuple[DeviceSpec, list[str]]:
    """The GPU the profiled kernels ran on (`device`, from the report), with this machine's
    measured ceilings (cached, or measured now that the program is done) when it is the same
    GPU; and a note when they are not at hand."""
    from ..measure import ceilings, nvml
    if not nvml.gpu_available():
        return device, ["no GPU visible to roofline itself: theoretical roofs only (no measured ceilings)"]
    here = nvml.from_nvml()
    if here.name != device.name:
        return device, [f"the kernels ran on {device.name}, not on {here.name} (CUDA's first GPU): "
                        "theoretical roofs only"]
    return ceilings.measure(here).attach(here), []


class NothingLaunched(RunError):
    """A profile between cudaProfilerStart and cudaProfilerStop in which no kernel was launched."""


def _python(command: list[str]) -> bool:
    """Whether `command` starts a Python program (python3, torchrun, a .py script...), where ops
    turns PyTorch's ranges on."""
    name = Path(command[0]).name
    return name.startswith(("python", "torchrun", "accelerate", "deepspeed")) or name.endswith(".py")


# After a Python command failed with ops on: the one way ops can make a program fail.
OPS_HINT = ("; if it turns on PyTorch's profiler itself, it fails with ops on (one profiler per thread): "
            "profile it with --no-ops")


def _exit(code: int) -> str:
    """'exited with code 1', 'crashed (signal 11, SIGSEGV)' for a program a signal ended (a shell's
    128 + N, or Python's -N)."""
    import signal

    number = (-code if code < 0 else code - 128) if _signalled(code) else None
    if number is None:
        return f"exited with code {code}"
    try:
        return f"crashed (signal {number}, {signal.Signals(number).name})"
    except ValueError:
        return f"exited with code {code}"


# After a Python command a signal ended with ops off: the JAX case, which ops on would have run again.
JAX_HINT = ("; a JAX program crashes so under ncu when ncu follows XLA's compiler processes: profile it with ops on "
            "(the default), which then runs it again following its own process alone")


def _nothing_profiled(done: ncu.ProfileRun, options: ncu.Options, ops: bool = False,
                      bare_python: bool = False, again: bool = False) -> Exception:
    seen = done.available_kernels()
    if options.kernel_regex and seen:
        shown = ", ".join(seen[:8]) + (f" and {len(seen) - 8} more" if len(seen) > 8 else "")
        return UsageError(f"{{kernel_regex}} {options.kernel_regex!r} matched none of the {len(seen)} kernels the "
                          f"command launched: {shown}", "kernel_regex")
    if done.returncode != 0:
        if _signalled(done.returncode):  # a crash: PyTorch's profiler would have raised, not crashed
            hint = JAX_HINT if bare_python else ""
        else:
            hint = OPS_HINT if ops else ""
        again_said = ", and again when profiled following its own process alone" if again else ""
        return RunError(f"the command {_exit(done.returncode)} before any kernel was profiled{again_said}{hint}")
    if not options.from_start:
        return NothingLaunched("no kernel was launched between cudaProfilerStart and cudaProfilerStop "
                        "(torch.cuda.profiler.start/stop); drop --no-profile-from-start to profile from the start")
    if options.launch_skip:
        return RunError(f"no kernel was profiled: the command launched no more than --launch-skip "
                        f"{options.launch_skip} kernels")
    return RunError("the command launched no CUDA kernel: nothing to profile")


def import_profile(path: Path, out: Path = DEFAULT_PROFILE, gpu: str | None = None,
                   trace: Path | None = None) -> ProfileReport:
    """Read an Nsight Compute report made elsewhere (`nsight.read`: a `.ncu-rep`, any CSV export
    of any page, metric set, ncu version or locale, or ncu's text output; the GPU is the
    report's, or the preset or device file `gpu` names), convert it to a profile document
    (`results.convert`) and write that to `out` atomically. Each kernel's op and module are those of
    the NVTX ranges the report recorded (`ncu --nvtx`), or with `trace`, those of the PyTorch
    profiler trace's kernels the launches line up with (`traces.join`); with `trace`, each launch
    also takes its kernel's time in the traced program; a `trace` that is a folder is the optimized
    HLO an XLA program dumped, which owns the launches the report's ranges do not (`traces.hlo`).
    Raises UsageError for a missing or
    unreadable file, one with no placeable launch, an unknown preset, an `out` that is the report
    itself or holds another kind of results, and figures no GPU reaches; NcuError when a
    `.ncu-rep` needs a reader that is not installed."""
    from pydantic import ValidationError
    from ..results import convert
    from .. import files
    from .. import nsight
    from ..results import store
    path = Path(path)
    if Path(out).resolve() == path.resolve():
        raise UsageError(f"{{out}} {out} is the report being imported; give the profile another file name", "out")
    files.check_results_out(out, profile=True)
    from ..traces import join
    from ..traces import hlo as hlo_reader
    hlo = Path(trace) if trace is not None and _hlo_dump(Path(trace)) else None
    if hlo is not None:
        try:
            hlo_reader.read_dump(hlo)  # a folder without HLO refused before the report is read
        except UsageError as exc:
            raise UsageError(f"{{trace}} {exc.message}; a folder given to {{trace}} is the one a JAX program dumped "
                             "its HLO into (a PyTorch profiler trace is a JSON file)", "trace") from None
        trace = None
    their = join.read_trace(Path(trace)) if trace is not None else None  # a bad trace refused before the report
    report = nsight.read(path, gpu)
    ranged = any(x.nvtx for x in report.launches)  # the report's own NVTX ranges own its launches
    joined = join.joined_to(report.launches, their, Path(trace), owned_already=ranged) if their is not None else None
    try:
        xla = hlo_reader.attribute(report.launches, hlo, strict=True) if hlo is not None else None
        if hlo is not None and xla is None:
            raise UsageError(f"{{trace}} {hlo}: no launch of {path.name} lines up with its HLO (is it the dump of the "
                             "program the report profiled?)", "trace")
        doc = convert.from_profile(report.launches, report.device, report=path.name, read_with=report.read_with,
                                   notes=list(report.notes), trace=joined, other_owners=xla)
    except ValidationError as exc:
        line = store.one_line(exc)
        if report.device_from == "gpu over report":  # damage, or the rates of the faster GPU the report names
            named = next((n.split(";")[0].removeprefix("recorded on ") for n in report.notes
                          if n.startswith("recorded on ")), "another GPU")
            line += (f", or its rates are those of {named}, the GPU it was recorded on, above {{gpu}} {gpu}'s roofs: "
                     f"read it without {{gpu}} to tell which")
        elif report.device_from == "gpu":
            line += f" (is {{gpu}} {gpu} the GPU it was recorded on? the report does not name its GPU)"
        raise UsageError(f"{path}: {line}", mentions=["gpu"]) from None
    replaced = _replaced(out, doc)
    store.save(doc, out)
    return ProfileReport(doc, list(doc.notes) + _owner_notes(doc) + _kernel_notes(doc) + replaced, [])


def _replaced(out: Path, doc) -> list[str]:
    """One note where `out` already holds a profile of another program (another command, or another
    report imported), which `doc` is about to replace (`files.check_results_out` lets a profile
    replace a profile): the user learns what the file held; none otherwise."""
    import json

    try:
        old = json.loads(Path(out).read_bytes())
    except (OSError, ValueError):
        return []
    if not isinstance(old, dict):
        return []
    was = " ".join(old.get("command") or []) or old.get("report")
    now = " ".join(getattr(doc, "command", None) or []) or getattr(doc, "report", None)
    if not was or was == now:
        return []
    return [f"{out} held the profile of {str(was)[:80]}, which this one of {str(now)[:80]} replaced"]


def _hlo_dump(path: Path) -> bool:
    """Whether `--trace` names XLA's HLO rather than a PyTorch trace: a folder (a dump), or one
    module's optimized HLO text (`*after_optimizations.txt`, gzipped or not, or a file that begins
    'HloModule')."""
    if path.is_dir():
        return True
    if path.name.endswith(("after_optimizations.txt", "after_optimizations.txt.gz")):
        return True
    if not path.is_file():  # missing, or a pipe that would block a read: the trace reader says which
        return False
    try:
        with open(path, "rb") as f:
            return f.read(9) == b"HloModule"
    except OSError:
        return False


def _owner_notes(doc: ProfileResults) -> list[str]:
    """What the attribution met, and how much of the time it owns where that is short of all."""
    a = doc.attribution
    if a is None:
        return []
    share = a.time_ms / doc.total_time_ms if doc.total_time_ms else 0.0
    short = [f"{share:.1%} of the profiled GPU time is owned by an op or a module ({a.source}); show --by op|module "
             "sums the owned time"] if share < 0.99 else []
    return short + list(a.notes)


def view(done: ProfileReport, out: Path, top: int) -> Outcome:
    """A profile (or an import): its document; its `top` kernels (its notes are the outcome's), then
    where it was written."""
    from .. import documents

    def lines(width: int) -> list:
        return [*documents.view(done.results, width, top=top, notes=False),
                f"profile written to {out}; draw it with: roofline plot {shlex.quote(str(out))} --out profile.png"
                + (f", its kernels over their runs with: roofline plot {shlex.quote(str(out))} --kind timeline --out timeline.png"
                   if done.results.timed_kernels() else "")]

    return Outcome(documents.to_json(done.results), lines, tuple(done.notes), failures=tuple(done.failures))
