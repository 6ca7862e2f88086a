"""A timing as recorded: the per-launch samples of a kernel's timed launches, with what follows
from them (median, min, max, spread), and the two states of the L2 a timed launch can start in.

This is the shape results files store (`kernels[].timing`, `reference.timing`); taking the
samples with CUDA events is `measure.timing`'s. Pure Python: reading a file never loads the
measuring code.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Annotated

from annotated_types import MinLen

from .units import Millis

NOISY_SPREAD = 0.10  # (max - min) / median above which a timing is marked noisy in tables
L2_MODES = ("cold", "warm")  # flushed before each timed launch, or left as the previous one left it
DEFAULT_TIMEOUT_S = 5.0  # seconds a user kernel's launch may take before its process is ended


@dataclass(frozen=True)
class Timing:
    """Per-launch times in ms of `repeat` timed launches that followed `warmup` untimed ones."""

    samples_ms: Annotated[tuple[Millis, ...], MinLen(1)]
    warmup: int

    @property
    def repeat(self) -> int:
        """Number of timed launches."""
        return len(self.samples_ms)

    @property
    def median_ms(self) -> float:
        """Median launch time in ms: the figure reported."""
        return statistics.median(self.samples_ms)

    @property
    def min_ms(self) -> float:
        """Fastest launch in ms."""
        return min(self.samples_ms)

    @property
    def max_ms(self) -> float:
        """Slowest launch in ms."""
        return max(self.samples_ms)

    @property
    def spread(self) -> float:
        """(max - min) / median: 0.02 means the launches lay within 2 % of the median."""
        return (self.max_ms - self.min_ms) / self.median_ms

    @property
    def noisy(self) -> bool:
        """True when the spread exceeds NOISY_SPREAD: the median is less trustworthy."""
        return self.spread > NOISY_SPREAD
