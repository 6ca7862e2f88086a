"""The chart of a grade file (`roofline run` (graded)): every graded entry on one roofline, with its grade.

Left, log-log: x the arithmetic intensity of its declared work over its compulsory bytes (FLOP
per byte), y the FLOP/s its time gives that work. The roofs are the ones T_SOL was read against:
the DRAM roof (a diagonal) and each compute roof an entry's work is in (horizontal), measured
dashed, theoretical solid. An entry sits at share x its roof: the vertical gap to the roof above
it is its distance from the speed of light; an entry bound by the launch floor has a dotted dash
at its work over an empty kernel's time, its roof. Each point is labelled with its name and share;
entries with flags are drawn hollow, with the flags' short codes. Entries not graded (failed,
refused) are listed under the chart, not drawn.
Right: each entry's share of its speed of light as a bar (the dashed line is 100 %), its score
after it where a baseline gave one.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import UsageError
from ..results.grades import GradeResults
from .chart import check_output, color_ramp, new_figure, save_atomic, text
from .grade_tables import SHORT_FLAG, not_graded
from .layout import Layout
from .text import percent


MAX_NAMED = 6  # entries not drawn named one by one under the chart; more are counted


def draw(doc: GradeResults, out: Path) -> None:
    """Draw `doc`'s graded entries into `out` (.png, .svg or .pdf), atomically: on the left the
    roofline of those with FLOPs and bytes (work of 0 FLOPs, a ReLU's, has no intensity to place:
    the panel says so), on the right every graded entry's share. Raises UsageError when no entry is
    graded."""
    fmt = check_output(out)
    if not any(e.graded for e in doc.entries):
        raise UsageError("no entry of the file is graded (each failed, or was refused): nothing to draw; "
                         "roofline show gives why")
    placed = [e for e in doc.entries if e.graded and e.work.flops and sum(e.work.flops.values()) > 0
              and e.work.bytes_read + e.work.bytes_written > 0]
    fig = new_figure(13.5, 6.2, 150)
    ax, bars = fig.add_axes([0.09, 0.16, 0.49, 0.74]), fig.add_axes([0.73, 0.16, 0.21, 0.74])
    labels = _roofline(ax, placed) if placed else []
    if not placed:
        ax.set_axis_off()
        ax.text(0.5, 0.5, text("no graded entry has FLOPs to place on a roofline: its work moves bytes alone\n"
                               "(its speed of light is its DRAM floor, or the launch floor where that is longer); "
                               "the shares are on the right"),
                ha="center", va="center", fontsize=9, color="0.3", transform=ax.transAxes)
    _bars(bars, doc)
    left_out = [e for e in doc.entries if not e.graded]
    fig.suptitle(text(f"{doc.device.name}: {sum(1 for e in doc.entries if e.graded)} kernels and callables against "
                      f"their speed of light (T_SOL = max(work / roof, compulsory bytes / DRAM, launch floor); "
                      f"L2 {doc.l2})"), fontsize=10)
    if left_out:  # named where few, else counted: the line stays one line under the panels
        refused = sum(1 for e in left_out if e.refused)
        why = ("; ".join(f"{e.name}: {not_graded(e)}" for e in left_out)
               if len(left_out) <= MAX_NAMED else
               f"{len(left_out)} entries not graded ({refused} of them refused); roofline show gives each one's reason")
        fig.text(0.07, 0.03, text(f"not drawn: {why}"), fontsize=7.5, color="0.3")
    Layout(fig, ax, skip=labels).place_annotations(labels)
    save_atomic(fig, out, fmt)


def _roofline(ax, placed: list) -> list:
    """The left panel: the roofs of `placed`'s terms and each entry at its intensity and rate; the
    entries' labels, for the layout to place."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    points = []
    for e in placed:
        flops = sum(e.work.flops.values())
        ai = flops / (e.work.bytes_read + e.work.bytes_written)
        points.append((e, ai, flops / (e.time_ms * 1e6)))
    xs = [p[1] for p in points]
    lo, hi = min(xs) / 8, max(xs) * 8
    dram = next((t for e in placed for t in e.terms if t.level == "DRAM"), None)
    computes = {}
    for e in placed:
        for t in e.terms:
            if t.level not in ("DRAM", "launch"):
                computes.setdefault(t.level, t)
    top = max([c.roof for c in computes.values()] + [p[2] for p in points])
    if dram is not None:
        grid = [lo * (hi / lo) ** (i / 64) for i in range(65)]
        ax.plot(grid, [min(x * dram.roof, top) for x in grid], color="0.25", ls="--" if dram.measured else "-", lw=1.4,
                label=f"DRAM {dram.roof:,.0f} GB/s ({'measured' if dram.measured else 'theoretical'})")
    for i, (level, t) in enumerate(sorted(computes.items(), key=lambda kv: kv[1].roof)):
        ridge = t.roof / dram.roof if dram is not None else lo
        ax.plot([max(ridge, lo), hi], [t.roof, t.roof], color=color_ramp(i, len(computes) + 1),
                ls="--" if t.measured else "-", lw=1.4,
                label=f"{level} {t.roof / 1000:,.1f} TFLOP/s ({'measured' if t.measured else 'theoretical'})")
    labels, floors = [], set()
    for e, ai, _ in points:  # a launch-bound entry's roof is no line of the chart: its work in an empty kernel's time
        floor = next((t for t in e.terms if t.level == "launch" and t.ms > 0), None)
        if e.binding == "launch" and floor is not None and (ai, floor.ms) not in floors:
            ax.plot([ai / 1.8, ai * 1.8], [sum(e.work.flops.values()) / (floor.ms * 1e6)] * 2, color="0.35", lw=2.2,
                    ls=":", label=None if floors else "launch floor (the work in an empty kernel's time)")
            floors.add((ai, floor.ms))
    for i, (e, ai, rate) in enumerate(points):
        color = color_ramp(i, len(points))
        flagged = bool(e.flags)
        ax.scatter([ai], [rate], s=46, color="none" if flagged else color, edgecolors=color, linewidths=1.6, zorder=3)
        label = f"{e.name} {percent(e.share, 0)}%" + (f" [{' '.join(SHORT_FLAG[f.code] for f in e.flags)}]" if flagged else "")
        labels.append(ax.annotate(text(label), (ai, rate), xytext=(8, 0), textcoords="offset points", fontsize=7.5,
                                  color=color, va="center", zorder=4,
                                  arrowprops=dict(arrowstyle="-", lw=0.6, color="0.4", shrinkA=0, shrinkB=4)))
    ax.set_xlim(lo, hi)
    ax.set_ylim(min(p[2] for p in points) / 6, top * 2.5)
    ax.set_xlabel("arithmetic intensity of the declared work over the compulsory bytes (FLOP/byte)")
    ax.set_ylabel("FLOP/s of the declared work at the measured median time")
    ax.yaxis.set_major_formatter(_si_formatter())
    ax.legend(loc="upper left", fontsize=7.5, frameon=False)
    ax.grid(True, which="major", color="0.9", lw=0.6)
    return labels


