"""The roofline chart, drawn from a results document (no GPU needed).

Axes are log-log: x the model's arithmetic intensity (FLOP per byte of GMEM requests), y GFLOP/s.
The memory roof (peak DRAM GB/s x AI) meets the FP32 roof at the ridge point. Each verified kernel
is a marker at (model AI, measured GFLOP/s) with its name beside it; the legend on the right gives
each kernel's rate, registers, occupancy and limiter. cuBLAS, which has no traffic model, is a
horizontal line at its measured rate. Kernels that failed are listed, never drawn.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

from . import files
from .errors import UsageError
from .hierarchy import ceilings, level_bytes
from .model import ridge_point
from .occupancy import percent

FORMATS = ("png", "svg", "pdf")
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "h", "*", "p")
MODEL_NOTE = ("GMEM points: the analytic model's global-memory requests, i.e. traffic leaving the SM, mostly "
              "served by L2, not measured DRAM bytes: a point can sit above the DRAM roof\nwhen caches save "
              "DRAM traffic. SMEM points: the model's shared-memory accesses (4 bytes each), above the SMEM roof "
              "when broadcasts and 128-bit loads move more per bank access.")


def check_output(path: Path) -> str:
    """The format of `path` from its extension (png, svg or pdf). Raises UsageError for another
    extension or a path that cannot be written (`files.check_writable`)."""
    files.check_writable(path)
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise UsageError(f"cannot tell the chart format from {str(path)!r}; use a .png, .svg or .pdf file name")
    return fmt


def save_atomic(fig, out: Path, fmt: str) -> None:
    """Save matplotlib figure `fig` to `out` in format `fmt` atomically (`files.write_atomic`)."""
    files.write_atomic(Path(out), lambda tmp: fig.savefig(tmp, format=fmt))


MAX_DRAWN = 16  # kernels drawn at most (the whole ladder; a tuning sweep has dozens): the fastest ones


def text(s: str) -> str:
    """`s` for matplotlib, with '$' escaped so that names are never parsed as mathtext."""
    return str(s).replace("$", r"\$")


def _occupancy_text(k: dict) -> str:
    o = k.get("occupancy")
    if not o:
        return "occupancy n/a"
    return f"occupancy {percent(o['occupancy'])} % ({'+'.join(o['limiters']) or '-'})"


def _legend_text(k: dict) -> str:
    regs = f"{k['registers']} regs" if k.get("registers") is not None else "regs n/a"
    return f"{text(k['name'])}\n{k['gflops']:,.0f} GFLOP/s, {regs}, {_occupancy_text(k)}"


def _text_box(t, renderer):
    """The pixel box of an annotation's text alone (without its leader line)."""
    from matplotlib.text import Text

    return Text.get_window_extent(t, renderer)


def _place_labels(fig, ax, texts, markers=(), hlines=()) -> None:
    """Give each label the nearest vertical offset (0, then one label height down, up, two down,
    ...) at which it keeps a few pixels from every label placed before it, every marker (data
    points in `markers`), every horizontal line (the y values in `hlines`, across the axes), the
    axes' other texts and its legends, and stays inside the axes."""
    from matplotlib.legend import Legend
    from matplotlib.transforms import Bbox

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    inside = ax.get_window_extent(renderer)
    radius, pad = 6 * fig.dpi / 72, 2 * fig.dpi / 72
    placed = [Bbox.from_extents(x - radius, y - radius, x + radius, y + radius)
              for x, y in (ax.transData.transform(p) for p in markers)]
    for y in hlines:
        py = ax.transData.transform((1.0, y))[1]
        placed.append(Bbox.from_extents(inside.x0, py - 1, inside.x1, py + 1))
    others = [t for t in ax.texts if t not in texts] + [c for c in ax.get_children() if isinstance(c, Legend)]
    placed += [a.get_window_extent(renderer) for a in others]

    def clear(box) -> bool:
        padded = Bbox.from_extents(box.x0 - pad, box.y0 - pad, box.x1 + pad, box.y1 + pad)
        return not any(padded.overlaps(p) for p in placed)

    for t in sorted(texts, key=lambda t: -_text_box(t, renderer).y1):
        box = _text_box(t, renderer)
        step_pt = (box.height + 2) * 72 / fig.dpi
        dx, dy = t.xyann
        for i in range(41):
            shift = (i + 1) // 2 * (-1 if i % 2 else 1) * step_pt
            t.xyann = (dx, dy + shift)
            box = _text_box(t, renderer)
            fits = box.y0 >= inside.y0 and box.y1 <= inside.y1 and box.x1 <= inside.x1
            if fits and clear(box):
                break
        else:
            t.xyann = (dx, dy)
        placed.append(_text_box(t, renderer))


