"""The roofline chart, drawn from a results document (no GPU needed).

Axes are log-log: x the model's arithmetic intensity (FLOP per byte of GMEM requests), y GFLOP/s.
The memory roof (peak DRAM GB/s x AI) meets the FP32 roof at the ridge point; the L2 and SMEM roofs
(theoretical solid, measured dashed) are drawn where known, for the points at those levels. Each verified kernel
is a marker at (model AI, measured GFLOP/s) with its name beside it; the legend on the right gives
each kernel's rate, registers, occupancy and limiter. cuBLAS, which has no traffic model, is a
horizontal line at its measured rate. Kernels that failed are listed, never drawn.

The user's own kernels stand out from the ladder: a large star in a colour of their own, a bold
label. One without a traffic model is drawn at the intensities Nsight Compute counted for it, or,
unprofiled, as a dashed horizontal line at its rate marked "no model".

A tile search (`roofline tune`, dozens of candidates of one kernel) is drawn whole: its fastest
and slowest tiles, the user's kernels and the highlighted ones are named and coloured, the others
are grey points, and the list beside the chart ranks them all.

Labels are placed last (`chart.Scene`): a roof's along its line, a kernel's at the nearest spot
round one of its points that covers no marker, crosses no line and overlaps no other label, with
a leader line when it had to move away. A measured roof within NEAR of its theoretical one shares
its label: the two lines are a few pixels apart, too close for a label each.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import UsageError
from ..model.roofs import intensities
from ..results.schema import Results
from .chart import (
    USER_COLORS,
    check_output,
    kernel_style,
    load_matplotlib,
    new_figure,
    Scene,
    save_atomic,
    text,
)
from .text import l2_note, occupancy_phrase, percent

MODEL_NOTE = ("GMEM points: the analytic model's global-memory requests, i.e. traffic leaving the SM, mostly "
              "served by L2, not measured DRAM bytes: a point can sit above the DRAM roof\nwhen caches save "
              "DRAM traffic. SMEM points: the bytes the model says the shared-memory banks serve (distinct 4-byte "
              "words per warp request, tile stores included).")
MAX_DRAWN = 16  # kernels drawn at most (the whole ladder with a few variants): the fastest ones
MAX_SEARCHED = 60  # the points of a tile search (`roofline tune`) drawn at most: the fastest ones
NEAR = 1.3  # roofs closer than this factor share one label: apart, the two labels would not fit between them
SEARCH_COLORS = {"fastest": "#1a9850", "slowest": "#d73027"}


def _registers(k) -> str:
    """'64 regs', or with spills '32 regs + 1,440 B spilled' (local memory per thread)."""
    regs = f"{k.registers} regs" if k.registers is not None else "regs n/a"
    return regs + (f" + {k.local_bytes:,} B spilled" if getattr(k, "local_bytes", None) else "")


def _legend_text(k) -> str:
    regs = _registers(k)
    mark = " (yours" + (", no model)" if k.model is None else ")") if k.user else ""
    return f"{text(k.name)}{mark}\n{k.gflops:,.0f} GFLOP/s, {regs}, {occupancy_phrase(k.occupancy)}"


def _ranked_text(rank: int, k) -> str:
    regs = _registers(k)
    occ = f"{percent(k.occupancy.occupancy)} %" if k.occupancy is not None else "n/a"
    return f"{rank}. {text(k.name)}  {k.gflops:,.0f} GFLOP/s, {regs}, occupancy {occ}"


def draw(doc: Results, out: Path, measured: bool = False, highlight: list[str] | None = None) -> Path:
    """Draw the roofline of results document `doc` into `out` (.png, .svg or .pdf), written
    atomically; with `measured`, also each kernel's points at the L2 and DRAM bytes Nsight Compute
    counted (kernels that were not profiled have none). Returns `out`. Raises UsageError for a bad
    output path, a document without kernels or without a timed one, figures that cannot be drawn
    on log axes (a corrupt file: see PLOTTABLE), or for `measured` when no kernel was profiled.
    The kernels in `highlight` are drawn bold, the others faded."""
    fmt = check_output(out)
    if not doc.kernels:
        raise UsageError("no kernels in these results; make them with roofline run --all")
    if not any(k.timed for k in doc.kernels):
        failed = "; ".join(f"{k.name}: {k.error or 'not timed'}" for k in doc.kernels[:3])
        raise UsageError(f"no kernel in these results was verified and timed, so there is nothing to draw "
                         f"({failed[:200]})")
    if measured and not any(k.counted for k in doc.kernels):
        raise UsageError("no kernel in these results was profiled; make them with roofline run --all --profile")
    fig, _ = render(doc, measured, highlight)
    save_atomic(fig, Path(out), fmt)
    return Path(out)


def label_boxes(doc: Results, measured: bool = False) -> list:
    """The on-canvas bounding boxes (matplotlib Bbox, pixels) of the kernel labels, after
    placement: for checking that no two overlap."""
    from matplotlib.text import Text

    fig, texts = render(doc, measured)
    renderer = fig.canvas.get_renderer()
    return [Text.get_window_extent(t, renderer) for t in texts]


def render(doc: Results, measured: bool = False, highlight: list[str] | None = None):
    """Build the chart for a results document; returns (Figure, kernel name labels). A tile
    search (`roofline tune`) draws every candidate (up to MAX_SEARCHED) and names only the notable
    ones: the fastest, the slowest, the user's and those in `highlight`; the rest are grey points
    and the side list ranks them all."""
    return _render(doc, measured, set(highlight or ()))


LEVEL_MARKERS = {"GMEM (model)": "o", "SMEM (model)": "^", "L2 (counted)": "s", "DRAM (counted)": "D"}


# Log axes draw values in this range; anything outside comes from a corrupt file (say, bytes of
# 1e-300 that make an intensity infinite), which is refused rather than drawn.
PLOTTABLE = (1e-12, 1e18)


def _plottable(value: float, what: str) -> float:
    if not (math.isfinite(value) and PLOTTABLE[0] <= value <= PLOTTABLE[1]):
        raise UsageError(f"{what} comes to {value:g}, which cannot be drawn; the results file looks corrupt")
    return value


def _points(k, measured: bool, flops: float) -> list[tuple[str, float]]:
    counted = k.counted if measured or k.model is None else None  # no model: the counters are all it has
    return list(intensities(k.model, counted, flops).items())


def _render(doc: Results, measured: bool, highlight: set[str] = frozenset()):
    load_matplotlib()
    from matplotlib.lines import Line2D

    dev, prob, ref = doc.device, doc.problem, doc.reference
    roofs = dev.roofs
    peak, bw = roofs.fp32_gflops, roofs.dram_gbps
    ridge = roofs.ridge_point
    timed = [k for k in doc.kernels if k.timed]
    failed = [k.name for k in doc.kernels if not k.timed]
    search = doc.tune is not None
    ranked = sorted(timed, key=lambda k: -k.gflops)
    fastest = {k.name for k in ranked[:MAX_SEARCHED if search else MAX_DRAWN]}
    good = [k for k in timed if k.name in fastest]  # ladder order kept
    left_out = len(timed) - len(good)
    points = {k.name: _points(k, measured, prob.problem.flops) for k in good}
    for k in good:
        _plottable(k.gflops, f"{k.name}: GFLOP/s")
        for level, ai in points[k.name]:
            _plottable(ai, f"{k.name}: arithmetic intensity at {level}")
    for roof in roofs.all():
        _plottable(roof.value, f"the {roof.level}{' measured' if roof.measured else ''} ceiling")
    _plottable(ridge, "the ridge point")

    ais = [ai for pts in points.values() for _, ai in pts] or [ridge]
    ridges = [ridge] + ([peak / roofs.smem_gbps] if roofs.smem_gbps else [])
    x_lo = min(min(ais), min(ridges)) / 4
    x_hi = max(max(ais), max(ridges)) * 8
    ys = [k.gflops for k in good] + [ref.gflops]
    y_lo = min(min(ys), x_lo * bw) / 3
    y_hi = max(peak, max(ys)) * 2.5

    rows = len(good) if search else 0  # a search lists one kernel a line beside the chart
    fig = new_figure(14, max(7.5, 2.2 + 0.16 * rows), 120)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)

    # Roofs: theoretical solid, measured dashed; each memory roof rises to the FP32 peak.
    lines = [("DRAM", bw, "tab:blue", "-")]
    if roofs.measured_dram_gbps:
        lines.append(("DRAM measured", roofs.measured_dram_gbps, "tab:blue", "--"))
    if roofs.l2_gbps:
        lines.append(("L2", roofs.l2_gbps, "tab:purple", "-"))
    if roofs.measured_l2_gbps:
        lines.append(("L2 measured", roofs.measured_l2_gbps, "tab:purple", "--"))
    if roofs.smem_gbps:
        lines.append(("SMEM", roofs.smem_gbps, "tab:green", "-"))
    if roofs.measured_smem_gbps:
        lines.append(("SMEM measured", roofs.measured_smem_gbps, "tab:green", "--"))
    for _, gbps, color, style in lines:
        ax.plot([x_lo, peak / gbps], [x_lo * gbps, peak], color=color, ls=style, lw=1.8)
    ax.plot([min(ridges), x_hi], [peak, peak], color="tab:red", lw=2)
    fm = roofs.measured_fp32_gflops
    if fm:
        ax.plot([min(ridges), x_hi], [fm, fm], color="tab:red", ls="--", lw=1.5)
    ax.plot([ridge], [peak], "o", color="black", ms=5)
    ax.axhline(ref.gflops, color="0.3", ls=":", lw=1.2)

    texts, handles, levels_used, flat, anchors = [], [], set(), [], {}
    ladder = [k for k in good if not k.user]
    users = [k for k in good if k.user]
    rank = {k.name: i + 1 for i, k in enumerate(ranked)}
    notable = _notable(ranked, good, highlight) if search else {}
    for k in good:
        user = k.user
        if search:
            color = notable.get(k.name, "0.6")
        else:
            color = USER_COLORS[users.index(k) % len(USER_COLORS)] if user else \
                kernel_style(k.name, ladder.index(k), len(ladder))["color"]
        alpha = 0.25 if highlight and k.name not in highlight and not search else 0.9
        named = not search or k.name in notable
        y = k.gflops
        pts = points[k.name]
        if not pts:  # a user kernel with no model and no counters: its rate only
            ax.axhline(y, color=color, ls="--", lw=1.6, zorder=2)
            flat.append((ax.text(0, 0, f"{text(k.name)} (no model: --profile gives its intensity)", fontsize=9,
                                 fontweight="bold", color=color), y))
        if len(pts) > 1:
            xs = sorted(ai for _, ai in pts)
            ax.plot([xs[0], xs[-1]], [y, y], color=color, lw=1.6 if user else 0.9 if named else 0.6,
                    alpha=min(alpha, 0.7 if named else 0.4), zorder=2 if named else 1)
        for level, ai in pts:
            levels_used.add(level)
            ax.plot([ai], [y], LEVEL_MARKERS[level], color=color, ms=8 if named else 6, mec="black" if named else "0.3",
                    mew=0.6 if named else 0.4, alpha=alpha, zorder=3 if named else 2)
            if user:  # a star over each of its points
                ax.plot([ai], [y], "*", color=color, ms=20, mec="black", mew=0.8, alpha=alpha, zorder=4)
        if pts and named:
            label = f"#{rank[k.name]} {text(k.name)}" if search else text(k.name)
            bold = (user and not highlight) or k.name in highlight or (search and rank[k.name] == 1)
            anchors[len(texts)] = [(ai, y) for _, ai in pts]  # it may point at any of its points
            texts.append(ax.annotate(label, (pts[0][1], y), xytext=(9, 0), textcoords="offset points",
                                     va="center", fontsize=10 if user else 8,
                                     fontweight="bold" if bold else "normal",
                                     color="0.6" if alpha < 0.5 else (color if user else "black"),
                                     arrowprops=dict(arrowstyle="-", lw=0.6, color="0.5", shrinkA=0, shrinkB=5)))
        if search:
            handles.append(Line2D([], [], ls="", marker="*" if user else "o", color=color, mec="black", mew=0.5,
                                  ms=7, label=_ranked_text(rank[k.name], k)))
        else:
            handles.append(Line2D([], [], ls="", marker="*" if user else "o", color=color, mec="black", mew=0.6,
                                  ms=14 if user else 8, alpha=alpha, label=_legend_text(k)))
    if search:  # the side list in rank order
        order = sorted(range(len(good)), key=lambda i: rank[good[i].name])
        handles = [handles[i] for i in order]
        listed = [good[i] for i in order]
    keys = [Line2D([], [], ls="", marker=m, color="0.5", mec="black", ms=7, label=lvl)
            for lvl, m in LEVEL_MARKERS.items() if lvl in levels_used]
    keys += [Line2D([], [], color=c, ls=st, label=f"{name} {gbps:,.0f} GB/s") for name, gbps, c, st in lines]
    keys.append(Line2D([], [], color="tab:red", ls="-", label=f"FP32 peak {peak:,.0f} GFLOP/s"))
    if fm:
        keys.append(Line2D([], [], color="tab:red", ls="--", label=f"FP32 measured {fm:,.0f} GFLOP/s"))
    ax.add_artist(ax.legend(handles=keys, loc="lower right", fontsize=8, framealpha=1.0,
                            title="points per level; roofs: solid theoretical, dashed measured",
                            title_fontsize=8))
    if handles and search:
        side = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False,
                         labelspacing=0.35, handletextpad=0.3, title=f"{len(good)} tiles, fastest first "
                         "(GFLOP/s measured, median)", title_fontsize=8, alignment="left")
        for t, k in zip(side.get_texts(), listed):
            if k.name in notable:
                t.set_fontweight("bold")
    elif handles:  # the kernel legend last: it is the one tight_layout makes room for
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                  frameon=False, labelspacing=1.0, title="measured (median)", title_fontsize=9)

    ax.set_xlabel("arithmetic intensity (FLOP per byte at each level)")
    ax.set_ylabel("GFLOP/s (measured, median)")
    source = "NVML" if "NVML" in (dev.source or "NVML") else "datasheet"
    what = f"tile search of {text(doc.tune.kernel)}, " if search else ""
    ax.set_title(f"{text(dev.name)}: SGEMM {prob.m}x{prob.n}x{prob.k} FP32, {what}hierarchical roofline "
                 f"(roofs from {source}{l2_note(doc)})")
    ax.grid(True, which="major", ls="-", lw=0.4, color="0.85")
    ax.grid(True, which="minor", ls="-", lw=0.2, color="0.93")
    note = _note(good, measured)
    if search:
        note += ("\nNamed on the chart: the fastest and the slowest tile" + (", the ones asked for with --highlight"
                 if highlight else "") + "; the other tiles are the grey points, ranked in the list.")
    if left_out:
        note += f"\nThe {len(good)} fastest of {len(timed)} kernels are drawn."
    if failed:
        shown = ", ".join(text(n) for n in failed[:8]) + (f" and {len(failed) - 8} more" if len(failed) > 8 else "")
        note += f"\nNot drawn, failed verification or not timed: {shown}."
    fig.text(0.01, 0.005, note, fontsize=8, color="0.35", ha="left", va="bottom")
    for t in texts + [t for t, _ in flat]:  # placed inside the axes afterwards: no part of the layout
        t.set_in_layout(False)
    fig.tight_layout(rect=(0, (0.03 + 0.018 * (note.count("\n") + 1)) * 7.5 / fig.get_figheight(), 1, 1))

    # Labels last, once the layout is final: the roofs' along their lines, then the kernels'.
    peak_label = ax.text(0, 0, f"FP32 peak {peak:,.0f} GFLOP/s" + (f" (measured {fm:,.0f})" if fm and peak / fm < NEAR
                                                                    else ""), color="tab:red")
    ref_label = ax.text(0, 0, f"cuBLAS (reference) {ref.gflops:,.0f} GFLOP/s", color="0.3", fontsize=9)
    ridge_label = ax.annotate(f"ridge {ridge:.1f} FLOP/B", (ridge, peak), xytext=(0, 14), textcoords="offset points",
                              fontsize=9, arrowprops=dict(arrowstyle="-", lw=0.6, color="0.5", shrinkA=0, shrinkB=4))
    roof_labels = _roof_labels(ax, lines)
    placed = [peak_label, ref_label, ridge_label] + [t for t, *_ in roof_labels] + [t for t, _ in flat] + texts
    scene = Scene(fig, ax, skip=placed)
    scene.place_on_line(peak_label, (min(ridges), peak), (x_hi, peak), fractions=[0.98, 0.85, 0.7, 0.55, 0.4])
    if fm and peak / fm >= NEAR:
        scene.place_on_line(ax.text(0, 0, f"FP32 measured {fm:,.0f} GFLOP/s", color="tab:red", fontsize=9),
                            (min(ridges), fm), (x_hi, fm), fractions=[0.98, 0.85, 0.7], sides=(-1, 1))
    scene.place_on_line(ref_label, (x_lo, ref.gflops), (x_hi, ref.gflops), fractions=[0.02 + 0.06 * i for i in range(17)])
    for t, y in flat:
        scene.place_on_line(t, (x_lo, y), (x_hi, y), fractions=[0.98, 0.8, 0.6, 0.4])
    for t, gbps, side in roof_labels:
        scene.place_on_line(t, (x_lo, x_lo * gbps), (peak / gbps, peak), sides=(side, -side),
                            fractions=[0.05 + 0.05 * i for i in range(18)])
    scene.place_annotations([ridge_label] + texts, anchors={texts[i]: xy for i, xy in anchors.items()})
    return fig, texts


def _notable(ranked: list, good: list, highlight: set[str]) -> dict:
    """The kernels a tile search names on its chart, with their colours: the fastest, the
    slowest, the user's and the highlighted ones."""
    drawn = [k for k in ranked if k in good]
    colors = {drawn[0].name: SEARCH_COLORS["fastest"]}
    if len(drawn) > 1:
        colors[drawn[-1].name] = SEARCH_COLORS["slowest"]
    others = [k.name for k in drawn if (k.user or k.name in highlight) and k.name not in colors]
    for i, name in enumerate(others):
        colors[name] = USER_COLORS[i % len(USER_COLORS)]
    return colors


def _roof_labels(ax, lines) -> list:
    """One label per memory roof, (text, GB/s of the line it goes on, side): a measured roof
    within NEAR of its theoretical one shares the theoretical one's label, written above the
    higher of the two; otherwise theoretical above its line, measured below."""
    out, done = [], set()
    for name, gbps, color, style in lines:
        if name in done:
            continue
        level = name.split()[0]
        twin = next(((n, g) for n, g, _, st in lines if n != name and n.split()[0] == level), None)
        if twin and max(gbps, twin[1]) / min(gbps, twin[1]) < NEAR:
            done.add(twin[0])
            theory, measured = (gbps, twin[1]) if style == "-" else (twin[1], gbps)
            out.append((ax.text(0, 0, f"{level} {theory:,.0f} GB/s (measured {measured:,.0f})", color=color,
                                fontsize=9), max(gbps, twin[1]), 1))
        else:
            out.append((ax.text(0, 0, f"{name} {gbps:,.0f} GB/s", color=color, fontsize=9), gbps,
                        1 if style == "-" else -1))
    return out


def _note(good: list, measured: bool) -> str:
    note = MODEL_NOTE
    profiled = [k for k in good if k.counted and k.model is not None]
    if measured and profiled:
        k = next((k for k in profiled if k.name == "register_tiling_2d"), profiled[-1])
        me = k.counted
        note += (f"\nMeasured points: bytes Nsight Compute counted. {text(k.name)}: model "
                 f"{k.model.gmem_bytes / 1e9:.2f} GB, L2 {(me.l2_bytes or 0) / 1e9:.2f} GB, "
                 f"DRAM {(me.dram_bytes or 0) / 1e9:.2f} GB.")
    return note
