"""The comparison chart of two results files: one bar per kernel in both, its speedup (before's
median time over after's, log axis, 1x marked), coloured by whether it moved toward its roof
(`results.compare`), with cuBLAS's own speedup as the device's and noise's share; the lines on
what comes from the device below."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..results.compare import Comparison
from .chart import check_output, load_matplotlib, new_figure, save_atomic, text

TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
FINE_TICKS = (0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0)  # for a narrow range
COLORS = {"closer": "tab:green", "further": "tab:red", "same": "0.6", "below its floor": "tab:blue"}
LABELS = {"closer": "closer to its roof", "further": "further from its roof", "same": "about as far from its roof",
          "below its floor": "faster than its model floor\n(caches moved fewer bytes)"}


def draw(cmp: Comparison, out: Path, before_name: str = "before", after_name: str = "after") -> Path:
    """Draw the comparison into `out` (.png, .svg or .pdf), atomically, titled with the two files'
    names. Raises UsageError for a bad output path or when no kernel was timed in both files."""
    fmt = check_output(out)
    fig = render(cmp, before_name, after_name)
    save_atomic(fig, Path(out), fmt)
    return Path(out)


def render(cmp: Comparison, before_name: str = "before", after_name: str = "after"):
    """The comparison chart as a matplotlib Figure. Raises UsageError when no kernel was timed in
    both files."""
    timed = [c for c in cmp.changes if c.speedup is not None]
    if not timed:
        raise UsageError("no kernel was timed in both files, so there is no speedup to draw")
    load_matplotlib()
    from matplotlib.patches import Patch
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    fig = new_figure(11, 2.2 + 0.42 * (len(timed) + 1), 120)
    ax = fig.add_subplot(1, 1, 1)
    names = [c.name for c in timed] + ["cublas (reference)"]
    values = [c.speedup for c in timed] + [cmp.reference_speedup]
    colors = [COLORS[c.roof_move] for c in timed] + ["black"]
    ys = list(range(len(names)))[::-1]
    # Each bar runs from 1x (no change) to its speedup: right is faster, left slower.
    ax.barh(ys, [v - 1.0 for v in values], left=1.0, color=colors, height=0.6)
    ax.set_xscale("log")
    lo, hi = min(values + [1.0]), max(values + [1.0])
    span = max(hi / lo, 1.5)
    left, right = min(lo, 1 / span ** 0.25) / 1.3, max(hi, span ** 0.25) * 1.6
    ax.set_xlim(left, right)
    ticks = FINE_TICKS if right / left < 4 else TICKS
    ax.xaxis.set_major_locator(FixedLocator([t for t in ticks if left <= t <= right]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}x"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.axvline(1.0, color="black", lw=1)
    for y, v in zip(ys, values):
        ax.annotate(f"{v:.2f}x", (max(v, 1.0) if v >= 1 else min(v, 1.0), y), xytext=(4 if v >= 1 else -4, 0),
                    textcoords="offset points", va="center", ha="left" if v >= 1 else "right", fontsize=9)
    ax.set_yticks(ys)
    ax.set_yticklabels([text(n) for n in names])
    ax.set_xlabel("speedup, before / after (median time per launch): right of 1x faster, left slower")
    b, a = cmp.before.device.name, cmp.after.device.name
    device = f"{text(b)} -> {text(a)}" if b != a else text(a)
    ax.set_title(f"{text(before_name)} -> {text(after_name)} ({device})")
    used = [move for move in COLORS if any(c.roof_move == move for c in timed)]
    ax.legend(handles=[Patch(color=COLORS[v], label=LABELS[v]) for v in used], loc="upper left",
              bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.grid(True, axis="x", which="both", lw=0.3, color="0.85")
    lines = [text(n) for n in cmp.notes]
    for which, names in (("before", cmp.only_before), ("after", cmp.only_after)):
        if names:
            lines.append(f"only in {which}, not drawn: " + ", ".join(text(n) for n in names))
    if lines:
        fig.text(0.01, 0.005, "\n".join(lines), fontsize=9, ha="left", va="bottom",
                 color="tab:red" if cmp.before.problem.problem != cmp.after.problem.problem else "0.3")
    fig.tight_layout(rect=(0, 0.02 + 0.035 * len(lines), 1, 1))
    return fig
