"""The what-if (`roofline whatif`) for people: the table of every kernel at the target fraction of
its binding roof, one sentence per top kernel, and the chart of time share against headroom.

Chart: one point per kernel with a roof; x its share of the step's GPU time (a profile) or its
time in ms (a run), log; y its headroom, time now over time at the target (1 = already there),
log; marker area its saving. For a profile, dotted curves join the kernels whose saving is the
same share of the step (1 %, 2 %, 5 %, 10 %: share x (1 - 1/headroom)): a kernel above a curve
saves more than it. The top kernels by saving are named, each label placed clear of the others,
of every marker and of the curves' names (`layout.Layout`), its leader crossing no other leader
and no other marker; a label's white background hides the thin dotted curves beneath it.
"""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from ..errors import UsageError
from ..model.timeline import MIN_PHASE_INTERVALS, ROOF_NAMES
from ..model.units import figure, plural
from ..analysis.whatif import KernelWhatIf, WhatIf
from ..results.profile import LAUNCH_LABEL
from .chart import check_output, new_figure, save_atomic, text
from .layout import OPAQUE, Layout
from .tables import _fit
from .text import display_names, percent, roof_name, short_label, uncounted_phrase

TOP = 20  # kernels with a roof shown in the table
SENTENCES = 3  # top kernels given a sentence
NAMED = 8  # top kernels named on the chart
STEP_CURVES = (0.01, 0.02, 0.05, 0.1)


def _target(target: float) -> str:
    """The target as a percentage of the roof, to three figures ('80', '97.5', '0.01'): never
    rounded to a 0 that reads as no target at all."""
    return f"{100 * target:.3g}"


def roof_cell(k: KernelWhatIf) -> str:
    """'DRAM measured', 'BF16 tensor', 'BF16 tensor best seen' (a ceiling raised to the best rate its
    run saw), 'BF16 tensor (FP16 cuBLAS)' (a ceiling another precision's product measured: `Roof.borrowed`);
    'no roof: FP32 work; DRAM bytes' for a kernel without one (what the file did not count,
    `text.uncounted_phrase`)."""
    if k.roof is None:
        return f"no roof: {uncounted_phrase(list(k.not_counted)) if k.not_counted else 'no work or bytes counted'}"
    return roof_name(k.roof) + (" best seen" if k.roof_seen else f" ({k.roof_borrowed})" if k.roof_borrowed
                                else " measured" if k.roof_measured else "")


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:,.3f}"


def _at_target(k: KernelWhatIf) -> str:
    """The time at the target; a kernel already at or past it keeps its time now, said so."""
    if k.target_ms is not None and k.target_ms >= k.time_ms:
        return f"{_ms(k.time_ms)} (now)"
    return _ms(k.target_ms)


def _config(k: KernelWhatIf) -> str:
    return k.label[len(k.name):].strip(" []") if k.label != k.name else "-"


def tables(w: WhatIf, width: int = 200, top: int = TOP) -> list[Table]:
    """The kernels with a roof, by saving (the `top` first), then those without one. A profile's
    columns: share of the step, launch configuration, roof, time now, at the roof, at the target,
    saved, the step with only this kernel improved and its speed-up, and the cumulative step;
    a run's: roof, time now, at the roof, at the target, saved and the speed-up alone."""
    shown = w.ranked[:top] + w.no_roof
    target = f"at {_target(w.target)} %"
    names = [f"{i + 1}. {name}" if k.saved_ms is not None else name  # the chart's numbers
             for i, (k, name) in enumerate(zip(shown, display_names([k.name for k in shown], 40, _names(w))))]
    if w.step_ms is not None:
        columns = [("share", "right"), ("grid x block", "right"), ("roof", "left"), ("now ms", "right"),
                   ("at roof ms", "right"), (f"{target} ms", "right"), ("saved ms", "right"),
                   ("step after ms", "right"), ("speed-up", "right"), ("cumulative ms", "right")]
        rows = [[name, f"{percent(k.time_share)}%", _config(k), roof_cell(k), _ms(k.time_ms), _ms(k.floor_ms),
                 _at_target(k), _ms(k.saved_ms), _ms(k.step_ms_after),
                 f"{k.speedup:.3f}x" if k.speedup else "-",
                 f"{_ms(k.cumulative_step_ms)} ({k.cumulative_speedup:.2f}x)" if k.cumulative_speedup else "-"]
                for k, name in zip(shown, names)]
        title = (f"{w.device}: {plural(len(w.kernels), 'kernel')} at {_target(w.target)} % of the roof that "
                 f"binds each, step {w.step_ms:,.3f} ms profiled"
                 + (f"; top {top} of {len(w.ranked)} by time saved" if len(w.ranked) > top else ""))
    else:
        columns = [("roof", "left"), ("now ms", "right"), ("at roof ms", "right"), (f"{target} ms", "right"),
                   ("saved ms", "right"), ("speed-up alone", "right")]
        joules = any(k.joules is not None for k in shown)  # measured with --energy: J per launch now
        columns += [("J now", "right")] if joules else []
        rows = [[name, roof_cell(k), _ms(k.time_ms), _ms(k.floor_ms), _at_target(k), _ms(k.saved_ms),
                 f"{k.speedup:.2f}x" if k.speedup else "-",
                 *([f"{k.joules:.3g}" if k.joules is not None else "-"] if joules else [])]
                for k, name in zip(shown, names)]
        problem = f" ({w.problem})" if w.problem else ""  # a profile of programs read apart has none
        title = (f"{w.device}: {plural(len(w.kernels), 'kernel')}{problem} at {_target(w.target)} % of the "
                 "roof that binds each" + (f"; top {top} of {len(w.ranked)} by time saved" if len(w.ranked) > top else ""))
    return (_fit(title, ("kernel", "left"), columns, rows, width) + (fusion_table(w, width) if w.fusion else [])
            + (op_tables(w, width) if w.ops else []) + (phase_tables(w, width) if w.phases else []))


