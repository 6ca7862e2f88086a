"""Intervals on one GPU's timeline: their union, and how much of one is covered by others. What
exposed communication is made of: the part of a collective's kernel during which no compute
kernel runs on the same GPU."""

from __future__ import annotations


def union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of (start, end) intervals as sorted, disjoint intervals (empty ones dropped).

    >>> union([(0, 2), (1, 3), (5, 6)])
    [(0, 3), (5, 6)]"""
    out: list[tuple[float, float]] = []
    for start, end in sorted(i for i in intervals if i[1] > i[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def covered(interval: tuple[float, float], disjoint: list[tuple[float, float]]) -> float:
    """How much of `interval` the sorted, disjoint intervals `disjoint` cover (`union`'s output).

    >>> covered((0, 10), [(2, 4), (8, 12)])
    4"""
    start, end = interval
    total = 0.0
    for a, b in disjoint:
        if b <= start:
            continue
        if a >= end:
            break
        total += min(b, end) - max(a, start)
    return total


def exposed(interval: tuple[float, float], disjoint: list[tuple[float, float]]) -> float:
    """The part of `interval` no interval of `disjoint` covers: its length less `covered`."""
    return max(0.0, (interval[1] - interval[0]) - covered(interval, disjoint))
