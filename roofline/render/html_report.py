"""The interactive report: one self-contained HTML file (`roofline plot --out report.html`) that
opens offline, drawn with Plotly (the optional extra `roofline[report]`; its JavaScript is
written into the file, so no network and no server is needed).

What it holds, from a results document (no GPU needed):
- the roofline, log-log: x arithmetic intensity (FLOP per byte at each memory level), y GFLOP/s,
  with the roofs the file records (`model.roofs.Roofs`: theoretical solid, measured dashed).
  A run (ladder, user kernels, a tile search, the largest size of a sweep) has the compute roof
  of its precision (FP32, or a tensor-core run's: BF16 tensor, ...) and one memory roof per level
  it records (DRAM, L2, L1/shared); a profile has one compute roof per
  precision its kernels use, each in the colour of its kernels' points, and the memory roofs of
  the levels Nsight Compute counted.
- one point per kernel and level: a run's at the model's GMEM and SMEM intensities and, where
  profiled, at the L2 and DRAM bytes counted (`model.roofs.intensities`); a profile's at the
  DRAM, L2 and L1/shared bytes counted (`ProfiledKernel.intensity`), marker area by time share.
  Hovering a point gives the kernel's name, its time (and % of cuBLAS) or time share, its
  intensity at every level, occupancy and the verdict (`render.text`, from the results' own
  `verdict`). The legend toggles levels, roofs and (profiles) precisions; the buttons above the
  chart show one level at a time.
- a table beside the chart with every kernel of the file, sortable by any column (a click on
  its header); a click on a row marks its points, a click on a point marks its row.
- for a size sweep, GFLOP/s against size as a second chart; the file's notes below.

Kernel names come from files (C++ templates: `void f<float, 128>(...)`): every text is escaped
here, and Plotly writes its data with `<`, `>` and `/` escaped. Nothing is computed here but
positions on the page: roofs, intensities and verdicts are the results objects' own.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from pathlib import Path

from .. import files
from ..errors import RunError, UsageError
from ..extras import install_hint
from ..model.roofs import ridge_point
from ..model.units import figure, plural
from ..results.profile import ProfiledKernel, ProfileResults
from ..results.schema import Results
from .text import (
    bound_by_size,
    ceiling_lines,
    gemm_title,
    l2_note,
    limiters,
    label_cut,
    middle_cut,
    occupancy_phrase,
    percent,
    precision_cell,
    profiled_kernel_verdict,
    roof_name,
    run_verdict_line,
    verdict_sentence,
)
from .scene import L1_LEFT_OUT, l1_left_out, profile_scene, roofs_phrase, run_scene
from .chart import kernel_style, load_matplotlib
from .style import COMPUTE_COLORS, PROFILE_MARKERS, RUN_MARKERS, USER_COLORS, css_color, profile_marker_size

SUFFIXES = (".html", ".htm")
CHART_ID = "roofline-chart"
SWEEP_ID = "sweep-chart"
TIMELINE_ID = "timeline-chart"
TIMELINE_KERNELS = 10  # the longest kernels with a timeline, one at a time behind a menu
# Point symbols per level: a run's (model and counted levels) and a profile's (counted levels).
RUN_LEVELS = {level: symbol for level, (_, symbol) in RUN_MARKERS.items()}
PROFILE_LEVELS = tuple((level, label, symbol) for level, label, _, symbol in PROFILE_MARKERS)


NAME_WIDTH = 0.08  # a phase's name ('drain 2 %', 10 px type) as a share of the chart's width (about 800 px)


def _side(phase, n: int) -> str:
    """Where a phase's name goes over it: from the end it touches inward (first or last of the `n`
    intervals), so that it stays inside the chart; else over its middle."""
    return "left" if phase.first == 0 else "right" if phase.last == n - 1 else "center"


def _name_span(phase, n: int, x0: float, x1: float) -> tuple[float, float]:
    """The stretch of the run (shares of it, 0..1) that a phase's name covers over its band [x0, x1]
    (shares of the run), by `_side` and `NAME_WIDTH`."""
    side = _side(phase, n)
    if side == "left":
        return x0, x0 + NAME_WIDTH
    if side == "right":
        return x1 - NAME_WIDTH, x1
    return (x0 + x1 - NAME_WIDTH) / 2, (x0 + x1 + NAME_WIDTH) / 2


def is_report(path: Path) -> bool:
    """Whether `path` asks for the HTML report (suffix .html or .htm, any case)."""
    return Path(path).suffix.lower() in SUFFIXES


def require_plotly() -> None:
    """Raises RunError (exit 1, one line naming the install command) when Plotly is missing."""
    try:
        import plotly.graph_objects  # noqa: F401
    except ImportError:
        raise RunError(f"the HTML report needs Plotly, which is not installed: {install_hint('report')}") from None


def check_output(out: Path, inputs: list[Path]) -> Path:
    """Check before any work that the report can be written to `out`: writable
    (`files.check_writable`), not one of the `inputs` (the results files it is drawn from), and
    Plotly installed. Raises UsageError for the first two, RunError for the last."""
    files.check_writable(out)
    files.check_not_input(out, inputs)
    require_plotly()
    return Path(out)


@dataclass
class Report:
    """The report's parts before they are written: a title, the figures (Plotly `Figure`, keyed
    by the id of their <div>), the kernel table (header cells; rows of (text, sort key) cells, one
    row per kernel of the file, in its order) and notes."""

    title: str
    subtitle: str
    figures: dict = field(default_factory=dict)
    header: list[tuple[str, str]] = field(default_factory=list)  # (column, 'num' or 'text')
    rows: list[list[tuple[str, float | str | None]]] = field(default_factory=list)
    row_titles: list[str] = field(default_factory=list)  # a row's tooltip: the full (demangled) name
    notes: list[str] = field(default_factory=list)
    modules: str = ""  # a profile's module tree (`module_tree`), where it records who launched its kernels


def write(doc: Results | ProfileResults, out: Path, inputs: list[Path], measured: bool = False,
          highlight: list[str] | None = None, notes: list[str] | None = None) -> Path:
    """Write the report of `doc` (read from `inputs`) to `out`, atomically (`files.write_atomic`).
    `measured` shows a run's counted levels from the start (they are in the legend either way);
    the kernels in `highlight` are drawn at full strength, the others faded; `notes` (one line
    each) are printed under the charts. Returns `out`. Raises UsageError for an output that is one
    of the inputs or cannot be written, RunError when Plotly is missing."""
    check_output(out, inputs)
    report = build(doc, inputs, measured, highlight, notes)
    page = page_html(report)
    files.write_atomic(Path(out), lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
    return Path(out)


def build(doc: Results | ProfileResults, inputs: list[Path], measured: bool = False,
          highlight: list[str] | None = None, notes: list[str] | None = None) -> Report:
    """The report's figures, table and notes for `doc` (see the module's docstring)."""
    require_plotly()
    sources = ", ".join(str(p) for p in inputs)
    if doc.kernels_are_a_step:  # a program's step: its kernels by their share of it
        report = _profile(doc, set(highlight or ()))
    else:
        report = _run(doc, measured, set(highlight or ()))
    timeline = _timelines(doc)
    if timeline is not None:
        report.figures[TIMELINE_ID] = timeline
    report.subtitle = f"from {sources}" + (f", written by {doc.tool}" if doc.tool else "") + \
        (f" on {doc.created}" if doc.created else "")
    report.notes = list(notes or []) + report.notes
    return report


# --- timelines ----------------------------------------------------------------------------------

def _timelines(doc: Results | ProfileResults):
    """The kernels' runs over time (their recorded PM-sampling timelines, `results.timeline`), the
    `TIMELINE_KERNELS` longest, one shown at a time behind a menu: each unit's share of its peak and
    the share of the SMs busy against µs into the run, its phases shaded and named. None where no
    kernel of `doc` records a timeline."""
    import plotly.graph_objects as go

    from ..model.timeline import ROOF_NAMES
    from .timeline_chart import LABELLED_FROM, PHASE_COLORS, UNIT_COLORS

    timed = doc.timed_kernels()[:TIMELINE_KERNELS]
    if not timed:
        return None
    fig, owner, shapes, buttons = go.Figure(), [], [], []
    for n, tk in enumerate(timed):
        tl = tk.timeline
        t = [a + d / 2 for a, d in zip(tl.t_us, tl.dt_us)]
        series = [("SMs busy", tl.busy, "#444444", "dot")] + \
                 [(ROOF_NAMES.get(u, u), v, UNIT_COLORS.get(u, "#7f7f7f"), "solid") for u, v in tl.shares.items()]
        for name, values, color, dash in series:
            fig.add_trace(go.Scatter(x=t, y=[100 * v for v in values], mode="lines", name=_h(name), visible=n == 0,
                                     line=dict(color=color, dash=dash, width=1.4),
                                     hovertemplate=f"{_h(name)}: %{{y:.0f}} %% at %{{x:.1f}} µs<extra></extra>"))
            owner.append(n)
        ends = [a + d for a, d in zip(tl.t_us, tl.dt_us)]
        kernel_shapes, before, lowered = [], None, False
        run_from, run_us = tl.t_us[0], ends[-1] - tl.t_us[0]
        for ph in tl.phases():
            named = ph.share >= LABELLED_FROM  # a shorter phase is in the table of `show`, not named over its neighbour
            # a name that would meet the one named before it (two short phases side by side: 'drain 2 %' beside
            # 'tail 3 %') goes halfway down, unless that one went down
            span = _name_span(ph, len(ends), (tl.t_us[ph.first] - run_from) / run_us,
                              (ends[ph.last] - run_from) / run_us)
            lowered = named and before is not None and not lowered and span[0] < before[1]
            before = span if named else before
            kernel_shapes.append(dict(type="rect", xref="x", yref="paper", x0=tl.t_us[ph.first], x1=ends[ph.last],
                                      y0=0, y1=1, fillcolor=PHASE_COLORS[ph.name], opacity=0.6, line_width=0,
                                      layer="below", label=dict(text=_h(f"{ph.name} {100 * ph.share:.0f} %") if named
                                                                else "",
                                                                textposition=f"{'middle' if lowered else 'top'} "
                                                                             f"{_side(ph, len(ends))}",
                                                                font=dict(size=10))))
        shapes.append(kernel_shapes)
    for n, tk in enumerate(timed):
        cut = f"; the first {100 * tk.timeline.covered:.0f} % of its run sampled" if tk.timeline.cut_short else ""
        title = _title(f"{label_cut(tk.label, 90)}: {figure(tk.time_ms)} ms; {tk.timeline.source}{cut}")
        buttons.append(dict(label=_h(label_cut(tk.label, 80)), method="update",
                            args=[{"visible": [o == n for o in owner]}, {"shapes": shapes[n], "title.text": title}]))
    fig.update_layout(
        title=dict(text=buttons[0]["args"][1]["title.text"], font=dict(size=13)), shapes=shapes[0],
        xaxis=dict(title="µs from the first busy interval (Nsight Compute's PM sampling)", gridcolor="#eeeeee"),
        yaxis=dict(title="% of peak (units); % of SMs busy", range=[0, 115], tickvals=[0, 25, 50, 75, 100],
                   gridcolor="#eeeeee"), plot_bgcolor="white",
        updatemenus=[dict(buttons=buttons, direction="down", x=1.0, xanchor="right", y=1.15, yanchor="top")]
        if len(buttons) > 1 else [], margin=dict(t=90), height=420)
    return fig


# --- runs ---------------------------------------------------------------------------------------

def _run(doc: Results, measured: bool, highlight: set[str]) -> Report:
    import plotly.graph_objects as go

    from .roofline_chart import model_note

    dev, prob, ref = doc.device, doc.problem.problem, doc.reference
    roofs = dev.roofs
    timed = [k for k in doc.kernels if k.timed]
    if not timed:
        failed = "; ".join(f"{k.name}: {k.error or 'not timed'}" for k in doc.kernels[:3])
        raise UsageError(f"no kernel in these results was verified and timed, so there is nothing to draw ({failed[:200]})"
                         if doc.kernels else "no kernels in these results; make them with roofline run --all")
    if measured and not any(k.counted for k in doc.kernels):
        raise UsageError("no kernel in these results was profiled; make them with roofline run --all --profile")
    load_matplotlib()  # the kernels' colours are the charts' (matplotlib's colour maps)
    scene = run_scene([doc], measured, highlight)
    kernels = scene.kernels()
    points = {g[0].kernel: {p.level: p.x for p in g if p.x is not None} for g in kernels}
    levels = [lv for lv in RUN_LEVELS if any(p.level == lv for p in scene.points)]
    verdicts = {k.name: doc.verdict(k) for k in timed}

    fig = go.Figure()
    ais = [p.x for p in scene.points if p.x is not None] or [roofs.ridge_point]
    top = doc.peak_gflops()  # the roof of the problem's precision: FP32's, or its tensor cores'
    ridge = ridge_point(top, roofs.dram_gbps)
    x_lo, x_hi = min(ais + [ridge]) / 4, max(ais + [ridge]) * 8
    _memory_roofs(fig, scene.memory(), top, x_lo, "roofs")
    _compute_roofs(fig, scene.compute(), x_lo, x_hi, "roofs")
    fig.add_trace(go.Scatter(x=[x_lo, x_hi], y=[ref.gflops, ref.gflops], mode="lines", name=_h(
        f"cuBLAS (reference) {ref.gflops:,.0f} GFLOP/s"), line=dict(color="#777777", dash="dot", width=1.5),
        legendgroup="roofs", hovertemplate=_h(f"cuBLAS (reference): {ref.gflops:,.0f} GFLOP/s, "
                                              f"{ref.time_ms:.3f} ms") + "<extra></extra>"))
    of = {g[0].kernel: doc.kernels[g[0].index] for g in kernels}
    point_traces = []
    for level in levels:
        at = [p for p in scene.points if p.level == level]
        fig.add_trace(go.Scatter(
            x=[p.x for p in at], y=[p.y for p in at], mode="markers", name=_h(level),
            legendgroup="points", legendgrouptitle_text="kernels at each level",
            # counted levels start hidden (as in the PNG without --measured) where each of their kernels has a model point
            visible=True if any(p.shown for p in at) else "legendonly",
            customdata=[p.index for p in at],
            hovertext=[_run_hover(of[p.kernel], level, points[p.kernel], verdicts[p.kernel], ref.time_ms) for p in at],
            hovertemplate="%{hovertext}<extra></extra>",
            marker=dict(symbol=RUN_LEVELS[level], size=[16 if p.user else 11 for p in at],
                        color=[css_color(p.color) for p in at], line=dict(color="black", width=0.8),
                        opacity=[0.2 if p.faded else 0.95 for p in at]),
            unselected=dict(marker=dict(opacity=0.15))))
        point_traces.append(len(fig.data) - 1)
    flat = [p for p in scene.points if p.x is None]
    for p in flat:  # a user kernel with neither a model nor counters: its rate alone
        fig.add_trace(go.Scatter(
            x=[x_lo, x_hi], y=[p.y, p.y], mode="lines", name=_h(f"{p.kernel} (no model)"),
            customdata=[p.index] * 2, line=dict(color=css_color(p.color), dash="dash", width=2),
            hovertext=[_run_hover(of[p.kernel], None, {}, verdicts[p.kernel], ref.time_ms)] * 2,
            hovertemplate="%{hovertext}<extra></extra>"))
    _axes(fig, x_lo, x_hi, "arithmetic intensity (FLOP per byte at each level)", "GFLOP/s (measured, median)",
          [(lv, [point_traces[i]]) for i, lv in enumerate(levels)], point_traces)
    title = f"SGEMM {prob.text()} FP32" if not prob.tensor else gemm_title(prob)
    _titled(fig, _title(f"{dev.name}: {title}, hierarchical roofline ({roofs_phrase(doc)}{l2_note(doc)})"))

    report = Report(title=f"{dev.name}: {gemm_title(prob)}", subtitle="")
    report.figures[CHART_ID] = fig
    report.header = [("kernel", "text"), ("GFLOP/s", "num"), ("time ms", "num"), ("% cuBLAS", "num")] + \
        [(f"AI {lv}", "num") for lv in levels] + \
        [("registers", "num"), ("occupancy %", "num"), ("limiter", "text"), ("bound", "text"),
         ("x floor", "num"), ("verdict", "text")]
    for k in doc.kernels:
        v = verdicts.get(k.name)
        occ = k.occupancy
        pct = 100 * ref.time_ms / k.time_ms if k.timed else None
        b = v.binding if v else None
        report.rows.append(
            [(k.name + (" (yours)" if k.user else ""), k.name),
             _num(k.gflops if k.timed else None, "{:,.0f}"), _num(k.time_ms if k.timed else None, "{:.4g}"),
             _pct(pct / 100 if pct is not None else None)]
            + [_num(points.get(k.name, {}).get(lv), "{:.3g}") for lv in levels]
            + [_num(k.registers, "{}"), _pct(occ.occupancy if occ else None),
               (limiters(occ) if occ else "-", limiters(occ) if occ else ""),
               (b.level if b else "-", b.level if b else ""), _num(v.times_floor if v else None, "{:.2f}"),
               (run_verdict_line(doc, k, v) if v else f"not drawn: {k.error or 'not verified and timed'}", "")])
        report.row_titles.append(k.summary or k.name)
    if doc.sweep:
        report.figures[SWEEP_ID] = _sweep(doc, highlight)
        report.notes.append(f"The roofline shows the sweep's largest size, {prob.text()}; the second chart every size.")
    report.notes.append(model_note([k for k in doc.kernels if k.timed]).replace("\n", " "))
    report.notes += ceiling_lines(doc)  # a measured ceiling a rate of the file went past, and what is read instead
    if flat:
        report.notes.append(f"{', '.join(p.kernel for p in flat)}: no traffic model and no counters, drawn as a dashed "
                            "line at its rate; run --profile to place it by the bytes Nsight Compute counts.")
    failed = [k.name for k in doc.kernels if not k.timed]
    if failed:
        report.notes.append(f"Not drawn, failed verification or not timed: {', '.join(failed)} (in the table).")
    return report


def _run_hover(k, level: str | None, pts: dict[str, float], v, ref_ms: float) -> str:
    lines = [f"<b>{_h(k.name)}</b>" + (" (yours)" if k.user else ""),
             f"{k.gflops:,.0f} GFLOP/s, {k.time_ms:.4g} ms, {100 * ref_ms / k.time_ms:.1f} % of cuBLAS"]
    if level is not None:
        lines.append(f"this point: {_h(level)}, {pts[level]:.3g} FLOP/B")
    lines.append("intensity: " + (", ".join(f"{_h(lv)} {ai:.3g}" for lv, ai in pts.items())
                                  or "none (no model; --profile counts its bytes)"))
    regs = f"{k.registers} registers, " if k.registers is not None else ""
    lines.append(_h(regs + occupancy_phrase(k.occupancy)))
    lines += _wrap(verdict_sentence("verdict", v, k.occupancy))
    return "<br>".join(lines)


def _sweep(doc: Results, highlight: set[str]):
    """GFLOP/s against size (square sweeps, log x) or shape by shape in FLOP order, a line per
    kernel, in the sweep chart's colours (`sweep_chart`: a ladder kernel's technique, the user's own)."""
    import plotly.graph_objects as go

    square = all(p.problem.problem.square for p in doc.sweep)
    sweep = sorted(doc.sweep, key=lambda p: (p.problem.problem.flops, p.problem.m, p.problem.n))
    xs = [p.problem.m if square else p.problem.problem.text() for p in sweep]
    names = []
    for p in sweep:
        names += [k.name for k in p.kernels if k.name not in names]
    timed = [n for n in names if any(k.name == n and k.timed for p in sweep for k in p.kernels)]
    users = [k.name for k in doc.kernels if k.user and k.name in timed]
    ladder = [n for n in timed if n not in users]
    colors = [css_color(USER_COLORS[users.index(n) % len(USER_COLORS)] if n in users else
                        kernel_style(n, ladder.index(n), len(ladder))["color"] if n in ladder else "0.6")
              for n in names]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=xs, y=[p.reference.gflops for p in sweep], mode="lines+markers", name="cuBLAS",
                             line=dict(color="black", width=3),
                             hovertemplate="cuBLAS at %{x}: %{y:,.0f} GFLOP/s<extra></extra>"))
    for name, color in zip(names, colors):
        x, y, text = [], [], []
        for size, p in zip(xs, sweep):
            k = next((k for k in p.kernels if k.name == name and k.timed), None)
            if k is None:
                continue
            x.append(size)
            y.append(k.gflops)
            pct = f", {k.pct_of_reference:.1f} % of cuBLAS" if k.pct_of_reference else ""
            text.append(f"<b>{_h(name)}</b> at {_h(p.problem.problem.text())}<br>{k.gflops:,.0f} GFLOP/s{pct}"
                        f"<br>binds: {_h(bound_by_size(doc.sweep_verdict(p, name)))}")
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers" if square else "markers", name=_h(name),
                                 line=dict(color=color), opacity=_strength(name, highlight), hovertext=text,
                                 hovertemplate="%{hovertext}<extra></extra>"))
    fig.update_layout(title=dict(text=_title(f"{doc.device.name}: GFLOP/s against problem size"), font=dict(size=14)),
                      height=560, template="plotly_white", hovermode="closest",
                      xaxis=dict(type="log" if square else "category", tickvals=xs if square else None,
                                 title="M = N = K" if square else "shape (M x N x K), in order of FLOPs"),
                      yaxis=dict(type="log", title="GFLOP/s (measured, median)"),
                      legend=dict(font=dict(size=10)))
    return fig


