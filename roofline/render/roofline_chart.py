"""The roofline chart, drawn from a results document (no GPU needed).

Axes are log-log: x the model's arithmetic intensity at each level (FLOP per byte of GMEM requests,
which the L2 serves; of DRAM bytes; of SMEM bytes), y GFLOP/s. The DRAM roof (peak GB/s x AI) meets
the FP32 roof at the ridge point; the L2 and SMEM roofs (theoretical solid, measured dashed: the
ceilings the verdicts read, `Results.roofs`) are drawn where known, for the points at those levels. Each verified kernel
is a marker at (model AI, measured GFLOP/s) with its name beside it; the legend on the right gives
each kernel's rate, registers, occupancy and limiter. cuBLAS, which has no traffic model, is a
horizontal line at its measured rate. Kernels that failed are listed, never drawn.

The user's own kernels stand out from the ladder: a large star in a colour of their own, a bold
label. One without a traffic model is drawn at the intensities Nsight Compute counted for it, or,
unprofiled, as a dashed horizontal line at its rate marked "no model".

A tile search (`roofline run --tune`, dozens of candidates of one kernel) is drawn whole: its fastest
and slowest tiles, the user's kernels and the highlighted ones are named and coloured, the others
are grey points, and the list beside the chart ranks them all.

What is drawn where, in which colour and marker, and under which roofs and title is the chart's
scene (`scene.run_scene`, which the HTML report draws too); this module lays it out on a figure.

Labels are placed last (`layout.Layout`): a roof's along its line, a kernel's at the nearest spot
round one of its points that covers no marker, crosses no line and overlaps no other label, with
a leader line when it had to move away. A measured roof within NEAR of its theoretical one shares
its label: the two lines are a few pixels apart, too close for a label each.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import UsageError
from ..model.roofs import ridge_point
from ..model.precision import PRECISIONS
from ..results.schema import Results
from .chart import check_output, load_matplotlib, new_figure, save_atomic, text
from .layout import OPAQUE, Layout
from .text import occupancy_phrase, percent
from .scene import Scene, problem_title, run_scene
from .style import RUN_MARKERS, compute_color

MODEL_NOTE = ("GMEM points: the analytic model's global-memory requests, which the L2 serves: read them against the "
              "L2 roof. DRAM (model) points: the bytes the grid's waves fetch\nfrom DRAM (compulsory bytes and the "
              "panels the L2 cannot keep). SMEM points: the bytes the model says the shared-memory banks serve "
              "(distinct 4-byte words per warp request, tile stores included).")
L1_NOTE = ("L1 points (a kernel that reads A and B from global memory directly): the 32-byte sectors its L1 serves, "
           "read against the SMEM roof\n(the same data path), in place of its GMEM requests, most of which the L1 "
           "serves.")


def model_note(kernels) -> str:
    """The chart's note on its points: MODEL_NOTE, and L1_NOTE where one of `kernels` (results
    records) has an L1 point (`roofs.intensities`)."""
    return MODEL_NOTE + ("\n" + L1_NOTE if any(k.model is not None and k.model.l1_bytes for k in kernels) else "")


MAX_DRAWN = 16  # kernels drawn at most (the whole ladder with a few variants): the fastest ones
MAX_SEARCHED = 60  # the points of a tile search (`roofline run --tune`) drawn at most: the fastest ones
NEAR = 1.3  # roofs closer than this factor share one label: apart, the two labels would not fit between them


def _registers(k) -> str:
    """'64 regs', or with local memory '32 regs + 1,440 B local' (bytes per thread: its stack frame, register
    spills and arrays kept in memory, as ptxas and the kernel's attributes give it; not the spills alone)."""
    regs = f"{k.registers} regs" if k.registers is not None else "regs n/a"
    return regs + (f" + {k.local_bytes:,} B local" if getattr(k, "local_bytes", None) else "")


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
    _check_drawable(doc, measured)
    fig, _ = render(doc, measured, highlight)
    save_atomic(fig, Path(out), fmt)
    return Path(out)


def draw_many(docs: list[Results], out: Path, measured: bool = False, highlight: list[str] | None = None) -> Path:
    """Draw runs in several precisions (`store.by_precision`: an FP32 ladder and a BF16 one, at
    one size or not) on one roofline into `out`, written atomically: the memory roofs, the FP32
    roof and each run's compute roof, each run's kernels in a colour family of their own, each
    kernel at its rate, read against the roof of its own precision. Returns `out`. Raises
    UsageError as `draw` does, for any of the documents."""
    fmt = check_output(out)
    for doc in docs:
        _check_drawable(doc, measured and len(docs) == 1)
    if measured and not any(k.counted for doc in docs for k in doc.kernels):
        raise UsageError("no kernel in these results was profiled; make them with roofline run --all --profile")
    fig, _ = render_many(docs, measured, highlight)
    save_atomic(fig, Path(out), fmt)
    return Path(out)


def render_many(docs: list[Results], measured: bool = False, highlight: list[str] | None = None):
    """The chart of several runs of one device (`draw_many`); returns (Figure, kernel name labels)."""
    return _render(docs, measured, set(highlight or ()))


def _check_drawable(doc: Results, measured: bool) -> None:
    if not doc.kernels:
        raise UsageError("no kernels in these results; make them with roofline run --all")
    if not any(k.timed for k in doc.kernels):
        failed = "; ".join(f"{k.name}: {k.error or 'not timed'}" for k in doc.kernels[:3])
        raise UsageError(f"no kernel in these results was verified and timed, so there is nothing to draw "
                         f"({failed[:200]})")
    if measured and not any(k.counted for k in doc.kernels):
        raise UsageError("no kernel in these results was profiled; make them with roofline run --all --profile")


def label_boxes(doc: Results, measured: bool = False) -> list:
    """The on-canvas bounding boxes (matplotlib Bbox, pixels) of the kernel labels, after
    placement: for checking that no two overlap."""
    from matplotlib.text import Text

    fig, texts = render(doc, measured)
    renderer = fig.canvas.get_renderer()
    return [Text.get_window_extent(t, renderer) for t in texts]


def render(doc: Results, measured: bool = False, highlight: list[str] | None = None):
    """Build the chart for a results document; returns (Figure, kernel name labels). A tile
    search (`roofline run --tune`) draws every candidate (up to MAX_SEARCHED) and names only the notable
    ones: the fastest, the slowest, the user's and those in `highlight`; the rest are grey points
    and the side list ranks them all."""
    return _render([doc], measured, set(highlight or ()))


LEVEL_MARKERS = {level: marker for level, (marker, _) in RUN_MARKERS.items()}


# Log axes draw values in this range; anything outside comes from a corrupt file (say, bytes of
# 1e-300 that make an intensity infinite), which is refused rather than drawn.
PLOTTABLE = (1e-12, 1e18)


def _plottable(value: float, what: str) -> float:
    if not (math.isfinite(value) and PLOTTABLE[0] <= value <= PLOTTABLE[1]):
        raise UsageError(f"{what} comes to {value:g}, which cannot be drawn; the results file looks corrupt")
    return value


def _compute_roofs(scene: Scene) -> list[tuple[str, float, float | None, str]]:
    """The scene's compute roofs, highest first: (level, theoretical GFLOP/s, measured GFLOP/s or None,
    what the measured one is: 'measured', 'FP16 cuBLAS' or 'best seen': `scene.RoofLine.borrowed`)."""
    lines = scene.compute()
    out = []
    for r in lines:
        if not r.measured:
            m = next((m for m in lines if m.measured and m.level == r.level), None)
            out.append((r.level, r.value, m.value if m else None, (m.borrowed if m else None) or "measured"))
    return out


def _render(docs: list[Results], measured: bool, highlight: set[str] = frozenset()):
    load_matplotlib()
    from matplotlib.lines import Line2D

    doc = docs[0]
    many = len(docs) > 1
    dev = doc.device
    roofs = dev.roofs
    bw = roofs.dram_gbps
    search = doc.tune is not None and not many
    scene = run_scene(docs, measured, highlight, most=MAX_SEARCHED if search else MAX_DRAWN)
    compute = _compute_roofs(scene)
    peak = compute[0][1]  # the highest compute roof: the memory roofs rise to it
    ridge = ridge_point(peak, bw)
    timed = [sum(1 for k in d.kernels if k.timed) for d in docs]
    failed = [k.name for d in docs for k in d.kernels if not k.timed]
    drawn = scene.kernels()  # each drawn kernel's points, the shown ones with an intensity
    for g in drawn:
        _plottable(g[0].y, f"{g[0].kernel}: GFLOP/s")
        for p in g:
            if p.x is not None and p.shown:
                _plottable(p.x, f"{p.kernel}: arithmetic intensity at {p.level}")
    left_out = sum(timed) - len(drawn)
    for roof in roofs.all():
        _plottable(roof.value, f"the {roof.level}{' measured' if roof.measured else ''} ceiling")
    _plottable(ridge, "the ridge point")

    ais = [p.x for p in scene.points if p.x is not None and p.shown] or [ridge]
    ridges = [ridge_point(value, bw) for _, value, _, _ in compute] + ([peak / roofs.smem_gbps] if roofs.smem_gbps else [])
    x_lo = min(min(ais), min(ridges)) / 4
    x_hi = max(max(ais), max(ridges)) * (12 if many else 8)  # several: room right of the top ridge for labels
    ys = [g[0].y for g in drawn] + [d.reference.gflops for d in docs]
    y_lo = min(min(ys), x_lo * bw) / 3
    y_hi = max(peak, max(ys)) * (5 if many else 2.5)  # several compute roofs: room for their labels above

    rows = len(drawn) if search else 0  # a search lists one kernel a line beside the chart
    if many:  # one line per kernel and a heading per run in the list beside the chart
        rows = len(drawn) + 2 * len(docs)
    fig = new_figure(14, max(9.0 if many else 7.5, 2.2 + 0.16 * rows), 120)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)

    # Roofs: theoretical solid, measured dashed; each memory roof rises to the highest compute roof.
    lines = [(r.level + (f" {r.borrowed}" if r.borrowed else " measured" if r.measured else ""), r.value, r.color, r.style)
             for r in scene.memory()]
    for _, gbps, color, style in lines:
        ax.plot([x_lo, peak / gbps], [x_lo * gbps, peak], color=color, ls=style, lw=1.8)
    fastest_bw = max(gbps for _, gbps, _, _ in lines)
    for level, value, found, _ in compute:
        color = compute_color(level)
        ax.plot([value / fastest_bw if many else min(ridges), x_hi], [value, value], color=color, lw=2)
        if found:
            ax.plot([found / fastest_bw if many else min(ridges), x_hi], [found, found], color=color, ls="--", lw=1.5)
        ax.plot([ridge_point(value, bw)], [value], "o", color="black", ms=5)
    for d in docs:
        ax.axhline(d.reference.gflops, color="0.3", ls=":", lw=1.2)

    texts, handles, levels_used, flat, anchors, listed = [], [], set(), [], {}, []
    for j, d in enumerate(docs):
        mine = scene.kernels(j)
        if many:
            handles.append(Line2D([], [], ls="", marker="", label=_run_heading(d, timed[j], len(mine), bw)))
        for g in mine:
            p = g[0]
            k = d.kernels[p.index]
            user, color, named, y = p.user, p.color, p.named, p.y
            listed.append((p, k))
            alpha = 0.25 if p.faded and not search else 0.9
            pts = [q for q in g if q.x is not None and q.shown]
            if not pts:  # a user kernel with no model and no counters: its rate only
                ax.axhline(y, color=color, ls="--", lw=1.6, zorder=2)
                flat.append((ax.text(0, 0, f"{text(k.name)} (no model: --profile gives its intensity)", fontsize=9,
                                     fontweight="bold", color=color), y))
            if len(pts) > 1:
                xs = sorted(q.x for q in pts)
                ax.plot([xs[0], xs[-1]], [y, y], color=color, lw=1.6 if user else 0.9 if named else 0.6,
                        alpha=min(alpha, 0.7 if named else 0.4), zorder=2 if named else 1)
            for q in pts:
                levels_used.add(q.level)
                ax.plot([q.x], [y], q.marker, color=color, ms=8 if named else 6,
                        mec="black" if named else "0.3", mew=0.6 if named else 0.4, alpha=alpha,
                        zorder=3 if named else 2)
                if user:  # a star over each of its points
                    ax.plot([q.x], [y], "*", color=color, ms=20, mec="black", mew=0.8, alpha=alpha, zorder=4)
            if pts and named:
                bold = (user and not highlight) or p.highlighted or (search and p.rank == 1)
                anchors[len(texts)] = [(q.x, y) for q in pts]  # it may point at any of its points
                texts.append(ax.annotate(text(p.label), (pts[0].x, y), xytext=(9, 0), textcoords="offset points",
                                         va="center", fontsize=10 if user else 8,
                                         fontweight="bold" if bold else "normal",
                                         color="0.6" if alpha < 0.5 else (color if user else "black"),
                                         arrowprops=dict(arrowstyle="-", lw=0.6, color="0.5", shrinkA=0, shrinkB=5)))
            if search:
                handles.append(Line2D([], [], ls="", marker="*" if user else "o", color=color, mec="black", mew=0.5,
                                      ms=7, label=_ranked_text(p.rank, k)))
            elif many:
                handles.append(Line2D([], [], ls="", marker="*" if user else "o", color=color, mec="black", mew=0.5,
                                      ms=10 if user else 7, alpha=alpha, label=_line_text(d, k)))
            else:
                handles.append(Line2D([], [], ls="", marker="*" if user else "o", color=color, mec="black", mew=0.6,
                                      ms=14 if user else 8, alpha=alpha, label=_legend_text(k)))
    good_all = [k for _, k in listed]
    if search:  # the side list in rank order
        order = sorted(range(len(listed)), key=lambda i: listed[i][0].rank)
        handles = [handles[i] for i in order]
        listed = [listed[i] for i in order]
    keys = [Line2D([], [], ls="", marker=m, color="0.5", mec="black", ms=7, label=lvl)
            for lvl, m in LEVEL_MARKERS.items() if lvl in levels_used]
    keys += [Line2D([], [], color=r.color, ls=r.style, label=r.label) for r in scene.memory()]
    keys += [Line2D([], [], color=r.color, ls=r.style, label=r.label) for r in scene.compute()]
    ax.add_artist(ax.legend(handles=keys, loc="lower right", fontsize=8, framealpha=1.0,
                            title="points per level; roofs: solid theoretical, dashed measured",
                            title_fontsize=8))
    if handles and search:
        side = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False,
                         labelspacing=0.35, handletextpad=0.3, title=f"{len(good_all)} tiles, fastest first "
                         "(GFLOP/s measured, median)", title_fontsize=8, alignment="left")
        for t, (p, _) in zip(side.get_texts(), listed):
            if p.named:
                t.set_fontweight("bold")
    elif handles and many:
        side = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False,
                         labelspacing=0.45, handletextpad=0.3, title="measured (median), each against the roof of "
                         "its precision", title_fontsize=8, alignment="left")
        for t, h in zip(side.get_texts(), handles):
            if not h.get_marker() or h.get_marker() in ("", "None"):
                t.set_fontweight("bold")
    elif handles:  # the kernel legend last: it is the one tight_layout makes room for
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                  frameon=False, labelspacing=1.0, title="measured (median)", title_fontsize=9)

    ax.set_xlabel("arithmetic intensity (FLOP per byte at each level)")
    ax.set_ylabel("GFLOP/s (measured, median)")
    title = ax.set_title(text(scene.title), **({"fontsize": 10} if many else {}))
    _fit_title(fig, title)
    ax.grid(True, which="major", ls="-", lw=0.4, color="0.85")
    ax.grid(True, which="minor", ls="-", lw=0.2, color="0.93")
    note = _note(good_all, measured)
    if any(d.problem.problem.tensor for d in docs):
        note += ("\nTensor-core kernels: bytes at the element size (2 B in BF16 and FP16, 4 B in TF32); SMEM points: "
                 "each operand tile's reads of A and B (a warp's for mma.sync, a warpgroup's for wgmma) and the tile "
                 "stores.")
    if search:
        note += ("\nNamed on the chart: the fastest and the slowest tile" + (", the ones asked for with --highlight"
                 if highlight else "") + "; the other tiles are the grey points, ranked in the list.")
    if left_out:
        total = sum(timed)
        note += f"\nThe {len(good_all)} fastest of {total} kernels are drawn."
    if failed:
        shown = ", ".join(text(n) for n in failed[:8]) + (f" and {len(failed) - 8} more" if len(failed) > 8 else "")
        note += f"\nNot drawn, failed verification or not timed: {shown}."
    fig.text(0.01, 0.005, note, fontsize=8, color="0.35", ha="left", va="bottom")
    for t in texts + [t for t, _ in flat]:  # placed inside the axes afterwards: no part of the layout
        t.set_in_layout(False)
    fig.tight_layout(rect=(0, (0.03 + 0.018 * (note.count("\n") + 1)) * 7.5 / fig.get_figheight(), 1, 1))

    # Labels last, once the layout is final: the roofs' along their lines, then the kernels'.
    peak_labels, measured_labels = [], []
    for level, value, found, what in compute:
        color = compute_color(level)
        # several compute roofs: one short label each (each measured roof is in the legend; a label
        # as long as its roof's visible stretch would lie on that roof's ridge)
        near = found and value / found < NEAR and not many
        peak_labels.append((ax.text(0, 0, f"{level}{'' if many else ' peak'} {value:,.0f} GFLOP/s"
                                    + (f" ({what} {found:,.0f})" if near else ""), color=color,
                                    fontsize=9 if many else None),
                            value / fastest_bw if many else min(ridges), value))
        if found and not near and not many:
            measured_labels.append((ax.text(0, 0, f"{level} {what} {found:,.0f} GFLOP/s", color=color, fontsize=9),
                                    found / fastest_bw if many else min(ridges), found))
    ref_labels = [(ax.text(0, 0, f"cuBLAS{' ' + _precision_name(d) if many else ''} (reference) "
                           f"{d.reference.gflops:,.0f} GFLOP/s", color="0.3", fontsize=9), d.reference.gflops)
                  for d in docs]
    # one run: each ridge named beside its dot; several: in each run's heading (the band is too crowded)
    ridge_labels = [] if many else [ax.annotate(f"{level + ' ' if many else ''}ridge {ridge_point(value, bw):.1f} FLOP/B",
                                (ridge_point(value, bw), value), xytext=(0, 14), textcoords="offset points",
                                fontsize=9, arrowprops=dict(arrowstyle="-", lw=0.6, color="0.5", shrinkA=0, shrinkB=4))
                    for level, value, _, _ in compute]
    roof_labels = _roof_labels(ax, lines)
    placed = ([t for t, *_ in peak_labels + measured_labels] + [t for t, _ in ref_labels] + ridge_labels
              + [t for t, *_ in roof_labels] + [t for t, _ in flat] + texts)
    placer = Layout(fig, ax, skip=placed)
    # one run: at the right end, away from the ridge at the left; several: the ridges are along the
    # lines, so from a quarter of the way on
    along = [0.25, 0.4, 0.1, 0.55, 0.7, 0.85, 0.98, 0.33, 0.48, 0.62, 0.78] if many else [0.98, 0.85, 0.7, 0.55, 0.4]
    for t, start, value in peak_labels:
        placer.place_on_line(t, (start, value), (x_hi, value), fractions=along)
    for t, start, value in measured_labels:
        placer.place_on_line(t, (start, value), (x_hi, value), fractions=[0.98, 0.85, 0.7], sides=(-1, 1))
    for t, y in ref_labels:
        if placer.place_on_line(t, (x_lo, y), (x_hi, y), fractions=[0.02 + 0.03 * i for i in range(33)]):
            t.set_bbox(OPAQUE)  # no free spot along its line: it hides what it lies on
    for t, y in flat:
        placer.place_on_line(t, (x_lo, y), (x_hi, y), fractions=[0.98, 0.8, 0.6, 0.4, 0.3, 0.2, 0.1])
    for t, gbps, side in roof_labels:
        if placer.place_on_line(t, (x_lo, x_lo * gbps), (peak / gbps, peak), sides=(side, -side),
                                fractions=[0.05 + 0.05 * i for i in range(18)]):
            t.set_bbox(OPAQUE)  # no free spot along its roof: it hides the kernel line it lies on
    # several runs (thirty labels in one crowded band): a leader may cross another rather than a
    # label land on something
    placer.place_annotations(ridge_labels + texts, passes=8 if many else 4,
                             anchors={texts[i]: xy for i, xy in anchors.items()}, leader_faults=not many)
    return fig, texts


