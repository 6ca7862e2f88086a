"""A timing as recorded: the per-launch samples of a kernel's timed launches, with what follows
from them (median, min, max, spread as the interquartile range, range), and the two states of the L2 a timed launch can start in.

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

# IQR / median above which a timing is marked noisy in tables. Of the 128 timed kernels and
# references of the committed H200 runs, the median spread is 0.2 % and the 90th percentile
# 1.1 %; the four above 2 % include the BF16 run's cuBLAS at 8192^3 (7.8 %: its clock fell under
# the power cap during its launches), which a range (max - min) of 10 % left unmarked.
NOISY_SPREAD = 0.02
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
        """The interquartile range over the median (quartiles by `statistics.quantiles`,
        inclusive): 0.02 means the middle half of the launches lay within 2 % of the median. One
        slow launch (a clock dip) moves it little, as it moves the median little; 0 for a single
        launch."""
        if len(self.samples_ms) < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.samples_ms, n=4, method="inclusive")
        return (q3 - q1) / self.median_ms

    @property
    def range(self) -> float:
        """(max - min) / median: 0.1 means the slowest launch took 10 % of the median longer
        than the fastest (what `compare`'s noise band takes, the wider reading)."""
        return (self.max_ms - self.min_ms) / self.median_ms

    @property
    def noisy(self) -> bool:
        """True when the spread exceeds NOISY_SPREAD: the median is less trustworthy."""
        return self.spread > NOISY_SPREAD