def phase_tables(w: WhatIf, width: int = 200) -> list[Table]:
    """A results file's kernels with a timeline: each one's fill, drain and tail wave (ms) and what
    each saves at the steady phase's rate, and the step (programs profiled apart, and a run's
    kernels: the kernel) without its tail wave or without its fill."""
    def cell(ms: float, saved: float) -> str:
        return f"{ms:,.3f} ({saved:,.3f})" if ms else "-"

    columns = [("now ms", "right"), ("steady at", "right"), ("fill (saved) ms", "right"),
               ("drain (saved) ms", "right"), ("tail wave (saved) ms", "right"), ("SMs in tail", "right"),
               ("step without tail ms" if w.step_ms is not None else "kernel without tail ms", "right"),
               ("without fill ms", "right")]
    rows = [[name, _ms(p.time_ms),
             f"{ROOF_NAMES.get(p.steady_unit, p.steady_unit)} {100 * p.steady_share:.0f}%",
             cell(p.fill_ms, p.fill_saved_ms),
             cell(p.drain_ms, p.drain_saved_ms), cell(p.tail_ms, p.tail_saved_ms),
             f"{100 * p.tail_busy:.0f}%" if p.tail_busy is not None else "-",
             _ms(p.ms_without_tail), _ms(p.ms_without_fill)]
            for p, name in zip(w.phases, _cut([p.kernel for p in w.phases], w))]
    return _fit("by phase (each kernel's timeline): its fill, drain and tail wave at its steady part's rate, their "
                "work on the steady part's busiest unit at the share of its peak it holds there (steady at); kernels "
                f"sampled in fewer than {MIN_PHASE_INTERVALS} intervals have no phases", ("kernel", "left"), columns,
                rows, width)


OPS_TOP = 10  # ops shown by saving


def op_tables(w: WhatIf, width: int = 200, top: int = OPS_TOP) -> list[Table]:
    """A profile's ops (each in its phase) at the target, by saving (the `top` first): share of the
    step, the roof binding most of its floor, time now, at its roofs, at the target, saved, the step
    with only this op improved and its speed-up; then its op pairs (`op_fusion`), where found."""
    target = f"at {_target(w.target)} %"
    shown = w.ops[:top]
    columns = [("phase", "left"), ("share", "right"), ("roof", "left"), ("launches", "right"), ("now ms", "right"),
               ("at roofs ms", "right"), (f"{target} ms", "right"), ("saved ms", "right"), ("step after ms", "right"),
               ("speed-up", "right")]
    rows = [[o.op, o.phase, f"{percent(o.time_ms / w.step_ms)}%", roof_name(o.binding) if o.binding else "no roof",
             str(o.launches), _ms(o.time_ms), _ms(o.floor_ms), _ms(o.target_ms), _ms(o.saved_ms),
             _ms(o.step_ms_after), f"{o.speedup:.3f}x"] for o in shown]
    title = (f"by op: each op's kernels at {_target(w.target)} % of their own roofs"
             + (f"; top {top} of {len(w.ops)} by time saved" if len(w.ops) > top else ""))
    out = _fit(title, ("op", "left"), columns, rows, width)
    if w.op_fusion:
        roof = w.op_fusion[0]
        columns = [("reads it next", "left"), ("times", "right"), ("passing MB", "right"), ("saved ms", "right"),
                   ("step after ms", "right"), ("speed-up", "right")]
        rows = [[f"{i + 1}. {f.first}", f.second, str(f.occurrences), f"{f.passing_bytes / 1e6:,.1f}",
                 _ms(f.saved_ms), _ms(f.step_ms_after), f"{f.speedup:.3f}x"] for i, f in enumerate(w.op_fusion)]
        out += _fit(f"op fusion: an op whose last launch writes to DRAM what the next op's first launch reads, both "
                    f"memory-bound; saved: those bytes written and read once less at DRAM {roof.roof_gbps:,.0f} GB/s"
                    f"{' measured' if roof.roof_measured else ''}, never more than the shorter launch",
                    ("writes", "left"), columns, rows, width)
    return out