def _precision_name(doc: Results) -> str:
    return PRECISIONS[doc.problem.problem.dtype].title


def _run_heading(doc: Results, timed: int, drawn: int, dram_gbps: float) -> str:
    """A run's heading in the list beside a chart of several: its problem, its precision's roof and
    that roof's ridge against the DRAM roof (`dram_gbps`; the chart's black dot, named here)."""
    more = f", the {drawn} fastest of {timed}" if drawn < timed else ""
    return (f"{problem_title(doc)}{more}\nagainst {doc.compute_level} {doc.peak_gflops():,.0f} GFLOP/s, "
            f"ridge {ridge_point(doc.peak_gflops(), dram_gbps):.1f} FLOP/B")


def _line_text(doc: Results, k) -> str:
    """One kernel on one line in the list beside a chart of several runs: its rate, its share of
    its precision's roof, registers and occupancy."""
    occ = f"{percent(k.occupancy.occupancy)} %" if k.occupancy is not None else "n/a"
    return (f"{text(k.name)}  {k.gflops:,.0f} GFLOP/s ({100 * k.gflops / doc.peak_gflops():.0f} % of "
            f"{doc.compute_level}), {_registers(k)}, occupancy {occ}")


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
            what = (twin[0] if style == "-" else name).split(maxsplit=1)[1]  # 'measured', 'best seen'
            out.append((ax.text(0, 0, f"{level} {theory:,.0f} GB/s ({what} {measured:,.0f})", color=color,
                                fontsize=9), max(gbps, twin[1]), 1))
        else:
            out.append((ax.text(0, 0, f"{name} {gbps:,.0f} GB/s", color=color, fontsize=9), gbps,
                        1 if style == "-" else -1))
    return out


