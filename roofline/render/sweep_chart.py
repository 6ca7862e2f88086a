"""The size-sweep chart: GFLOP/s against problem size (M = N = K), one line per kernel and a bold
one for cuBLAS, from a results document made by `roofline run --sweep ...` (no GPU needed). A
sweep of shapes (M x N x K, not all square) is drawn shape by shape in order of FLOPs, markers
without lines.
Sizes at which a kernel failed verification are left out of its line. Ladder kernels are
coloured by technique (one hue per group of `ladder.families.TECHNIQUES`, the steps inside it by
shade, marker and line style) and the legend is grouped the same way; `highlight` draws the
kernels it names bold and fades the rest. Sizes at which the grid's last wave leaves more than a
tenth of the GPU idle are hollow markers, sizes within reach of an empty kernel's launch crosses
(`Results.sweep_verdict`). The user's own kernels stand out: thick lines with stars, in colours
the ladder does not use. The roof drawn is the compute roof of the run's precision (FP32, or the
tensor-core roof of a BF16, FP16 or TF32 run: `Results.peak_gflops`)."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..results.schema import Results
from ..ladder.families import TECHNIQUES, technique
from ..model.roofs import LAUNCH
from .chart import (
    USER_COLORS,
    check_output,
    kernel_style,
    load_matplotlib,
    new_figure,
    save_atomic,
    text,
)
from .text import l2_note, tensor_precision


def draw(doc: Results, out: Path, highlight: list[str] | None = None) -> Path:
    """Draw the sweep of `doc` into `out` (.png, .svg or .pdf), atomically; the kernels in
    `highlight` bold, the others faded. Raises UsageError when the document holds no sweep or the
    output path is bad."""
    fmt = check_output(out)
    if not doc.sweep:
        raise UsageError("this results file holds no size sweep; make one with "
                         "roofline run --all --sweep 128,256,512,1024,2048,4096,8192")
    fig = render(doc, highlight)
    save_atomic(fig, Path(out), fmt)
    return Path(out)


def render(doc: Results, highlight: list[str] | None = None):
    """The sweep chart of `doc` (which holds a sweep) as a matplotlib Figure."""
    highlight = set(highlight or ())
    square = all(p.problem.problem.square for p in doc.sweep)
    sweep = sorted(doc.sweep, key=lambda p: (p.problem.problem.flops, p.problem.m, p.problem.n))
    x = {id(p): p.problem.m if square else i for i, p in enumerate(sweep)}  # shapes: one slot each
    sizes = [x[id(p)] for p in sweep]
    joined = {} if square else {"ls": ""}
    names = []
    for point in sweep:
        for k in point.kernels:
            if k.name not in names:
                names.append(k.name)
    drawn, never = [], []
    for name in names:
        ok = any(k.name == name and k.timed for p in sweep for k in p.kernels)
        (drawn if ok else never).append(name)
    names = drawn
    load_matplotlib()
    from matplotlib.lines import Line2D

    fig = new_figure(12, 6.5, 120)
    ax = fig.add_subplot(1, 1, 1)
    if square:
        ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    users = [k.name for k in doc.kernels if k.user and k.name in names]
    ladder = [n for n in names if n not in users]
    handles, group_seen, marked = [], set(), set()
    for name in names:
        xs, ys = [], []
        for point in sweep:
            k = next((k for k in point.kernels if k.name == name), None)
            if k and k.timed:
                xs.append(x[id(point)])
                ys.append(k.gflops)
        if name in users:  # the user's own: a thick line of its own colour, stars
            line, = ax.plot(xs, ys, marker="*", color=USER_COLORS[users.index(name) % len(USER_COLORS)], lw=2.6,
                            ms=14, mec="black", mew=0.6, label=f"{text(name)} (yours)", zorder=4, **joined)
            handles.append(line)
            continue
        where = technique(name)
        if where is not None and where[0] not in group_seen:  # a legend heading per technique
            group_seen.add(where[0])
            handles.append(Line2D([], [], ls="", label=TECHNIQUES[where[0]][0].upper()))
        faded = bool(highlight) and name not in highlight
        style = kernel_style(name, ladder.index(name), len(ladder))
        line, = ax.plot(xs, ys, lw=1.0 if faded else (2.4 if highlight else 1.5), ms=4 if faded else 6,
                        alpha=0.25 if faded else 1.0, label=text(name), **{**style, **joined})
        handles.append(line)
        for point in sweep:  # the sizes where the tail or the launch binds: hollow markers, crosses
            v = doc.sweep_verdict(point, name)
            kind = _size_bound(v)
            if kind:
                k = next(x for x in point.kernels if x.name == name)
                at, alpha = ([x[id(point)]], [k.gflops]), 0.25 if faded else 1.0
                if kind == "launch":  # a cross over the kernel's own marker, with a white halo to stand out
                    ax.plot(*at, ls="", marker="x", ms=11, mec="white", mew=3.8, alpha=alpha, zorder=5)
                    ax.plot(*at, ls="", marker="x", ms=11, mec=style["color"], mew=1.8, alpha=alpha, zorder=6)
                else:
                    ax.plot(*at, ls="", marker=style["marker"], ms=9, mfc="white", mec=style["color"], mew=1.4,
                            alpha=alpha, zorder=3)
                marked.add(kind)
    ref, = ax.plot(sizes, [p.reference.gflops for p in sweep], color="black", lw=2.5, marker="*", ms=10,
                   label="cuBLAS (reference)", **joined)
    handles.append(ref)
    peak = doc.peak_gflops()  # the roof of the run's precision: FP32, or its tensor-core roof
    ax.axhline(peak, color="tab:red", lw=1.5)
    ax.text(sizes[0], peak * 1.04, f"{doc.compute_level} peak {peak:,.0f} GFLOP/s", color="tab:red", va="bottom",
            ha="left")
    ax.set_ylim(top=peak * 1.6)
    ax.set_xticks(sizes)
    # more than a few shapes' names (1024x1024x16384) side by side run into each other: slanted
    slant = {} if square or len(sweep) <= 5 else {"rotation": 30, "ha": "right", "rotation_mode": "anchor"}
    ax.set_xticklabels([str(p.problem.m) if square else p.problem.problem.text() for p in sweep], **slant)
    ax.set_xlabel("M = N = K" if square else "M x N x K, in order of FLOPs")
    if not square:
        ax.set_xlim(-0.5, len(sweep) - 0.5)
    ax.set_ylabel("GFLOP/s (measured, median)")
    p = doc.problem.problem
    what = f"GEMM {tensor_precision(p)}" if p.tensor else "SGEMM FP32"
    ax.set_title(f"{text(doc.device.name)}: {what} against problem " + ("size" if square else "shape")
                 + l2_note(doc))
    if never:
        fig.text(0.01, 0.01, "failed at every size, not drawn: " + ", ".join(text(n) for n in never),
                 fontsize=8, color="tab:red")
    ax.grid(True, which="major", lw=0.4, color="0.85")
    if "tail" in marked:
        handles.append(Line2D([], [], ls="", marker="o", mfc="white", mec="0.3", label="hollow: tail-bound size"))
    if "launch" in marked:
        handles.append(Line2D([], [], ls="", marker="x", color="0.3", label="cross: launch-bound size"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def _size_bound(v) -> str | None:
    """'launch' or 'tail' when that is what binds a kernel at one size of the sweep, else None."""
    if v is None or v.binding is None:
        return None
    if v.binding.level == LAUNCH:
        return "launch"
    return "tail" if v.waves is not None and v.waves.tail_matters else None
