"""The chart of a profile by op or by module (`plot PROFILE --kind op|module`, `analysis.owners`): the
ops (in each phase) or modules that took the most GPU time, the longest first.

Left, each on the roofline of its main precision (the one most of its counted FLOPs are in,
CUDA-core FP16 left out as in `show --by op`: `OwnerRow.work`): a
point per memory level its kernels' bytes were counted at, x its FLOPs over those bytes and y its
FLOPs over its GPU time, its kernels' launches summed; its rank beside it. A point is an average
over the op's kernels, so it may sit well under the roofs while each kernel is on its own; the bars
read each kernel at its own roof. Middle, a bar of its time with its floor inside it (each of its
kernels at its own binding roof, summed), coloured by the roof that binds most of that floor;
right, the share of its roofs it ran at (floor / time, 100 %: every kernel on its roof). A module's
point and bar are its own launches', not its submodules' (the optimizer's kernels a row of their
own), so no time is drawn twice.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..analysis.owners import OwnerRow, by_owner
from ..results.profile import ProfileResults
from .chart import check_output, new_figure, save_atomic, text
from .layout import Layout
from .profile_chart import LEVEL_MARKERS, draw_roofs
from .scene import L1_LEFT_OUT, Scene, l1_undercounted, profile_roofs
from .style import profile_marker_area
from .text import l2_by_one_stream, middle_cut, roof_name

TOP = 16
# the binding roof's colour; a roof not named here is grey
COLORS = {"DRAM": "#1f77b4", "L2": "#17becf", "L1": "#2ca02c", "SMEM": "#98df8a", "FP32": "#ff7f0e",
          "FP64": "#8c564b", "FP16": "#e377c2"}


def _color(level: str | None) -> str:
    if level is None:
        return "#bbbbbb"
    if "tensor" in level:
        return "#d62728"
    return COLORS.get(level, "#7f7f7f")


def rows_drawn(doc: ProfileResults, key: str, top: int = TOP) -> list[OwnerRow]:
    """The rows the chart draws: the `top` ops (with phase) by time, or the `top` modules by the
    time of their own launches (not their submodules'), so that no kernel is drawn twice."""
    return sorted(by_owner(doc, key, inclusive=False), key=lambda r: -r.time_ms)[:top]


def draw(doc: ProfileResults, key: str, out: Path, top: int = TOP) -> Path:
    """Draw profile `doc` by `key` ('op' or 'module') into `out` (.png, .svg or .pdf), written
    atomically. Returns `out`. Raises UsageError for a bad output path, ValueError as `by_owner`."""
    fmt = check_output(out)
    fig = render(doc, key, top)
    save_atomic(fig, out, fmt)
    return Path(out)


def render(doc: ProfileResults, key: str, top: int = TOP):
    """The chart (a matplotlib Figure) of `doc`'s `top` rows by `key`: the rows on a roofline
    (left), their time against their floor (middle) and the share of their roofs (right)."""
    rows = rows_drawn(doc, key, top)
    placed, undercounted = _placed(rows)
    notes = _notes(doc, rows, placed, undercounted)
    height = max(7.0, 1.6 + 0.4 * max(len(rows), 4))  # inches: 0.7 below the bars for the axis labels, 0.5 above
    bottom, top = (0.75 + 0.17 * len(notes)) / height, 1 - 0.5 / height
    fig = new_figure(19, height, 130)
    roof = fig.add_axes((0.04, bottom, 0.30, top - bottom))
    times = fig.add_axes((0.52, bottom, 0.26, top - bottom))
    share = fig.add_axes((0.81, bottom, 0.10, top - bottom))
    y = list(range(len(rows)))[::-1]
    labels = []
    for rank, (yi, r) in enumerate(zip(y, rows), start=1):
        color = _color(r.binding)
        times.barh(yi, r.time_ms, color=color, alpha=0.35, edgecolor="black", linewidth=0.5)
        if r.floor_ms:
            times.barh(yi, r.floor_ms, height=0.45, color=color, edgecolor="black", linewidth=0.5)
        name = r.name.removeprefix(r.name.split(".")[0] + ".") if key == "module" and "." in r.name else r.name
        labels.append(text(f"{rank}. " + middle_cut(name, 48) + (f" ({r.phase})" if r.phase else "")))
        share.barh(yi, 100 * r.floor_ms / r.time_ms if r.floor_ms and r.time_ms else 0, color=color,
                   edgecolor="black", linewidth=0.5)
        share.text(1.02, yi, f"{100 * r.floor_ms / r.time_ms:.0f}% " + roof_name(r.binding) if r.floor_ms and r.binding
                   else "no roof", va="center", fontsize=6.5, transform=share.get_yaxis_transform())
    times.set_yticks(y)
    times.set_yticklabels(labels, fontsize=7)
    share.set_yticks([])
    for ax in (times, share):
        ax.set_ylim(-0.6, len(rows) - 0.4)
    share.set_xlim(0, 110)
    share.axvline(100, color="black", lw=1, ls="--")
    times.set_xlabel("GPU time, ms (light: as profiled; dark: its floor, each kernel at its own roof)")
    share.set_xlabel("% of its roofs (floor / time),\neach kernel's at the clock it ran at")
    total = doc.total_time_ms
    what = "op and phase" if key == "op" else "module (each its own kernels, not its submodules')"
    times.set_title(text(f"GPU time by {what}, the {len(rows)} longest of the {total:,.3f} ms profiled"),
                    fontsize=9, loc="left")
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=_color(level), edgecolor="black", linewidth=0.5, label=f"bound by {roof_name(level)}")
               for level in sorted({r.binding for r in rows if r.binding})]
    if handles:
        times.legend(handles=handles, loc="lower right", fontsize=7, framealpha=1.0)
    _roofline(roof, doc, placed, key)
    for i, note in enumerate(notes):
        fig.text(0.04, (0.08 + 0.17 * (len(notes) - 1 - i)) / height, text(note), fontsize=7, color="0.3", va="bottom")
    return fig


