"""A timing as recorded: the per-launch samples of a kernel's timed launches, with what follows
from them (median, min, max, spread as the interquartile range, range, the 95 % confidence
interval of the median, a stable mark), the conditions each sample ran under (the SM clock, the
clock event reasons, the power drawn, whether it ran throttled), and the two states of the L2 a
timed launch can start in. `Pairing` reads a kernel against its reference from samples taken in
the same rounds (`measure.rounds`).

This is the shape results files store (`kernels[].timing`, `reference.timing`); taking the
samples with CUDA events is `measure.timing`'s. Pure Python: reading a file never loads the
measuring code.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Annotated

from annotated_types import MinLen

from ..defaults import DEFAULT_TIMEOUT_S, FULL_CLOCK_SHARE  # (there: the command line's help reads them)
from ..errors import UsageError
from .units import Millis

# IQR / median above which a timing is marked noisy in tables. Of the 128 timed kernels and
# references of the committed H200 runs, the median spread is 0.2 % and the 90th percentile
# 1.1 %; the four above 2 % include the BF16 run's cuBLAS at 8192^3 (7.8 %: its clock fell under
# the power cap during its launches), which a range (max - min) of 10 % left unmarked.
NOISY_SPREAD = 0.02
# A median is stable when its 95 % confidence interval's half-width is within 1 % of it (the
# run's stopping rule: `measure.rounds`) and its spread within NOISY_SPREAD (Nsight Python's
# "stable": relative spread under 2 %).
STABLE_CI = 0.01
# z for a two-sided 95 % interval (the normal approximation of the binomial rank interval).
Z95 = 1.959964
L2_MODES = ("cold", "warm")  # flushed before each timed launch, or left as the previous one left it


def check_l2(l2: str) -> str:
    """`l2` when it is one of L2_MODES; UsageError naming the parameter `l2` otherwise."""
    if l2 not in L2_MODES:
        raise UsageError(f"{{l2}} takes {' or '.join(L2_MODES)}, got {l2!r}", "l2")
    return l2


def median_ci95(values) -> tuple[float, float] | None:
    """The distribution-free 95 % confidence interval of the median of `values`: the order
    statistics at ranks n/2 -/+ 1.96 sqrt(n)/2 (the binomial rank interval, normal approximation;
    e.g. Conover, Practical Nonparametric Statistics, 3rd ed., section 3.2). None for fewer than 6
    values, where no such interval reaches 95 %."""
    xs = sorted(values)
    n = len(xs)
    if n < 6:
        return None
    half = Z95 * math.sqrt(n) / 2
    lo = max(0, math.floor(n / 2 - half))
    hi = min(n - 1, math.ceil(n / 2 + half) - 1)
    return xs[lo], xs[hi]


def ci95_half(values) -> float | None:
    """The half-width of `median_ci95` over the median of `values`: 0.004 means the median is known
    to +/-0.4 %. None for fewer than 6 values."""
    ci = median_ci95(values)
    return None if ci is None else (ci[1] - ci[0]) / 2 / statistics.median(values)


def mark_throttled(reasons: list[str], clocks: list[int | None], top: int | None, share: float) -> list[bool]:
    """Per sample: throttled when its clock is below `share` of `top` (the run's highest clock), or,
    where either clock is unknown, when a reason that lowers the clock was seen during it. A reason
    seen while the clock held does not mark a sample: NVML's reasons and violation times trail the
    clock (on the H200, 'power_cap' is reported through the first half second of the BF16 ladder's
    rounds at 8192^3, which follow its verification, at 155-220 W and 1,965-1,980 MHz), so the
    clock is the evidence where it is known."""
    out = []
    for reason, clock in zip(reasons, clocks):
        if clock is not None and top is not None:
            out.append(clock < share * top)
        else:
            out.append(bool(reason))
    return out


@dataclass(frozen=True)
class Timing:
    """Per-launch times in ms of `repeat` timed launches that followed `warmup` untimed ones, and,
    where recorded (None in files written before), per sample: the round it was taken in
    (`rounds`: kernels and their reference timed in turn, `measure.rounds`), NVML's SM clock in
    MHz, the clock event reasons seen during it ('' for none; 'power_cap', 'thermal',
    'hw_slowdown' joined by '+'), the board power in W, and whether it ran throttled
    (`throttled`: under such a reason, or below `full_clock_share` of the run's top clock)."""

    samples_ms: Annotated[tuple[Millis, ...], MinLen(1)]
    warmup: int
    rounds: tuple[int, ...] | None = None
    sm_clock_mhz: tuple[int | None, ...] | None = None
    reasons: tuple[str, ...] | None = None
    power_w: tuple[float | None, ...] | None = None
    throttled: tuple[bool, ...] | None = None
    full_clock_share: float | None = None

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

    @property
    def ci95_ms(self) -> tuple[float, float] | None:
        """The 95 % confidence interval of the median in ms (`median_ci95`); None for fewer than 6
        samples."""
        return median_ci95(self.samples_ms)

    @property
    def ci95_half(self) -> float | None:
        """The interval's half-width over the median (`ci95_half`)."""
        return ci95_half(self.samples_ms)

    @property
    def stable(self) -> bool | None:
        """Whether the median is stable: its CI95 half-width within STABLE_CI and its spread within
        NOISY_SPREAD. None without enough samples for an interval."""
        half = self.ci95_half
        return None if half is None else half <= STABLE_CI and self.spread <= NOISY_SPREAD

    @property
    def conditions_recorded(self) -> bool:
        """Whether each sample's clock and throttling were recorded."""
        return self.throttled is not None

    @property
    def throttled_samples(self) -> int | None:
        """How many samples ran throttled; None where not recorded."""
        return None if self.throttled is None else sum(self.throttled)

    @property
    def full_clock_ms(self) -> tuple[float, ...]:
        """The samples that ran at full clock (none where conditions were not recorded)."""
        if self.throttled is None:
            return ()
        return tuple(t for t, hot in zip(self.samples_ms, self.throttled) if not hot)

    @property
    def full_clock_median_ms(self) -> float | None:
        """The median of the full-clock samples; None where none ran at full clock or conditions
        were not recorded."""
        full = self.full_clock_ms
        return statistics.median(full) if full else None

    @property
    def clock_mhz(self) -> tuple[int, int] | None:
        """The lowest and highest SM clock its samples saw; None where not recorded."""
        clocks = [c for c in self.sm_clock_mhz or () if c is not None]
        return (min(clocks), max(clocks)) if clocks else None

    @property
    def reasons_seen(self) -> list[str]:
        """Every clock event reason any sample saw, in order of first sight."""
        seen: list[str] = []
        for r in self.reasons or ():
            for x in r.split("+") if r else ():
                if x not in seen:
                    seen.append(x)
        return seen

    def by_round(self, full_clock: bool = False) -> dict[int, float]:
        """The median time of this timing's samples in each round (`rounds`), the full-clock ones
        alone with `full_clock` (a round with none left out). Empty where rounds were not recorded."""
        if self.rounds is None or (full_clock and self.throttled is None):
            return {}  # not timed in rounds, or which samples ran at full clock is not known
        hot = self.throttled or (False,) * len(self.samples_ms)
        out: dict[int, list[float]] = {}
        for t, r, h in zip(self.samples_ms, self.rounds, hot):
            if not (full_clock and h):
                out.setdefault(r, []).append(t)
        return {r: statistics.median(ts) for r, ts in out.items()}


@dataclass(frozen=True)
class Pairing:
    """A kernel read against its reference from samples taken in the same rounds: per round the
    reference's median time over the kernel's (the reference's of that round and the next, which
    bracket the kernel's, averaged), and their median as a percentage, with its 95 % confidence
    interval. `full_clock` reads the full-clock samples alone."""

    pct: float
    ci95: tuple[float, float] | None
    pairs: int
    full_clock: bool = False


def paired(kernel: Timing, reference: Timing, full_clock: bool = False) -> Pairing | None:
    """`Pairing` of `kernel` against `reference` (both timed in rounds: `Timing.rounds`), every
    sample (as run) or, with `full_clock`, the full-clock ones alone. None where either was not
    timed in rounds or no round holds both (at full clock: where no round ran unthrottled)."""
    k, ref = kernel.by_round(full_clock), reference.by_round(full_clock)
    ratios = []
    for r, t in sorted(k.items()):
        around = [ref[x] for x in (r, r + 1) if x in ref]
        if around:
            ratios.append(100 * statistics.fmean(around) / t)
    if not ratios:
        return None
    return Pairing(statistics.median(ratios), median_ci95(ratios), len(ratios), full_clock)


MAX_TIMEOUT_S = 600.0  # a launch that takes ten minutes is a hang for any SGEMM a GPU can hold
MAX_BUDGET_S = 3600.0  # an hour of timing per problem is more than any ladder needs
MIN_FULL_CLOCK_SHARE = 0.5  # below half the top clock "full clock" would mean nothing


def check_timing(timeout_s: float, budget_s: float | None, full_clock_share: float) -> None:
    """A launch's timeout (0 to MAX_TIMEOUT_S s), the timing budget (0 to MAX_BUDGET_S s) and the
    full-clock share (MIN_FULL_CLOCK_SHARE to 1), as `run` and `grade` take them. Raises
    UsageError naming the one out of range."""
    if not 0 < timeout_s <= MAX_TIMEOUT_S:
        raise UsageError(f"{{timeout}} must be more than 0 and at most {MAX_TIMEOUT_S:g} seconds, got {timeout_s:g}",
                         "timeout")
    if budget_s is not None and not 0 < budget_s <= MAX_BUDGET_S:
        raise UsageError(f"{{budget}} must be more than 0 and at most {MAX_BUDGET_S:g} seconds, got {budget_s:g}",
                         "budget")
    if not MIN_FULL_CLOCK_SHARE <= full_clock_share <= 1:
        raise UsageError(f"{{full_clock}} must be a share of the top clock from {MIN_FULL_CLOCK_SHARE:g} to 1, "
                         f"got {full_clock_share:g}", "full_clock")


@dataclass(frozen=True)
class TimingOptions:
    """How a run times what it runs, as `run` takes it: a launch stopped after `timeout_s` seconds,
    rounds within `budget_s` seconds (None: half a second per kernel, `rounds`), samples below
    `full_clock_share` of the top clock marked throttled, the L2 flushed before every timed launch
    (`l2` 'cold') or left as the previous launch left it ('warm'). `checked()` refuses a value out
    of range (`check_timing`, `check_l2`) before any GPU work."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    budget_s: float | None = None
    full_clock_share: float = FULL_CLOCK_SHARE
    l2: str = "cold"

    def checked(self) -> TimingOptions:
        """These options, each in its range; UsageError naming the one that is not."""
        check_timing(self.timeout_s, self.budget_s, self.full_clock_share)
        check_l2(self.l2)
        return self
