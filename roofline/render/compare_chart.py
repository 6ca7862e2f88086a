"""The comparison chart of two results files: one bar per kernel in both, its speedup (before's
median time over after's, log axis, 1x marked), coloured by whether it moved toward its roof
(`results.compare`), with cuBLAS's own speedup as the device's and noise's share; the lines on
what comes from the device below."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..results.compare import Comparison
from .chart import check_output, load_matplotlib, new_figure, save_atomic, text

COLORS = {"closer": "tab:green", "further": "tab:red", "same": "0.6", "below its floor": "tab:blue"}
LABELS = {"closer": "closer to its roof", "further": "further from its roof", "same": "about as far from its roof",
          "below its floor": "faster than a floor (model bytes > moved)"}


def draw(cmp: Comparison, out: Path) -> Path:
    """Draw the comparison into `out` (.png, .svg or .pdf), atomically. Raises UsageError for a bad
    output path or when no kernel was timed in both files."""
    fmt = check_output(out)
    timed = [c for c in cmp.changes if c.speedup is not None]
    if not timed:
        raise UsageError("no kernel was timed in both files, so there is no speedup to draw")
    load_matplotlib()
    from matplotlib.patches import Patch

    fig = new_figure(11, 1.6 + 0.42 * (len(timed) + 1), 120)
    ax = fig.add_subplot(1, 1, 1)
    names = [c.name for c in timed] + ["cublas (reference)"]
    values = [c.speedup for c in timed] + [cmp.reference_speedup]
    colors = [COLORS[c.roof_move] for c in timed] + ["black"]
    ys = list(range(len(names)))[::-1]
    ax.barh(ys, values, color=colors, height=0.6, left=0)
    ax.set_xscale("log")
    lo, hi = min(values + [1.0]), max(values + [1.0])
    ax.set_xlim(lo / 1.6, hi * 1.9)
    ax.axvline(1.0, color="black", lw=1)
    for y, v in zip(ys, values):
        ax.text(v * 1.04, y, f"{v:.2f}x", va="center", fontsize=9)
    ax.set_yticks(ys)
    ax.set_yticklabels([text(n) for n in names])
    ax.set_xlabel("speedup, before / after (median time per launch; log)")
    b, a = cmp.before.device.name, cmp.after.device.name
    ax.set_title(f"{text(b)} -> {text(a)}" if b != a else f"{text(a)}: before -> after")
    used = [move for move in COLORS if any(c.roof_move == move for c in timed)]
    ax.legend(handles=[Patch(color=COLORS[v], label=LABELS[v]) for v in used], loc="lower right", fontsize=8)
    ax.grid(True, axis="x", which="both", lw=0.3, color="0.85")
    if cmp.device_notes:
        fig.text(0.01, 0.005, "\n".join(text(n) for n in cmp.device_notes), fontsize=8, color="0.35",
                 ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.02 + 0.035 * len(cmp.device_notes), 1, 1))
    save_atomic(fig, Path(out), fmt)
    return Path(out)
