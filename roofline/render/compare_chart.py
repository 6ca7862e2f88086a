"""The comparison chart of two results files (`analysis.compare.WorkComparison`).

`draw_moves` (what `roofline compare --out` draws, for profiles and runs): each matched kernel's
move as an arrow, before -> after, in time (one GPU model) or in fraction of its binding roof
(across GPU models), with cuBLAS's own move last for runs; the lines on what comes from the device
or the files below."""

from __future__ import annotations

import textwrap

from pathlib import Path

from ..errors import UsageError
from ..analysis.compare import Delta, WorkComparison, pct
from .chart import check_output, load_matplotlib, new_figure, save_atomic, text
from .text import middle_cut

TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
FINE_TICKS = (0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0)  # for a narrow range
NARROW_TICKS = (0.8, 0.9, 0.95, 0.98, 1.0, 1.02, 1.05, 1.1, 1.25)  # for moves of a few per cent
MOVE_COLORS = {"faster": "tab:green", "slower": "tab:red", "closer": "tab:green", "further": "tab:red",
               "noise": "0.6", "not measured": "0.6"}
TOP = 25  # a profile's kernels drawn, by the longer of their two times
NOTE_WIDTH = 150  # characters of a note line under the chart (8 pt over the figure's width)


def draw_moves(cmp: WorkComparison, out: Path, before_name: str = "before", after_name: str = "after") -> Path:
    """Draw each matched kernel's move (`render_moves`) into `out` (.png, .svg or .pdf), atomically.
    Raises UsageError for a bad output path or when no kernel can be drawn."""
    fmt = check_output(out)
    save_atomic(render_moves(cmp, before_name, after_name), Path(out), fmt)
    return Path(out)


