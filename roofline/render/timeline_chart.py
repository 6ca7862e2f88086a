"""A profile's kernels over their runs (`plot PROFILE --kind timeline`), from the PM-sampling
timelines the profile records (`results.timeline`): one row per kernel, the longest first.

Left, log-log: the kernel's trajectory on the roofline of its precision, one point per interval
(x its FLOPs per DRAM byte, y its FLOP/s), coloured by time from the first interval (dark) to the
last (light, the colour bar), the whole-kernel point a black star among them; the compute roof of
its precision at the kernel's mean clock and the DRAM roof, theoretical (solid) and measured
(dashed) where the profile has them, and dotted the compute roof at the highest clock an interval
ran at (the clock moves over a run: an interval above the mean clock's roof ran faster than it).
Right: the share of each unit's peak over the run (tensor pipe, FMA pipe, DRAM, L2, L1/shared, those
the kernel used), the share of the SMs busy as a grey band, and the phases (`model.timeline.phases`)
as spans named with their share of the time.
"""

from __future__ import annotations

from pathlib import Path

from ..model.roofs import COMPUTE_LEVEL
from ..results.profile import LAUNCH_LABEL
from ..model.timeline import ROOF_NAMES
from .chart import check_output, new_figure, save_atomic, text
from .text import label_cut

TOP = 6
UNIT_COLORS = {"tensor": "#d62728", "fma": "#ff7f0e", "fp64": "#8c564b", "dram": "#1f77b4", "l2": "#17becf",
               "l1": "#2ca02c"}
PHASE_COLORS = {"fill": "#fdd0a2", "steady": "#ffffff", "drain": "#c7e9c0", "tail": "#c6dbef"}
LABELLED_FROM = 0.02  # a phase is named over the timeline from this share of the time
SHOWN_FROM = 0.02  # a unit that never reaches this share of its peak is left off the timeline


def timed(doc, top: int = TOP, names: list[str] | None = None) -> list:
    """The kernels the chart draws: the `top` longest of results file `doc` (a profile or a run)
    that record a timeline (`results.timeline.TimedKernel`), or those `names` names (a kernel's
    name or its label), in that order."""
    found = doc.timed_kernels()
    if names:
        return [k for n in names for k in found if n in (k.name, k.label) or without_launch(n) == k.label]
    return found[:top]


def without_launch(name: str) -> str:
    """`name` without the launch configuration compare's tables add to every kernel of a profile
    (`results.profile.launch_label`), so that a label copied from them names the kernel."""
    return LAUNCH_LABEL.sub("", name)


def draw(doc, out: Path, top: int = TOP, names: list[str] | None = None) -> Path:
    """Draw `doc`'s `top` longest kernels with a timeline (or those `names` names) into `out` (.png,
    .svg or .pdf), atomically. Returns `out`. Raises UsageError for a bad output path, ValueError
    where no kernel has a timeline."""
    fmt = check_output(out)
    fig = render(doc, top, names)
    save_atomic(fig, out, fmt)
    return Path(out)


