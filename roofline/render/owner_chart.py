"""The chart of a profile by op or by module (`plot PROFILE --kind op|module`, `analysis.owners`): the
ops (in each phase) or modules that took the most GPU time, each as a bar of its time with its
floor inside it (each of its kernels at its own binding roof, summed), coloured by the roof that
binds most of that floor; beside it, the share of its roofs it ran at (floor / time, 100 %: every
kernel on its roof). A module's bar is its own launches' time, not its submodules' (the optimizer's
kernels a row of their own), so no time is drawn twice.
"""

from __future__ import annotations

from pathlib import Path

from ..analysis.owners import OwnerRow, by_owner
from ..results.profile import ProfileResults
from .chart import check_output, new_figure, save_atomic, text
from .text import middle_cut, roof_name

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
    """The chart (a matplotlib Figure) of `doc`'s `top` rows by `key`."""
    rows = rows_drawn(doc, key, top)
    height = 1.6 + 0.4 * max(len(rows), 4)  # inches: 0.7 below the bars for the axis labels, 0.5 above
    bottom, top = 0.7 / height, 1 - 0.5 / height
    fig = new_figure(13, height, 130)
    times = fig.add_axes((0.25, bottom, 0.45, top - bottom))
    share = fig.add_axes((0.74, bottom, 0.16, top - bottom))
    y = list(range(len(rows)))[::-1]
    labels = []
    for yi, r in zip(y, rows):
        color = _color(r.binding)
        times.barh(yi, r.time_ms, color=color, alpha=0.35, edgecolor="black", linewidth=0.5)
        if r.floor_ms:
            times.barh(yi, r.floor_ms, height=0.45, color=color, edgecolor="black", linewidth=0.5)
        name = r.name.removeprefix(r.name.split(".")[0] + ".") if key == "module" and "." in r.name else r.name
        labels.append(text(middle_cut(name, 48) + (f" ({r.phase})" if r.phase else "")))
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
    share.set_xlabel("% of its roofs (floor / time)")
    total = doc.total_time_ms
    what = "op and phase" if key == "op" else "module (each its own kernels, not its submodules')"
    times.set_title(text(f"{doc.device.name}: GPU time by {what}, the {len(rows)} longest of the "
                         f"{total:,.3f} ms profiled"), fontsize=9, loc="left")
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=_color(level), edgecolor="black", linewidth=0.5, label=f"bound by {roof_name(level)}")
               for level in sorted({r.binding for r in rows if r.binding})]
    if handles:
        times.legend(handles=handles, loc="lower right", fontsize=7, framealpha=1.0)
    return fig
