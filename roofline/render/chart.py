"""What every chart shares: the output path's checks, an atomic save, off-screen drawing that
ignores an inherited MPLBACKEND, text that is never read as mathtext, and the colours and markers
of a ladder's kernels. Label placement is `layout`'s."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

from .. import files
from ..errors import UsageError
from . import style

FORMATS = ("png", "svg", "pdf")
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "<", ">", "h", "*", "p")


def check_output(path: Path, inputs=(), html: bool = False, param: str = "out") -> str:
    """The format of `path` from its extension (png, svg or pdf). Raises UsageError for another
    extension (naming .html too where the command also writes the interactive report: `html`), a
    path that cannot be written (`files.check_writable`) or one of the `inputs`
    (`files.check_not_input`, naming the parameter `param`)."""
    files.check_writable(path)
    files.check_not_input(path, inputs, param=param)
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        also = ", or .html for the interactive report" if html else ""
        raise UsageError(f"cannot tell the chart format from {str(path)!r}; use a .png, .svg or .pdf file name{also}")
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


USER_COLORS = style.USER_COLORS


def text(s: str) -> str:
    """`s` for matplotlib, with '$' escaped so that names are never parsed as mathtext."""
    return str(s).replace("$", r"\$")


TECHNIQUE_MAPS = ("Greys", "Blues", "Greens", "Oranges", "Purples", "Reds", "RdPu", "YlOrBr")
RUN_MAPS = ("Blues", "Oranges", "Greens", "Purples")  # one colour family per run on a chart of several
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


def run_color(run: int, i: int, n: int):
    """The colour of the `i`-th of `n` kernels of the `run`-th run on a chart of several runs
    (an FP32 ladder and a BF16 one): one colour family per run (RUN_MAPS), lighter to darker
    along its ladder."""
    from matplotlib import colormaps

    return colormaps[RUN_MAPS[run % len(RUN_MAPS)]](0.4 + 0.55 * i / max(n - 1, 1))


def color_ramp(i: int, n: int):
    """The i-th of n colours along viridis, from dark to light."""
    from matplotlib import colormaps

    return colormaps["viridis"](0.05 + 0.85 * i / max(n - 1, 1))
