"""The `roofline` command line: parse, call the library, render, turn known errors into exit codes.

Exit codes: 0 success; 2 invalid input (one line on stderr naming what is valid); 1 a runtime
failure (no GPU for `run`, a compile error, a kernel failing verification).
`occupancy`, `kernels` and `device --gpu` import neither CuPy nor matplotlib.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperGroup

from roofline.errors import RunError, UsageError

DEFAULT_SIZE = 4096


class _OneLineErrors(TyperGroup):
    """Reports every usage error, Typer's own and the library's, as one line on stderr."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            rv = super().main(args=args, prog_name=prog_name or "roofline", complete_var=complete_var,
                              standalone_mode=False, **extra)
        except UsageError as exc:
            _fail(str(exc), 2)
        except RunError as exc:
            _fail(str(exc), 1)
        except Exception as exc:
            # Typer's vendored Click exceptions are not public API: recognise them by shape.
            if type(exc).__name__ == "NoArgsIsHelpError":
                typer.echo(exc.format_message())
                sys.exit(0)
            if hasattr(exc, "format_message") and isinstance(getattr(exc, "exit_code", None), int):
                _fail(exc.format_message(), exc.exit_code)
            if type(exc).__name__ == "Abort":
                _fail("aborted", 1)
            raise
        sys.exit(rv if isinstance(rv, int) else 0)


def _fail(message: str, code: int) -> None:
    typer.echo(f"roofline: error: {message}", err=True)
    sys.exit(code)


app = typer.Typer(cls=_OneLineErrors, add_completion=False, no_args_is_help=True,
                  pretty_exceptions_enable=False,
                  help="Roofline and occupancy for real CUDA kernels: an SGEMM ladder from naive to "
                       "cuBLAS class, verified against cuBLAS, timed, modelled and plotted.")


def _version(value: bool) -> None:
    if value:
        from roofline import __version__

        typer.echo(f"roofline {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")):
    """Roofline and occupancy for real CUDA kernels."""


def _console(err: bool = False):
    """A rich console; when not writing to a terminal (pipes, logs, CI) it is 200 columns wide
    so that tables are not squeezed into rich's 80-column default."""
    from rich.console import Console

    stream = sys.stderr if err else sys.stdout
    width = None if stream.isatty() else 200
    return Console(stderr=err, highlight=False, width=width)


def _print_json(doc) -> None:
    typer.echo(json.dumps(doc, indent=1))


def _problem(size: Optional[int], m: Optional[int], n: Optional[int], k: Optional[int]):
    from roofline.runner import Problem

    given = [v is not None for v in (m, n, k)]
    if any(given):
        if size is not None:
            raise UsageError("give --size or --m/--n/--k, not both")
        if not all(given):
            raise UsageError("give all three of --m, --n and --k (or --size N for a square problem)")
        problem = Problem(m, n, k)
    else:
        if size is not None and size < 1:
            raise UsageError(f"--size must be a positive integer, got {size}")
        s = DEFAULT_SIZE if size is None else size
        problem = Problem(s, s, s)
    problem.validate()
    return problem


