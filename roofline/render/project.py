"""Tables of `roofline project`: per target GPU, each kernel's time here, its binding roof and the
fraction of it reached here, its floor and estimate on the target, and the step's lower bound and
estimate (`analysis.project.Projection`)."""

from __future__ import annotations

from rich.table import Table

from ..analysis.project import Projection, TargetProjection
from .tables import WRAP, _fit


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _rows(t: TargetProjection, top: int | None = None) -> tuple[list[list[str]], list[str | None]]:
    from .text import display_names

    kernels = t.kernels if top is None else sorted(t.kernels, key=lambda r: -r.time_here_ms)[:top]
    parts = [_split(r.label) for r in kernels]
    configured = any(config for _, config in parts)
    rows, styles = [], []
    every = [_split(r.label)[0] for r in t.kernels]  # cut as over the whole file, whichever rows are shown
    for r, name, (_, config) in zip(kernels, display_names([n for n, _ in parts], 44, every), parts):
        name = [name] + ([config or "-"] if configured else [])
        if r.left_out:
            rows.append([*name, _ms(r.time_here_ms), "-", "-", "-", "-", "-", f"left out: {r.left_out}"])
            styles.append("dim")
            continue
        changed = f"{r.level_here} -> {r.level}" if r.binding_changed else r.level
        rows.append([*name, _ms(r.time_here_ms), f"{r.level_here} {100 * r.fraction:.0f}%", changed,
                     _ms(r.floor_ms), _ms(r.estimate_ms), "-" if r.gflops is None else f"{r.gflops:,.0f}",
                     "; ".join(r.flags)])
        styles.append("yellow" if r.binding_changed else None)
    return rows, styles


TOP = 25  # a profile's kernels per table, the longest here first; --json holds every one


def project_tables(p: Projection, width: int = 200, top: int | None = TOP) -> list[Table]:
    """One table per target GPU (split to fit `width`, `tables._fit`); a profile's `top` kernels by
    their time here (all of a run's), names cut to 48 characters with a suffix where two read
    alike (`text.display_names`)."""
    columns = [("ms here", "right"), ("here: roof, reached", "left"), ("binds there", "left"),
               ("floor ms", "right"), ("est. ms", "right"), ("est. GFLOP/s", "right"), ("flags", "left", WRAP)]
    out = []
    for t in p.targets:
        cut = top if top is not None and p.is_step and len(t.kernels) > top else None
        rows, styles = _rows(t, cut)
        grid = [("grid x block", "right")] if rows and len(rows[0]) > len(columns) + 1 else []
        shown = f"; the {cut} longest of {len(t.kernels)} kernels (all in --json)" if cut else ""
        title = f"{p.device.name} -> {t.device.name} (theoretical roofs){shown}"
        out.extend(_fit(title, ("kernel", "left"), grid + columns, rows, width, styles))
    return out


def _split(label: str) -> tuple[str, str | None]:
    """A kernel's label as its name and its launch configuration ('256x50x1 x 128x1x1'), where the
    label carries one ('name [256x50x1 blocks of 128x1x1]', for names two launches share)."""
    import re

    m = re.match(r"^(.*) \[(\S+) blocks of (\S+)\]$", label)
    return (m.group(1), f"{m.group(2)} x {m.group(3)}") if m else (label, None)


def step_lines(p: Projection) -> list[str]:
    """One line per target: the step's lower bound and estimate (a profile), or the best kernel (a
    run); where no kernel could be projected (none has a roof on both GPUs), that, with why."""
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
            else:
                why = list(dict.fromkeys(r.left_out for r in t.kernels if r.left_out))
                lines.append(f"{t.device.name}: no estimate: none of the {len(t.kernels)} kernels could be projected "
                             f"({'; '.join(why[:2]) or 'nothing counted'}), so the "
                             + ("step has" if p.is_step else "kernels have") + " no lower bound or estimate")
    return lines


def draw(p: Projection, out, fmt: str, top: int = 20) -> None:
    """The bar chart (`render`) at `out`, in format `fmt` (from `chart.check_output`), atomically."""
    from .chart import save_atomic

    save_atomic(render(p, top), out, fmt)


def _missing(r) -> str:
    """What stands in a missing bar's place: 'n/a: no BF16 tensor roof' where the target has no roof
    for the kernel's work, 'n/a: ' and the reason otherwise."""
    import re

    roof = re.match(r"the .+ has no (.+ roof)s?: ", r.left_out or "")
    return f"n/a: no {roof.group(1)} there" if roof else f"n/a: {r.left_out or 'no estimate'}"