def _note(good: list, measured: bool) -> str:
    note = model_note(good)
    profiled = [k for k in good if k.counted and k.model is not None]
    if measured and profiled:
        k = next((k for k in profiled if k.name == "register_tiling_2d"), profiled[-1])
        me = k.counted
        dram = (f"model DRAM {k.model.dram_bytes / 1e9:.2f} GB against " if k.model.dram_bytes else "DRAM ")
        note += (f"\nMeasured points: bytes Nsight Compute counted; for example {text(k.name)}: model GMEM "
                 f"{k.model.gmem_bytes / 1e9:.2f} GB against L2 {(me.l2_bytes or 0) / 1e9:.2f} GB counted, "
                 f"{dram}{(me.dram_bytes or 0) / 1e9:.2f} GB counted.")
    elif profiled:
        note += "\nThe file holds the bytes Nsight Compute counted, which the verdicts read: --measured draws them."
    return note


def _fit_title(fig, title) -> None:
    """Break `title` (centred over the axes) before its parenthesis when it is wider than 70 % of
    the figure: centred over axes that take about that share, a wider one would run off the
    figure's left edge (a long GPU name: 'NVIDIA H100 80GB HBM3: GEMM ...')."""
    words = title.get_text()
    if " (" not in words or title.get_window_extent(fig.canvas.get_renderer()).width <= 0.7 * fig.bbox.width:
        return
    head, _, tail = words.partition(" (")
    title.set_text(f"{head}\n({tail}")
