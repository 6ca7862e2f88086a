"""The `roofline` command line: Typer declarations. Each command parses its options (refusing
flags that do not go together), calls one library function (`roofline.api`, which checks the
values) and presents what it returned as a `roofline.outcome.Outcome` (`roofline.console.present`);
`roofline.console` turns known errors into exit codes.

Exit codes: 0 success; 2 invalid input (one line on stderr naming what is valid); 1 a runtime
failure (no GPU for `run`, a compile error, a kernel failing verification).

This module imports Typer, `roofline.console` and `roofline.defaults` (the values the help shows)
and nothing of the library: `roofline --help` and a usage error need no more. Each command imports
what it uses when it runs (`roofline.api`, `roofline.outcome`), under the same Ctrl-C handling as
the rest of the command (`console.run`); `occupancy` imports the model alone
(`roofline.api_occupancy`), and neither it nor `kernels` imports CuPy or matplotlib.
"""

from __future__ import annotations

import sys

try:  # Ctrl-C during the imports ends as quietly as later (`console.interrupted`)
    from roofline import console  # first: it guards its own imports alike

    sys.unraisablehook = console.quiet_interrupts  # for the imports below, and those of the commands
    import os
    from pathlib import Path
    from typing import Optional

    import typer

    from roofline import __version__
    from roofline.console import Bar, Command, OneLineErrors, echo, integer, number, one_of, present, share
    from roofline.defaults import (DEFAULT_GRADES, DEFAULT_LAUNCH_COUNT, DEFAULT_PROFILE, DEFAULT_RESULTS,
                                   DEFAULT_SIZE, DEFAULT_TIMEOUT_S, DEFAULT_TUNE_RESULTS, FULL_CLOCK_SHARE,
                                   PLOT_KINDS, SCHEMA)
    from roofline.errors import UsageError

    _held = console.hold_interrupts()  # and during the declarations below, which no try encloses
except KeyboardInterrupt:
    from roofline.console import interrupted

    interrupted()


app = typer.Typer(cls=OneLineErrors, add_completion=False, rich_markup_mode=None,
                  pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]},
                  help="Roofline and occupancy for real CUDA kernels: an SGEMM ladder from naive to "
                       "cuBLAS class, verified against cuBLAS, timed, modelled and plotted.")


