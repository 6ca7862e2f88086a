"""Communication in a step, from every rank's trace (`traces.kineto`): each collective's algorithm
and bus bandwidth against the link's (`model.collectives`, `model.links`), the part of it no
compute kernel on the same GPU overlaps (exposed), and the ranks side by side.

Per rank: the span (first kernel's start to last kernel's end), the compute kernels' busy time
(their union), the collectives' time and the part of it exposed; and the span with every
collective fully overlapped, span - exposed: the step's time were the communication hidden
behind compute (a bound: work that waits for a collective's result waits for it still).

Across ranks: the n-th collective of one kind and size on each rank is the same collective (every
rank issues them in one order); per collective and per compute kernel the time on each rank, the
spread (slowest over fastest) and the slowest rank.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import collectives, overlap
from ..model.links import Link, link_of
from ..traces.kineto import Comm, RankTrace
from ..traces.nccl_tests import NcclTests


@dataclass(frozen=True)
class CommRow:
    """One collective on one rank: kind, message bytes (None: not in the trace), ranks, time and
    exposed time in µs, algorithm and bus bandwidth in GB/s (None without bytes or ranks), the
    share of the link's bandwidth its busbw reaches (None without a link)."""

    collective: str
    nbytes: float | None
    ranks: int | None
    time_us: float
    exposed_us: float
    algbw_gbps: float | None
    busbw_gbps: float | None
    of_link: float | None
    name: str
    source: str | None
    of_reference: float | None = None  # busbw over nccl-tests' at the same size (same collective)
    algorithm: str | None = None
    protocol: str | None = None


@dataclass(frozen=True)
class RankSummary:
    """One rank's step: span, compute busy time, collectives' time and the exposed part, in µs."""

    rank: int | None
    path: str
    gpu: str | None
    span_us: float
    compute_us: float
    comm_us: float
    exposed_us: float
    rows: list[CommRow] = field(default_factory=list)

    @property
    def overlapped_span_us(self) -> float:
        """The span with every collective fully overlapped: span - exposed."""
        return self.span_us - self.exposed_us


@dataclass(frozen=True)
class AcrossRanks:
    """One collective (kind, bytes, its order among those) or compute kernel (by name) on every
    rank: µs per rank, the slowest over the fastest, the slowest rank."""

    what: str
    times_us: dict[int, float]
    spread: float
    slowest: int


@dataclass
class CommsReport:
    """Every rank's summary, the collectives and compute kernels across ranks, the link the
    busbw is read against (None: unknown GPU), and notes on what the traces lack."""

    ranks: list[RankSummary]
    collectives: list[AcrossRanks]
    kernels: list[AcrossRanks]
    link: Link | None
    notes: list[str] = field(default_factory=list)
    reference: NcclTests | None = None


def _row(c: Comm, compute: list[tuple[float, float]], link: Link | None,
         reference: NcclTests | None = None) -> CommRow:
    k = c.kernel
    exposed = overlap.exposed((k.ts_us, k.end_us), compute)
    algbw = busbw = share = of_ref = None
    if c.nbytes and k.dur_us > 0:
        algbw = collectives.algbw_gbps(c.nbytes, k.dur_us / 1000)
        if c.ranks:
            busbw = algbw * collectives.bus_factor(c.collective, c.ranks)
            share = busbw / link.gbps if link is not None else None
            if reference is not None and reference.collective == c.collective:
                ref = reference.busbw_at(c.nbytes)
                of_ref = busbw / ref if ref else None
    return CommRow(c.collective, c.nbytes, c.ranks, k.dur_us, exposed, algbw, busbw, share, k.name, c.source, of_ref,
                   c.algorithm, c.protocol)


def rank_device(trace: RankTrace) -> int | None:
    """The GPU a rank's trace is of: the one most of its NCCL kernels (else of its kernels) ran on."""
    devices = [c.kernel.device for c in trace.comms] or [k.device for k in trace.kernels]
    return max(set(devices), key=devices.count)


def summarise(trace: RankTrace, link: Link | None, reference: NcclTests | None = None) -> RankSummary:
    """One rank's step from its trace (see the module), on the GPU of its NCCL kernels (the most
    common one where a trace holds several)."""
    device = rank_device(trace)
    kernels = [k for k in trace.kernels if k.device == device]  # the other GPUs' kernels are another rank's
    nccl = {id(c.kernel) for c in trace.comms}
    compute = overlap.union([(k.ts_us, k.end_us) for k in kernels
                             if id(k) not in nccl and not collectives.is_nccl(k.name)])
    rows = [_row(c, compute, link, reference) for c in trace.comms if c.kernel.device == device]
    span = max(k.end_us for k in kernels) - min(k.ts_us for k in kernels)
    return RankSummary(trace.rank, trace.path, trace.gpu, span, sum(b - a for a, b in compute),
                       sum(r.time_us for r in rows), sum(r.exposed_us for r in rows), rows)