def _progress_bar(total: int):
    """A transient rich progress bar on stderr and the callback that advances it one step."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description:<46}"), BarColumn(), TimeElapsedColumn(),
                   console=_console(err=True), transient=True)
    task = bar.add_task("starting", total=total)
    return bar, lambda text: bar.update(task, description=text, advance=1)


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise UsageError(f"--sizes takes comma-separated positive integers, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise UsageError(f"--sizes takes comma-separated positive integers, got {text!r}")
    return sorted(set(sizes))


def _report_failures(outputs) -> None:
    failed = []
    for output in outputs:
        for r in output.kernels:
            occ = r.occupancy
            if occ and r.driver_blocks_per_sm is not None and occ.active_blocks_per_sm != r.driver_blocks_per_sm:
                typer.echo(f"roofline: warning: {r.spec.name}: calculated {occ.active_blocks_per_sm} blocks/SM, "
                           f"the driver says {r.driver_blocks_per_sm}", err=True)
            if not r.ok:
                failed.append(f"{output.problem.text()}: {r.error}")
    for line in failed:
        typer.echo(f"roofline: error: {line}", err=True)
    if failed:
        raise typer.Exit(1)


@app.command()
def run(
    all_kernels: bool = typer.Option(False, "--all", help="Run the whole ladder (the default)."),
    kernel: Optional[list[str]] = typer.Option(None, "--kernel", help="Run only this kernel (repeatable)."),
    size: Optional[int] = typer.Option(None, "--size", help=f"Square problem M = N = K (default {DEFAULT_SIZE})."),
    m: Optional[int] = typer.Option(None, "--m", help="Rows of A and C."),
    n: Optional[int] = typer.Option(None, "--n", help="Columns of B and C."),
    k: Optional[int] = typer.Option(None, "--k", help="Columns of A, rows of B."),
    sizes: Optional[str] = typer.Option(None, "--sizes", help="Size sweep, e.g. 128,256,512 (square problems)."),
    profile: bool = typer.Option(False, "--profile", help="Also count each kernel's traffic with Nsight Compute."),
    out: Path = typer.Option(Path("roofline-results.json"), "--out", help="Results file (written atomically)."),
    as_json: bool = typer.Option(False, "--json", help="Print the results document instead of the table."),
):
    """Compile, verify against cuBLAS and time the SGEMM ladder on this machine's GPU; measure its
    DRAM and FP32 ceilings once (cached); with --profile, read hardware counters per kernel."""
    from roofline import registry, results, runner
    from roofline.files import check_writable

    if all_kernels and kernel:
        raise UsageError("give --all or --kernel NAME, not both")
    if sizes is not None:
        if any(v is not None for v in (size, m, n, k)):
            raise UsageError("give --sizes or --size/--m/--n/--k, not both")
        problems = [runner.Problem(s, s, s) for s in _sizes(sizes)]
        for p in problems:
            p.validate()
    else:
        problems = [_problem(size, m, n, k)]
    registry.select(kernel)  # unknown names fail before any GPU work
    check_writable(out)  # refuse now rather than lose the run at its last step

    device = runner.preflight(max(problems, key=lambda p: p.device_bytes))
    specs = registry.select(kernel, device.name)  # autotuned at this GPU's tuned tile
    skipped = [s for s in specs if not s.runs_on(device.compute_capability)]
    specs = [s for s in specs if s not in skipped]
    from roofline import ceilings
    from roofline import profile as profiling

    bar, progress = _progress_bar(1 + len(problems) * (1 + 3 * len(specs)) + (len(specs) if profile else 0))
    with bar:
        progress("measuring DRAM and FP32 ceilings (cached)")
        ceil = ceilings.measure(device)
        outputs = [runner.run(specs, p, device, progress) for p in problems]
        doc = (results.build_sweep(outputs, ceil) if sizes is not None else results.build(outputs[0], ceil))
        doc["skipped"] = [{"name": s.name, "reason": s.unavailable_reason(device.limits.arch)} for s in skipped]
        notes = profiling.attach(doc, outputs[-1], progress) if profile else []
    if not as_json:
        from roofline.report import profile_table, run_table, verdict_lines

        console = _console()
        console.print(run_table(doc))
        if any((k.get("floors") or {}).get("times_floor", 1) < 1 for k in doc["kernels"]):
            console.print("floor x below 1: faster than the DRAM floor of the modelled GMEM bytes, "
                          "because caches (L1/L2) serve part of those requests.")
        table = profile_table(doc)
        if table is not None:
            console.print(table)
        for line in verdict_lines(doc):
            console.print(line)
    for line in notes + [entry["reason"] for entry in doc["skipped"]]:
        typer.echo(f"roofline: note: {line}", err=True)
    results.write_atomic(doc, out)
    if as_json:
        _print_json(doc)
    else:
        kind = " --kind sweep" if sizes is not None else ""
        console.print(f"results written to {out}; draw them with: roofline plot --results {out}{kind} --out chart.png")
    _report_failures(outputs)


@app.command()
def tune(
    size: int = typer.Option(DEFAULT_SIZE, "--size", help="Square problem size to tune at."),
    out: Path = typer.Option(Path("roofline-tune.json"), "--out", help="Results of every candidate (atomic)."),
    as_json: bool = typer.Option(False, "--json", help="Print the results document instead of the table."),
):
    """Search the autotuned kernel's tile (BM, BN, BK, TM, TN) on this GPU; the ladder then uses
    the winner here."""
    from roofline import results, runner, tuning
    from roofline.files import check_writable

    problem = _problem(size, None, None, None)
    check_writable(out)
    device = runner.preflight(problem)
    bar, progress = _progress_bar(1 + 3 * len(tuning.candidates()))
    with bar:
        doc = tuning.search(problem, device, progress)
    results.write_atomic(doc, out)
    winner = doc["tune"]
    cache = tuning.remember(device.name, winner["winner"], winner["winner_gflops"], size)
    if as_json:
        _print_json(doc)
    else:
        from roofline.report import run_table

        doc_top = dict(doc, kernels=sorted((k for k in doc["kernels"] if k["gflops"]),
                                           key=lambda k: -k["gflops"])[:10])
        console = _console()
        console.print(run_table(doc_top))
        console.print(f"winner {winner['expression']}: {winner['winner_gflops']:,.0f} GFLOP/s of "
                      f"{winner['candidates']} candidates ({winner['verified']} verified); kept in {cache}; "
                      f"all candidates in {out}")


@app.command()
def plot(
    results_paths: Optional[list[Path]] = typer.Option(None, "--results",
                                                       help="Results file(s) from `roofline run` (repeatable; "
                                                            "default roofline-results.json)."),
    out: Path = typer.Option(Path("roofline.png"), "--out", help="Chart file: .png, .svg or .pdf."),
    kind: str = typer.Option("roofline", "--kind", help="roofline, or sweep (GFLOP/s against size)."),
    measured: bool = typer.Option(False, "--measured", help="Add points at the bytes Nsight Compute counted."),
):
    """Draw the roofline chart, or a size sweep, from recorded results (no GPU needed)."""
    from roofline import plot as plotting
    from roofline import results

    if kind not in ("roofline", "sweep"):
        raise UsageError(f"--kind must be roofline or sweep, got {kind!r}")
    if kind == "sweep" and measured:
        raise UsageError("--measured applies to --kind roofline; a sweep has no counters")
    plotting.check_output(out)
    paths = results_paths or [results.DEFAULT_PATH]
    for p in paths:
        if not str(p).strip() or str(p) == ".":
            raise UsageError("--results needs a file name")
    notes: list[str] = []
    doc = results.merge([results.load(p) for p in paths], [str(p) for p in paths], notes)
    if kind == "roofline" and "sweep" in doc:
        prob = doc["problem"]
        notes.append(f"{paths[0]} holds a size sweep: the roofline shows its largest size, "
                     f"{prob['m']}x{prob['n']}x{prob['k']} (--kind sweep draws every size)")
    for note in notes:
        typer.echo(f"note: {note}", err=True)
    if kind == "sweep":
        from roofline import sweep_chart

        sweep_chart.draw(doc, out)
    else:
        plotting.draw(doc, out, measured)
    typer.echo(f"wrote {out}")


@app.command()
def occupancy(
    regs: int = typer.Option(..., "--regs", help="Registers per thread (1..255)."),
    threads: int = typer.Option(..., "--threads", help="Threads per block (1..1024)."),
    smem: int = typer.Option(0, "--smem", help="Static shared memory per block, bytes."),
    dynamic_smem: int = typer.Option(0, "--dynamic-smem", help="Dynamic shared memory per block, bytes."),
    arch: Optional[str] = typer.Option(None, "--arch", help="Target such as sm_90 (default: this machine's GPU)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU preset such as h200 or 'rtx 5080'."),
    plot_out: Optional[Path] = typer.Option(None, "--plot", help="Also draw the what-if chart (.png/.svg/.pdf)."),
    target_blocks: Optional[int] = typer.Option(None, "--target-blocks",
                                                help="Most registers per thread that keep this many blocks resident."),
    as_json: bool = typer.Option(False, "--json", help="Print the occupancy JSON."),
):
    """Theoretical occupancy of a block configuration, and which resource limits it."""
    from roofline.device import resolve_limits
    from roofline.occupancy import calculate, max_registers_for_blocks

    limits = resolve_limits(gpu, arch)
    occ = calculate(limits, regs, threads, smem, dynamic_smem)
    result = occ.to_dict()
    target = None
    if target_blocks is not None:
        best, why = max_registers_for_blocks(limits, threads, target_blocks, smem, dynamic_smem)
        target = {"target_blocks": target_blocks, "max_registers_per_thread": best, "explanation": why}
        result["target"] = target
    if plot_out is not None:
        from roofline import occupancy_chart

        occupancy_chart.draw(limits, occ, plot_out)
    if as_json:
        _print_json(result)
        return
    from roofline.report import occupancy_table

    console = _console()
    console.print(occupancy_table(result))
    if result["reason"]:
        console.print(f"cannot launch: {result['reason']}")
    if target:
        console.print(target["explanation"])
    if plot_out is not None:
        console.print(f"wrote {plot_out}")


@app.command()
def device(
    gpu: Optional[str] = typer.Option(None, "--gpu", help="Describe a GPU preset instead of this machine's GPU."),
    measure: bool = typer.Option(False, "--measure", help="Measure DRAM and FP32 ceilings now (and cache them)."),
    as_json: bool = typer.Option(False, "--json", help="Print the device JSON."),
):
    """Peak FP32 rate, peak DRAM bandwidth and per-SM limits (NVML, or a preset with --gpu);
    with --measure, the sustained copy bandwidth and FMA rate beside them."""
    from roofline.device import resolve

    if measure and gpu is not None:
        raise UsageError("--measure needs this machine's GPU; it cannot measure a --gpu preset")
    if measure:
        from roofline.device import require_gpu

        require_gpu()  # like run: no GPU here is a runtime failure (exit 1)
    spec = resolve(gpu)
    d = spec.to_dict()
    if measure:
        from roofline import ceilings

        c = ceilings.measure(spec, refresh=True)
        d.update(measured_dram_gbps=c.dram_gbps, measured_fp32_gflops=c.fp32_gflops,
                 measured_at=c.measured_at, measured_method=c.method)
    if as_json:
        _print_json(d)
        return
    from roofline.report import device_table

    _console().print(device_table(d))


@app.command()
def kernels(
    size: int = typer.Option(DEFAULT_SIZE, "--size", help="Square problem size for the model figures."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU preset: its target, limits and peaks."),
    arch: Optional[str] = typer.Option(None, "--arch", help="Target such as sm_90 (default: this machine's GPU)."),
    model_only: bool = typer.Option(False, "--model-only", help="Skip compiling: the traffic model alone."),
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
):
    """The SGEMM ladder: traffic model, and for a target its registers, spills, shared memory and
    occupancy, compiled offline through NVRTC (no GPU needed)."""
    from roofline import catalog
    from roofline.device import from_preset, nvml_compute_capability, resolve_limits

    _problem(size, None, None, None)
    limits = None
    if gpu is not None or arch is not None:
        limits = resolve_limits(gpu, arch)  # validated even with --model-only
    elif not model_only and nvml_compute_capability():
        limits = resolve_limits(None, None)
    if model_only:
        limits = None
    peaks = from_preset(gpu) if gpu else None
    rows = catalog.ladder(size, size, size, limits, peaks)
    doc = {"size": size, "arch": limits.arch if limits else None,
           "device": peaks.name if peaks else None, "kernels": rows}
    failed = [row["error"] for row in rows if "error" in row]
    if as_json:
        _print_json(doc)
        if failed:
            _fail(failed[0], 1)
        return
    from roofline.report import kernels_table

    console = _console()
    console.print(kernels_table(doc))
    for row in rows:
        if "unavailable" in row:
            console.print(row["unavailable"])
    if limits is None and not model_only:
        console.print("no target given and no GPU here: model only; add --arch sm_XY or --gpu NAME for "
                      "registers and occupancy")
    for line in failed:
        typer.echo(f"roofline: error: {line}", err=True)
    if failed:
        raise typer.Exit(1)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