def render(doc, top: int = TOP, names: list[str] | None = None):
    """The chart (a matplotlib Figure) of `doc`'s `top` longest kernels with a timeline (or those
    `names` names)."""
    from matplotlib import cm

    kernels = timed(doc, top, names)
    if not kernels:
        raise ValueError("no kernel of the profile records a timeline")
    rows = len(kernels)
    height = 0.55 + 3.0 * rows  # inches: 3.0 a row (0.55 of it below the axes for their labels), 0.55 for the title
    fig = new_figure(15, height, 120)
    for row, k in enumerate(kernels):
        tl = k.timeline
        iv = tl.intervals()
        bottom = 1 - (0.55 + 3.0 * (row + 1) - 0.55) / height
        tall = 2.2 / height
        roof = fig.add_axes((0.06, bottom, 0.30, tall))
        over = fig.add_axes((0.43, bottom, 0.46, tall))
        key = k.key
        work = iv.flops.get(key, [0.0] * len(iv)) if key else [0.0] * len(iv)  # none where the samples are cut short
        dram = iv.nbytes.get("dram", [0.0] * len(iv))
        xs, ys, cs = [], [], []
        last = max(iv.t_us[-1], 1e-9)
        for i in range(len(iv)):
            if work[i] > 0 and dram[i] > 0:
                xs.append(work[i] / dram[i])
                ys.append(work[i] / (iv.dt_us[i] * 1e-6))
                cs.append(iv.t_us[i] / last)
        roofs = k.roofs
        level = COMPUTE_LEVEL.get(key or "", "FP32")
        theory = dict(roofs.compute).get(level) or (roofs.fp32_gflops if level == "FP32" else None)
        measured = dict(roofs.measured_compute).get(level) or (roofs.measured_fp32_gflops if level == "FP32" else None)
        if xs:
            lo, hi = min(xs + [1.0]) / 2, max(xs + [1e3]) * 2
            dots = roof.scatter(xs, ys, c=cs, cmap=cm.viridis, s=6, linewidths=0, zorder=3, vmin=0, vmax=1)
            bar = fig.colorbar(dots, ax=roof, pad=0.01, fraction=0.04, ticks=[0, 1])
            bar.ax.set_yticklabels([text("start"), text("end")], fontsize=7)
            whole_x = k.dram_intensity
            if whole_x and k.gflops:
                roof.scatter([whole_x], [k.gflops * 1e9], marker="*", s=140, color="black", zorder=4,
                             label="whole kernel")
            most = doc.device.max_sm_clock_mhz  # an interval's estimate may pass the GPU's top clock by a little
            mean = min(k.clock_mhz, most) if k.clock_mhz and most else k.clock_mhz
            if theory and mean and k.clock_mhz and mean < k.clock_mhz:  # read at the top, as show reads it
                theory *= mean / k.clock_mhz
            at = f" at {mean / 1e3:.2f} GHz, its mean" if mean else ""
            for peak, style, what in ((theory, "-", f"{level} peak{at}"), (measured, "--", f"{level} measured{at}")):
                if peak:
                    roof.plot([lo, hi], [peak * 1e9] * 2, style, color="#444444", linewidth=1, label=text(what))
            clocks = [c for c in iv.clock_ghz if c]
            clocks = [min(c, most / 1e3) for c in clocks] if most else clocks
            if theory and mean and clocks and max(clocks) * 1e3 > 1.03 * mean:
                # the roof at the highest clock an interval ran at: where a point above the mean clock's roof is read
                top = theory * max(clocks) * 1e3 / mean
                roof.plot([lo, hi], [top * 1e9] * 2, ":", color="#444444", linewidth=1,
                          label=text(f"{level} peak at {max(clocks):.2f} GHz, its top"))
            for bw, style, what in ((roofs.dram_gbps, "-", "DRAM peak"), (roofs.measured_dram_gbps, "--", "DRAM measured")):
                if bw:  # up to the ridge point with the compute roof, as a roofline is drawn
                    ridge = min(hi, (theory or measured) / bw) if (theory or measured) else hi
                    roof.plot([lo, ridge], [lo * bw * 1e9, ridge * bw * 1e9], style, color=UNIT_COLORS["dram"],
                              linewidth=1, label=text(what))
            roof.set_xscale("log")
            roof.set_yscale("log")
            roof.set_xlim(lo, hi)
            # headroom above the highest roof or point for the legend, clear of every point
            top_y = max(ys + [(theory or 0) * 1e9 * max([c * 1e3 / mean for c in clocks] + [1.0])
                              if mean else (theory or 0) * 1e9, (measured or 0) * 1e9]) * 40
            roof.set_ylim(top_y / 1e5, top_y)
            roof.legend(loc="upper left", fontsize=6, frameon=False, ncol=2)
        else:
            roof.text(0.5, 0.5, text(f"sampled the first {100 * tl.covered:.0f} % of its run:\nits counts are not split "
                                     "over it" if tl.cut_short else "no counted work and DRAM bytes\nto place its "
                                     "intervals"), ha="center",
                      va="center", transform=roof.transAxes, fontsize=8)
            roof.set_xticks([])
            roof.set_yticks([])
        roof.set_xlabel(text("FLOP per DRAM byte"), fontsize=8)
        roof.set_ylabel(text(f"{level} FLOP/s"), fontsize=8)
        roof.tick_params(labelsize=7)
        roof.set_title(text(label_cut(k.label, 64)), fontsize=9, loc="left")
        t = [x + d / 2 for x, d in zip(iv.t_us, iv.dt_us)]
        over.fill_between(t, 0, [100 * b for b in iv.busy], color="#bbbbbb", alpha=0.5, step="mid",
                          label="SMs busy", linewidth=0)
        for unit, values in iv.shares.items():
            if max(values, default=0.0) >= SHOWN_FROM:
                over.plot(t, [100 * v for v in values], color=UNIT_COLORS.get(unit, "#7f7f7f"), linewidth=0.8,
                          label=ROOF_NAMES.get(unit, unit))
        found = tl.phases()
        named = []  # the phase names written over the timeline
        for p in found:
            start, end = iv.t_us[p.first], iv.t_us[p.last] + iv.dt_us[p.last]
            if p.name != "steady":
                over.axvspan(start, end, color=PHASE_COLORS[p.name], alpha=0.6, zorder=0, linewidth=0)
            if p.share >= LABELLED_FROM:  # a shorter phase is in `show`'s table, not named here over its neighbour
                # a phase at either end named from that end inward, so its name stays inside the axes
                x, ha = ((start, "left") if p.first == 0 else (end, "right") if p.last == len(iv) - 1
                         else ((start + end) / 2, "center"))
                named.append(over.text(x, 104, text(f"{p.name} {100 * p.share:.0f}%"), ha=ha, va="bottom", fontsize=7,
                                       clip_on=False))
        over.set_xlim(0, iv.t_us[-1] + iv.dt_us[-1])
        over.set_ylim(0, 115)
        _unstacked(fig, named)  # with the axes' limits set, where the names will stand
        over.set_yticks([0, 25, 50, 75, 100])
        over.set_ylabel(text("% of each unit's peak (Nsight Compute)"), fontsize=8)
        over.set_xlabel(text("µs from the first busy interval" + (f" (the first {100 * tl.covered:.0f} % of the run "
                                                                  "sampled)" if tl.cut_short else "")), fontsize=8)
        over.tick_params(labelsize=7)
        from matplotlib.patches import Patch
        handles, labels = over.get_legend_handles_labels()
        for name in [n for n in ("fill", "drain", "tail") if any(p.name == n for p in found)]:
            handles.append(Patch(color=PHASE_COLORS[name], alpha=0.6))
            labels.append(text(name if name != "tail" else "tail wave"))
        over.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    fig.suptitle(text(f"{doc.device.name}: kernels over their runs (Nsight Compute PM sampling; colour: time, "
                      "dark to light)"), fontsize=10, y=1 - 0.2 / height)
    return fig


def _unstacked(fig, texts: list) -> None:
    """Phase names that would overlap (two short phases side by side at an end: 'drain 2%' beside
    'tail 3%') put one above the other: a name that meets the one before it goes a row up."""
    if len(texts) < 2:
        return
    renderer = fig.canvas.get_renderer()
    placed = [texts[0].get_window_extent(renderer)]
    for t in texts[1:]:
        box = t.get_window_extent(renderer)
        if any(box.overlaps(b) for b in placed):
            t.set_y(t.get_position()[1] + 6)  # one row up, in the axes' % units (its top is 115)
            box = t.get_window_extent(renderer)
        placed.append(box)
