"""The communication roof: each collective of every rank at its message size (x, bytes, log) and
bus bandwidth (y, GB/s, log), one marker per kind of collective and one colour per rank, under the
GPU's NVLink bandwidth per direction (dashed, where the GPU is known); and each rank's step as a
bar: compute, exposed communication, and communication overlapped by compute."""

from __future__ import annotations

from pathlib import Path

from ..analysis.comms import CommsReport
from ..errors import UsageError
from ..model.collectives import COLLECTIVES, LABELS
from .chart import check_output, color_ramp, new_figure, save_atomic, text

MARKERS = dict(zip(COLLECTIVES, "os^vDP*"))


def draw(r: CommsReport, out: Path) -> None:
    """Draw `r` into `out` (.png, .svg or .pdf) atomically. Raises UsageError when no collective
    has both a message size and a time."""
    fmt = check_output(out)
    points = [(s.rank, row) for s in r.ranks for row in s.rows if row.busbw_gbps]
    if not points:
        raise UsageError("no collective with a message size to place on the communication roof")
    fig = new_figure(12.5, 5.6, 150)
    ax, bars = fig.add_axes([0.07, 0.13, 0.55, 0.74]), fig.add_axes([0.72, 0.13, 0.25, 0.70])
    ranks = sorted({rank for rank, _ in points})
    seen = set()
    for rank, row in points:
        color = color_ramp(ranks.index(rank), len(ranks))
        label = LABELS[row.collective] if row.collective not in seen else None
        seen.add(row.collective)
        ax.scatter([row.nbytes], [row.busbw_gbps], marker=MARKERS[row.collective], s=28, color=color,
                   edgecolors="black", linewidths=0.3, label=text(label) if label else None, zorder=3)
    if r.reference is not None:
        pts = sorted((p for p in r.reference.points if p.nbytes > 0), key=lambda p: p.nbytes)
        what = LABELS.get(r.reference.collective, "?")
        ax.plot([p.nbytes for p in pts], [p.busbw_gbps for p in pts], color="0.45", lw=1.2, marker=".",
                label=text(f"nccl-tests {what}" + (f", {r.reference.ranks} ranks" if r.reference.ranks else "")))
    ax.set_xscale("log")
    ax.set_yscale("log")
    if r.link is not None:
        ax.axhline(r.link.gbps, color="0.25", ls="--", lw=1.2,
                   label=text(f"{r.link.name}: {r.link.gbps:,.0f} GB/s each way"))
    ax.set_xlabel("message size (bytes; nccl-tests' S)")
    ax.set_ylabel("bus bandwidth (GB/s; nccl-tests' busbw)")
    ax.legend(loc="lower right", fontsize=7.5, frameon=False)
    ax.grid(True, which="major", color="0.9", lw=0.6)
    ys = list(range(len(r.ranks)))[::-1]
    for y, s in zip(ys, r.ranks):  # the span: compute, exposed communication, nothing running
        idle = max(0.0, s.span_us - s.compute_us - s.exposed_us)
        bars.barh([y], [s.compute_us / 1000], color="#4c72b0", height=0.6, label="compute" if y == ys[0] else None)
        bars.barh([y], [s.exposed_us / 1000], left=[s.compute_us / 1000], color="#c44e52", height=0.6,
                  label="exposed communication" if y == ys[0] else None)
        bars.barh([y], [idle / 1000], left=[(s.compute_us + s.exposed_us) / 1000], color="0.85", height=0.6,
                  label="no kernel running" if y == ys[0] else None)
    bars.set_yticks(ys)
    bars.set_yticklabels([f"rank {s.rank}" for s in r.ranks], fontsize=7.5)
    bars.set_xlabel("ms of the span (first kernel's start to last one's end)")
    bars.legend(loc="upper center", bbox_to_anchor=(0.5, 1.13), fontsize=6.5, frameon=False, ncol=2)
    for tick, s in zip(bars.get_yticklabels(), r.ranks):  # each rank's label in its points' colour
        if s.rank in ranks:
            tick.set_color(color_ramp(ranks.index(s.rank), len(ranks)))
    where = "on the communication roof" if r.link is not None else "by message size (no link figure for this GPU)"
    fig.suptitle(text(f"{len(r.ranks)} rank(s): collectives' bus bandwidth {where} (colour: rank), and each rank's "
                      "exposed communication"), fontsize=10)
    save_atomic(fig, out, fmt)