def fusion_table(w: WhatIf, width: int = 200) -> list[Table]:
    """The fusion what-if's kernel pairs, by saving: the kernel that writes, the one that reads
    next, their binding roofs, how often one runs right after the other, the DRAM bytes passing
    between them (MB), the ms saved at the DRAM roof, and the step after with its speed-up (as
    few tables as fit `width`)."""
    roof = w.fusion[0]
    names = _cut([_short(name, w) for f in w.fusion for name in (f.first, f.second)], w)
    columns = [("reads it next", "left"), ("roofs", "left"), ("times", "right"), ("passing MB", "right"),
               ("saved ms", "right"), ("step after ms", "right"), ("speed-up", "right")]
    rows = [[f"{i + 1}. {names[2 * i]}", names[2 * i + 1], f"{roof_name(f.first_roof)}, {roof_name(f.second_roof)}",
             str(f.occurrences), f"{f.passing_bytes / 1e6:,.1f}", _ms(f.saved_ms), _ms(f.step_ms_after),
             f"{f.speedup:.3f}x"] for i, f in enumerate(w.fusion)]
    title = (f"fusion: kernels that write to DRAM what the next one reads, both memory-bound; saved: the bytes "
             f"passing written and read once less at DRAM {roof.roof_gbps:,.0f} GB/s"
             f"{' measured' if roof.roof_measured else ''}, never more than the shorter launch")
    return _fit(title, ("writes", "left"), columns, rows, width)


def _names(w: WhatIf) -> list[str]:
    """Every kernel name of `w`'s file, for `display_names` to cut each as `show` cuts it."""
    return [k.name for k in w.kernels]


def _cut(labels: list[str], w: WhatIf) -> list[str]:
    """Kernel labels of `w` in 40 characters: a name as `show` cuts it (`display_names`), a label
    with its launch (a kernel that shares its name) with the launch written short (`short_label`:
    its long form leaves no room for the name)."""
    return [short_label(label, 40) if LAUNCH_LABEL.search(label) else name
            for label, name in zip(labels, display_names(labels, 40, _names(w)))]


def _short(label: str, w: WhatIf) -> str:
    """A kernel's label without its launch configuration where no other kernel shares its name."""
    k = next((k for k in w.kernels if k.label == label), None)
    return k.name if k is not None and sum(1 for o in w.kernels if o.name == k.name) == 1 else label


def _t(ms: float) -> str:
    """A time in a sentence, four significant digits, trailing zeros kept: '0.7252', '10.40', '275.6'."""
    return f"{ms:#.4g}".rstrip(".")


def sentence(k: KernelWhatIf, w: WhatIf) -> str:
    """'softmax backward: 1.07 ms -> 0.4518 ms at 80 % of DRAM; step 10.54 -> 10.26 ms, 1.03x' (a
    profile), 'naive: 275.6 ms -> 88.49 ms at 80 % of L1/shared; 3.11x alone' (a run). The name
    carries its launch configuration where two kernels of the file share it."""
    shared = sum(1 for other in w.kernels if other.name == k.name) > 1
    head = (f"{k.label if shared else k.name}: {_t(k.time_ms)} ms -> {_t(k.target_ms)} ms at "
            f"{_target(w.target)} % of {roof_name(k.roof)}")
    if w.step_ms is not None:
        return f"{head}; step {_t(w.step_ms)} -> {_t(k.step_ms_after)} ms, {k.speedup:.2f}x"
    return f"{head}; {k.speedup:.2f}x alone"


def lines(w: WhatIf, most: int = SENTENCES) -> list[str]:
    """One sentence per top kernel that saves anything (`sentence`), then, for a profile, every
    kernel with a roof at the target together."""
    out = [sentence(k, w) for k in w.ranked[:most] if k.saved_ms > 0]
    if w.step_ms is not None and w.ranked:
        after = w.step_ms_after
        out.append(f"all {plural(len(w.ranked), 'kernel')} with a roof at {_target(w.target)} % of it: step "
                   f"{_t(w.step_ms)} -> {_t(after)} ms, {w.step_ms / after:.2f}x")
    return out