# --- profiles -----------------------------------------------------------------------------------

def _profile(doc: ProfileResults, highlight: set[str]) -> Report:
    import plotly.graph_objects as go

    roofs = doc.device.roofs
    scene = profile_scene(doc, highlight=highlight)
    drawn = {p.index for p in scene.points}
    precisions = [r.level for r in scene.compute() if not r.measured]
    ais = [p.x for p in scene.points]
    x_lo, x_hi = (min(ais) / 4, max(ais) * 4) if ais else (0.01, 1000.0)
    tops = [r.value for r in scene.compute() if not r.measured] or [roofs.fp32_gflops]
    fig = go.Figure()
    _memory_roofs(fig, scene.memory(), max(tops), x_lo, "memory roofs")
    point_traces, level_of = [], {}
    for precision in precisions:
        _compute_roofs(fig, [r for r in scene.compute() if r.level == precision], x_lo, x_hi, precision)
        for _, label, symbol in PROFILE_LEVELS:
            at = [p for p in scene.points if p.roof == precision and p.level == label]
            if not at:
                continue
            fig.add_trace(go.Scatter(
                x=[p.x for p in at], y=[p.y for p in at], mode="markers",
                name=_h(f"{precision} at {label}"), legendgroup=precision, legendgrouptitle_text=_h(precision),
                customdata=[p.index for p in at],
                hovertext=[_profile_hover(doc, doc.kernels[p.index], p.index, label) for p in at],
                hovertemplate="%{hovertext}<extra></extra>",
                marker=dict(symbol=symbol, size=[profile_marker_size(p.share) for p in at],
                            color=COMPUTE_COLORS.get(precision, "#444444"), line=dict(color="black", width=0.7),
                            opacity=[0.2 if p.faded else 0.8 for p in at]),
                unselected=dict(marker=dict(opacity=0.12))))
            point_traces.append(len(fig.data) - 1)
            level_of[len(fig.data) - 1] = label
    buttons = [(label, [i for i in point_traces if level_of[i] == label]) for _, label, _ in PROFILE_LEVELS
               if any(level_of[i] == label for i in point_traces)]
    _axes(fig, x_lo, x_hi, "arithmetic intensity (FLOP per byte at each level, as Nsight Compute counted)",
          "GFLOP/s of the kernel's main precision", buttons, point_traces)
    command = " ".join(doc.command) if doc.command else (doc.report or "")
    _titled(fig, _title(f"{doc.device.name}: {plural(len(doc.kernels), 'kernel')} by GPU time "
                        f"({figure(doc.total_time_ms)} ms profiled) {middle_cut(command, 90)}"))

    report = Report(title=f"{doc.device.name}: profile of {middle_cut(command, 80) or 'a program'}", subtitle="")
    report.figures[CHART_ID] = fig
    report.header = [("#", "num"), ("kernel", "text"), ("time %", "num"), ("launches", "num"), ("time ms", "num"),
                     ("precision", "text"), ("GFLOP/s", "num"), ("AI DRAM", "num"), ("AI L2", "num"),
                     ("AI L1/shared", "num"), ("occupancy %", "num"), ("achieved %", "num"), ("bound", "text"),
                     ("x floor", "num"), ("verdict", "text")]
    for i, k in enumerate(doc.kernels):
        v = doc.verdict(k)
        b = v.binding
        occ = k.occupancy
        report.rows.append(
            [(str(i + 1), i + 1), (k.name, k.name), _num(100 * k.time_share, "{:.2f}"), _num(k.launches, "{:,}"),
             _num(k.time_ms, "{:.4g}"), (precision_cell(k, doc.device), k.precision), _num(k.gflops, "{:,.0f}")]
            + [_num(k.intensity(lv), "{:.3g}") for lv, _, _ in PROFILE_LEVELS]
            + [_pct(occ.occupancy if occ else None), _pct(k.achieved_occupancy),
               (roof_name(b.level) if b else "-", b.level if b else ""), _num(v.times_floor, "{:.2f}"),
               (profiled_kernel_verdict(doc, k), "")])
        report.row_titles.append(k.demangled or k.name)
    not_drawn = [str(i + 1) for i in range(len(doc.kernels)) if i not in drawn]
    if not_drawn:
        report.notes.append(f"Not drawn (no floating-point work counted, or no bytes: no intensity to place them at), "
                            f"in the table only: #{', #'.join(not_drawn)}.")
    no_l1 = l1_left_out(doc.kernels)
    if no_l1:
        report.notes.append(f"No L1/shared point for #{', #'.join(no_l1)} (its AI in the table): {L1_LEFT_OUT}.")
    report.notes += list(doc.notes)
    for what, idx in doc.missing().items():
        report.notes.append(f"The report lacks {what} for {plural(len(idx), 'kernel')} "
                            f"(#{', #'.join(str(i + 1) for i in idx[:12])}{' ...' if len(idx) > 12 else ''}): "
                            f"{doc.kernels[idx[0]].missing[what]}")
    report.notes.append("Marker area: the kernel's share of the profiled GPU time. Compute roofs are the device's "
                        "nominal ones; each kernel's verdict reads its roofs at the SM clock it ran at.")
    if doc.attribution is not None:
        report.modules = module_tree(doc)
    return report


