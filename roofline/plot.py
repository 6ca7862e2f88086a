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
from .model import ridge_point

FORMATS = ("png", "svg", "pdf")
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "h", "*", "p")
MODEL_NOTE = ("x: arithmetic intensity of the analytic model's global-memory (GMEM) requests, i.e. traffic "
              "leaving the SM, mostly served by L2;\nnot measured DRAM bytes, so a point can sit above "
              "the DRAM roof when L2 reuse saves DRAM traffic.")


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


def _occupancy_text(k: dict) -> str:
    o = k.get("occupancy")
    if not o:
        return "occupancy n/a"
    return f"occupancy {100 * o['occupancy']:.0f} % ({'+'.join(o['limiters']) or '-'})"


def _legend_text(k: dict) -> str:
    regs = f"{k['registers']} regs" if k.get("registers") is not None else "regs n/a"
    return f"{k['name']}\n{k['gflops']:,.0f} GFLOP/s, {regs}, {_occupancy_text(k)}"


def _text_box(t, renderer):
    """The pixel box of an annotation's text alone (without its leader line)."""
    from matplotlib.text import Text

    return Text.get_window_extent(t, renderer)


def _place_labels(fig, ax, texts) -> None:
    """Give each label the nearest vertical offset (0, then one label height down, up, two down,
    ...) at which it overlaps no label placed before it and stays inside the axes."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    inside = ax.get_window_extent(renderer)
    placed = []
    for t in sorted(texts, key=lambda t: -_text_box(t, renderer).y1):
        box = _text_box(t, renderer)
        step_pt = (box.height + 2) * 72 / fig.dpi
        dx, dy = t.xyann
        for i in range(41):
            shift = (i + 1) // 2 * (-1 if i % 2 else 1) * step_pt
            t.xyann = (dx, dy + shift)
            box = _text_box(t, renderer)
            fits = box.y0 >= inside.y0 and box.y1 <= inside.y1 and box.x1 <= inside.x1
            if fits and not any(box.overlaps(p) for p in placed):
                break
        else:
            t.xyann = (dx, dy)
        placed.append(_text_box(t, renderer))


def draw(doc: dict, out: Path) -> Path:
    """Draw the roofline of results document `doc` into `out` (.png, .svg or .pdf), written
    atomically. Returns `out`. Raises UsageError for a bad output path."""
    fmt = check_output(out)
    fig, _ = render(doc)
    save_atomic(fig, Path(out), fmt)
    return Path(out)


def label_boxes(doc: dict) -> list:
    """The on-canvas bounding boxes (matplotlib Bbox, pixels) of the kernel labels, after
    placement: for checking that no two overlap."""
    fig, texts = render(doc)
    renderer = fig.canvas.get_renderer()
    return [_text_box(t, renderer) for t in texts]


def render(doc: dict):
    """Build the chart for a validated results document; returns (Figure, kernel name labels)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # e.g. glyphs missing from the font
        return _render(doc)


def _render(doc: dict):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    dev, prob, ref = doc["device"], doc["problem"], doc["reference"]
    peak, bw = float(dev["peak_fp32_gflops"]), float(dev["peak_dram_gbps"])
    ridge = ridge_point(peak, bw)
    good = [k for k in doc["kernels"] if k["verified"] and k.get("gflops")]
    failed = [k["name"] for k in doc["kernels"] if not (k["verified"] and k.get("gflops"))]

    ais = [k["model"]["arithmetic_intensity"] for k in good] or [ridge]
    x_lo = min(min(ais), ridge) / 4
    x_hi = max(max(ais), ridge) * 8
    ys = [k["gflops"] for k in good] + [ref["gflops"]]
    y_lo = min(min(ys), x_lo * bw) / 3
    y_hi = max(peak, max(ys)) * 2.5

    fig = Figure(figsize=(14, 7), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)

    # Roofs: memory slope up to the ridge, flat FP32 peak after it.
    ax.plot([x_lo, ridge], [x_lo * bw, peak], color="tab:blue", lw=2)
    ax.plot([ridge, x_hi], [peak, peak], color="tab:red", lw=2)
    ax.text(x_hi / 1.1, peak * 1.08, f"FP32 peak {peak:,.0f} GFLOP/s", ha="right", va="bottom", color="tab:red")
    ax.plot([ridge], [peak], "o", color="black", ms=5)
    ax.annotate(f"ridge {ridge:.1f} FLOP/B", (ridge, peak), xytext=(0, 14), textcoords="offset points",
                ha="center", fontsize=9)
    ax.axhline(ref["gflops"], color="0.3", ls=":", lw=1.2)
    ax.text(x_lo * 1.1, ref["gflops"] * 1.05, f"cuBLAS (reference) {ref['gflops']:,.0f} GFLOP/s",
            color="0.3", fontsize=9, va="bottom")

    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    texts, handles = [], []
    for i, k in enumerate(good):
        color = cmap(0.05 + 0.85 * i / max(len(good) - 1, 1))
        marker = MARKERS[i % len(MARKERS)]
        x, y = k["model"]["arithmetic_intensity"], k["gflops"]
        ax.plot([x], [y], marker, color=color, ms=9, mec="black", mew=0.7, alpha=0.85, zorder=3)
        texts.append(ax.annotate(k["name"], (x, y), xytext=(9, 0), textcoords="offset points", va="center",
                                 fontsize=8, arrowprops=dict(arrowstyle="-", lw=0.5, color="0.6",
                                                             shrinkA=0, shrinkB=5)))
        handles.append(Line2D([], [], ls="", marker=marker, color=color, mec="black", mew=0.7, ms=8,
                              label=_legend_text(k)))
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                  frameon=False, labelspacing=1.0, title="measured (median)", title_fontsize=9)
    if failed:
        ax.text(0.99, 0.02, "not drawn, failed: " + ", ".join(failed), transform=ax.transAxes,
                ha="right", va="bottom", fontsize=9, color="tab:red")

    ax.set_xlabel("arithmetic intensity (FLOP per byte of modelled GMEM traffic)")
    ax.set_ylabel("GFLOP/s (measured, median)")
    source = "NVML" if "NVML" in str(dev.get("source", "NVML")) else "datasheet"
    ax.set_title(f"{dev['name']}: SGEMM {prob['m']}x{prob['n']}x{prob['k']} FP32, roofs from {source}")
    ax.grid(True, which="major", ls="-", lw=0.4, color="0.85")
    ax.grid(True, which="minor", ls="-", lw=0.2, color="0.93")
    fig.text(0.01, 0.005, MODEL_NOTE, fontsize=8, color="0.35", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    ax.text(x_lo * 1.3, x_lo * 1.3 * bw * 1.25, f"DRAM {bw:,.0f} GB/s", ha="left", va="bottom",
            color="tab:blue", rotation=_slope_angle(ax, fig), rotation_mode="anchor")
    _place_labels(fig, ax, texts)
    return fig, texts


def _slope_angle(ax, fig) -> float:
    """On-screen angle in degrees of a line of slope 1 in log-log data coordinates."""
    fig.canvas.draw()
    (x0, y0), (x1, y1) = ax.transData.transform([(1, 1), (10, 10)])
    return math.degrees(math.atan2(y1 - y0, x1 - x0))