def draw(w: WhatIf, out: Path, source: str = "") -> Path:
    """Draw the what-if chart into `out` (.png, .svg or .pdf), atomically. Raises UsageError for
    a bad output path or when no kernel has a roof."""
    fmt = check_output(out)
    save_atomic(render(w, source), Path(out), fmt)
    return Path(out)


def render(w: WhatIf, source: str = ""):
    """The what-if chart as a matplotlib Figure (module docstring). Raises UsageError when no
    kernel has a roof."""
    ranked = w.ranked
    if not ranked:
        raise UsageError("no kernel has a roof (no work or bytes counted), so there is no headroom to draw")
    profile = w.step_ms is not None
    xs = [k.time_share if profile else k.time_ms for k in ranked]
    ys = [k.time_ms / k.target_ms for k in ranked]
    biggest = max(k.saved_ms for k in ranked) or 1.0
    sizes = [20 + 500 * k.saved_ms / biggest for k in ranked]
    fig = new_figure(11, 6.5, 120)
    ax = fig.add_subplot(1, 1, 1)
    colors = ["tab:red" if k.saved_ms > 0 else "0.6" for k in ranked]
    ax.scatter(xs, ys, s=sizes, c=colors, edgecolors="black", linewidths=0.5, zorder=3, alpha=0.85)
    ax.set_xscale("log")
    ax.set_yscale("log")
    x_lo, x_hi = min(xs) / 1.6, max(xs) * 4
    y_hi = max(max(ys) * 1.6, 1.5)
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(0.95, y_hi)
    ax.axhline(1.0, color="black", lw=1)
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}x"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda y, _: f"{y:g}x" if y_hi / 0.95 < 12 else ""))
    if profile:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{100 * x:g} %"))
        ax.set_xlabel("share of the step's profiled GPU time (dotted: a kernel on the curve saves that share "
                      "of the step)")
    else:
        ax.set_xlabel("time now, ms (one launch; the kernels are alternatives, not parts of a step)")
    ax.set_ylabel(f"headroom: time now / time at {_target(w.target)} % of its roof")
    ax.grid(True, which="major", alpha=0.25)
    what = f"step {figure(w.step_ms)} ms -> {figure(w.step_ms_after)} ms with every kernel at the target" if profile \
        else f"{w.problem}: each kernel alone"
    ax.set_title(text(f"{w.device}: what each kernel saves at {_target(w.target)} % of its binding roof ({what})"
                      + (f"\n{source}" if source else "")), fontsize=9, loc="left")
    notes = []
    if w.no_roof:
        notes.append(f"not drawn, no roof (nothing counted to place one): {plural(len(w.no_roof), 'kernel')}")
    notes.append("grey: already at or past the target; marker area: ms saved")
    fig.text(0.01, 0.005, text("; ".join(notes)), fontsize=7.5, color="0.3", va="bottom")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    named = [k for k in ranked[:NAMED] if k.saved_ms > 0]
    short = display_names([k.name for k in named], 30)  # the chart's own width: told apart among its labels
    labels = []
    for i, (k, name) in enumerate(zip(named, short)):
        x = k.time_share if profile else k.time_ms
        label = f"{i + 1}. {text(name)}\n-{figure(k.saved_ms)} ms, {roof_name(k.roof)}"
        labels.append(ax.annotate(label, (x, k.time_ms / k.target_ms), xytext=(8, 0), textcoords="offset points",
                                  fontsize=7, ha="center", va="center", zorder=4, bbox=OPAQUE,
                                  arrowprops=dict(arrowstyle="-", lw=0.6, color="0.4", shrinkA=0, shrinkB=4)))
    # the dotted curves are drawn beneath the labels, whose opaque backgrounds hide them; the
    # labels keep clear of the curves' names
    curves = _step_curves(ax, x_lo, x_hi, y_hi) if profile else []
    Layout(fig, ax, skip=labels, under=curves).place_annotations(labels, passes=8)
    return fig


def _step_curves(ax, x_lo: float, x_hi: float, y_hi: float) -> list:
    """The dotted curves of kernels that save `STEP_CURVES` of the step: share x (1 - 1/h) = s,
    so h = share / (share - s), each marked with its share at its top. Returns the curves
    (matplotlib lines)."""
    grid = [x_lo * (x_hi / x_lo) ** (i / 400) for i in range(401)]
    curves = []
    for s in STEP_CURVES:
        pts = [(x, x / (x - s)) for x in grid if x > s and x / (x - s) <= y_hi]
        if len(pts) > 1:
            curves += ax.plot([p[0] for p in pts], [p[1] for p in pts], ls=":", lw=0.9, color="0.45", zorder=1)
            ax.annotate(f"saves {100 * s:g} %", pts[0], fontsize=7, color="0.35", xytext=(2, -2),
                        textcoords="offset points", ha="left", va="top")
    return curves
