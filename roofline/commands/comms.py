"""`roofline comms`: communication across ranks from profiler traces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..console import present
from ..errors import UsageError
from ..outcome import Outcome


RENAMED = {"--out": "--chart FILE draws the communication roof"}
MOUNT = dict(short_help="Communication across ranks from profiler traces: exposed, bus bandwidth.")


def command(
    traces: Optional[list[Path]] = typer.Argument(None, metavar="TRACES...",
                                                  help="PyTorch profiler traces (.json, .json.gz), one per rank, "
                                                       "or folders of them."),
    gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME",
                                      help="The GPU whose NVLink the bus bandwidth is read against, in place of "
                                           "the one the traces name (a preset such as h100-sxm)."),
    chart_out: Optional[Path] = typer.Option(None, "--chart", metavar="FILE",
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

    present(view(comms(list(traces or []), gpu, chart_out, nccl_tests, collective), chart_out), as_json)


def comms(paths: list[Path], gpu: str | None = None, chart_out: Path | None = None,
          nccl_tests: Path | None = None, collective: str | None = None):
    """The communication of a step from PyTorch profiler traces, one per rank (files, or folders
    of `*.json` / `*.json.gz`): each rank's exposed communication and each collective's bus
    bandwidth against the GPU's NVLink (`analysis.comms.report`); with `chart_out`, the
    communication roof drawn there (`render.comms_chart`); with `nccl_tests` (its output on the
    same machine; `collective` where its command line is not in it), each collective of that kind
    against nccl-tests' busbw at its size. `gpu` names the GPU where the traces do not (a preset
    or a name). Raises UsageError for a path that holds no trace, or an unknown collective."""
    from ..render import chart
    from ..model.device import from_preset
    from ..analysis.comms import report
    from ..traces import kineto
    if not paths:
        raise UsageError("give the traces, one per rank (files or a folder of them)")
    files_, skipped = [], []
    traces = []
    for p in paths:
        p = Path(p)
        if not p.exists():  # comms takes folders too: said so where neither is there
            raise UsageError(f"{p}: no such trace file or folder")
        if p.is_dir():
            found = sorted([*p.glob("*.json"), *p.glob("*.json.gz")])
            for f in found:  # a folder's other JSON files are not traces: each is named, not fatal
                try:
                    traces.append(kineto.read(f))
                    files_.append(f)
                except UsageError as exc:
                    skipped.append(exc.message)
            if not found:
                raise UsageError(f"{p}: a folder with no .json or .json.gz trace in it")
        else:
            traces.append(kineto.read(p))
            files_.append(p)
    if not traces:
        raise UsageError(f"no trace could be read: {skipped[0]}")
    seen: dict[Path, Path] = {}
    for f in files_:  # one rank's trace twice would read as two ranks of identical figures
        if f.resolve() in seen:
            raise UsageError(f"{f}: given twice (also as {seen[f.resolve()]}); give each rank's trace once")
        seen[f.resolve()] = f
    if chart_out is not None:
        chart.check_output(chart_out, files_, param="chart_out")
    name = None
    if gpu is not None:
        from ..model.links import link_of
        from ..model.presets import is_device_file
        try:
            name = from_preset(gpu).name
        except UsageError:
            if is_device_file(gpu):  # the file's own error: a missing field, a typo, no such file
                raise
            if link_of(gpu) is None:
                raise UsageError(f"{{gpu}} {gpu!r}: no preset of that name and no GPU whose NVLink is known "
                                 "(h100-sxm, h200, a100-sxm4-80gb, ...)", "gpu") from None
            name = gpu
    reference = None
    if collective is not None and nccl_tests is None:
        raise UsageError("{collective} names the collective of {nccl_tests} output; give that too", "collective",
                         ["nccl_tests"])
    if nccl_tests is not None:
        from ..model.collectives import COLLECTIVES, collective_of
        from ..traces import nccl_tests as nt
        coll = collective_of(collective) if collective is not None else None
        if collective is not None and coll is None:
            raise UsageError(f"{{collective}} {collective!r}: one of {', '.join(COLLECTIVES)}", "collective")
        reference = nt.read(nccl_tests, coll)
    result = report(traces, name, reference)
    result.notes[:0] = [f"not a trace, left out: {s}" for s in skipped]
    if chart_out is not None:
        from ..render import comms_chart
        comms_chart.draw(result, chart_out)
    return result


def view(result, chart_out: Path | None = None) -> Outcome:
    """Communication across ranks: the report as JSON; its tables, then its notes, then the chart written."""
    from .. import documents

    return Outcome(documents.to_json(result), lambda width: documents.view(result, width, out=chart_out),
                   tuple(result.notes))