def module_tree(doc: ProfileResults) -> str:
    """The profile's GPU time by module (`analysis.owners`, submodules included) as nested
    collapsible HTML: each module's time, share, forward and backward time, floor, distance from it,
    binding roof and its three longest kernels; the first two levels open."""
    from ..analysis.owners import by_owner

    rows = [r for r in by_owner(doc, "module")]
    total = doc.total_time_ms or 1.0
    out, depth = [], -1
    for r in rows:
        while depth >= r.depth:
            out.append("</details>")
            depth -= 1
        phases = ", ".join(f"{p} {r.phase_ms[p]:.3f}" for p in ("forward", "backward", "optimizer") if p in r.phase_ms)
        floor = (f"; floor {r.floor_ms:.4g} ms, {r.times_floor:.2f}x, {r.binding}" if r.floor_ms and r.times_floor
                 else "")
        name = r.name.rsplit(".", 1)[-1] if r.depth else r.name
        kernels = "; ".join(f"{k} {100 * ms / r.time_ms:.0f}%" for k, ms in r.kernels[:3]) if r.time_ms else ""
        out.append(f'<details{" open" if r.depth < 2 else ""}><summary><b>{_h(name)}</b> {r.time_ms:.3f} ms '
                   f"({100 * r.time_ms / total:.1f}%; {_h(phases)}){_h(floor)}</summary>"
                   f'<div class="kernels">{_h(kernels)}</div>')
        depth = r.depth
    out += ["</details>"] * (depth + 1)
    owned = doc.attribution.time_ms / total
    return (f'<div class="modules"><h2>By module</h2><p class="sub">{owned:.1%} of the profiled GPU time is owned '
            f"by an op or a module ({_h(doc.attribution.source)}); a module holds its submodules; its floor is "
            f"its kernels' floors summed</p>{''.join(out)}</div>")


