"""Numbers and sentences for people: percentages, figures, limiter names and the verdict of each
kernel, written from the data `model.roofs.verdict` returns."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from ..model.occupancy import Occupancy
from ..model.roofs import Verdict

SHORT_LIMITER = {"registers": "regs", "shared_memory": "smem", "warps": "warps", "blocks": "blocks"}


def percent(fraction: float, decimals: int = 1) -> str:
    """A fraction as a percentage rounded half up, trailing '.0' dropped: 0.4375 -> '43.8',
    0.0625 -> '6.3', 1 -> '100'."""
    q = Decimal(repr(100 * fraction)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    text = f"{q:f}"
    return text[: -(decimals + 1)] if decimals and text.endswith("." + "0" * decimals) else text


def figure(x: float) -> str:
    """Thousands separators for figures of 100 and more, three significant digits below."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def limiters(occ: Occupancy, short: bool = False) -> str:
    """The resources that limit an occupancy, joined: 'registers', 'warps+blocks' ('-' for none)."""
    names = [SHORT_LIMITER.get(x, x) if short else x for x in occ.limiters]
    return "+".join(names) or "-"


def occupancy_cell(occ: Occupancy | None) -> str:
    """'25% regs' for a table cell; '-' when unknown."""
    return "-" if occ is None else f"{percent(occ.occupancy)}% {limiters(occ, short=True)}"


def occupancy_phrase(occ: Occupancy | None) -> str:
    """'occupancy 25 % (registers)' for a sentence."""
    return "occupancy n/a" if occ is None else f"occupancy {percent(occ.occupancy)} % ({limiters(occ)})"


def bound_cell(v: Verdict) -> str:
    """The binding level and the time over its floor, for a table cell: 'fp32 1.36'."""
    return f"{v.binding.level.lower()} {v.times_floor:.2f}"


def _basis(v: Verdict) -> str:
    b = v.binding
    if b.level == "FP32":
        return "measured" if b.roof.measured else "theoretical"
    if b.level == "L1":
        return "measured bytes, the shared-memory data path"
    source = "measured bytes" if b.counted else "model bytes"
    return source + (", measured bandwidth" if b.roof.measured else "")


def verdict_sentence(name: str, v: Verdict, occ: Occupancy | None) -> str:
    """One line: which roof binds `name`, on what figures, how far the kernel is from it, and its
    occupancy: 'full_tiles: FP32-bound (measured); 1.26x its floor of 2.216 ms (79 % of that
    ceiling); occupancy 12.5 % (registers)'."""
    b = v.binding
    times = v.times_floor
    if times >= 1:
        return (f"{name}: {b.level}-bound ({_basis(v)}); {times:.2f}x its floor of {b.floor_ms:.3f} ms "
                f"({100 / times:.0f} % of that ceiling); {occupancy_phrase(occ)}")
    counted = "counted" if b.counted else "the model counts"
    return (f"{name}: ran {1 / times:.2f}x faster than its highest floor, {b.level} ({_basis(v)}, "
            f"{b.floor_ms:.3f} ms): the hardware moved fewer bytes than {counted} (caches, broadcasts); "
            f"{occupancy_phrase(occ)}")