def _across(per_rank: dict[int, dict[str, float]]) -> list[AcrossRanks]:
    keys = list(dict.fromkeys(k for times in per_rank.values() for k in times))
    out = []
    for key in keys:
        times = {r: t[key] for r, t in per_rank.items() if key in t}
        if len(times) < 2:
            continue
        slowest = max(times, key=times.get)
        fastest = min(times.values())
        out.append(AcrossRanks(key, times, times[slowest] / fastest if fastest > 0 else float("inf"), slowest))
    return sorted(out, key=lambda a: -max(a.times_us.values()))


def report(traces: list[RankTrace], gpu: str | None = None, reference: NcclTests | None = None) -> CommsReport:
    """The communication of a step from the traces of its ranks (one each; a rank the trace does
    not name is numbered by its place), read against the NVLink of `gpu` (a name) or of the GPU
    the traces name, and with `reference` (nccl-tests' output on the same machine) each
    collective of its kind against nccl-tests' busbw at the same message size."""
    name = gpu or next((t.gpu for t in traces if t.gpu), None)
    link = link_of(name)
    notes = []
    if link is None:
        notes.append(f"no NVLink figure for {name or 'an unnamed GPU'}: bus bandwidth is given without a link to read "
                     "it against (give --gpu, e.g. h100-sxm)")
    from dataclasses import replace
    ranks = [summarise(t, link, reference) for t in traces]
    named = [t.rank for t in traces]
    if None in named or len(set(named)) < len(named):
        notes.append("ranks numbered by the order of the files: "
                     + ("a trace names no rank" if None in named else "several traces name the same rank"))
        ranks = [replace(s, rank=i) for i, s in enumerate(ranks)]
    if len({t.world_size for t in traces}) > 1 or len({t.gpu for t in traces if t.gpu}) > 1:
        notes.append("the traces come from different jobs (their world sizes or GPUs differ): read them apart")
    for t in traces:
        if not t.comms:
            notes.append(f"{t.path}: no NCCL kernel in it")
    if reference is not None and reference.collective is None:
        notes.append(f"{reference.path}: its collective is not named (a *_perf command line); give --collective")
    elif reference is not None:
        if reference.ranks and any(row.ranks and row.ranks != reference.ranks for s in ranks for row in s.rows
                                   if row.collective == reference.collective):
            notes.append(f"{reference.path} ran on {reference.ranks} ranks, the traces' collectives on others: "
                         "bus bandwidth compares across rank counts, times do not")
        sizes = [p.nbytes for p in reference.points if p.nbytes > 0]
        outside = sum(1 for s in ranks for row in s.rows if row.collective == reference.collective and row.nbytes
                      and row.busbw_gbps and row.of_reference is None)
        if outside and sizes:
            notes.append(f"{outside} {collectives.LABELS[reference.collective]}(s) outside nccl-tests' sizes "
                         f"({min(sizes):,} to {max(sizes):,} bytes): not read against it")
    over = [row for s in ranks for row in s.rows if row.of_link is not None and row.of_link > 1.05]
    if over:
        notes.append(f"{len(over)} collective(s) above the link's bandwidth: their ranks do not all share this link "
                     "(NVLink and a network mixed, or fewer GPUs per node), or the GPU is not the one named")
    colls: dict[int, dict[str, float]] = {}
    kerns: dict[int, dict[str, float]] = {}
    for s in ranks:
        seen: dict[tuple, int] = {}
        for row in s.rows:
            key = (row.collective, row.nbytes)
            seen[key] = seen.get(key, 0) + 1
            size = f"{row.nbytes / 1e6:,.2f} MB" if row.nbytes else "size unknown"
            colls.setdefault(s.rank, {})[f"{collectives.LABELS[row.collective]} {size} #{seen[key]}"] = row.time_us
    for s, t in zip(ranks, traces):
        device = rank_device(t)
        for k in t.kernels:
            if k.device == device and not collectives.is_nccl(k.name):
                kerns.setdefault(s.rank, {})
                kerns[s.rank][k.name] = kerns[s.rank].get(k.name, 0.0) + k.dur_us
    missing = sum(1 for s in ranks for row in s.rows if row.nbytes is None)
    if missing:
        notes.append(f"{missing} collective(s) without a message size in the trace: no bandwidth for them (profile "
                     "with record_shapes=True, or PyTorch 2.2 or later, to record it)")
    matched = _across(colls)
    unmatched = sum(len(t) for t in colls.values()) - sum(len(a.times_us) for a in matched)
    if len(ranks) > 1 and unmatched:
        notes.append(f"{unmatched} collective(s) on one rank only (of a kind and size no other rank ran): left out "
                     "of the table across ranks")
    return CommsReport(ranks, matched, _across(kerns)[:20], link, notes, reference)