def _profile_hover(doc: ProfileResults, k: ProfiledKernel, i: int, level: str) -> str:
    occ = k.occupancy
    achieved = f", achieved {percent(k.achieved_occupancy)} %" if k.achieved_occupancy is not None else ""
    occupancy = (f"occupancy {percent(occ.occupancy)} % ({limiters(occ)})" if occ else "occupancy n/a") + achieved
    ais = ", ".join(f"{label} {k.intensity(key):.3g}" for key, label, _ in PROFILE_LEVELS if k.intensity(key))
    lines = [f"<b>#{i + 1} {_h(middle_cut(k.name, 70))}</b>",
             f"{percent(k.time_share)} % of GPU time, {plural(k.launches, 'launch', 'launches')}, {k.time_ms:.4g} ms",
             f"{_h(precision_cell(k, doc.device))}: {k.gflops:,.0f} GFLOP/s; this point: {_h(level)}",
             f"intensity (FLOP/B): {_h(ais)}", _h(occupancy)]
    return "<br>".join(lines + _wrap("verdict: " + profiled_kernel_verdict(doc, k)))


# --- shared -------------------------------------------------------------------------------------

def _memory_roofs(fig, lines, top: float, x_lo: float, group: str) -> None:
    """A diagonal per memory roof of `lines` (the scene's), theoretical solid and measured
    dashed, from `x_lo` up to the highest compute roof drawn (`top`)."""
    import plotly.graph_objects as go

    for r in lines:
        name = f"{roof_name(r.level)} {r.value:,.0f} GB/s" + (" measured" if r.measured else "") + (
            f" ({r.borrowed})" if r.borrowed else "")
        fig.add_trace(go.Scatter(x=[x_lo, ridge_point(top, r.value)], y=[x_lo * r.value, top], mode="lines",
                                 name=_h(name), legendgroup=group, legendgrouptitle_text=_h(group),
                                 line=dict(color=r.color, width=1.6, dash="dash" if r.measured else "solid"),
                                 hovertemplate=_h(name) + "<extra></extra>"))