def draw(doc: dict, out: Path, measured: bool = False) -> Path:
    """Draw the roofline of results document `doc` into `out` (.png, .svg or .pdf), written
    atomically; with `measured`, also each kernel's points at the L2 and DRAM bytes Nsight Compute
    counted (kernels that were not profiled have none). Returns `out`. Raises UsageError for a bad
    output path, a document without kernels, figures that cannot be drawn on log axes (a corrupt
    file: see PLOTTABLE), or for `measured` when no kernel was profiled."""
    fmt = check_output(out)
    if not doc["kernels"]:
        raise UsageError("no kernels in these results; make them with roofline run --all")
    if measured and not any(k.get("measured") for k in doc["kernels"]):
        raise UsageError("no kernel in these results was profiled; make them with roofline run --all --profile")
    fig, _ = render(doc, measured)
    save_atomic(fig, Path(out), fmt)
    return Path(out)


def label_boxes(doc: dict, measured: bool = False) -> list:
    """The on-canvas bounding boxes (matplotlib Bbox, pixels) of the kernel labels, after
    placement: for checking that no two overlap."""
    fig, texts = render(doc, measured)
    renderer = fig.canvas.get_renderer()
    return [_text_box(t, renderer) for t in texts]


def render(doc: dict, measured: bool = False):
    """Build the chart for a validated results document; returns (Figure, kernel name labels)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # e.g. glyphs missing from the font
        return _render(doc, measured)


LEVEL_MARKERS = {"GMEM (model)": "o", "SMEM (model)": "^", "L2 (measured)": "s", "DRAM (measured)": "D"}


# Log axes draw values in this range; anything outside comes from a corrupt file (say, bytes of
# 1e-300 that make an intensity infinite), which is refused rather than drawn.
PLOTTABLE = (1e-12, 1e18)


def _plottable(value: float, what: str) -> float:
    if not (math.isfinite(value) and PLOTTABLE[0] <= value <= PLOTTABLE[1]):
        raise UsageError(f"{what} comes to {value:g}, which cannot be drawn; the results file looks corrupt")
    return value


def _points(k: dict, problem: dict, measured: bool) -> list[tuple[str, float]]:
    by = level_bytes(k, problem)
    flops = float(k["model"]["flops"])
    pts = [("GMEM (model)", flops / by["gmem"])]
    if by.get("smem"):
        pts.append(("SMEM (model)", flops / by["smem"]))
    if measured:
        for key, level in (("l2", "L2 (measured)"), ("dram", "DRAM (measured)")):
            if by.get(key):
                pts.append((level, flops / by[key]))
    return pts


def _render(doc: dict, measured: bool):
    from matplotlib import colormaps
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    dev, prob, ref = doc["device"], doc["problem"], doc["reference"]
    ceil = ceilings(dev)
    peak, bw = ceil["fp32"], ceil["dram"]
    ridge = ridge_point(peak, bw)
    timed = [k for k in doc["kernels"] if k["verified"] and k.get("gflops")]
    failed = [k["name"] for k in doc["kernels"] if not (k["verified"] and k.get("gflops"))]
    fastest = {k["name"] for k in sorted(timed, key=lambda k: -k["gflops"])[:MAX_DRAWN]}
    good = [k for k in timed if k["name"] in fastest]  # ladder order kept
    left_out = len(timed) - len(good)
    points = {k["name"]: _points(k, prob, measured) for k in good}
    for k in good:
        _plottable(k["gflops"], f"{k['name']}: GFLOP/s")
        for level, ai in points[k["name"]]:
            _plottable(ai, f"{k['name']}: arithmetic intensity at {level}")
    for name, value in ceil.items():
        _plottable(value, f"the {name} ceiling")
    _plottable(ridge, "the ridge point")

    ais = [ai for pts in points.values() for _, ai in pts] or [ridge]
    ridges = [ridge] + ([peak / ceil["smem"]] if "smem" in ceil else [])
    x_lo = min(min(ais), min(ridges)) / 4
    x_hi = max(max(ais), max(ridges)) * 8
    ys = [k["gflops"] for k in good] + [ref["gflops"]]
    y_lo = min(min(ys), x_lo * bw) / 3
    y_hi = max(peak, max(ys)) * 2.5

    fig = Figure(figsize=(14, 7.5), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)

    # Roofs: theoretical solid, measured dashed; each memory roof rises to the FP32 peak.
    roofs = [("DRAM", bw, "tab:blue", "-")]
    if "dram_measured" in ceil:
        roofs.append(("DRAM measured", ceil["dram_measured"], "tab:blue", "--"))
    if "smem" in ceil:
        roofs.append(("SMEM", ceil["smem"], "tab:green", "-"))
    for _, gbps, color, style in roofs:
        ax.plot([x_lo, peak / gbps], [x_lo * gbps, peak], color=color, ls=style, lw=1.8)
    ax.plot([min(ridges), x_hi], [peak, peak], color="tab:red", lw=2)
    ax.text(x_hi / 1.1, peak * 1.08, f"FP32 peak {peak:,.0f} GFLOP/s", ha="right", va="bottom", color="tab:red")
    if "fp32_measured" in ceil:  # its value is in the legend: a label here would sit on the cuBLAS line
        fm = ceil["fp32_measured"]
        ax.plot([min(ridges), x_hi], [fm, fm], color="tab:red", ls="--", lw=1.5)
    ax.plot([ridge], [peak], "o", color="black", ms=5)
    ax.annotate(f"ridge {ridge:.1f} FLOP/B", (ridge, peak), xytext=(0, 14), textcoords="offset points",
                ha="center", fontsize=9)
    ax.axhline(ref["gflops"], color="0.3", ls=":", lw=1.2)
    ax.text(x_lo * 1.1, ref["gflops"] * 1.05, f"cuBLAS (reference) {ref['gflops']:,.0f} GFLOP/s",
            color="0.3", fontsize=9, va="bottom")

    cmap = colormaps["viridis"]
    texts, handles, levels_used = [], [], set()
    for i, k in enumerate(good):
        color = cmap(0.05 + 0.85 * i / max(len(good) - 1, 1))
        y = k["gflops"]
        pts = points[k["name"]]
        if len(pts) > 1:
            xs = sorted(ai for _, ai in pts)
            ax.plot([xs[0], xs[-1]], [y, y], color=color, lw=0.9, alpha=0.7, zorder=2)
        for level, ai in pts:
            levels_used.add(level)
            ax.plot([ai], [y], LEVEL_MARKERS[level], color=color, ms=8, mec="black", mew=0.6, alpha=0.9, zorder=3)
        gx = pts[0][1]
        texts.append(ax.annotate(text(k["name"]), (gx, y), xytext=(9, 0), textcoords="offset points", va="center",
                                 fontsize=8, arrowprops=dict(arrowstyle="-", lw=0.5, color="0.6",
                                                             shrinkA=0, shrinkB=5)))
        handles.append(Line2D([], [], ls="", marker="o", color=color, mec="black", mew=0.6, ms=8,
                              label=_legend_text(k)))
    keys = [Line2D([], [], ls="", marker=m, color="0.5", mec="black", ms=7, label=lvl)
            for lvl, m in LEVEL_MARKERS.items() if lvl in levels_used]
    keys += [Line2D([], [], color=c, ls=st, label=f"{name} {gbps:,.0f} GB/s") for name, gbps, c, st in roofs]
    keys.append(Line2D([], [], color="tab:red", ls="-", label=f"FP32 peak {peak:,.0f} GFLOP/s"))
    if "fp32_measured" in ceil:
        keys.append(Line2D([], [], color="tab:red", ls="--", label=f"FP32 measured {ceil['fp32_measured']:,.0f} GFLOP/s"))
    ax.add_artist(ax.legend(handles=keys, loc="lower right", fontsize=8, framealpha=0.9,
                            title="points per level; roofs: solid theoretical, dashed measured",
                            title_fontsize=8))
    if handles:  # the kernel legend last: it is the one tight_layout makes room for
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                  frameon=False, labelspacing=1.0, title="measured (median)", title_fontsize=9)

    ax.set_xlabel("arithmetic intensity (FLOP per byte at each level)")
    ax.set_ylabel("GFLOP/s (measured, median)")
    source = "NVML" if "NVML" in str(dev.get("source", "NVML")) else "datasheet"
    ax.set_title(f"{text(dev['name'])}: SGEMM {prob['m']}x{prob['n']}x{prob['k']} FP32, hierarchical roofline "
                 f"(roofs from {source})")
    ax.grid(True, which="major", ls="-", lw=0.4, color="0.85")
    ax.grid(True, which="minor", ls="-", lw=0.2, color="0.93")
    note = _note(good, measured)
    if left_out:
        note += f"\nThe {len(good)} fastest of {len(timed)} kernels are drawn."
    if failed:
        shown = ", ".join(text(n) for n in failed[:8]) + (f" and {len(failed) - 8} more" if len(failed) > 8 else "")
        note += f"\nNot drawn, failed verification or not timed: {shown}."
    fig.text(0.01, 0.005, note, fontsize=8, color="0.35", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.03 + 0.018 * (note.count("\n") + 1), 1, 1))
    angle = _slope_angle(ax, fig)
    for name, gbps, color, style in roofs:
        if style == "-":  # theoretical: label above the line, near its start
            x0 = x_lo * 1.3
            ax.text(x0, x0 * gbps * 1.25, f"{name} {gbps:,.0f} GB/s", ha="left", va="bottom",
                    color=color, fontsize=9, rotation=angle, rotation_mode="anchor")
        else:  # measured: below the line, further along
            x0 = x_lo * 4
            ax.text(x0, x0 * gbps / 1.3, f"{name} {gbps:,.0f} GB/s", ha="left", va="top",
                    color=color, fontsize=9, rotation=angle, rotation_mode="anchor")
    markers = [(ai, k["gflops"]) for k in good for _, ai in points[k["name"]]]
    hlines = [ref["gflops"], peak] + ([ceil["fp32_measured"]] if "fp32_measured" in ceil else [])
    _place_labels(fig, ax, texts, markers, hlines)
    return fig, texts


def _note(good: list[dict], measured: bool) -> str:
    note = MODEL_NOTE
    profiled = [k for k in good if k.get("measured")]
    if measured and profiled:
        k = next((k for k in profiled if k["name"] == "register_tiling_2d"), profiled[-1])
        me = k["measured"]
        note += (f"\nMeasured points: bytes Nsight Compute counted. {text(k['name'])}: model "
                 f"{k['model']['gmem_bytes'] / 1e9:.2f} GB, L2 {me.get('l2_bytes', 0) / 1e9:.2f} GB, "
                 f"DRAM {me.get('dram_bytes', 0) / 1e9:.2f} GB.")
    return note


def _slope_angle(ax, fig) -> float:
    """On-screen angle in degrees of a line of slope 1 in log-log data coordinates."""
    fig.canvas.draw()
    (x0, y0), (x1, y1) = ax.transData.transform([(1, 1), (10, 10)])
    return math.degrees(math.atan2(y1 - y0, x1 - x0))
