"""`roofline run`: compile, verify, time and model the GEMM ladders and the user's kernels.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ..console import number, present, rich_console, share
from ..progress import Bar
from ..defaults import (DEFAULT_GRADES, DEFAULT_RESULTS, DEFAULT_SIZE, DEFAULT_TIMEOUT_S, DEFAULT_TUNE_RESULTS,
                        FULL_CLOCK_SHARE)
from ..errors import UsageError
from ..outcome import Outcome
from . import gemm
from . import grade as grade_room
from . import tune as tune_room
from .gemm import _check_autotuned, precision

if TYPE_CHECKING:
    from ..model.timing import TimingOptions
    from ..ladder.user import UserKernel
    from ..measure import runner
    from ..model.device import DeviceSpec
    from ..model.problem import Problem
    from ..progress import Progress
    from ..results.schema import Results




MOUNT = dict(short_help="Compile, verify, time and model the GEMM ladders, your kernels and callables on this GPU.")
RENAMED = {"--m": "--size M=VALUE (with N=VALUE and K=VALUE; --size N alone for M = N = K)",
           "--n": "--size N=VALUE (with M=VALUE and K=VALUE; --size N alone for M = N = K)",
           "--k": "--size K=VALUE (with M=VALUE and N=VALUE; --size N alone for M = N = K)",
           "--sizes": "--sweep LIST (sizes N or shapes MxNxK, or one size's values: K=1024,16384)",
           "--source": "give your kernel files as arguments: roofline run FILE.cu (beside the ladder: --all)",
           **{f"--{key}": f"--declare {key}=VALUE" for key in gemm.FORMER_FLAGS}}


def command(
    targets: Optional[list[str]] = typer.Argument(
        None, metavar="TARGETS...",
        help="Your kernels and callables (none: the ladder): a GEMM kernel FILE.cu (its launch declared by '// roofline "
             "KEY: VALUE' lines or --declare; beside the ladder with --all or --kernel); a kernel of any signature "
             "FILE.cu (declared by '// roofline arg:' lines) or a callable MODULE:FUNCTION or FILE.py:FUNCTION (with "
             "--spec), or a spec FILE.toml, each graded against its speed of light; or a kernel benchmark's "
             "problem.py (a PyTorch Model) followed by its candidates (files with a ModelNew)."),
    all_kernels: bool = typer.Option(False, "--all", help="Run the whole ladder (the default without targets)."),
    kernel: Optional[list[str]] = typer.Option(None, "--kernel", metavar="NAME",
                                               help="Run only this kernel of the ladder (repeatable)."),
    size: Optional[list[str]] = typer.Option(None, "--size", metavar="N|NAME=VALUE",
                                             help=f"A size (repeatable): a GEMM's N (M = N = K; default {DEFAULT_SIZE}) "
                                                  "or M=, N=, K=; a graded kernel's declared size, e.g. C=8192; a GPU "
                                                  "MODE task's cases by generate_input's arguments, e.g. m=4096."),
    sweep: Optional[str] = typer.Option(None, "--sweep", metavar="LIST|NAME=V1,V2",
                                        help="Run at several sizes: a GEMM's sizes N or shapes MxNxK, e.g. "
                                             "512,1024,8192x1024x4096 (in order of FLOPs), or one size's values, "
                                             "e.g. K=1024,16384 or C=1024,4096."),
    declare: Optional[list[str]] = typer.Option(None, "--declare", metavar="KEY=VALUE",
                                                help="Your GEMM kernel's launch as its '// roofline KEY: VALUE' lines "
                                                     "would say it (repeatable; one file): entry, block, grid, "
                                                     "dynamic-smem, tile, thread-tile, thread-x, name, reads-c."),
    compile_option: Optional[list[str]] = typer.Option(None, "--compile-option", metavar="OPTION",
                                                       help=gemm.COMPILE_OPTION_HELP),
    compiler: Optional[str] = typer.Option(None, "--compiler", metavar="auto|nvcc|nvrtc", help=gemm.COMPILER_HELP),
    ladder_kind: Optional[str] = typer.Option(None, "--ladder", metavar="fp32|tensor",
                                              help="fp32: the SGEMM ladder (default); tensor: the tensor-core "
                                                   "ladder (BF16 unless --dtype says otherwise)."),
    dtype: Optional[str] = typer.Option(None, "--dtype", metavar="fp32|bf16|fp16|tf32",
                                        help="Input precision (FP32 accumulate and C); bf16, fp16 and tf32 run the "
                                             "tensor ladder, with B stored N x K (row-major). Your kernels "
                                             "take pointers of this type."),
    l2: str = typer.Option("cold", "--l2", metavar="cold|warm",
                           help="cold: flush the L2 before every timed launch (outside the timing); "
                                "warm: leave what the previous launch left."),
    profile: bool = typer.Option(False, "--profile",
                                 help="Also count each kernel (or one call of each graded one) with Nsight Compute."),
    timeline: bool = typer.Option(False, "--timeline",
                                  help="Count each GEMM kernel as --profile does and sample its counters over its "
                                       "run too (Nsight Compute's PM sampling: plot --kind timeline)."),
    refresh: bool = typer.Option(False, "--refresh",
                                 help="Measure the ceilings (DRAM, L2, shared memory, FP32, FP16 tensor, launch "
                                      "latency) again, not from the cache."),
    autotuned_tile: Optional[str] = typer.Option(None, "--autotuned-tile", metavar="BM,BN,BK,TM,TN",
                                                 help="Run autotuned at this tile instead of this GPU's tuned one."),
    tune: bool = typer.Option(False, "--tune", help="Search the autotuned kernel's tile on this GPU at --size N "
                                                    "instead; run then uses the winner on this GPU."),
    spec: Optional[Path] = typer.Option(None, "--spec", metavar="FILE.toml",
                                        help="The spec (TOML) of a callable: sizes, one arg per parameter, reference, "
                                             "tolerance, work."),
    baseline: Optional[list[str]] = typer.Option(None, "--baseline", metavar="NAME|FILE|MODULE:FUNCTION",
                                                 help="Score each graded workload's entries against it (repeatable): "
                                                      "an entry graded here, a grade file, or a callable graded with "
                                                      "the same spec."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="PATH",
                                       help=f"Results file, written atomically (default {DEFAULT_RESULTS}; "
                                            f"{DEFAULT_GRADES} for graded targets, {DEFAULT_TUNE_RESULTS} with --tune)."),
    as_json: bool = typer.Option(False, "--json", help="Print the results document instead of the tables."),
    no_ragged: bool = typer.Option(False, "--no-ragged",
                                   help="Skip the check of your GEMM kernel at a ragged shape (511x383x255)."),
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", parser=number, metavar="SECONDS",
                                  help="Stop a launch of your kernel that runs longer."),
    device: Optional[str] = typer.Option(None, "--device", metavar="N|BUS_ID",
                                         help="The GPU: index as nvidia-smi counts, or PCI bus id (default 0)."),
    budget: Optional[float] = typer.Option(None, "--budget", parser=number, metavar="SECONDS",
                                           help="Timing budget per size (or graded entry): rounds go on until each "
                                                "median is known to 1 % or this is spent (default half a second per "
                                                "kernel; at most 3600)."),
    energy: bool = typer.Option(False, "--energy",
                                help="Also measure each kernel's energy (NVML's counter over a second of "
                                     "launches each): J per launch, W, GFLOP/J, GB/J."),
    full_clock: float = typer.Option(FULL_CLOCK_SHARE, "--full-clock", parser=share, metavar="SHARE",
                                     help="A sample below this share of the run's top SM clock counts as "
                                          "throttled (where NVML gives no clock: one under a power or thermal "
                                          "cap) (0.5 to 1; default 0.97)."),
):
    """Compile, verify against cuBLAS and time the SGEMM ladder, or with --ladder tensor / --dtype the
    tensor-core ladder, and your own GEMM kernels (each in a process of its own) on this machine's GPU,
    with its DRAM and FP32 ceilings measured once (cached); with --profile, read hardware counters per
    kernel, and with --timeline each kernel's counters over its run as well. The results file
    records where each kernel's tile came from and which GPU ran.

    A kernel of any signature or a callable is graded instead: verified against its reference (outputs
    filled with NaN first, inputs checked unchanged, a second launch on new inputs), timed as the ladder
    is, and graded against its speed of light: T_SOL = max(FLOPs / the precision's measured roof,
    compulsory bytes / measured DRAM bandwidth, the launch floor); share = T_SOL / T; score = 1 / (1 +
    (T - T_SOL) / (T_b - T_SOL)) against --baseline. Integrity flags (faster than light, NaN or
    unwritten, inputs modified, cached answer, no GPU work, tensor work missing, async return) come with
    their evidence.

    A kernel file is compiled by NVRTC (device code alone), or by nvcc with --compiler nvcc or its
    '// roofline compiler: nvcc' line (the whole file: host code, main and host headers may stay
    in it); its '// roofline options:' line and --compile-option give the compiler's options.

    Examples: roofline run --all; roofline run mine.cu --all; roofline run softmax_online.cu
    softmax_naive.cu --baseline softmax_naive; roofline run mine.cu --compile-option=-DBLOCK=256
    """
    from ..model.timing import TimingOptions

    targets = list(targets or [])
    timing = TimingOptions(timeout, budget, full_clock, l2)
    if all_kernels and kernel:
        raise UsageError("give --all or --kernel NAME, not both")
    if tune:
        if (targets or all_kernels or kernel or sweep or declare or spec or baseline or profile or timeline or energy
                or compile_option or compiler):
            raise UsageError("{tune} searches the autotuned kernel's tile at {size} N; it takes no targets, "
                             "--all, --kernel, --sweep, --declare, --compile-option, --compiler, --spec, --baseline, "
                             "--profile, --timeline or --energy", "tune", ["size"])
        problems = gemm.gemm_problems(size)
        if problems[0].m != problems[0].n or problems[0].n != problems[0].k:
            raise UsageError("{tune} searches at a square size: give {size} N", "tune", ["size"])
        bar = Bar(rich_console(err=True))
        with bar.bar:
            report = tune_room.tune(problems[0].m, out or DEFAULT_TUNE_RESULTS, bar)
        present(tune_room.view(report, out or DEFAULT_TUNE_RESULTS), as_json)
        return
    if targets and ":" not in targets[0] and Path(targets[0]).is_dir():  # a GPU MODE task named by its folder
        from ..workload.problem import task_reference
        targets = [str(task_reference(targets[0])), *targets[1:]]
    if targets and _is_problem(targets[0]):  # a kernel benchmark's problem and its candidates
        others = [t for t in targets[1:] if not _is_candidate(t)]
        if others and not Path(others[0]).exists():
            raise UsageError(f"{others[0]}: no such file; after a problem file ({targets[0]}) give its candidates")
        if others:
            raise UsageError(f"{others[0]!r}: after a problem file ({targets[0]}) give its candidates, Python files "
                             "each with a class ModelNew (a GPU MODE task's: with custom_kernel)")
        if (all_kernels or kernel or sweep or declare or spec or baseline or profile or timeline or energy
                or compile_option or compiler or ladder_kind or dtype or no_ragged or l2 != "cold" or autotuned_tile
                or refresh):
            raise UsageError("a problem file is graded with its candidates alone: its sizes, types and work are its "
                             "own, its baseline its reference (no --kernel, --spec, --baseline, --profile, --timeline, "
                             "...; --size NAME=VALUE picks a GPU MODE task's cases)")
        graded_out = out or DEFAULT_GRADES
        bar = Bar(rich_console(err=True))
        with bar.bar:
            report = grade_room.grade_problem(Path(targets[0]), [Path(t) for t in targets[1:]], graded_out, device,
                                              timing, progress=bar, sizes=size)
        present(grade_room.view(report, graded_out), as_json)
        return
    kernel_files = [t for t in targets if t.endswith((".cu", ".cuh")) and ":" not in t]
    callables = [t for t in targets if t not in kernel_files]
    for t in callables:  # what is no kernel file must name a callable or a spec
        if ":" not in t and not t.endswith(".toml"):
            raise UsageError(_not_a_target(t, targets))
    users = gemm.user_kernels([Path(t) for t in kernel_files], gemm.declared(declare),
                              gemm.compile_settings(compiler, compile_option))
    graded = bool(callables) or any(u.workload for u in users)
    if not graded and (spec is not None or baseline):
        raise UsageError("{spec} and {baseline} apply to kernels and callables that are graded: a kernel file with "
                         "'// roofline arg:' lines, MODULE:FUNCTION, FILE.py:FUNCTION or a spec FILE.toml",
                         "spec", ["baseline"])
    if graded:
        if all_kernels or kernel or not all(u.workload for u in users):
            raise UsageError("a kernel declared by '// roofline arg:' lines, or a callable, is graded on its own, not "
                             "beside the GEMM ladder or GEMM kernels; run it apart")
        if ladder_kind or dtype or energy or no_ragged or l2 != "cold" or autotuned_tile or refresh or timeline:
            raise UsageError("--ladder, --dtype, --energy, --no-ragged, --l2, --autotuned-tile, --refresh and "
                             "--timeline apply to GEMM runs; a graded kernel declares its own types (--profile counts "
                             "one call of it)")
        graded_out = out or DEFAULT_GRADES
        bar = Bar(rich_console(err=True))
        with bar.bar:
            read_once = {str(t): u.declared for t, u in zip(kernel_files, users)}  # the files read once
            report = grade_room.grade([read_once.get(t, t) for t in targets], graded_out, spec, size, baseline,
                                      profile, device, timing, progress=bar, sweep=sweep)
        present(grade_room.view(report, graded_out), as_json)
        return
    problems = gemm.gemm_problems(size, sweep)
    if no_ragged and not users:
        raise UsageError("--no-ragged applies to your own kernels (roofline run FILE.cu)")
    out = out or DEFAULT_RESULTS
    bar = Bar(rich_console(err=True))
    with bar.bar:
        report = run(problems, out, kernel, sweep=sweep is not None, profile=profile or timeline, refresh=refresh,
                     autotuned_tile=autotuned_tile, progress=bar, sources=users,
                     ladder=not users or all_kernels or bool(kernel), ragged=not no_ragged, gpu=device,
                     ladder_kind=ladder_kind, dtype=dtype, energy=energy, timing=timing, timeline=timeline)
    present(view(report, out, sweep=sweep is not None), as_json)


def _not_a_target(target: str, targets: list[str]) -> str:
    """Why `target` is neither a kernel file, a callable, a spec nor a kernel benchmark's problem:
    a missing file, a candidate given before its problem, or a file of another kind."""
    path = Path(target)
    kinds = "a .cu file, MODULE:FUNCTION, FILE.py:FUNCTION, a spec file .toml, or a problem.py and its candidates"
    if not path.exists():
        return f"{target}: no such file; give {kinds}"
    if _is_candidate(target):
        problems = [t for t in targets if _is_problem(t)]
        return (f"{target} is a candidate (a ModelNew or a custom_kernel); give its problem first: roofline run "
                f"{problems[0] if problems else 'PROBLEM.py'} {target} ...")
    if path.suffix == ".py":
        return (f"{target}: a Python file names its callable (FILE.py:FUNCTION), or is a problem (a class Model with "
                "get_inputs and get_init_inputs, or a GPU MODE task's reference.py with ref_kernel and generate_input)")
    return f"{target}: not a file roofline runs; give {kinds}"


def _is_problem(target: str) -> bool:
    from ..workload.problem import is_problem
    return ":" not in target and is_problem(Path(target))


def _is_candidate(target: str) -> bool:
    from ..workload.problem import is_candidate
    return ":" not in target and is_candidate(Path(target))


@dataclass(frozen=True)
class RunReport:
    """A finished `run`: the results (also written to the results file), one-line notes (kernels
    left out, counters unavailable), warnings (occupancy calculator and driver disagreeing), and
    the failures (a kernel that did not compile or verify: the command then exits 1)."""

    results: Results
    notes: list[str]
    warnings: list[str]
    failures: list[str]


def run(problems: list[Problem], out: Path, kernels: list[str] | None = None, sweep: bool = False,
        profile: bool = False, refresh: bool = False, autotuned_tile: str | None = None,
        progress: Progress | None = None, sources: list[UserKernel] | None = None, ladder: bool = True,
        ragged: bool = True, gpu: str | None = None, ladder_kind: str | None = None, dtype: str | None = None,
        energy: bool = False, timing: TimingOptions | None = None, timeline: bool = False) -> RunReport:
    """Compile, verify against cuBLAS and time the ladder (or the `kernels` named; none when
    `ladder` is False) and the user's kernels in `sources` on this GPU for each of `problems`,
    with the measured ceilings (cached unless `refresh`) and, with `profile`, Nsight Compute's
    counts for the last problem (with `timeline`, each kernel's counters over its run as well:
    PM sampling); write the results atomically to `out`.

    Each user kernel runs in a process of its own (`measure.isolated`): a launch over
    `timing.timeout_s` seconds or a CUDA fault ends that process only, and with `ragged` it is first verified at a
    shape that is no multiple of its tiles. `gpu` is the GPU (nvidia-smi index or PCI bus id;
    default CUDA's first). `autotuned_tile` ('128,128,16,4,8') overrides the autotuned kernel's
    tile, which is otherwise this GPU's tuned or built-in winner (`ladder.tiles.resolve`).
    `timing.l2`: 'cold' flushes the L2 before every timed launch (outside the timed interval),
    'warm' leaves it; the results record which. `ladder_kind` ('fp32' or 'tensor') and `dtype` pick the ladder
    and the precision (`precision`); every problem and user kernel runs in that precision.
    The kernels and cuBLAS are timed together in rounds (`measure.rounds`) within
    `timing.budget_s` seconds per problem (default: half a second per kernel), samples below
    `timing.full_clock_share` of the run's top clock marked throttled; with `energy`, each one's joules per launch are
    measured too (loops of its launches in rounds, `measure.energy.measure_rounds`).
    Raises UsageError for bad input and RunError when there is no GPU, before any GPU work."""
    from ..progress import Progress
    from ..results.schema import Skipped
    from ..results import convert
    from ..ladder import families
    from .. import files
    from ..results import store
    from ..ladder import tiles
    from .. import collect
    from ..ladder.user import UserKernel
    from ..measure import ceilings, nvml, runner
    progress = progress or Progress()
    sources = list(sources or [])
    families.check_names(kernels)
    dtype = precision(ladder_kind, dtype, sources)
    # the ladder's entries, a kernel of the other ladder refused, and a flag's tile parsed: before any GPU work
    specs = families.select(kernels, None, dtype) if ladder else []
    problems = [replace(p, dtype=dtype) for p in problems]
    sources = [replace(u, dtype=dtype) for u in sources]
    _check_autotuned(autotuned_tile, dtype)
    flag_tile = tiles.resolve(None, autotuned_tile) if autotuned_tile is not None else None
    from ..model.timing import TimingOptions
    timing = (timing or TimingOptions()).checked()
    for p in problems:
        p.validate()
        for user in sources:
            user.grid(p)  # an impossible grid is refused before any GPU work
    sources = gemm.pin_compilers(sources)  # nvcc asked for and missing, options NVRTC does not take: before any GPU work
    files.check_results_out(out, profile=False)  # refuse now rather than lose the run at its last step
    if gpu is not None:
        nvml.select_gpu(gpu)
    device = runner.preflight(max(problems, key=lambda p: p.device_bytes))
    if dtype == "fp32":  # the autotuned kernel at the flag's tile, else this GPU's tuned or built-in one
        autotuned = flag_tile or tiles.resolve(device.name)
        specs = [autotuned if s.name == families.TUNABLE else s for s in specs]
    skipped = [Skipped(name=s.name, reason=s.family.unavailable_reason(device.arch))
               for s in specs if not s.family.runs_on(device.compute_capability)]
    specs = [s for s in specs if s.family.runs_on(device.compute_capability)]
    progress.expect(1)
    progress.step("DRAM and FP32 ceilings" + (": measuring" if refresh else " (cached once measured)"))
    device = ceilings.measure(device, refresh).attach(device)
    outputs = [runner.run(specs, p, device, progress, l2=timing.l2, budget_s=timing.budget_s, energy=energy,
                          full_clock_share=timing.full_clock_share) for p in problems]
    if sources:
        outputs = _run_users(outputs, sources, device, timing.timeout_s, ragged, progress, timing.l2)
    doc = collect.from_sweep(outputs, device, skipped) if sweep else collect.from_run(outputs[0], device, skipped)
    notes = [s.reason for s in skipped] + [n for u in sources for n in u.launch_notes(problems[-1])]
    notes += [gemm.compiled_note(r.spec.name, r.compiled.compiler, r.spec.build.text, r.spec.target(device.arch))
              for r in outputs[0].kernels if isinstance(r.spec, UserKernel) and r.compiled and r.compiled.compiler]
    notes += list(dict.fromkeys(n for o in outputs for n in o.notes))  # what NVML could not say, once
    if profile:
        counted, launches, said = _count(outputs[-1], device.pci_bus_id, progress, timeline)
        doc = convert.with_counters(doc, counted, launches)
        notes += said
    store.save(doc, out)
    warnings, failures = [], []
    for output in outputs:
        for r in output.kernels:
            c = r.compiled
            if c and c.occupancy.active_blocks_per_sm != c.driver_blocks_per_sm:
                warnings.append(f"{r.spec.name}: calculated {c.occupancy.active_blocks_per_sm} blocks/SM, "
                                f"the driver says {c.driver_blocks_per_sm}")
            if r.error:
                failures.append(f"{output.problem.text()}: {r.error}")
    return RunReport(doc, notes, warnings, failures)


def _run_users(outputs: list[runner.RunOutput], sources: list[UserKernel], device: DeviceSpec,
               timeout_s: float, ragged: bool, progress: Progress, l2: str) -> list[runner.RunOutput]:
    """`outputs` with each user kernel's run added, each in its own process (ragged check once)."""
    from ..measure import isolated
    import cupy

    cupy.get_default_memory_pool().free_all_blocks()  # the children allocate their own buffers
    progress.expect(len(sources) * len(outputs))
    done = []
    for i, output in enumerate(outputs):
        runs = []
        for user in sources:
            progress.step(f"{user.name}: {output.problem.text()} in its own process")
            runs.append(isolated.run_isolated(user, output.problem, device.pci_bus_id, timeout_s, ragged and i == 0,
                                              l2=l2))
        done.append(replace(output, kernels=output.kernels + runs))
    return done


def _count(output: runner.RunOutput, pci_bus_id: str | None, progress: Progress, timeline: bool = False):
    from ..measure import counters
    from ..nsight.run import NcuError
    correct = [r for r in output.kernels if r.correct]
    progress.expect(len(correct))
    counted, launches, notes = {}, {}, {}
    for r in correct:
        progress.step(f"{r.spec.name}: Nsight Compute")
        try:
            time_ms = r.timing.median_ms if r.timing is not None else None  # a long launch: sampled at its own pace
            counted[r.spec.name], launch, read = counters.profile(r.spec, output.problem, pci_bus_id, time_ms,
                                                                  output.device.compute_capability, timeline)
        except (NcuError, UsageError) as exc:
            return counted, launches, [f"no hardware counters: {exc}; the rest of the run is kept"]
        if launch is not None:
            launches[r.spec.name] = launch
        for n in read:  # each of the reader's notes once, with the kernels it was said of
            notes.setdefault(n, []).append(r.spec.name)
    return counted, launches, [f"the counters of {', '.join(names)}: {n}" for n, names in notes.items()]


def view(report: RunReport, out: Path, sweep: bool) -> Outcome:
    """A run: its results; the tables, then where they were written and how to draw them."""
    from .. import documents

    kind = " --kind sweep" if sweep else ""
    return Outcome(documents.to_json(report.results),
                   lambda width: [*documents.view(report.results, width),
                                  f"results written to {out}; draw them with: "
                                  f"roofline plot {shlex.quote(str(out))}{kind} --out chart.png"],
                   tuple(report.notes), warnings=tuple(report.warnings), failures=tuple(report.failures))