def _placed(rows: list[OwnerRow]) -> tuple[list[tuple[int, OwnerRow, list]], list[str]]:
    """The rows the roofline places, each (rank, row, [(FLOP per byte, marker)] at the levels its
    bytes were counted at), and the ranks of those whose L1/shared point is left out because fewer
    bytes were counted there than in DRAM (`scene.l1_undercounted`)."""
    placed, undercounted = [], []
    for rank, r in enumerate(rows, start=1):
        if r.gflops() is None:
            continue
        no_l1 = bool(r.intensity("l1")) and l1_undercounted(r.nbytes)
        if no_l1:
            undercounted.append(str(rank))
        at = [(r.intensity(lv), marker) for lv, marker, _ in LEVEL_MARKERS if r.intensity(lv) and not (lv == "l1" and no_l1)]
        if at:
            placed.append((rank, r, at))
    return placed, undercounted


def _notes(doc: ProfileResults, rows: list[OwnerRow], placed: list, undercounted: list[str]) -> list[str]:
    """What the chart's roofline leaves out or reads low, a line each."""
    drawn = {p[0] for p in placed}
    left = [str(rank) for rank in range(1, len(rows) + 1) if rank not in drawn]
    notes = ([f"not on the roofline (no floating-point work counted, or no bytes): #{', #'.join(left)}"] if left else []) \
        + ([f"no L1/shared point for #{', #'.join(undercounted)}: {L1_LEFT_OUT}"] if undercounted else [])
    if l2_by_one_stream(doc):
        notes.append("the L2 ceiling was measured by one __ldcg stream, which reads low: a row read as L2-bound may be "
                     "bound by its next roof (roofline show FILE says more)")
    return notes


def _roofline(ax, doc: ProfileResults, placed: list, key: str) -> None:
    """The rows `placed` (`_placed`) on the roofs of their main precisions in `ax`: each a point per
    memory level its kernels' bytes were counted at (x: FLOP of its main precision per byte there,
    summed over its launches; y: those FLOPs over its time), in the colour of its binding roof,
    marker area its share of the time, labelled with its rank; the roofs those of the rows placed,
    at the peak clock (`scene.profile_roofs`)."""
    roofs = profile_roofs(doc, {r.main_precision for _, r, _ in placed}, [r.nbytes for _, r, _ in placed])
    scene = Scene(title="", points=(), roofs=roofs)
    xs = [x for _, _, at in placed for x, _ in at]
    x_lo, x_hi = (min(xs) / 4, max(xs) * 4) if xs else (0.01, 1000.0)
    tops = [r.value for r in scene.compute() if not r.measured] or [doc.device.roofs.roof("FP32", measured=False).value]
    ys = [r.gflops() for _, r, _ in placed]
    y_top, y_lo = max(tops + ys) * 3, min(ys + [tops[-1]]) / 10
    draw_roofs(ax, scene, x_lo, x_hi)
    ranks = []
    for rank, r, at in placed:
        color, y = _color(r.binding), r.gflops()
        ax.plot([x for x, _ in at], [y] * len(at), color=color, lw=0.8, alpha=0.7)
        for x, marker in at:
            ax.scatter([x], [y], s=profile_marker_area(r.time_ms / doc.total_time_ms), marker=marker, color=color,
                       edgecolors="black", linewidths=0.5, zorder=3)
        ranks.append(ax.annotate(str(rank), (at[0][0], y), xytext=(8, 0), textcoords="offset points", ha="center",
                                 va="center", fontsize=7.5, weight="bold", zorder=4,
                                 arrowprops=dict(arrowstyle="-", lw=0.6, color="0.4", shrinkA=0, shrinkB=4)))
    what = "op" if key == "op" else "module"
    for _, marker, label in LEVEL_MARKERS if placed else ():
        ax.scatter([], [], marker=marker, color="white", edgecolors="black", label=f"{what} at {label}")
    # headroom above the highest roof for the legend (two columns of 0.14-inch rows), on log axes
    rows = -(-len(ax.get_legend_handles_labels()[1]) // 2)
    axis_in = ax.get_position().height * ax.figure.get_figheight()
    share = min(0.6, (0.14 * rows + 0.2) / axis_in)
    y_hi = y_top * 10 ** (math.log10(y_top / y_lo) * share / (1 - share))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_xlabel(f"arithmetic intensity (FLOP per byte at each level, the {what}'s kernels summed)")
    ax.set_ylabel(f"GFLOP/s of the {what}'s main precision over its GPU time")
    ax.grid(True, which="major", alpha=0.25)
    if ax.get_legend_handles_labels()[0]:  # in the headroom above the highest roof, where no point is
        ax.legend(loc="upper left", fontsize=7, ncol=2, framealpha=1.0)
    ax.set_title(text(f"{doc.device.name}: each {what} on the roof of its precision (roofs at the peak clock)"),
                 fontsize=9, loc="left")
    # a label may sit by any of its row's points (they share one height)
    anchors = {t: [(x, y) for x, _ in at] for t, (_, _, at), y in zip(ranks, placed, ys)}
    Layout(ax.figure, ax, skip=ranks).place_annotations(ranks, anchors=anchors)
