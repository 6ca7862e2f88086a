"""A PyTorch profiler trace's GPU time by op or by module (`traces.ops.OpsTrace.by`): one row per
op and phase, its time, share, launches and its longest kernel."""

from __future__ import annotations

from rich.table import Table

from ..nsight.names import label
from ..traces.ops import OpsTrace
from .tables import _fit
from .text import display_names, middle_cut


def ops_tables(doc: OpsTrace, key: str, width: int = 200, top: int | None = 25) -> list[Table]:
    """GPU time by `key` ('op' or 'module') and phase, the longest first (`top` rows; None: all):
    ms (the kernels' durations summed), share of the trace's GPU time, launches, how many kernel
    names, and the op's longest kernel (named as profiles name kernels: `nsight.names.label`) with
    its share of the op's time; split into tables that fit `width`."""
    rows = doc.by(key)
    shown = rows[:top] if top else rows
    total = doc.time_us or 1.0
    body = []
    for r, name in zip(shown, display_names([r.name for r in shown], 40)):
        first, first_us = r.kernels[0]
        body.append([name, r.phase, f"{r.time_us / 1e3:,.3f}", f"{100 * r.time_us / total:.1f}%", f"{r.launches:,}",
                     str(len(r.kernels)), middle_cut(label(first), 44),
                     f"{100 * first_us / r.time_us:.0f}%" if r.time_us else "-"])
    left = f", the {len(shown)} longest of {len(rows)}" if len(shown) < len(rows) else ""
    where = f" on {doc.gpu}" if doc.gpu else ""
    title = f"GPU time by {key} and phase{where}{left}: {doc.path}"
    columns = [("phase", "left"), ("ms", "right"), ("share", "right"), ("launches", "right"), ("kernels", "right"),
               ("longest kernel", "left"), ("of the row", "right")]
    return _fit(title, (key, "left"), columns, body, width)
