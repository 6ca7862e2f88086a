"""Units, fixed once. Inside the library every quantity carries its unit in its name and stays in
it: bytes, milliseconds (`_ms`), GFLOP/s (`_gflops`, 1e9 FLOP/s), GB/s (`_gbps`, 1e9 bytes/s),
MHz (`_mhz`). These helpers are the only place the factors appear; printers convert for display.
"""

from __future__ import annotations

from typing import Annotated

from annotated_types import Ge, Gt, Le

GIGA = 1e9          # GFLOP/s and GB/s are 1e9 per second (GB = 1e9 bytes, not GiB)
MS_PER_S = 1e3
MHZ = 1e6


def cdiv(a: int, b: int) -> int:
    """Ceiling division of non-negative integers: the number of size-`b` pieces covering `a`."""
    return -(-a // b)


def round_up(x: int, unit: int) -> int:
    """`x` rounded up to a multiple of `unit`."""
    return cdiv(x, unit) * unit


def _giga_rate(amount: float, time_ms: float) -> float:
    return amount / (time_ms / MS_PER_S) / GIGA


def gflops(flops: float, time_ms: float) -> float:
    """The rate, in GFLOP/s, of `flops` floating-point operations done in `time_ms` milliseconds."""
    return _giga_rate(flops, time_ms)


def gbps(nbytes: float, time_ms: float) -> float:
    """The bandwidth, in GB/s, of `nbytes` bytes moved in `time_ms` milliseconds."""
    return _giga_rate(nbytes, time_ms)


def ms_at(amount: float, giga_per_s: float) -> float:
    """Milliseconds to process `amount` (FLOPs or bytes) at `giga_per_s` (GFLOP/s or GB/s)."""
    return amount / (giga_per_s * GIGA) * MS_PER_S


def per_clock_giga(units_per_clock: float, clock_mhz: float) -> float:
    """A per-clock throughput (bytes or FLOPs per clock) at `clock_mhz`, in GB/s or GFLOP/s."""
    return units_per_clock * clock_mhz * MHZ / GIGA


# Value ranges a results file is checked against (annotated-types constraints, which the schema
# library enforces when a file is read; plain Python ignores them). The bounds lie far beyond any
# GPU: a value outside them is a corrupt file, not a measurement.
Amount = Annotated[float, Gt(0), Le(1e24)]              # a positive count: FLOPs, bytes, accesses
Count = Annotated[float, Ge(0), Le(1e24)]               # a counter that may be zero
Rate = Annotated[float, Ge(1e-6), Le(1e7)]              # GFLOP/s or GB/s: 1e3 FLOP/s .. 1e16 FLOP/s
Millis = Annotated[float, Gt(0), Le(1e9)]               # a duration in ms
Size = Annotated[int, Ge(1), Le(2**31)]                 # a matrix dimension


def figure(x: float) -> str:
    """A figure as tables and messages show it: thousands separators from 100 up ('66,908'),
    three significant digits below ('13.9'), and in powers of ten from 1e15 up ('1.2e+300': a
    damaged file's value, not a rate)."""
    if abs(x) >= 1e15:
        return f"{x:.3g}"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 warp', '8 warps'; `many` for a plural that is not word + 's' ('launches')."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"
