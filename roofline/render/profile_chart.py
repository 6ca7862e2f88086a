"""The chart of a profile (`roofline profile`): a program's top kernels by GPU time on one roofline,
each against the roof of its own precision, drawn from a profile document (no GPU needed). Its
points, roofs and title are the profile's scene (`scene.profile_scene`, which the HTML report
draws too); this module lays them out.

Left, log-log: x FLOP per byte, y FLOP/s. Only roofs the report counted something against are
drawn. Compute roofs are horizontal lines, one per precision its kernels' work was counted in
(theoretical solid, measured dashed: FP32 from FMA chains, FP16 tensor from cuBLAS, which BF16
shares: one tensor-core rate for both); roofs of one value are one line named for all of them (the H200's FP32
and FP64 tensor roofs are both 66.9 TFLOP/s). Memory roofs are diagonals for DRAM, L2 and
L1/shared (theoretical solid, measured dashed). Each kernel is one colour with a point per memory
level (DRAM circle, L2 square, L1/shared triangle) at the intensity ncu counted there, joined by a
thin line; marker area is its share of the profiled GPU time; its rank number sits beside its DRAM
point, clear of every marker, line and other label (a leader line joins them when it had to move
away). A kernel that ran more than 3 % off the clock its roof assumes gets a short dotted line in
its colour at that roof's height at the clock it ran at (Nsight Compute's
sm__cycles_elapsed.avg.per_second), where it is read.
Right: every top kernel's distance from the roof that binds it (percent of that roof), kernels
without floating-point work included: their binding roof is a bandwidth. A bar is as long as its
label says, past the dashed 100 % line for a kernel that ran above its roof (a clock above the
roof's, or a roof that undercounts).
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import UsageError
from ..model.roofs import SHARED_LEVELS
from ..results.profile import ProfileResults
from .chart import check_output, new_figure, save_atomic, text
from .layout import Layout
from .scene import L1_LEFT_OUT, l1_left_out, one_line_per_value, profile_scene
from .text import display_names, percent, precision_cell, roof_name
from .style import PROFILE_MARKERS, profile_colors, profile_marker_area

TOP = 12
LEVEL_MARKERS = tuple((level, marker, label) for level, label, marker, _ in PROFILE_MARKERS)


def draw(doc: ProfileResults, out: Path, top: int = TOP) -> Path:
    """Draw profile `doc`'s `top` kernels by GPU time into `out` (.png, .svg or .pdf), written
    atomically. Returns `out`. Raises UsageError for a bad output path."""
    fmt = check_output(out)
    fig = render(doc, top)
    save_atomic(fig, out, fmt)
    return Path(out)


def draw_roofs(ax, scene, x_lo: float, x_hi: float) -> None:
    """Draw `scene`'s roofs on log-log axes `ax` from FLOP per byte `x_lo` to `x_hi`: each memory
    roof a diagonal (GB/s times FLOP per byte), each compute roof a horizontal line, roofs of one
    value one line (`scene.one_line_per_value`); theoretical solid, measured dashed, each labelled
    for the legend."""
    xgrid = [x_lo * (x_hi / x_lo) ** (i / 200) for i in range(201)]
    for r in scene.memory():
        ax.plot(xgrid, [x * r.value for x in xgrid], color=r.color, lw=1.4 if not r.measured else 1.1, ls=r.style,
                label=f"{roof_name(r.level)} {r.value / 1e3:,.1f} TB/s" + (" measured" if r.measured else "")
                + (f" ({r.borrowed})" if r.borrowed else ""))
    for same in one_line_per_value(scene.compute()):
        r, names = same[0], [q.level for q in same]
        unit = "OP/s" if names == ["INT8 tensor"] else "FLOP/s"
        ax.axhline(r.value, color=r.color, lw=1.6 if not r.measured else 1.1,
                   ls=r.style, label=f"{' = '.join(names)} {r.value / 1e3:,.1f} T{unit}"
                   + (" measured" if r.measured else "") + (f" ({r.borrowed})" if r.borrowed else ""))


def render(doc: ProfileResults, top: int = TOP):
    """The chart of profile `doc`'s `top` kernels by GPU time, as a matplotlib Figure, drawn
    from its scene (`scene.profile_scene`)."""
    kernels = doc.kernels[:top]
    scene = profile_scene(doc, top)
    fig = new_figure(16, 7.5, 130)
    ax = fig.add_axes((0.05, 0.13, 0.47, 0.74))  # 0.13: room below for the axis label and two notes
    bars = fig.add_axes((0.70, 0.13, 0.19, 0.74))
    roofs = doc.device.roofs
    colors = profile_colors(len(kernels))

    points = [(p.x, p.y) for p in scene.points]
    if points:
        xs = [p[0] for p in points]
        x_lo, x_hi = min(xs) / 4, max(xs) * 4
    else:
        x_lo, x_hi = 0.01, 1000.0
    tops = [r.value for r in scene.compute() if not r.measured] \
        or [roofs.roof("FP32", measured=False).value]  # an axis to draw the bandwidths against
    y_hi = max(tops + [p[1] for p in points]) * 3
    y_lo = min([p[1] for p in points] + [tops[-1]]) / 10 if points else tops[-1] / 1e4
    if not (math.isfinite(y_hi) and math.isfinite(x_hi) and y_lo > 0 and x_lo > 0):
        raise UsageError("the profile's figures cannot be drawn on log axes")
    draw_roofs(ax, scene, x_lo, x_hi)

    ranks = []
    for g in scene.kernels():
        first = g[0]
        xy = [(p.x, p.y, p.marker) for p in g]
        ax.plot([p[0] for p in xy], [p[1] for p in xy], color=first.color, lw=0.8, alpha=0.7)
        for x, y, marker in xy:
            ax.scatter([x], [y], s=profile_marker_area(first.share), marker=marker, color=first.color,
                       edgecolors="black", linewidths=0.5, zorder=3)
        ranks.append(ax.annotate(first.label, (xy[0][0], xy[0][1]), xytext=(8, 0), textcoords="offset points",
                                 ha="center", va="center", fontsize=7.5, weight="bold", zorder=4,
                                 arrowprops=dict(arrowstyle="-", lw=0.6, color="0.4", shrinkA=0, shrinkB=4)))
        for r in (r for r in scene.kernel_roofs if r.kernel == first.index):  # its roof at the clock it ran at
            xs = [p[0] for p in xy]
            ax.plot([min(xs) / 2, max(xs) * 2], [r.value, r.value], color=r.color, lw=1.2, ls=r.style, zorder=2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_xlabel("arithmetic intensity (FLOP per byte at each level, as Nsight Compute counted)")
    ax.set_ylabel("GFLOP/s of the kernel's main precision")
    ax.grid(True, which="major", alpha=0.25)
    if not points:  # nothing counted to place: said where the kernels would be, with where to look
        ax.text(0.5, 0.5, text("no kernel placed: the report holds no operations or no bytes for any of them\n"
                               "(roofline show FILE lists what is missing and the ncu option that collects it)"),
                transform=ax.transAxes, ha="center", va="center", fontsize=9, color="0.3")
    for level, marker, label in LEVEL_MARKERS if points else ():
        ax.scatter([], [], marker=marker, color="white", edgecolors="black", label=f"kernel at {label}")
    if scene.kernel_roofs:  # the dotted lines a kernel's own colour draws: its roof at the clock it ran at
        ax.plot([], [], color="0.3", lw=1.2, ls=":", label="its roof at the SM clock it ran at")
    if ax.get_legend_handles_labels()[0]:  # nothing labelled (no kernel placed, no roof): no empty box
        ax.legend(loc="lower right", fontsize=7, ncol=2, framealpha=1.0)
    ax.set_title(text(scene.title), fontsize=9, loc="left")
    moving = [str(i + 1) for i, k in enumerate(kernels) if k.precision == "none"]
    unknown = [str(i + 1) for i, k in enumerate(kernels) if k.precision == "unknown"]
    no_bytes = [str(i + 1) for i, k in enumerate(kernels) if k.precision not in ("none", "unknown")
                and k.dominant is not None and k.gflops and not any(k.intensity(lv) for lv, _, _ in LEVEL_MARKERS)]
    notes = ([f"no floating-point work (bandwidth only, right): #{', #'.join(moving)}"] if moving else []) + \
        ([f"its operations not in the report: #{', #'.join(unknown)}"] if unknown else []) + \
        ([f"no bytes in the report at any level: #{', #'.join(no_bytes)}"] if no_bytes else [])
    if notes:
        fig.text(0.05, 0.008, "not drawn on the roofline: " + "; ".join(notes), fontsize=7, color="0.3", va="bottom")
    no_l1 = l1_left_out(kernels)
    if no_l1:
        fig.text(0.05, 0.008 + (0.022 if notes else 0), text(f"no L1/shared point for #{', #'.join(no_l1)}: {L1_LEFT_OUT}"),
                 fontsize=7, color="0.3", va="bottom")

    names, fracs, labels = [], [], []
    for i, (k, name) in enumerate(zip(kernels, display_names([k.name for k in kernels], 30))):
        v = doc.verdict(k)
        names.append(text(f"{i + 1}. {name} ({precision_cell(k, doc.device)})"))
        frac = 1 / v.times_floor if v.times_floor else 0.0
        fracs.append(frac)
        # the verdict's floors are of the busy SMs, but for the L2's and the DRAM's, which are the chip's
        busy = 1.0 if v.waves is None or v.binding is None or v.binding.level in SHARED_LEVELS else v.waves.utilization
        # on a line of its own: beside the bars the label has the figure's margin, no more
        part = f" on busy SMs,\n{100 * frac * busy:.0f}% of the GPU's" if busy < 0.95 and v.binding is not None else ""
        labels.append(f"{percent(k.time_share, 0)}% of time\n{100 * frac:.0f}% of {roof_name(v.binding.level)}{part}"
                      if v.binding is not None else "no work counted")
    y = list(range(len(kernels)))[::-1]
    # Bars as long as their labels say: the axis runs past 100 % when a kernel beat its roof
    # (a clock above the roof's, or counters that miss some work); 100 % is the dashed line.
    bars.barh(y, [100 * f for f in fracs], color=colors, edgecolor="black", linewidth=0.5)
    for yi, label in zip(y, labels):
        bars.text(1.02, yi, label, va="center", fontsize=6.5, transform=bars.get_yaxis_transform())
    bars.set_yticks(y)
    bars.set_yticklabels(names, fontsize=7)
    bars.set_ylim(-0.6, len(kernels) - 0.4)
    bars.set_xlim(0, 10 * math.ceil(max([100.0] + [100 * f for f in fracs]) / 10) + 10)
    bars.axvline(100, color="black", lw=1, ls="--")
    bars.set_xlabel("% of the roof that binds the kernel (dashed: 100 %, at the roof)")
    bars.set_title("distance from the binding roof", fontsize=9, loc="left")
    Layout(fig, ax, skip=ranks).place_annotations(ranks)
    return fig

