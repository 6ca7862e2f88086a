"""The chart of a profile (`roofline profile`): a program's top kernels by GPU time on one roofline,
each against the roof of its own precision, drawn from a profile document (no GPU needed).

Left, log-log: x FLOP per byte, y FLOP/s. Only roofs the report counted something against are
drawn. Compute roofs are horizontal lines, one per precision the drawn kernels use (theoretical
solid, measured dashed: FP32 from FMA chains, FP16 tensor from
cuBLAS, which BF16 shares: one tensor-core rate for both); memory roofs are diagonals for DRAM, L2 and L1/shared (theoretical solid, measured
dashed). Each kernel is one colour with a point per memory level (DRAM circle, L2 square, L1/shared
triangle) at the intensity ncu counted there, joined by a thin line; marker area is its share of
the profiled GPU time; its rank number labels the DRAM point. A kernel that ran more than 3 % off
the clock its roof assumes gets a short dotted line in its colour at that roof's height at the
clock it ran at (Nsight Compute's sm__cycles_elapsed.avg.per_second), where it is read.
Right: every top kernel's distance from the roof that binds it (percent of that roof), kernels
without floating-point work included: their binding roof is a bandwidth.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import UsageError
from ..model.roofs import COMPUTE_LEVEL
from ..results.profile import ProfileResults
from .chart import check_output, new_figure, save_atomic, text
from ..model.units import plural
from .text import display_names, figure, percent, precision_cell, roof_name

TOP = 12
LEVEL_MARKERS = (("dram", "o", "DRAM"), ("l2", "s", "L2"), ("l1", "^", "L1/shared"))
MEMORY_STYLES = (("DRAM", "#1f3b73"), ("L2", "#2a7ab0"), ("SMEM", "#7fb2d6"))
COMPUTE_COLORS = {"FP32": "#333333", "FP64": "#8c564b", "FP16": "#555555", "BF16 tensor": "#b22222",
                  "FP16 tensor": "#d2691e", "TF32 tensor": "#9467bd", "FP8 tensor": "#e377c2",
                  "INT8 tensor": "#7f7f7f", "FP64 tensor": "#a0522d"}


def _palette(n: int):
    from matplotlib import colormaps

    cmap = colormaps["tab20" if n > 10 else "tab10"]
    return [cmap(i % cmap.N) for i in range(n)]


def draw(doc: ProfileResults, out: Path, top: int = TOP) -> Path:
    """Draw profile `doc`'s `top` kernels by GPU time into `out` (.png, .svg or .pdf), written
    atomically. Returns `out`. Raises UsageError for a bad output path."""
    fmt = check_output(out)
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
                    key=lambda lv: -(roofs.roof(lv, measured=False).value if roofs.roof(lv, measured=False) else 0))
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
    for level in levels:
        for measured in (False, True):
            r = roofs.roof(level, measured)
            if r is None or r.measured != measured:
                continue
            borrowed = measured and level == "BF16 tensor" and "bf16_tensor" not in (doc.device.measured_peaks_gflops or {})
            ax.axhline(r.value, color=COMPUTE_COLORS.get(level, "black"), lw=1.6 if not measured else 1.1,
                       ls="--" if measured else "-", label=f"{level} {r.value / 1e3:,.1f} T"
                       + ("OP/s" if level == "INT8 tensor" else "FLOP/s") + (" measured" if measured else "")
                       + (" (FP16 cuBLAS)" if borrowed else ""))

    total_area = 2400
    for i, (k, color) in enumerate(zip(kernels, colors)):
        if k.dominant is None or not k.gflops:
            continue
        area = max(25.0, total_area * k.time_share)
        xy = [(k.intensity(level), k.gflops, marker) for level, marker, _ in LEVEL_MARKERS if k.intensity(level)]
        ax.plot([p[0] for p in xy], [p[1] for p in xy], color=color, lw=0.8, alpha=0.7)
        for x, y, marker in xy:
            ax.scatter([x], [y], s=area, marker=marker, color=color, edgecolors="black", linewidths=0.5, zorder=3)
        ax.annotate(str(i + 1), (xy[0][0], xy[0][1]), ha="center", va="center", fontsize=7, color="white",
                    weight="bold", zorder=4)
        own = doc.roofs(k).roof(k.dominant, measured=False)
        nominal = doc.nominal_clock_mhz(own.level) if own else None
        if own and k.clock_mhz and nominal and abs(k.clock_mhz / nominal - 1) > 0.03:
            xs = [p[0] for p in xy]
            ax.plot([min(xs) / 2, max(xs) * 2], [own.value, own.value], color=color, lw=1.2, ls=":", zorder=2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_xlabel("arithmetic intensity (FLOP per byte at each level, as Nsight Compute counted)")
    ax.set_ylabel("GFLOP/s of the kernel's main precision")
    ax.grid(True, which="major", alpha=0.25)
    for level, marker, label in LEVEL_MARKERS:
        ax.scatter([], [], marker=marker, color="white", edgecolors="black", label=f"kernel at {label}")
    ax.legend(loc="lower right", fontsize=7, ncol=2, framealpha=0.9)
    command = " ".join(doc.command) if doc.command else (doc.report or "")
    shown = f"top {len(kernels)} of {len(doc.kernels)} kernels" if len(kernels) < len(doc.kernels) else \
        plural(len(kernels), "kernel")
    ax.set_title(text(f"{doc.device.name}: {shown} by GPU time ({figure(doc.total_time_ms)} ms profiled)"
                      f"\n{command[:110]}"), fontsize=9, loc="left")
    moving = [str(i + 1) for i, k in enumerate(kernels) if k.precision == "none"]
    unknown = [str(i + 1) for i, k in enumerate(kernels) if k.precision == "unknown"]
    notes = ([f"no floating-point work (bandwidth only, right): #{', #'.join(moving)}"] if moving else []) + \
        ([f"its operations not in the report: #{', #'.join(unknown)}"] if unknown else [])
    if notes:
        ax.text(0.01, 0.985, "not drawn here: " + "; ".join(notes), transform=ax.transAxes, fontsize=7, color="0.3",
                va="top")

    names, fracs, labels = [], [], []
    for i, (k, name) in enumerate(zip(kernels, display_names([k.name for k in kernels], 30))):
        v = doc.verdict(k)
        names.append(text(f"{i + 1}. {name} ({precision_cell(k, doc.device)})"))
        frac = 1 / v.times_floor if v.times_floor else 0.0
        fracs.append(min(frac, 1.0))
        labels.append(f"{percent(k.time_share, 0)}% of time\n{100 * frac:.0f}% of {roof_name(v.binding.level)}"
                      if v.binding is not None else "no work counted")
    y = list(range(len(kernels)))[::-1]
    bars.barh(y, [100 * f for f in fracs], color=colors, edgecolor="black", linewidth=0.5)
    for yi, label in zip(y, labels):
        bars.text(102, yi, label, va="center", fontsize=6.5)
    bars.set_yticks(y)
    bars.set_yticklabels(names, fontsize=7)
    bars.set_xlim(0, 100)
    bars.axvline(100, color="black", lw=1)
    bars.set_xlabel("% of the roof that binds the kernel")
    bars.set_title("distance from the binding roof", fontsize=9, loc="left")
    save_atomic(fig, out, fmt)
    return Path(out)
