"""What every chart shares: the output path's checks, an atomic save, off-screen drawing that
ignores an inherited MPLBACKEND, text that is never read as mathtext, and label placement."""

from __future__ import annotations

import math
import os
import sys
import warnings
from pathlib import Path

from .. import files
from ..errors import UsageError

FORMATS = ("png", "svg", "pdf")
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "h", "*", "p")


def check_output(path: Path) -> str:
    """The format of `path` from its extension (png, svg or pdf). Raises UsageError for another
    extension or a path that cannot be written (`files.check_writable`)."""
    files.check_writable(path)
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise UsageError(f"cannot tell the chart format from {str(path)!r}; use a .png, .svg or .pdf file name")
    return fmt


def load_matplotlib() -> None:
    """Import matplotlib with any inherited MPLBACKEND (a notebook's inline backend, say) set
    aside: it would fail matplotlib's import, and these charts are only ever drawn to files on an
    off-screen canvas. The variable is put back afterwards. Call before any matplotlib import."""
    if "matplotlib" not in sys.modules:
        inherited = os.environ.pop("MPLBACKEND", None)
        try:
            import matplotlib  # noqa: F401
        finally:
            if inherited is not None:
                os.environ["MPLBACKEND"] = inherited


def new_figure(width_in: float, height_in: float, dpi: int):
    """A matplotlib Figure on an off-screen Agg canvas (`load_matplotlib` first)."""
    load_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def save_atomic(fig, out: Path, fmt: str) -> None:
    """Save figure `fig` to `out` in format `fmt` atomically (`files.write_atomic`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # e.g. glyphs missing from the font
        files.write_atomic(Path(out), lambda tmp: fig.savefig(tmp, format=fmt))


USER_COLORS = ("#d6006f", "#7a3cff", "#00a087", "#ff7f0e")  # the user's kernels, apart from the ladder's viridis


def text(s: str) -> str:
    """`s` for matplotlib, with '$' escaped so that names are never parsed as mathtext."""
    return str(s).replace("$", r"\$")


TECHNIQUE_MAPS = ("Greys", "Blues", "Greens", "Oranges", "Purples", "Reds")
STEP_MARKERS = ("o", "s", "^")
STEP_LINES = ("-", "--", ":")


def kernel_style(name: str, i: int, n: int) -> dict:
    """Colour, marker and line style of ladder kernel `name`: the hue of its technique
    (`ladder.families.TECHNIQUES`), a darker shade, another marker and line style for each later
    step inside it; a kernel outside the ladder (a variant), the `i`-th of `n` along viridis."""
    from matplotlib import colormaps

    from ..ladder.families import technique

    where = technique(name)
    if where is None:
        return {"color": color_ramp(i, n), "marker": MARKERS[i % len(MARKERS)], "ls": "-"}
    group, step, size = where
    shade = 0.45 + 0.35 * (step / (size - 1) if size > 1 else 0.5)
    return {"color": colormaps[TECHNIQUE_MAPS[group % len(TECHNIQUE_MAPS)]](shade),
            "marker": STEP_MARKERS[step % len(STEP_MARKERS)], "ls": STEP_LINES[step % len(STEP_LINES)]}


def color_ramp(i: int, n: int):
    """The i-th of n colours along viridis, from dark to light."""
    from matplotlib import colormaps

    return colormaps["viridis"](0.05 + 0.85 * i / max(n - 1, 1))


def text_box(t, renderer):
    """The pixel box of an annotation's text alone (without its leader line)."""
    from matplotlib.text import Text

    return Text.get_window_extent(t, renderer)


def place_labels(fig, ax, texts, markers=(), hlines=()) -> None:
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

    for t in sorted(texts, key=lambda t: -text_box(t, renderer).y1):
        box = text_box(t, renderer)
        step_pt = (box.height + 2) * 72 / fig.dpi
        dx, dy = t.xyann
        for i in range(41):
            shift = (i + 1) // 2 * (-1 if i % 2 else 1) * step_pt
            t.xyann = (dx, dy + shift)
            box = text_box(t, renderer)
            fits = box.y0 >= inside.y0 and box.y1 <= inside.y1 and box.x1 <= inside.x1
            if fits and clear(box):
                break
        else:
            t.xyann = (dx, dy)
        placed.append(text_box(t, renderer))


def slope_angle(ax, fig) -> float:
    """On-screen angle in degrees of a line of slope 1 in log-log data coordinates."""
    fig.canvas.draw()
    (x0, y0), (x1, y1) = ax.transData.transform([(1, 1), (10, 10)])
    return math.degrees(math.atan2(y1 - y0, x1 - x0))