def _compute_roofs(fig, lines, x_lo: float, x_hi: float, group: str) -> None:
    """A horizontal line per compute roof of `lines` (the scene's), theoretical solid and
    measured dashed."""
    import plotly.graph_objects as go

    for r in lines:
        unit = "GOP/s" if r.level == "INT8 tensor" else "GFLOP/s"
        name = f"{r.level} roof {r.value:,.0f} {unit}" + (" measured" if r.measured else "") + (
            f" ({r.borrowed})" if r.borrowed else "")
        fig.add_trace(go.Scatter(x=[x_lo, x_hi], y=[r.value, r.value], mode="lines", name=_h(name),
                                 legendgroup=group, legendgrouptitle_text=_h(group),
                                 line=dict(color=r.color, width=2, dash="dash" if r.measured else "solid"),
                                 hovertemplate=_h(name) + "<extra></extra>"))


def _axes(fig, x_lo: float, x_hi: float, xtitle: str, ytitle: str, buttons: list[tuple[str, list[int]]],
          point_traces: list[int]) -> None:
    """Log axes, the legend, and a button per level (label, the indices of its point traces)
    that shows that level's points alone; roofs and lines stay as they are."""
    def shown(keep):
        return [i not in point_traces or i in keep for i in range(len(fig.data))]

    menu = [dict(label="all levels", method="restyle", args=[{"visible": shown(point_traces)}])]
    for label, keep in buttons:
        menu.append(dict(label=_h(label), method="restyle", args=[{"visible": shown(keep)}]))
    fig.update_layout(
        height=640, template="plotly_white", hovermode="closest", margin=dict(l=70, r=20, t=90, b=60),
        xaxis=dict(type="log", title=xtitle, range=[math.log10(x_lo), math.log10(x_hi)], dtick="D2"),
        yaxis=dict(type="log", title=ytitle, dtick="D2"),
        legend=dict(groupclick="toggleitem", font=dict(size=10)),
        updatemenus=[dict(type="buttons", direction="right", x=0, xanchor="left", y=1.0, yanchor="bottom",
                          pad=dict(t=4, b=4), showactive=True, buttons=menu)] if len(buttons) > 1 else [])


def _strength(name: str, highlight: set[str], full: float = 0.95) -> float:
    return 0.2 if highlight and name not in highlight else full


def _num(value, fmt: str) -> tuple[str, float | None]:
    return ("-", None) if value is None else (fmt.format(value), value)


def _pct(fraction: float | None) -> tuple[str, float | None]:
    """A share as a table cell: the text's rounding (`text.percent`, half up: 6.25 % is '6.3'), and
    its value in percent for sorting; '-' where unknown."""
    return ("-", None) if fraction is None else (percent(fraction), 100 * fraction)


def _h(s: str) -> str:
    """`s` escaped for HTML (and for Plotly's labels, which read entities)."""
    return html.escape(str(s), quote=True)


def _titled(fig, title: str) -> None:
    """`title` (from `_title`) on the roofline chart, its top margin grown by a line for each line the
    title takes beyond one, so that the level buttons above the plot never cover it."""
    extra = 18 * title.count("<br>")
    fig.update_layout(title=dict(text=title, font=dict(size=14), yref="container", y=0.965, yanchor="top"),
                      margin=dict(t=90 + extra))


def _title(text: str, width: int = 80) -> str:
    """A chart title escaped and broken into lines of about `width` characters at spaces (Plotly
    clips a title wider than its figure rather than wrapping it)."""
    lines, line = [], ""
    for word in str(text).split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "<br>".join(_h(x) for x in lines + [line])


def _wrap(sentence: str, width: int = 90) -> list[str]:
    """A long sentence as escaped hover lines at its '; ' joints, each at most about `width`."""
    out, line = [], ""
    for part in sentence.split("; "):
        if line and len(line) + len(part) + 2 > width:
            out.append(line + ";")
            line = part
        else:
            line = f"{line}; {part}" if line else part
    return [_h(x) for x in out + [line]]


# --- the page -----------------------------------------------------------------------------------

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px; } .sub { color: #666; margin: 0 0 12px; }
.layout { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.chart { flex: 3 1 700px; min-width: 600px; order: 1; overflow: hidden; }
.table { order: 2; flex: 1 1 100%; max-height: 680px; overflow: auto; border: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 12px; width: 100%; }
th, td { padding: 3px 6px; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
th { position: sticky; top: 0; background: #f4f4f4; cursor: pointer; user-select: none; }
th.text, td.text { text-align: left; } td.verdict { white-space: normal; min-width: 320px; max-width: 640px; }
td.name { white-space: normal; min-width: 140px; max-width: 320px; overflow-wrap: anywhere; }
th[aria-sort=ascending]::after { content: " \\25B2"; } th[aria-sort=descending]::after { content: " \\25BC"; }
tr.kernel:hover { background: #f7f7ff; } tr.picked { background: #ffe9a8 !important; }
.notes { color: #444; font-size: 12px; max-width: 1400px; }
.modules { font-size: 13px; max-width: 1400px; margin: 12px 0; } .modules h2 { font-size: 16px; margin: 8px 0; }
.modules details { margin-left: 18px; } .modules summary { cursor: pointer; }
.modules .kernels { color: #666; font-size: 12px; margin-left: 18px; }
"""

SCRIPT = """
(function () {
  var table = document.getElementById('kernels');
  var body = table.tBodies[0];
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
    th.addEventListener('click', function () {
      var up = th.getAttribute('aria-sort') !== 'ascending', num = th.classList.contains('num');
      Array.prototype.forEach.call(th.parentNode.cells, function (c) { c.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', up ? 'ascending' : 'descending');
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.sort, y = b.cells[col].dataset.sort;
        if (x === '' || y === '') { return (x === '') - (y === ''); }  // no figure: last either way
        var d = num ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
        return up ? d : -d;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  var gd = document.getElementById('CHART_ID'), picked = null;
  function pick(i) {
    picked = picked === i ? null : i;
    Array.prototype.forEach.call(body.rows, function (r) {
      r.classList.toggle('picked', picked !== null && +r.dataset.index === picked);
    });
    if (!gd || !gd.data) { return; }
    var sel = gd.data.map(function (t) {
      if (picked === null || !t.customdata || t.mode !== 'markers') { return null; }
      var idx = [];
      t.customdata.forEach(function (c, j) { if (c === picked) { idx.push(j); } });
      return idx;
    });
    Plotly.restyle(gd, {selectedpoints: sel});
  }
  Array.prototype.forEach.call(body.rows, function (r) {
    r.addEventListener('click', function () { pick(+r.dataset.index); });
  });
  if (gd && gd.on) {
    gd.on('plotly_click', function (ev) {
      var c = ev.points[0].customdata;
      if (c === undefined) { return; }
      pick(c);
      var row = document.getElementById('kernel-' + c);
      if (row) { row.scrollIntoView({block: 'nearest'}); }
    });
  }
})();
""".replace("CHART_ID", CHART_ID)


def page_html(report: Report) -> str:
    """The whole page: Plotly's JavaScript once (inline), the figures, the table and the notes."""
    parts, first = [], True
    for div_id, fig in report.figures.items():
        parts.append(fig.to_html(full_html=False, include_plotlyjs=first, div_id=div_id,
                                 config={"displaylogo": False, "responsive": True}))
        first = False
    chart, rest = parts[0], parts[1:]
    head = "".join(f'<th class="{kind}" data-type="{kind}">{_h(name)}</th>' for name, kind in report.header)
    rows = []
    for i, (cells, title) in enumerate(zip(report.rows, report.row_titles)):
        tds = []
        for (name, kind), (shown, key) in zip(report.header, cells):
            cls = kind + {"verdict": " verdict", "kernel": " name"}.get(name, "")
            sort = "" if key is None else (repr(float(key)) if kind == "num" else str(key))
            tds.append(f'<td class="{cls}" data-sort="{_h(sort)}">{_h(shown)}</td>')
        rows.append(f'<tr class="kernel" id="kernel-{i}" data-index="{i}" title="{_h(title)}">{"".join(tds)}</tr>')
    notes = "".join(f"<li>{_h(n)}</li>" for n in report.notes)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_h(report.title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>{_h(report.title)}</h1><p class=\"sub\">{_h(report.subtitle)}</p>"
            # the table first in the page (shown second): the chart then takes its final width
            f'<div class="layout"><div class="table"><table id="kernels"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div><div class="chart">{chart}</div></div>'
            + "".join(f'<div class="chart">{p}</div>' for p in rest)
            + report.modules
            + f'<div class="notes"><ul>{notes}</ul></div>'
            f"<script>{SCRIPT}</script></body></html>\n")


def kernel_indices(fig) -> set[int]:
    """The indices (in the document's order) of the kernels a figure draws: for tests and callers
    that check every kernel is on the chart."""
    out = set()
    for trace in fig.data:
        if trace.customdata is not None:
            out |= {int(c) for c in trace.customdata}
    return out