def _bars(bars, doc: GradeResults) -> None:
    """The right panel: every graded entry's share of its speed of light, and its score."""
    graded = [e for e in doc.entries if e.graded]
    names = [e.name for e in graded]
    shares = [100 * e.share for e in graded]
    ys = list(range(len(graded)))[::-1]
    bars.barh(ys, shares, color=[color_ramp(i, len(graded)) for i in range(len(graded))], height=0.6)
    bars.axvline(100, color="0.3", ls="--", lw=1)
    for y, e, s in zip(ys, graded, shares):  # beside the panel: clear of the bars and the 100 % line
        tail = f"{s:.0f}%" + (f"\nscore {e.score:.2f}" if e.score is not None else "")
        bars.text(1.02, y, text(tail), va="center", fontsize=6.5, transform=bars.get_yaxis_transform())
    bars.set_yticks(ys)
    bars.set_yticklabels([text(n) for n in names], fontsize=7.5)
    bars.set_xlim(0, max(110.0, 10 * math.ceil(max(shares) / 10) + 10))
    scored = any(e.score is not None for e in graded)
    bars.set_xlabel("share of the speed of light (T_SOL / T, %)"
                    + ("\nscore: 0.5 at its baseline's time, 1 at T_SOL (SOL-ExecBench's)" if scored else ""))


def _si_formatter():
    from matplotlib.ticker import FuncFormatter

    def fmt(v, _):
        if v <= 0 or not math.isfinite(v):
            return ""
        for scale, unit in ((1e6, "P"), (1e3, "T"), (1.0, "G")):
            if v >= scale:
                return f"{v / scale:g} {unit}FLOP/s"
        return f"{v * 1e3:g} MFLOP/s"
    return FuncFormatter(fmt)