def _version(value: bool) -> None:
    if value:
        echo(f"roofline {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def _main(ctx: typer.Context,
          version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")):
    """Roofline and occupancy for real CUDA kernels."""
    if ctx.invoked_subcommand is None:
        echo(ctx.get_help())


# The launch-description flags of `run` and `kernels`, named as the keys of a kernel file's header.
_LAUNCH = {key: typer.Option(None, f"--{key}", metavar=metavar, help=text) for key, metavar, text in (
    ("entry", "NAME", "Your kernel's __global__ function, or a template expression like my_sgemm<64,8>."),
    ("block", "T|X,Y[,Z]", "Threads per block: T, or X,Y or X,Y,Z."),
    ("grid", "EXPR", "Blocks per dimension from M, N, K, e.g. 'cdiv(N,64),cdiv(M,64)' (cdiv, + - * //, integers)."),
    ("dynamic-smem", "BYTES", "Dynamic shared memory per block, bytes (default 0)."),
    ("tile", "BMxBNxBK", "Block tile BMxBNxBK, for the traffic model (without it: no model)."),
    ("thread-tile", "TMxTN", "Thread tile TMxTN, for the model's shared-memory level."),
    ("name", "NAME", "Your kernel's name in tables and charts (default: the file's name)."),
)}


@app.command(cls=Command, short_help="Compile, verify, time and model the SGEMM ladder on this GPU.")
def run(
    all_kernels: bool = typer.Option(False, "--all", help="Run the whole ladder (the default, but for --source alone)."),
    kernel: Optional[list[str]] = typer.Option(None, "--kernel", metavar="NAME",
                                               help="Run only this kernel (repeatable)."),
    size: Optional[int] = typer.Option(None, "--size", parser=integer, metavar="N",
                                       help=f"Square problem M = N = K (default {DEFAULT_SIZE})."),
    m: Optional[int] = typer.Option(None, "--m", parser=integer, metavar="M", help="Rows of A and C."),
    n: Optional[int] = typer.Option(None, "--n", parser=integer, metavar="N", help="Columns of B and C."),
    k: Optional[int] = typer.Option(None, "--k", parser=integer, metavar="K", help="Columns of A, rows of B."),
    sizes: Optional[str] = typer.Option(None, "--sizes", metavar="LIST",
                                        help="Sweep of sizes N (square) or shapes MxNxK, e.g. "
                                             "512,1024,8192x1024x4096; run in order of FLOPs."),
    l2: str = typer.Option("cold", "--l2", metavar="cold|warm",
                           help="cold: flush the L2 before every timed launch (outside the timing); "
                                "warm: leave what the previous launch left."),
    profile: bool = typer.Option(False, "--profile", help="Also count each kernel's traffic with Nsight Compute."),
    refresh: bool = typer.Option(False, "--refresh",
                                 help="Measure the ceilings (DRAM, L2, shared memory, FP32, FP16 tensor, launch "
                                      "latency) again, not from the cache."),
    autotuned_tile: Optional[str] = typer.Option(None, "--autotuned-tile", metavar="BM,BN,BK,TM,TN",
                                                 help="Run autotuned at this tile instead of this GPU's tuned one."),
    out: Path = typer.Option(DEFAULT_RESULTS, "--out", metavar="PATH", help="Results file (written atomically)."),
    as_json: bool = typer.Option(False, "--json", help="Print the results document instead of the tables."),
    source: Optional[list[Path]] = typer.Option(None, "--source", metavar="FILE.cu",
                                                help="Your own kernel (repeatable), its launch declared by "
                                                     "'// roofline KEY: VALUE' lines or the flags below; alone, or "
                                                     "beside the ladder with --all or --kernel."),
    entry: Optional[str] = _LAUNCH["entry"],
    block: Optional[str] = _LAUNCH["block"],
    grid: Optional[str] = _LAUNCH["grid"],
    dynamic_smem: Optional[str] = _LAUNCH["dynamic-smem"],
    tile: Optional[str] = _LAUNCH["tile"],
    thread_tile: Optional[str] = _LAUNCH["thread-tile"],
    name: Optional[str] = _LAUNCH["name"],
    no_ragged: bool = typer.Option(False, "--no-ragged",
                                   help="Skip the check of your kernel at a ragged shape (511x383x255)."),
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", parser=number, metavar="SECONDS",
                                  help="Stop a launch of your kernel that runs longer."),
    device: Optional[str] = typer.Option(None, "--device", metavar="N|BUS_ID",
                                         help="The GPU: index as nvidia-smi counts, or PCI bus id (default 0)."),
    ladder_kind: Optional[str] = typer.Option(None, "--ladder", metavar="fp32|tensor",
                                              help="fp32: the SGEMM ladder (default); tensor: the tensor-core "
                                                   "ladder (BF16 unless --dtype says otherwise)."),
    dtype: Optional[str] = typer.Option(None, "--dtype", metavar="fp32|bf16|fp16|tf32",
                                        help="Input precision (FP32 accumulate and C); bf16, fp16 and tf32 run the "
                                             "tensor ladder, with B stored N x K (row-major). Your kernels "
                                             "take pointers of this type."),
    budget: Optional[float] = typer.Option(None, "--budget", parser=number, metavar="SECONDS",
                                           help="Timing budget per size: rounds of every kernel and cuBLAS go on "
                                                "until each median is known to 1 % or this is spent (default "
                                                "half a second per kernel; at most 3600)."),
    energy: bool = typer.Option(False, "--energy",
                                help="Also measure each kernel's energy (NVML's counter over a second of "
                                     "launches each): J per launch, W, GFLOP/J, GB/J."),
    full_clock: float = typer.Option(FULL_CLOCK_SHARE, "--full-clock", parser=share, metavar="SHARE",
                                     help="A sample below this share of the run's top SM clock counts as "
                                          "throttled (where NVML gives no clock: one under a power or thermal "
                                          "cap) (0.5 to 1; default 0.97)."),
):
    """Compile, verify against cuBLAS and time the SGEMM ladder, or with --ladder tensor / --dtype the
    tensor-core ladder (and your own kernels, each in a process of its own) on this machine's GPU, with its DRAM and FP32 ceilings measured once
    (cached); with --profile, read hardware counters per kernel. The results file records where
    each kernel's tile came from and which GPU ran."""
    from roofline import api, outcome

    if all_kernels and kernel:
        raise UsageError("give --all or --kernel NAME, not both")
    problems = api.problems(size, m, n, k, sizes)
    users = api.user_kernels(source or [], dict(zip(_LAUNCH, (entry, block, grid, dynamic_smem, tile, thread_tile,
                                                              name))))
    if no_ragged and not users:
        raise UsageError("--no-ragged applies to your own kernels (--source FILE.cu)")
    if any(u.workload for u in users):  # kernels of any signature: verified, timed and graded (`roofline grade`)
        if all_kernels or kernel or not all(u.workload for u in users):
            raise UsageError("a kernel declared by '// roofline arg:' lines is graded on its own, not beside the GEMM "
                             "ladder; run it alone (run --source FILE.cu, or roofline grade FILE.cu)")
        if ladder_kind or dtype or energy or no_ragged or l2 != "cold" or autotuned_tile or refresh:
            raise UsageError("--ladder, --dtype, --energy, --no-ragged, --l2, --autotuned-tile and --refresh apply to "
                             "GEMM runs; a workload declares its own types (roofline grade FILE.cu)")
        if any(v is not None for v in (size, m, n, k, sizes)):
            raise UsageError("--size, --m, --n, --k and --sizes set a GEMM's sizes; a workload's named sizes are set "
                             "with roofline grade FILE.cu --size NAME=VALUE (or --sweep NAME=V1,V2)")
        graded = DEFAULT_GRADES if out == DEFAULT_RESULTS else out
        bar = Bar()
        with bar.bar:
            report = api.grade([str(p) for p in source], graded, profile=profile, gpu=device, budget_s=budget,
                               full_clock_share=full_clock, timeout_s=timeout, progress=bar)
        present(outcome.grade(report, graded), as_json)
        return
    bar = Bar()
    with bar.bar:
        report = api.run(problems, out, kernel, sweep=sizes is not None, profile=profile, refresh=refresh,
                         autotuned_tile=autotuned_tile, progress=bar, sources=users,
                         ladder=not users or all_kernels or bool(kernel), timeout_s=timeout,
                         ragged=not no_ragged, gpu=device, l2=l2, ladder_kind=ladder_kind, dtype=dtype,
                         budget_s=budget, energy=energy, full_clock_share=full_clock)
    present(outcome.run(report, out, sweep=sizes is not None), as_json)


