"""The tables of `roofline comms`: each rank's step (span, compute, communication, exposed), each
collective's bandwidth against the link's, and the collectives and kernels across ranks."""

from __future__ import annotations

from rich.table import Table

from ..analysis.comms import CommsReport
from ..model.collectives import LABELS
from .tables import _fit


def _ms(us: float) -> str:
    return f"{us / 1000:,.3f}"


def comms_tables(r: CommsReport, width: int = 200, top: int = 12) -> list[Table]:
    """Per rank, per collective of the first rank (its `top` longest), and across ranks."""
    out = []
    rows = [[str(s.rank), s.gpu or "-", _ms(s.span_us), _ms(s.compute_us), _ms(s.comm_us), _ms(s.exposed_us),
             f"{100 * s.exposed_us / s.span_us:.1f}%" if s.span_us else "-", _ms(s.overlapped_span_us)]
            for s in r.ranks]
    out += _fit(f"{len(r.ranks)} rank(s): the step's span and its communication (ms)", ("rank", "right"),
                [("GPU", "left"), ("span", "right"), ("compute", "right"), ("comm", "right"), ("exposed", "right"),
                 ("exposed/span", "right"), ("span if hidden", "right")], rows, width)
    first = r.ranks[0]
    link = f"{r.link.name} {r.link.gbps:,.0f} GB/s each way" if r.link else "no link figure"
    rows = []
    for row in sorted(first.rows, key=lambda x: -x.time_us)[:top]:
        rows.append([LABELS[row.collective], f"{row.nbytes / 1e6:,.2f}" if row.nbytes else "-",
                     str(row.ranks or "-"), f"{row.time_us:,.1f}",
                     f"{row.algbw_gbps:,.1f}" if row.algbw_gbps is not None else "-",
                     f"{row.busbw_gbps:,.1f}" if row.busbw_gbps is not None else "-",
                     f"{100 * row.of_link:.0f}%" if row.of_link is not None else "-",
                     *([f"{100 * row.of_reference:.0f}%" if row.of_reference is not None else "-"] if r.reference else []),
                     f"{row.exposed_us:,.1f}"])
    if rows:
        out += _fit(f"rank {first.rank}: its {len(rows)} longest collectives against the link ({link})",
                    ("collective", "left"), [("MB", "right"), ("ranks", "right"), ("us", "right"),
                                             ("algbw GB/s", "right"), ("busbw GB/s", "right"), ("of link", "right"),
                                             *([("of nccl-tests", "right")] if r.reference else []),
                                             ("exposed us", "right")], rows, width)
    for title, items in (("collectives across ranks (us; the n-th of a kind and size on each rank)", r.collectives),
                         ("compute kernels across ranks (us: all launches of one name on each rank)", r.kernels)):
        if not items:
            continue
        rows = [[a.what[:60], f"{min(a.times_us.values()):,.1f}", f"{max(a.times_us.values()):,.1f}",
                 f"{a.spread:.2f}x", str(a.slowest)] for a in items[:top]]
        out += _fit(title, ("what", "left"),
                    [("fastest", "right"), ("slowest", "right"), ("spread", "right"), ("slowest rank", "right")],
                    rows, width)
    return out