def render_moves(cmp: WorkComparison, before_name: str = "before", after_name: str = "after"):
    """One row per matched kernel (a profile: the step first, then its `TOP` longest kernels; runs:
    cuBLAS, the reference, last), an arrow from before to after. On one GPU model the axis is the
    time relative to before (log, before at 1x, left faster) with each kernel's noise band shaded
    and its ms beside it; across GPU models it is the fraction of the binding roof (each file
    against its own GPU's theoretical roofs, right closer). Green faster, red slower, grey within noise; the
    change and its cause beside it. Raises UsageError when no kernel has the figure drawn."""
    across = not cmp.same_device
    per_flop = not across and cmp.per_flop  # two sizes: the time of a FLOP, not of a launch
    deltas = cmp.kernels
    if cmp.is_step and len(deltas) > TOP:
        deltas = sorted(deltas, key=lambda d: -max(d.before_ms, d.after_ms))[:TOP]
    rows = []  # (label, x before, x after, colour, note, noise)
    if cmp.step is not None and not across:
        rows.append(("step (profiled GPU time)", 1.0, cmp.step.after_ms / cmp.step.before_ms,
                     MOVE_COLORS[cmp.step.reading], _note(cmp.step), cmp.step.noise))
    for d in deltas:
        if across:
            if d.before_fraction and d.after_fraction:
                rows.append((d.label, d.before_fraction * 100, d.after_fraction * 100, MOVE_COLORS[d.reading],
                             d.cause or f"{d.fraction_move} of its roof" + (", noise" if d.is_noise else ""),
                             None))
        elif per_flop:
            if d.slowdown is not None:
                rows.append((d.label, 1.0, 1.0 + d.slowdown, MOVE_COLORS[d.reading], _note(d), d.noise))
        else:
            rows.append((d.label, 1.0, d.after_ms / d.before_ms, MOVE_COLORS[d.reading], _note(d), d.noise))
    if cmp.reference_ms is not None and not across:
        ref_b, ref_a = cmp.reference_ms
        pb, pa = cmp.problems if per_flop and cmp.problems else (None, None)
        work = (pa.m * pa.n * pa.k) / (pb.m * pb.n * pb.k) if pb is not None else 1.0  # the FLOPs after over before
        rows.append(("cublas (reference)", 1.0, ref_a / ref_b / work, "black",
                     f"{pct(ref_a / ref_b / work - 1.0)}{' per FLOP' if per_flop else ''}, "
                     f"{ref_b:,.3f} -> {ref_a:,.3f} ms", None))
    if not rows:
        raise UsageError("no matched kernel has a figure to draw in both files")
    load_matplotlib()
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    fig = new_figure(12, 2.0 + 0.36 * len(rows), 120)
    ax = fig.add_subplot(1, 1, 1)
    ys = list(range(len(rows)))[::-1]
    for y, (_, b, a, color, _, noise) in zip(ys, rows):
        if noise:
            ax.fill_betweenx([y - 0.3, y + 0.3], 1 / (1 + noise), 1 + noise, color="0.88", lw=0)
        ax.plot([b], [y], marker="o", color=color, ms=4, ls="none")
        if a != b:
            ax.annotate("", xy=(a, y), xytext=(b, y),
                        arrowprops={"arrowstyle": "-|>", "color": color, "lw": 1.8, "shrinkA": 0, "shrinkB": 0})
    values = [v for r in rows for v in r[1:3]]
    if across:
        ax.set_xlim(0, max(values) * 1.6)
        ax.set_xlabel("fraction of the binding roof, % (each file against its own GPU's theoretical roofs): right is closer")
    else:
        ax.set_xscale("log")
        bands = [r[5] for r in rows if r[5]]
        reach = max([max(v, 1 / v) for v in values] + [1 + b for b in bands] + [1.05])  # the moves and bands drawn
        ax.set_xlim(1 / (reach * 1.02), reach * 1.02)  # as wide as the moves, before (1x) in the middle
        left, right = ax.get_xlim()
        ticks = NARROW_TICKS if right / left < 1.6 else FINE_TICKS if right / left < 8 else TICKS
        ax.xaxis.set_major_locator(FixedLocator([t for t in ticks if left <= t <= right]))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}x"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.axvline(1.0, color="black", lw=0.8)
        ax.set_xlabel(("time of a FLOP" if per_flop else "time") + " after / time before (log): the dot is before, "
                      "the arrow's head after; left is faster")
    for y, (_, b, a, _, note, _) in zip(ys, rows):
        if across:
            ax.annotate(text(note), (max(a, b), y), xytext=(8, 0), textcoords="offset points", va="center",
                        fontsize=8, color="0.2")
        else:  # in a column right of the axes, so the axis spans the moves alone
            ax.annotate(text(note), (1.0, y), xycoords=ax.get_yaxis_transform(), xytext=(8, 0),
                        textcoords="offset points", va="center", fontsize=8, color="0.2", annotation_clip=False)
    ax.set_yticks(ys)
    ax.set_yticklabels([text(middle_cut(r[0], 48)) for r in rows], fontsize=8)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    b, a = cmp.before.device.name, cmp.after.device.name
    device = f"{text(b)} -> {text(a)}" if b != a else text(a)
    shown = f", the {len(deltas)} longest of {len(cmp.kernels)} matched kernels" if len(deltas) < len(cmp.kernels) else ""
    apart = [f"{len(names)} {which}" for which, names in (("gone", cmp.gone), ("new", cmp.new)) if names]
    shown += f"\nkernels in one file only: {', '.join(apart)} (named below the chart)" if apart else ""
    ax.set_title(f"{text(before_name)} -> {text(after_name)} ({device}){shown}", fontsize=10)
    ax.grid(True, axis="x", which="major", lw=0.3, color="0.85")
    moves = ("closer", "further", "noise") if across else ("faster", "slower", "noise")
    used = [m for m in moves if any(r[3] == MOVE_COLORS[m] for r in rows)]
    handles = [Line2D([], [], color=MOVE_COLORS[m], lw=2, label=m) for m in used]
    if not across:
        handles.append(Patch(color="0.88", label="noise band"))
    ax.legend(handles=handles, loc="lower right", fontsize=8, frameon=False)
    lines = [part for n in cmp.notes for part in textwrap.wrap(text(n), NOTE_WIDTH, subsequent_indent="  ")]
    for which, labels in (("gone", cmp.gone), ("new", cmp.new)):
        if labels:
            lines.append(f"{which}, not drawn ({len(labels)}): " + text(middle_cut(", ".join(labels), NOTE_WIDTH)))
    if lines:
        fig.text(0.01, 0.005, "\n".join(lines), fontsize=8, ha="left", va="bottom", color="0.3")
    fig.tight_layout(rect=(0, 0.02 + 0.03 * len(lines), 1, 1))
    return fig


def _note(d: Delta) -> str:
    ms = f"{d.before_ms:,.3f} -> {d.after_ms:,.3f} ms"
    change = f"{pct(d.slowdown)} per FLOP" if d.per_flop and d.slowdown is not None else pct(d.time_change)
    if d.is_noise:
        return f"{change}, noise; {ms}"
    if d.cause is None:
        return f"{change}; {ms}"
    first = d.cause.split("; ")[0]  # a step's cause names the kernels only one side ran too: the table has it
    return "\n".join(textwrap.wrap(f"{first}; {ms}", 56))
