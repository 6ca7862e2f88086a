"""`roofline occupancy`: theoretical occupancy of a block configuration, from the model alone (no
pydantic, numpy, matplotlib or CuPy unless a device file, this machine's GPU or a chart is asked for).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ..console import byte_count, integer, present
from ..outcome import Outcome

if TYPE_CHECKING:
    from ..model.occupancy import OccupancyReport


RENAMED = {"--plot": "--chart FILE draws the what-if chart",
           "--out": "--chart FILE draws the what-if chart (a chart beside a command's output is --chart)"}
MOUNT = dict(short_help="Theoretical occupancy of a block configuration.")


def command(
    regs: int = typer.Option(..., "--regs", parser=integer, metavar="R", help="Registers per thread (1..255)."),
    threads: int = typer.Option(..., "--threads", parser=integer, metavar="T", help="Threads per block (1..1024)."),
    smem: int = typer.Option(0, "--smem", parser=byte_count, metavar="BYTES",
                             help="Static shared memory per block, bytes (48k: 48 KiB)."),
    dynamic_smem: int = typer.Option(0, "--dynamic-smem", parser=byte_count, metavar="BYTES",
                                     help="Dynamic shared memory per block, bytes."),
    arch: Optional[str] = typer.Option(None, "--arch", metavar="sm_XY", help="Target (default: this machine's GPU)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME", help="GPU preset such as h200 or 'rtx 5080', or a device file (mygpu.toml)."),
    chart_out: Optional[Path] = typer.Option(None, "--chart", metavar="FILE",
                                            help="Also draw the what-if chart (.png/.svg/.pdf)."),
    target_blocks: Optional[int] = typer.Option(None, "--target-blocks", parser=integer, metavar="B",
                                                help="Most registers per thread that keep B blocks resident."),
    as_json: bool = typer.Option(False, "--json", help="Print the occupancy JSON."),
):
    """Theoretical occupancy of a block configuration, and which resources limit it."""

    report = occupancy(regs, threads, smem, dynamic_smem, gpu, arch, target_blocks, chart_out)
    present(view(report, chart_out), as_json)




def occupancy(registers: int, threads: int, static_smem: int = 0, dynamic_smem: int = 0,
              gpu: str | None = None, arch: str | None = None, target_blocks: int | None = None,
              chart: Path | None = None) -> OccupancyReport:
    """Theoretical occupancy on `--gpu`'s or `--arch`'s SM, else this machine's GPU (NVML only);
    with `chart`, the what-if chart drawn there. Raises UsageError for bad input, RunError when
    neither a target is named nor a GPU found."""
    from ..model.occupancy import OccupancyReport
    from ..model.occupancy import calculate
    from ..model.occupancy import max_registers_for_blocks
    from ..model.device import named_limits
    limits = named_limits(gpu, arch)
    if limits is None:  # neither named: this machine's GPU
        from ..measure import nvml

        limits = nvml.this_gpu_limits()
    occ = calculate(limits, registers, threads, static_smem, dynamic_smem)
    report = OccupancyReport(limits, occ)
    if target_blocks is not None:
        best, why = max_registers_for_blocks(limits, threads, target_blocks, static_smem, dynamic_smem)
        report = OccupancyReport(limits, occ, target_blocks, best, why)
    if chart is not None:
        from ..render import occupancy_chart  # matplotlib: only for the chart

        occupancy_chart.draw(limits, occ, chart)
    return report


def view(report: OccupancyReport, chart_out: Path | None) -> Outcome:
    """An occupancy: its JSON; its table, why it cannot launch (then exit code 1, as for a kernel
    that cannot run, unless a target was asked for: its answer is the result), the target's answer
    (exit code 1 where no register budget meets it: another resource caps the blocks, which a
    script can then tell from a budget), the chart written.
    (Made here, not through the registry, whose models would load pydantic: the same document,
    which `documents.occupancy_json` checks against its model in the tests.)"""
    wrote = [f"wrote {chart_out}"] if chart_out is not None else []

    def lines(width: int) -> list:
        from ..render.tables import occupancy_table

        occ = report.occupancy
        return [occupancy_table(occ), *([f"cannot launch: {occ.reason}"] if occ.reason else []),
                *([report.target_text] if report.target_text else []), *wrote]

    from ..model.arch import NEWEST_CC, cc_key

    cannot_launch = bool(report.occupancy.reason) and report.target_blocks is None
    unmet = report.target_blocks is not None and report.target_registers is None
    cc = report.limits.compute_capability
    notes = (f"compute capability {cc} is newer than any roofline models: its per-SM limits are taken as "
             f"{NEWEST_CC}'s",) if cc_key(cc) > cc_key(NEWEST_CC) else ()
    return Outcome(report.to_json(), lines, notes, asides=tuple(wrote), failed=cannot_launch or unmet)
