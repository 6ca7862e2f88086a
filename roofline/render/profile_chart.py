"""The chart of a profile (`roofline profile`): a program's top kernels by GPU time on one roofline,
each against the roof of its own precision, drawn from a profile document (no GPU needed).

Left, log-log: x FLOP per byte, y FLOP/s. Only roofs the report counted something against are
drawn. Compute roofs are horizontal lines, one per precision the drawn kernels use (theoretical
solid, measured dashed: FP32 from FMA chains, FP16 tensor from cuBLAS, which BF16 shares: one
tensor-core rate for both); roofs of one value are one line named for all of them (the H200's FP32
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
from ..model.roofs import COMPUTE_LEVEL
from ..results.profile import ProfileResults
from .chart import check_output, new_figure, save_atomic, text
from .layout import Layout
from ..model.units import figure, plural
from .text import display_names, percent, precision_cell, roof_name
from .style import MEMORY_COLORS, PROFILE_MARKERS, compute_color

TOP = 12
LEVEL_MARKERS = tuple((level, marker, label) for level, label, marker, _ in PROFILE_MARKERS)
MEMORY_STYLES = tuple(MEMORY_COLORS.items())


def _palette(n: int):
    from matplotlib import colormaps

    cmap = colormaps["tab20" if n > 10 else "tab10"]
    return [cmap(i % cmap.N) for i in range(n)]


def draw(doc: ProfileResults, out: Path, top: int = TOP) -> Path:
    """Draw profile `doc`'s `top` kernels by GPU time into `out` (.png, .svg or .pdf), written
    atomically. Returns `out`. Raises UsageError for a bad output path."""
    fmt = check_output(out)
    fig = render(doc, top)
    save_atomic(fig, out, fmt)
    return Path(out)


def render(doc: ProfileResults, top: int = TOP):
    """The chart of profile `doc`'s `top` kernels by GPU time, as a matplotlib Figure."""
    kernels = doc.kernels[:top]
    fig = new_figure(16, 7.5, 130)
    ax = fig.add_axes((0.05, 0.09, 0.47, 0.78))
    bars = fig.add_axes((0.70, 0.09, 0.19, 0.78))
    roofs = doc.device.roofs
    colors = _palette(len(kernels))

    points = []
    for k in kernels:
        if k.dominant is None or not k.gflops:
            continue
        for level, _, _ in LEVEL_MARKERS:
            ai = k.intensity(level)
            if ai:
                points.append((ai, k.gflops))
    if points:
        xs = [p[0] for p in points]
        x_lo, x_hi = min(xs) / 4, max(xs) * 4
    else:
        x_lo, x_hi = 0.01, 1000.0
    # only roofs some drawn kernel was counted against: the FP32 roof where FP32 work was counted,
    # a memory roof where bytes at that level were
    counted_fp32 = any("fp32" in k.flops for k in kernels)
    levels = sorted({COMPUTE_LEVEL[k.dominant] for k in kernels if k.dominant} | ({"FP32"} if counted_fp32 else set()),
                    key=lambda lv: (-(roofs.roof(lv, measured=False).value if roofs.roof(lv, measured=False) else 0), lv))
    tops = [roofs.roof(lv, measured=False).value for lv in levels if roofs.roof(lv, measured=False)] \
        or [roofs.roof("FP32", measured=False).value]  # an axis to draw the bandwidths against
    y_hi = max(tops + [p[1] for p in points]) * 3
    y_lo = min([p[1] for p in points] + [tops[-1]]) / 10 if points else tops[-1] / 1e4
    counted_levels = {"DRAM": any(k.bytes.get("dram") for k in kernels),
                      "L2": any(k.bytes.get("l2") for k in kernels),
                      "SMEM": any(k.bytes.get("l1") or k.bytes.get("smem") for k in kernels)}
    if not (math.isfinite(y_hi) and math.isfinite(x_hi) and y_lo > 0 and x_lo > 0):
        raise UsageError("the profile's figures cannot be drawn on log axes")
    xgrid = [x_lo * (x_hi / x_lo) ** (i / 200) for i in range(201)]
    for level, color in MEMORY_STYLES:
        if not counted_levels[level]:
            continue
        for measured in (False, True):
            r = roofs.roof(level, measured)
            if r is None or r.measured != measured:
                continue
            ax.plot(xgrid, [x * r.value for x in xgrid], color=color, lw=1.4 if not measured else 1.1,
                    ls="--" if measured else "-", label=f"{roof_name(level)} {r.value / 1e3:,.1f} TB/s"
                    + (" measured" if measured else ""))
    for names, value, measured, borrowed in _compute_roofs(doc, levels):
        unit = "OP/s" if names == ["INT8 tensor"] else "FLOP/s"
        ax.axhline(value, color=compute_color(names[0]), lw=1.6 if not measured else 1.1,
                   ls="--" if measured else "-", label=f"{' = '.join(names)} {value / 1e3:,.1f} T{unit}"
                   + (" measured" if measured else "") + (" (FP16 cuBLAS)" if borrowed else ""))

    total_area, ranks, at_clock = 2400, [], False
    for i, (k, color) in enumerate(zip(kernels, colors)):
        if k.dominant is None or not k.gflops:
            continue
        area = max(25.0, total_area * k.time_share)
        xy = [(k.intensity(level), k.gflops, marker) for level, marker, _ in LEVEL_MARKERS if k.intensity(level)]
        if not xy:  # work counted, but no bytes at any level: no intensity to place it at
            continue
        ax.plot([p[0] for p in xy], [p[1] for p in xy], color=color, lw=0.8, alpha=0.7)
        for x, y, marker in xy:
            ax.scatter([x], [y], s=area, marker=marker, color=color, edgecolors="black", linewidths=0.5, zorder=3)
        ranks.append(ax.annotate(str(i + 1), (xy[0][0], xy[0][1]), xytext=(8, 0), textcoords="offset points",
                                 ha="center", va="center", fontsize=7.5, weight="bold", zorder=4,
                                 arrowprops=dict(arrowstyle="-", lw=0.6, color="0.4", shrinkA=0, shrinkB=4)))
        own = doc.roofs(k).roof(k.dominant, measured=False)
        nominal = doc.nominal_clock_mhz(own.level) if own else None
        if own and k.clock_mhz and nominal and abs(k.clock_mhz / nominal - 1) > 0.03:
            xs = [p[0] for p in xy]
            ax.plot([min(xs) / 2, max(xs) * 2], [own.value, own.value], color=color, lw=1.2, ls=":", zorder=2)
            at_clock = True
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_xlabel("arithmetic intensity (FLOP per byte at each level, as Nsight Compute counted)")
    ax.set_ylabel("GFLOP/s of the kernel's main precision")
    ax.grid(True, which="major", alpha=0.25)
    for level, marker, label in LEVEL_MARKERS:
        ax.scatter([], [], marker=marker, color="white", edgecolors="black", label=f"kernel at {label}")
    if at_clock:  # the dotted lines a kernel's own colour draws: its roof at the clock it ran at
        ax.plot([], [], color="0.3", lw=1.2, ls=":", label="its roof at the SM clock it ran at")
    ax.legend(loc="lower right", fontsize=7, ncol=2, framealpha=1.0)
    command = " ".join(doc.command) if doc.command else (doc.report or "")
    shown = f"top {len(kernels)} of {len(doc.kernels)} kernels" if len(kernels) < len(doc.kernels) else \
        plural(len(kernels), "kernel")
    ax.set_title(text(f"{doc.device.name}: {shown} by GPU time ({figure(doc.total_time_ms)} ms profiled)"
                      f"\n{command[:110]}"), fontsize=9, loc="left")
    moving = [str(i + 1) for i, k in enumerate(kernels) if k.precision == "none"]
    unknown = [str(i + 1) for i, k in enumerate(kernels) if k.precision == "unknown"]
    no_bytes = [str(i + 1) for i, k in enumerate(kernels) if k.precision not in ("none", "unknown")
                and k.dominant is not None and k.gflops and not any(k.intensity(lv) for lv, _, _ in LEVEL_MARKERS)]
    notes = ([f"no floating-point work (bandwidth only, right): #{', #'.join(moving)}"] if moving else []) + \
        ([f"its operations not in the report: #{', #'.join(unknown)}"] if unknown else []) + \
        ([f"no bytes in the report at any level: #{', #'.join(no_bytes)}"] if no_bytes else [])
    if notes:
        fig.text(0.05, 0.008, "not drawn on the roofline: " + "; ".join(notes), fontsize=7, color="0.3", va="bottom")

    names, fracs, labels = [], [], []
    for i, (k, name) in enumerate(zip(kernels, display_names([k.name for k in kernels], 30))):
        v = doc.verdict(k)
        names.append(text(f"{i + 1}. {name} ({precision_cell(k, doc.device)})"))
        frac = 1 / v.times_floor if v.times_floor else 0.0
        fracs.append(frac)
        busy = v.waves.utilization if v.waves is not None else 1.0  # the verdict's floors are of the busy SMs
        part = f" on busy SMs, {100 * frac * busy:.0f}% of the GPU's" if busy < 0.95 and v.binding is not None else ""
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


def _compute_roofs(doc: ProfileResults, levels: list[str]) -> list[tuple[list[str], float, bool, bool]]:
    """The compute roofs to draw, (names, GFLOP/s, measured, borrowed), theoretical and measured
    ones of `levels`: roofs of one value (within 1 %) drawn once, as one line with all their
    names (on an H200 the FP32 roof and the FP64 tensor one are both 66.9 TFLOP/s). `borrowed`:
    a measured BF16 tensor roof taken from FP16's cuBLAS product."""
    roofs = doc.device.roofs
    out: list[tuple[list[str], float, bool, bool]] = []
    for measured in (False, True):
        for level in levels:
            r = roofs.roof(level, measured)
            if r is None or r.measured != measured:
                continue
            borrowed = measured and level == "BF16 tensor" and "bf16_tensor" not in (doc.device.measured_peaks_gflops or {})
            same = next((o for o in out if o[2] == measured and abs(o[1] / r.value - 1) < 0.01), None)
            if same is not None:
                same[0].append(level)
            else:
                out.append(([level], r.value, measured, borrowed))
    return out