PROFILE_HELP = ("Run COMMAND under Nsight Compute and put every kernel it launches on one roofline, each "
                "against the roof of its own precision.")


@app.command(cls=Command, short_help="Profile every kernel of any CUDA program under Nsight Compute.",
             context_settings={"allow_interspersed_args": False})
def profile(
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
                                                      "extra, or ncu), any CSV export of one (raw or details page, any "
                                                      "metric set or ncu version) or ncu's text output (need nothing)."),
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
):
    """Run COMMAND under Nsight Compute (ncu, clocks untouched, child processes followed) and
    read every kernel it launches against the roof of its own precision (FP64, FP32, FP16/BF16
    on the CUDA cores, FP16/BF16/TF32/FP8/INT8 on the tensor cores) and against DRAM, L2 and
    L1/shared bandwidth: time share, FLOP/s, intensity per level, the binding roof and how far
    below it, theoretical and achieved occupancy. Launches of one kernel at one configuration
    are grouped. Draw the chart with `roofline plot --results PATH --out chart.png`.

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
    from roofline import api, outcome

    if top < 1:
        raise UsageError(f"--top must be 1 or more, got {top}")
    options = api.ProfileOptions(kernel_regex, launch_skip, launch_count, from_start)
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
        if options != api.ProfileOptions():
            raise UsageError("--kernel-regex, --launch-skip, --launch-count and --no-profile-from-start choose what "
                             "a new profile records; an imported report holds what it holds")
        done = api.import_profile(import_report[0], out, gpu)
    else:
        if gpu is not None:
            raise UsageError("--gpu applies to --import; a new profile reads the GPU it runs on")
        done = api.profile(list(command or []), out, options, report, command_stdout_to_stderr=as_json,
                           energy=energy)
    present(outcome.profile(done, out, top), as_json)


@app.command(cls=Command, short_help="Verify, time and grade any kernel or callable against its speed of light.")
def grade(
    targets: Optional[list[str]] = typer.Argument(None, metavar="TARGETS...",
                                                  help="What to grade: FILE.cu (declared by its '// roofline' "
                                                       "lines), MODULE:FUNCTION or FILE.py:FUNCTION (declared by "
                                                       "--spec), or a spec FILE.toml naming its callable."),
    spec: Optional[Path] = typer.Option(None, "--spec", metavar="FILE.toml",
                                        help="The spec (TOML): sizes, one arg per parameter, reference, tolerance, work."),
    size: Optional[list[str]] = typer.Option(None, "--size", metavar="NAME=VALUE",
                                             help="Set a declared size (repeatable), e.g. --size C=8192."),
    sweep: Optional[str] = typer.Option(None, "--sweep", metavar="NAME=V1,V2,...",
                                        help="Grade at each of these values of one size, e.g. --sweep C=1024,4096."),
    baseline: Optional[list[str]] = typer.Option(None, "--baseline", metavar="NAME|FILE|MODULE:FUNCTION",
                                                 help="Score each workload's entries against it (repeatable): an "
                                                      "entry graded here, a grade file, or a callable graded with "
                                                      "the same spec."),
    profile: bool = typer.Option(False, "--profile",
                                 help="Also count one call of each under Nsight Compute: excess traffic, the roof "
                                      "that binds, tensor work."),
    out: Path = typer.Option(DEFAULT_GRADES, "--out", metavar="PATH", help="Grade file (written atomically)."),
    as_json: bool = typer.Option(False, "--json", help="Print the grade document instead of the table."),
    budget: Optional[float] = typer.Option(None, "--budget", parser=number, metavar="SECONDS",
                                           help="Timing budget per entry (default half a second)."),
    full_clock: float = typer.Option(FULL_CLOCK_SHARE, "--full-clock", parser=share, metavar="SHARE",
                                     help="A sample below this share of the top SM clock counts as throttled."),
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", parser=number, metavar="SECONDS",
                                  help="Stop an entry whose launch runs longer."),
    device: Optional[str] = typer.Option(None, "--device", metavar="N|BUS_ID", help="The GPU (default 0)."),
):
    """Verify each kernel or callable against its reference (outputs filled with NaN first, inputs
    checked unchanged, a second launch on new inputs), time it as run does (CUDA events, L2
    flushed), and grade it against its speed of light: T_SOL = max(FLOPs / the precision's
    measured roof, compulsory bytes / measured DRAM bandwidth, the launch floor); share =
    T_SOL / T; score = 1 / (1 + (T - T_SOL) / (T_b - T_SOL)) against --baseline. Integrity flags
    (faster than light, NaN or unwritten, inputs modified, cached answer, no GPU work, tensor work
    missing, async return) come with their evidence. Each entry runs in a process of its own.

    Example: roofline grade softmax_online.cu softmax_naive.cu
    --baseline softmax_naive
    """
    from roofline import api, outcome

    bar = Bar()
    with bar.bar:
        report = api.grade(list(targets or []), out, spec, size, baseline, profile, device, budget, full_clock,
                           timeout, progress=bar, sweep=sweep)
    present(outcome.grade(report, out), as_json)


@app.command(cls=Command, short_help="Communication across ranks from profiler traces: exposed, bus bandwidth.")
def comms(
    traces: Optional[list[Path]] = typer.Argument(None, metavar="TRACES...",
                                                  help="PyTorch profiler traces (.json, .json.gz), one per rank, "
                                                       "or folders of them."),
    gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME",
                                      help="The GPU whose NVLink the bus bandwidth is read against, in place of "
                                           "the one the traces name (a preset such as h100-sxm)."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="CHART",
                                       help="Also draw the communication roof and each rank's step (.png, .svg, .pdf)."),
    nccl_tests: Optional[Path] = typer.Option(None, "--nccl-tests", metavar="OUTPUT",
                                              help="nccl-tests' output on the same machine (all_reduce_perf ...): "
                                                   "each collective of its kind against its busbw at that size."),
    collective: Optional[str] = typer.Option(None, "--collective", metavar="NAME",
                                             help="The collective of --nccl-tests output that does not say it."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON instead of the tables."),
):
    """Read every rank's PyTorch profiler trace (kernels at full speed, NCCL's collectives as they
    ran) and give each rank's span, compute and communication time and the part of it no compute
    kernel overlaps (exposed), each collective's algorithm and bus bandwidth (nccl-tests' factors:
    all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n) against the GPU's NVLink, and the
    collectives and kernels side by side across ranks with the slowest rank.

    Example: roofline comms traces/   (one trace per rank, from torch.profiler's
    tensorboard_trace_handler)
    """
    from roofline import api, outcome

    present(outcome.comms(api.comms(list(traces or []), gpu, out, nccl_tests, collective), out), as_json)


@app.command(cls=Command, short_help="Search the autotuned kernel's tile on this GPU.")
def tune(
    size: int = typer.Option(DEFAULT_SIZE, "--size", parser=integer, metavar="N", help="Square problem size to tune at."),
    out: Path = typer.Option(DEFAULT_TUNE_RESULTS, "--out", metavar="PATH",
                             help="Results of every candidate (atomic)."),
    as_json: bool = typer.Option(False, "--json", help="Print the results document instead of the table."),
):
    """Search the autotuned kernel's tile (BM, BN, BK, TM, TN) on this GPU; `run` then uses the
    winner on this GPU (kept in the user's cache)."""
    from roofline import api, outcome

    api.problems(size)
    bar = Bar()
    with bar.bar:
        report = api.tune(size, out, bar)
    present(outcome.tune(report, out), as_json)


def _results_paths(paths: Optional[list[Path]]) -> list[Path]:
    return paths or [DEFAULT_RESULTS]


@app.command(cls=Command, short_help="Draw the roofline or a size sweep from results files.")
def plot(
    results_paths: Optional[list[Path]] = typer.Option(None, "--results", metavar="PATH",
                                                       help="Results file(s) (repeatable; default "
                                                            f"{DEFAULT_RESULTS})."),
    out: Path = typer.Option(Path("roofline.png"), "--out", metavar="FILE",
                             help="Chart file: .png, .svg or .pdf; .html for the interactive report."),
    kind: str = typer.Option("roofline", "--kind", parser=one_of(*PLOT_KINDS), metavar="roofline|sweep|energy",
                             help="roofline; sweep (GFLOP/s against size); energy (GFLOP/J against intensity, "
                                  "of a run --energy)."),
    measured: bool = typer.Option(False, "--measured", help="Add points at the bytes Nsight Compute counted."),
    highlight: Optional[list[str]] = typer.Option(None, "--highlight", metavar="NAME",
                                                  help="Draw this kernel (its exact name in the results) bold and fade the others (repeatable)."),
):
    """Draw the hierarchical roofline chart, a size sweep (--kind sweep) or the energy roofline of
    a run made with --energy (--kind energy) from recorded results (no GPU needed)."""
    from roofline import api, outcome

    present(outcome.plot(api.plot(_results_paths(results_paths), out, kind, measured, highlight), out))


@app.command(cls=Command, short_help="Print the tables and verdicts of results files.",
             help="Print the tables and one verdict per kernel of recorded results (no GPU needed): a run's "
                  "(the run table, the counters table), a size sweep's or a tile search's, or a program's "
                  f"profile (roofline profile). Results files of every schema roofline has written (1 to {SCHEMA}) "
                  "are read; several files are merged.")
def show(
    results_paths: Optional[list[Path]] = typer.Option(None, "--results", metavar="PATH",
                                                       help=f"Results or profile file(s) (repeatable; default "
                                                            f"{DEFAULT_RESULTS})."),
    as_json: bool = typer.Option(False, "--json", help=f"Print the (merged, schema {SCHEMA}) document instead."),
):
    from roofline import api, outcome

    paths = _results_paths(results_paths)
    docs, notes = api.show_all(paths)  # one document per precision: an FP32 run and a BF16 one apart
    present(outcome.show(paths, docs, notes), as_json)


@app.command(cls=Command, short_help="Theoretical occupancy of a block configuration.")
def occupancy(
    regs: int = typer.Option(..., "--regs", parser=integer, metavar="R", help="Registers per thread (1..255)."),
    threads: int = typer.Option(..., "--threads", parser=integer, metavar="T", help="Threads per block (1..1024)."),
    smem: int = typer.Option(0, "--smem", parser=integer, metavar="BYTES", help="Static shared memory per block, bytes."),
    dynamic_smem: int = typer.Option(0, "--dynamic-smem", parser=integer, metavar="BYTES",
                                     help="Dynamic shared memory per block, bytes."),
    arch: Optional[str] = typer.Option(None, "--arch", metavar="sm_XY", help="Target (default: this machine's GPU)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME", help="GPU preset such as h200 or 'rtx 5080', or a device file (mygpu.toml)."),
    plot_out: Optional[Path] = typer.Option(None, "--plot", metavar="FILE",
                                            help="Also draw the what-if chart (.png/.svg/.pdf)."),
    target_blocks: Optional[int] = typer.Option(None, "--target-blocks", parser=integer, metavar="B",
                                                help="Most registers per thread that keep B blocks resident."),
    as_json: bool = typer.Option(False, "--json", help="Print the occupancy JSON."),
):
    """Theoretical occupancy of a block configuration, and which resources limit it."""
    from roofline import api_occupancy as api, outcome  # the model alone, not the whole library

    report = api.occupancy(regs, threads, smem, dynamic_smem, gpu, arch, target_blocks, plot_out)
    present(outcome.occupancy(report, plot_out), as_json)


@app.command(cls=Command, short_help="Peaks, ceilings and per-SM limits of a GPU.")
def device(
    gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME", help="Describe a preset (or device file, mygpu.toml) instead of this GPU."),
    measure: bool = typer.Option(False, "--measure", help="Measure this GPU's sustained ceilings now (and cache "
                                                          "them): DRAM, L2, shared memory, FP32, tensor-core FP16, "
                                                          "launch latency; and its energy per FLOP and per byte, "
                                                          "fitted from the power at four loads of each, and idle "
                                                          "power."),
    as_json: bool = typer.Option(False, "--json", help="Print the device JSON."),
):
    """Clocks, per-SM limits and the ridge point of this GPU (NVML) or of a preset (--gpu NAME, no
    GPU needed), then the roof of every precision (FP64, FP32, FP16/BF16 on the CUDA cores, the
    tensor-core FP64, FP16, BF16, TF32, FP8 and INT8) and of every memory level (DRAM, L2,
    L1/shared) as per-SM per-clock throughput x SMs x clock, with its source; with --measure,
    the sustained ceilings beside them (copy, FMA chains, L2- and shared-memory-resident streams,
    cuBLAS FP16 on the tensor cores) and the energy ceilings (pJ per FLOP and per DRAM or L2
    byte with their fit's error, idle power) that `plot --kind energy` draws."""
    from roofline import api, outcome

    present(outcome.device(api.device(gpu, measure)), as_json)


@app.command(cls=Command, short_help="The ladder's model, and its resources for a target, offline.")
def kernels(
    size: int = typer.Option(DEFAULT_SIZE, "--size", parser=integer, metavar="N", help="Square problem size for the model."),
    gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME", help="GPU preset (or device file, mygpu.toml): its target, limits and peaks."),
    arch: Optional[str] = typer.Option(None, "--arch", metavar="sm_XY", help="Target (default: this machine's GPU)."),
    model_only: bool = typer.Option(False, "--model-only", help="Skip compiling: the traffic model alone."),
    autotuned_tile: Optional[str] = typer.Option(None, "--autotuned-tile", metavar="BM,BN,BK,TM,TN",
                                                 help="List autotuned at this tile."),
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
    source: Optional[list[Path]] = typer.Option(None, "--source", metavar="FILE.cu",
                                                help="List your own kernel (repeatable) instead of the ladder."),
    entry: Optional[str] = _LAUNCH["entry"],
    block: Optional[str] = _LAUNCH["block"],
    grid: Optional[str] = _LAUNCH["grid"],
    dynamic_smem: Optional[str] = _LAUNCH["dynamic-smem"],
    tile: Optional[str] = _LAUNCH["tile"],
    thread_tile: Optional[str] = _LAUNCH["thread-tile"],
    name: Optional[str] = _LAUNCH["name"],
    ladder_kind: Optional[str] = typer.Option(None, "--ladder", metavar="fp32|tensor",
                                              help="fp32: the SGEMM ladder (default); tensor: the tensor-core ladder."),
    dtype: Optional[str] = typer.Option(None, "--dtype", metavar="fp32|bf16|fp16|tf32",
                                        help="Input precision; bf16, fp16 and tf32 list the tensor ladder."),
):
    """The SGEMM ladder, the tensor-core ladder (--ladder tensor, --dtype), or with --source your own
    kernels: traffic model and, for a target, registers, local (spill) and shared memory and
    occupancy, compiled offline through NVRTC (no GPU needed)."""
    from roofline import api, outcome

    api.problems(size)
    users = api.user_kernels(source or [], dict(zip(_LAUNCH, (entry, block, grid, dynamic_smem, tile, thread_tile,
                                                              name))))
    if users and autotuned_tile is not None:
        raise UsageError("--autotuned-tile lists the ladder's autotuned kernel; it does not apply with --source")
    listing = api.kernels(size, gpu, arch, model_only, autotuned_tile, sources=users, ladder_kind=ladder_kind,
                          dtype=dtype)
    present(outcome.kernels(listing, model_only, autotuned_tile), as_json)


@app.command(cls=Command, short_help="Write a starter kernel of your own, ready to run.")
def new(
    path: Path = typer.Argument(..., metavar="KERNEL.cu", help="The file to write (its folder must exist)."),
    name: Optional[str] = typer.Option(None, "--name", metavar="NAME",
                                       help="The kernel's name: its __global__ function's and in tables and charts "
                                            "(a C identifier; default: the file's name, other characters as '_')."),
    force: bool = typer.Option(False, "--force", help="Replace the file if it exists."),
    dtype: str = typer.Option("fp32", "--dtype", metavar="fp32|bf16|fp16|tf32",
                              help="fp32: an SGEMM; bf16, fp16, tf32: a tensor-core GEMM (mma.sync, B stored N x K)."),
):
    """Write a commented, correct but slow SGEMM kernel (or with --dtype a tensor-core GEMM) with the
    calling convention roofline runs and its launch declared in the header, ready to be improved
    and run with --source."""
    from roofline import api, outcome

    present(outcome.new(api.new(path, force, name, dtype), dtype))


@app.command(cls=Command, short_help="Compare two results files, kernel by kernel.")
def compare(
    before: Path = typer.Argument(..., metavar="BEFORE.json", help="The earlier results or profile file."),
    after: Path = typer.Argument(..., metavar="AFTER.json", help="The later results or profile file."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE", help="Also draw each kernel's move (.png/.svg/.pdf)."),
    force: bool = typer.Option(False, "--force", help="Compare files of different problem sizes too."),
    as_json: bool = typer.Option(False, "--json", help="Print the changes as JSON."),
):
    """Per kernel in both files (two profiles, or two runs): the change in time, FLOP/s, bytes per
    level, occupancy and fraction of its binding roof, with its cause where the counters show one
    and noise called noise; the kernels in one file only; across GPUs, which differences come
    from the device."""
    from roofline import api, outcome

    present(outcome.compare(api.compare(before, after, force, out), before, after, out), as_json)


@app.command(cls=Command, short_help="What each kernel saves at a fraction of its roof, and the step with it.")
def whatif(
    results: Path = typer.Argument(..., metavar="RESULTS.json", help="A results or profile file."),
    target: float = typer.Option(0.8, "--target", parser=number, metavar="FRACTION",
                                 help="The fraction of its binding roof each kernel is imagined at, in (0, 1]."),
    as_json: bool = typer.Option(False, "--json", help="Print the what-if as JSON instead."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE",
                                       help="Also draw time share against headroom (.png/.svg/.pdf)."),
):
    """Per kernel: its time now, at the roof that binds it and at --target of that roof, the ms
    saved and, for a profile, the step's time and speed-up with only that kernel improved
    (Amdahl), ranked by saving, with the cumulative step."""
    from roofline import api, outcome

    present(outcome.whatif(api.whatif(results, target, out), out), as_json)


@app.command(cls=Command, short_help="The same work on another GPU: floors, lower bound and estimate per kernel.")
def project(
    results: Path = typer.Argument(..., metavar="RESULTS.json", help="A results or profile file."),
    gpus: list[str] = typer.Option(..., "--gpu", metavar="NAME", help="A preset GPU (or device file, mygpu.toml) to project onto (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the projection as one JSON document."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE", help="Also draw the bar chart (.png/.svg/.pdf)."),
):
    """Per kernel, on each target GPU: its floors (counted FLOPs and bytes against the preset's
    theoretical roofs, waves with its SM count), a lower bound, and an estimate at the fraction of
    its binding roof it reached here; for a profile, the step's."""
    from roofline import api, outcome

    present(outcome.project(api.project(results, gpus, out), out), as_json)


@app.command(cls=Command, short_help="Fail when a kernel got slower than in a baseline (for CI).")
def check(
    new: Path = typer.Argument(..., metavar="NEW.json", help="The results or profile file to check."),
    baseline: Path = typer.Option(..., "--baseline", metavar="OLD.json", help="The results or profile file to check against."),
    max_drop: str = typer.Option("5%", "--max-drop", metavar="5%|0.05", help="The slowdown allowed beyond noise."),
    as_json: bool = typer.Option(False, "--json", help="Print the reading as JSON."),
):
    """Exit 0 when no kernel in both files got slower than --max-drop beyond its noise, 1 naming
    those that did; across GPU models each kernel's fraction of its binding roof is compared
    instead of its time. Kernels in one file only are listed and never fail the check."""
    from roofline import api, outcome

    present(outcome.check(api.check(new, baseline, max_drop)), as_json)


@app.command(cls=Command, short_help="Print the JSON Schema of results files.")
def schema(
    profile: bool = typer.Option(False, "--profile", help="The schema of profile files (roofline profile) instead."),
    grade_files: bool = typer.Option(False, "--grade", help="The schema of grade files (roofline grade) instead."),
):
    """Print the JSON Schema of results files (schema 4; a profile's is schema 3), for other tools that read them; with
    --profile, that of a program's profile ("kind": "profile"); with --grade, that of grade files ("kind": "grade")."""
    from roofline import api, outcome

    if profile and grade_files:
        raise UsageError("give --profile or --grade, not both")
    present(outcome.schema(api.schema(profile, grade_files)))


console.release_interrupts(_held)  # a Ctrl-C during the declarations ends here, in one line


def main() -> None:
    """Console-script entry point: the app run as this process's command (`console.run`: never a
    UnicodeEncodeError, Ctrl-C at any point one line and exit code 130, a reader leaving early
    quiet)."""
    # The CUDA compute cache off in the tool's own process before anything loads NVRTC (a compile
    # answered from it has no ptxas report; `measure.nvrtc_compile.compiler_env`); a user's setting wins.
    # Set here, not on import: a program that imports the library keeps its cache.
    os.environ.setdefault("CUDA_CACHE_DISABLE", "1")
    console.run(app)


if __name__ == "__main__":
    main()
