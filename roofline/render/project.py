"""Tables of `roofline project`: per target GPU, each kernel's time here, its binding roof and the
fraction of it reached here, its floor and estimate on the target, and the step's lower bound and
estimate (`analysis.project.Projection`)."""

from __future__ import annotations

from rich.table import Table

from ..analysis.project import Projection, TargetProjection
from .tables import WRAP, _fit


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _rows(t: TargetProjection) -> tuple[list[list[str]], list[str | None]]:
    rows, styles = [], []
    for r in t.kernels:
        if r.left_out:
            rows.append([r.label, _ms(r.time_here_ms), "-", "-", "-", "-", "-", f"left out: {r.left_out}"])
            styles.append("dim")
            continue
        changed = f"{r.level_here} -> {r.level}" if r.binding_changed else r.level
        rows.append([r.label, _ms(r.time_here_ms), f"{r.level_here} {100 * r.fraction:.0f}%", changed,
                     _ms(r.floor_ms), _ms(r.estimate_ms), "-" if r.gflops is None else f"{r.gflops:,.0f}",
                     "; ".join(r.flags)])
        styles.append("yellow" if r.binding_changed else None)
    return rows, styles


def project_tables(p: Projection, width: int = 200) -> list[Table]:
    """One table per target GPU (split to fit `width`, `tables._fit`)."""
    columns = [("ms here", "right"), ("here: roof, reached", "left"), ("binds there", "left"),
               ("floor ms", "right"), ("est. ms", "right"), ("est. GFLOP/s", "right"), ("flags", "left", WRAP)]
    out = []
    for t in p.targets:
        rows, styles = _rows(t)
        title = f"{p.device.name} -> {t.device.name} (theoretical roofs)"
        out.extend(_fit(title, ("kernel", "left", WRAP), columns, rows, width, styles))
    return out


def step_lines(p: Projection) -> list[str]:
    """One line per target: the step's lower bound and estimate (a profile), or the best kernel (a run)."""
    lines = []
    for t in p.targets:
        if t.estimate_ms is not None:
            left = (f"; {t.left_out} kernel(s) left out ({t.left_out_ms:.3f} ms here)" if t.left_out else "")
            lines.append(f"{t.device.name}: step {t.here_ms:.3f} ms here -> lower bound {t.lower_bound_ms:.3f} ms, "
                         f"estimate {t.estimate_ms:.3f} ms ({t.here_ms / t.estimate_ms:.2f}x){left}")
        else:
            kept = [r for r in t.kernels if r.estimate_ms is not None]
            if kept:
                best = min(kept, key=lambda r: r.estimate_ms)
                lines.append(f"{t.device.name}: fastest estimate {best.label}, {best.estimate_ms:.3f} ms "
                             f"(floor {best.floor_ms:.3f} ms at {best.level})")
    return lines


def draw(p: Projection, out, fmt: str, top: int = 20) -> None:
    """A bar chart at `out` (format `fmt`, from `chart.check_output`): for the `top` kernels by time
    here, the time here and the estimate on each target, in ms on a log axis; kernels left out on
    a target have no bar there."""
    from .chart import new_figure, save_atomic

    first = p.targets[0].kernels
    order = sorted(range(len(first)), key=lambda i: -first[i].time_here_ms)[:top]
    labels = [first[i].label[:48] for i in order]
    series = [(f"{p.device.name} (measured)", [first[i].time_here_ms for i in order])]
    series += [(f"{t.device.name} (estimate)", [t.kernels[i].estimate_ms for i in order]) for t in p.targets]
    fig = new_figure(10, 1.5 + 0.45 * len(order), 120)
    ax = fig.add_subplot(1, 1, 1)
    height = 0.8 / len(series)
    for j, (name, values) in enumerate(series):
        ys = [i + j * height for i in range(len(order))]
        ax.barh([y for y, v in zip(ys, values) if v], [v for v in values if v], height=height, label=name)
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(order))])
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("time (ms): measured here, estimated at the same fraction of the binding roof there")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    save_atomic(fig, out, fmt)