def _target_line(t: TargetProjection) -> str:
    """A profile's step on target `t`: 'H100 80GB HBM3: step 24.1 ms here -> estimate 29.3 ms (lower
    bound 14.1 ms)'; where kernels are left out, the sums of the others and what was left out."""
    if t.left_out:
        kept = len(t.kernels) - t.left_out
        return (f"{t.device.name}: the {kept} kernels it has roofs for, {t.here_ms:.3g} ms here -> estimate "
                f"{t.estimate_ms:.3g} ms (lower bound {t.lower_bound_ms:.3g} ms); {t.left_out} left out (n/a), "
                f"{t.left_out_ms:.3g} ms here")
    return (f"{t.device.name}: step {t.here_ms:.3g} ms here -> estimate {t.estimate_ms:.3g} ms "
            f"(lower bound {t.lower_bound_ms:.3g} ms)")


def _tick_labels(labels: list[str]) -> list[str]:
    """Each kernel's label in two lines: its name (cut in the middle to 60 characters,
    `text.display_names`) over its launch configuration ('[256x50x1 blocks of 128x1x1]') where the
    label carries one."""
    import re

    from .text import display_names

    parts = [re.match(r"(.*?)(?: (\[\S+ blocks of \S+\]))?$", label).groups() for label in labels]
    names = display_names([name for name, _ in parts], 60)
    return [name + (f"\n{config}" if config else "") for name, (_, config) in zip(names, parts)]


def render(p: Projection, top: int = 20):
    """The projection as a matplotlib Figure: for the `top` kernels by time here, horizontal bars of
    the time measured here and the time estimated on each target, in ms on a linear axis (lengths
    compared), each bar's value at its end; where a target has no estimate for a kernel (left out:
    no roof there for its work, nothing counted) its place says 'n/a' and why. The title names the
    GPUs and, for a profile, each target's step."""
    from .chart import new_figure, text

    first = p.targets[0].kernels
    order = sorted(range(len(first)), key=lambda i: -first[i].time_here_ms)[:top]
    labels = _tick_labels([first[i].label for i in order])
    series = [(f"{p.device.name} (measured here)", [first[i] for i in order], True)]
    series += [(f"{t.device.name} (estimate)", [t.kernels[i] for i in order], False) for t in p.targets]
    fig = new_figure(11, 2.2 + 0.16 * len(series) * len(order), 120)
    ax = fig.add_subplot(1, 1, 1)
    height = 0.8 / len(series)
    values = [[r.time_here_ms if here else r.estimate_ms for r in rows] for _, rows, here in series]
    longest = max(v for vs in values for v in vs if v is not None)
    for j, ((name, rows, _), vs) in enumerate(zip(series, values)):
        ys = [i + j * height for i in range(len(order))]
        ax.barh([y for y, v in zip(ys, vs) if v is not None], [v for v in vs if v is not None], height=height,
                label=text(name))
        for y, v, r in zip(ys, vs, rows):
            if v is not None:
                ax.text(v + longest * 0.005, y, f"{v:.3g}", fontsize=6, va="center", ha="left")
            else:
                ax.text(longest * 0.005, y, text(_missing(r)), fontsize=6, va="center", ha="left", color="0.35",
                        style="italic")
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(order))])
    ax.set_yticklabels([text(label) for label in labels], fontsize=7)
    ax.set_ylim(len(order) - 0.1, -0.1 - height)
    ax.set_xlim(0, longest * 1.12)
    ax.set_xlabel("time (ms): measured here; on each target, estimated at the fraction of its binding roof it "
                  "reaches here (theoretical roofs)", fontsize=8)
    ax.grid(True, axis="x", alpha=0.25)
    ax.set_axisbelow(True)
    shown = f"the {len(order)} kernels that take longest here" + (f", of {len(first)}" if len(first) > len(order) else "")
    title = [f"{p.device.name} -> {', '.join(t.device.name for t in p.targets)}: {shown}"]
    title += [_target_line(t) if t.estimate_ms is not None else f"{t.device.name}: no estimate (no kernel projected)"
              for t in p.targets if p.is_step]
    fig.suptitle(text("\n".join(title)), fontsize=9, x=0.01, ha="left")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig
