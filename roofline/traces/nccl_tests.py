"""nccl-tests' output (`all_reduce_perf`, `all_gather_perf`, ...) as the reference a program's
collectives are read against: per message size, the out-of-place time, algbw and busbw it printed,
the collective (from the binary's name in the command line, or `--collective`), and the ranks (one
more than the highest of its `#  Rank N ...` lines).

Rows look like (the columns after `redop`: `root` in newer versions)

    #       size         count      type   redop    root     time   algbw   busbw #wrong ...
       536870912     134217728     float     sum      -1   1806.7  297.16  586.06      0 ...

Anything that is not such a row (NCCL INFO lines, headers, the averages) is skipped.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..model import collectives

_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([a-z0-9_]+)\s+([a-z]+)\s+(?:(-?\d+)\s+)?([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+")
_RANK = re.compile(r"^#?\s*Rank\s+(\d+)\b", re.IGNORECASE)
_BINARY = re.compile(r"\b(all_reduce|all_gather|reduce_scatter|alltoall|broadcast|reduce|sendrecv)_perf\b")


@dataclass(frozen=True)
class Point:
    """One message size: bytes, the out-of-place time in µs, algbw and busbw in GB/s as printed."""

    nbytes: int
    time_us: float
    algbw_gbps: float
    busbw_gbps: float


@dataclass(frozen=True)
class NcclTests:
    """A run of nccl-tests: its collective (None where the output does not say), the ranks it
    lists (None where it lists none), and its rows by size."""

    path: str
    collective: str | None
    ranks: int | None
    points: list[Point]

    def busbw_at(self, nbytes: float) -> float | None:
        """The busbw at `nbytes`, interpolated in log size between the two rows around it (None
        outside the sizes it ran)."""
        pts = sorted((p for p in self.points if p.nbytes > 0), key=lambda p: p.nbytes)
        for a, b in zip(pts, pts[1:]):
            if a.nbytes <= nbytes <= b.nbytes:
                if a.nbytes == b.nbytes:
                    return a.busbw_gbps
                f = (math.log(nbytes) - math.log(a.nbytes)) / (math.log(b.nbytes) - math.log(a.nbytes))
                return a.busbw_gbps + f * (b.busbw_gbps - a.busbw_gbps)
        return pts[0].busbw_gbps if len(pts) == 1 and pts[0].nbytes == nbytes else None


def read(path: Path, collective: str | None = None) -> NcclTests:
    """nccl-tests' output in the text file `path`. Raises UsageError for a file that is missing or
    holds no row of results."""
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such nccl-tests output") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})") from None
    points, ranks = [], set()
    for line in text.splitlines():
        m = _RANK.match(line.strip())
        if m:
            ranks.add(int(m.group(1)))
            continue
        m = _ROW.match(line)
        if m:
            points.append(Point(int(m.group(1)), float(m.group(6)), float(m.group(7)), float(m.group(8))))
    if not points:
        raise UsageError(f"{path}: no nccl-tests result row (size count type redop [root] time algbw busbw ...)")
    if collective is None:
        m = _BINARY.search(text)
        collective = collectives.collective_of(m.group(1).replace("alltoall", "all_to_all")) if m else None
    return NcclTests(str(path), collective, max(ranks) + 1 if ranks else None, points)
