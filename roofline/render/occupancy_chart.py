"""The occupancy what-if chart: three panels, as in Nsight Compute's occupancy calculator,
showing occupancy against registers per thread, threads per block and shared memory per block,
each with the other two held at the current configuration, which is marked."""

from __future__ import annotations

from pathlib import Path

from ..model.arch import ArchLimits
from ..model.occupancy import Occupancy, sweeps
from .chart import check_output, new_figure, save_atomic
from .layout import Layout
from .text import limiters, percent


def draw(limits: ArchLimits, current: Occupancy, out: Path) -> Path:
    """Draw the three panels for `current` on `limits` into `out` (.png, .svg or .pdf), written
    atomically. Raises UsageError for a bad output path."""
    fmt = check_output(out)
    fig = render(limits, current)
    save_atomic(fig, Path(out), fmt)
    return Path(out)


def render(limits: ArchLimits, current: Occupancy):
    """The three panels for `current` on `limits`, as a matplotlib Figure."""
    data = sweeps(limits, current.registers_per_thread, current.threads_per_block,
                  current.static_smem_bytes, current.dynamic_smem_bytes)
    here = {"registers": current.registers_per_thread, "threads": current.threads_per_block,
            "shared_memory": current.static_smem_bytes + current.dynamic_smem_bytes}
    labels = {"registers": "registers per thread", "threads": "threads per block",
              "shared_memory": "shared memory per block (KB)"}
    fig = new_figure(13, 4.2, 110)
    axes = fig.subplots(1, 3, sharey=True)
    marks = []
    for ax, key in zip(axes, ("registers", "threads", "shared_memory")):
        scale = 1 / 1024 if key == "shared_memory" else 1
        xs = [x * scale for x, _ in sorted(data[key])]
        ys = [100 * y for _, y in sorted(data[key])]
        ax.step(xs, ys, where="post", color="tab:blue", lw=1.6)
        x = min(here[key], max(x for x, _ in data[key])) * scale  # beyond the axis: marked at its end
        y = 100 * current.occupancy
        beyond = " (beyond the limit)" if here[key] * scale > x else ""
        ax.plot([x], [y], "o", color="tab:red", ms=8, zorder=3)
        marks.append((ax, ax.annotate(f"{here[key] * scale:g}: {percent(current.occupancy)} %{beyond}", (x, y),
                                       xytext=(8, 8), textcoords="offset points", color="tab:red", fontsize=9,
                                       arrowprops=dict(arrowstyle="-", lw=0.6, color="tab:red", shrinkA=0))))
        ax.set_xlabel(labels[key])
        ax.set_ylim(0, 108)
        ax.grid(True, lw=0.4, color="0.85")
    axes[0].set_ylabel("occupancy (% of max warps per SM)")
    smem = current.static_smem_bytes + current.dynamic_smem_bytes
    fig.suptitle(f"{limits.arch}: {current.registers_per_thread} registers x {current.threads_per_block} "
                 f"threads, {smem:,} B shared memory -> {current.active_blocks_per_sm} blocks, "
                 f"{percent(current.occupancy)} % ({limiters(current)})")
    fig.tight_layout()
    for ax, label in marks:  # beside the marked point, off the step line
        Layout(fig, ax, skip=[label]).place_annotations([label])
    return fig
