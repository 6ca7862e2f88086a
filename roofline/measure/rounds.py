"""Kernels and their reference timed alike: in rounds, each sample with the conditions it ran under.

Why: under sustained load a GPU's clock falls when it reaches its power cap (an H200 on the BF16
ladder at 8192^3: 1,980 -> about 1,635 MHz within a third of a second). Timed one after another,
a kernel given 200 launches runs throttled while a reference given 23 does not, and the
percentage between them mixes two clock states. Timed in rounds, both see the same ones.

The method:
  1. each item (the reference first, then the kernels) gets `WARMUP` untimed launches, which also
     estimate its time;
  2. every item is given the same burst of `burst` launches per round (sized so that the slowest
     item's burst takes about BURST_MS), so a kernel and its reference get the same number of
     samples and the same duty cycle;
  3. each round times the reference, then every kernel, in an order rotated by one each round (so
     no kernel always runs last); each launch between its own CUDA events, `before` (the L2 flush)
     ahead of it outside them, the whole burst behind a `hold` (a spinning one-thread kernel,
     `timing.gpu_hold`) as long as twice the host's time to enqueue it, so that the launches run
     back to back and no event also times the host's enqueuing (measured in the warm-up); the
     stream is synchronised after each burst, and NVML read before it, over and over while it
     runs, and after it (`nvml.Sampler`); while polling, the host notes which launches' end events
     have completed, so each launch is given the readings that could have been taken while it ran
     (from the last one before its predecessor was seen done to the last one before it was): the
     SM clock (the lowest of them), the clock event reasons set in any of them or whose violation
     time grew across them (`nvml.reasons_between`), and the board power at the last of them. A
     launch shorter than one reading (NVML takes tens of µs) shares its readings with its
     neighbours; a burst still running after its PATIENCE is left to the item's own wait, its
     unseen launches given the readings to its end;
  4. rounds go on until every item's median is known to within STABLE_CI (its CI95 half-width,
     `model.timing.median_ci95`) after at least `min_samples`, or the budget runs out, or
     `max_samples` are taken;
  5. a sample ran throttled when its clock was below `full_clock_share` of the highest clock any
     sample of the run saw, or, where the clock is unknown, when a reason was seen during it
     (`model.timing.mark_throttled`; nvbench's policy, in spirit); both readings, every sample (as
     run) and the full-clock ones, stay available.

A kernel is read against its reference from the rounds they shared (`model.timing.paired`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

from ..model.timing import FULL_CLOCK_SHARE, STABLE_CI, Timing, ci95_half, mark_throttled
from .nvml import Reading, Sampler, reasons_between
from .waiting import LaunchTimeout

WARMUP = 3
BURST_MS = 20.0  # the slowest item's burst: long enough to amortise a synchronisation, short enough to interleave
MAX_BURST = 32
MIN_SAMPLES = 20
MAX_SAMPLES = 400
BUDGET_PER_ITEM_S = 0.5  # the default timing budget: half a second per item, as each kernel had before rounds
HOLD_MAX_MS = 5.0  # the longest hold ahead of a burst
PATIENCE = 3.0  # poll NVML for at most this many times a burst's expected time (then the item's own wait)
PATIENCE_FLOOR_S = 0.05  # and for at least this long


@dataclass
class Item:
    """One thing to time: `launch` enqueues it on the current stream; `wait(launches)` waits for
    the stream (a caller with a timeout passes its own). `error` is set when a launch of it failed
    during the rounds: it is timed no further."""

    launch: Callable[[], None]
    wait: Callable[[int], None]
    error: BaseException | None = None


@dataclass(frozen=True)
class Rounds:
    """What timing in rounds gave: one `Timing` per item (None for one that failed before a sample
    was taken, its `Item.error` saying why), how many rounds ran, the burst, the run's top clock,
    the seconds the rounds took, and what NVML could not say on this GPU."""

    timings: list[Timing | None]
    rounds: int
    burst: int
    top_clock_mhz: int | None
    seconds: float
    unsupported: list[str]


def burst_for(estimates_ms: list[float], burst_ms: float = BURST_MS) -> int:
    """Launches per burst for every item: as many of the slowest item's as fit `burst_ms`, at
    least 1 and at most MAX_BURST."""
    slowest = max(estimates_ms, default=0.0)
    if slowest <= 0:
        return MAX_BURST
    return max(1, min(MAX_BURST, int(burst_ms / slowest)))


def _settled(samples: list[float], min_samples: int) -> bool:
    half = ci95_half(samples) if len(samples) >= min_samples else None
    return half is not None and half <= STABLE_CI


def time_in_rounds(items: list[Item], before: Callable[[], None] | None = None,
                   budget_s: float | None = None, min_samples: int = MIN_SAMPLES, max_samples: int = MAX_SAMPLES,
                   full_clock_share: float = FULL_CLOCK_SHARE, sampler: Sampler | None = None,
                   warmup: int = WARMUP, clock: Callable[[], float] = time.monotonic,
                   hold: Callable[[float], None] | None = None) -> Rounds:
    """Time `items` (the reference first) in rounds, as the module says. `before` is enqueued ahead
    of every launch outside its events (the L2 flush); `budget_s` bounds the rounds' time (default
    BUDGET_PER_ITEM_S per item; the rounds that reach `min_samples` always run); `sampler` reads
    NVML (None: no conditions recorded); `hold(ms)` enqueues a wait on the GPU ahead of each
    burst (`timing.gpu_hold`; None: none). An item whose launch raises is set aside with its
    `error` (the others go on), but for `waiting.LaunchTimeout`, which is raised (its work still
    holds the GPU). Needs CuPy and a GPU."""
    import cupy

    before = before or (lambda: None)
    budget_s = BUDGET_PER_ITEM_S * len(items) if budget_s is None else budget_s
    estimates, enqueue_ms = [], []
    for item in items:
        try:
            pairs = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(max(warmup, 1))]
            host = time.perf_counter()
            for start, stop in pairs:
                before()
                start.record()
                item.launch()
                stop.record()
            enqueue_ms.append(1000 * (time.perf_counter() - host) / len(pairs))
            item.wait(len(pairs))
            estimates.append(sum(cupy.cuda.get_elapsed_time(s, e) for s, e in pairs) / len(pairs))
        except LaunchTimeout as exc:  # still running: nothing more can be timed in this process
            item.error = exc
            raise
        except (Exception, SystemExit) as exc:  # a fault, or a callable's sys.exit: this item is timed no further
            item.error = exc
            estimates.append(0.0)
    burst = burst_for([e for e, item in zip(estimates, items) if item.error is None])
    hold_ms = min(HOLD_MAX_MS, 2 * burst * max(enqueue_ms, default=0.0) + 0.05)
    samples: list[list[float]] = [[] for _ in items]
    rounds_of: list[list[int]] = [[] for _ in items]
    clocks: list[list[int | None]] = [[] for _ in items]
    reasons: list[list[str]] = [[] for _ in items]
    power: list[list[float | None]] = [[] for _ in items]
    events = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(burst)]
    start_s = clock()
    r = 0
    while True:
        live = [i for i, item in enumerate(items) if item.error is None]
        if not live:
            break
        order = [live[0]] + _rotated(live[1:], r) if live[0] == 0 else _rotated(live, r)
        for i in order:
            item = items[i]
            first = sampler.read() if sampler is not None else None
            try:
                if hold is not None:
                    hold(hold_ms)
                for start, stop in events:
                    before()
                    start.record()
                    item.launch()
                    stop.record()
                patience_s = max(PATIENCE_FLOOR_S, PATIENCE * (burst * estimates[i] + hold_ms) / 1000)
                seen, marks = _watch(events, sampler, first, patience_s) if sampler is not None else ([], [])
                item.wait(burst)
                times = [cupy.cuda.get_elapsed_time(s, e) for s, e in events]
            except LaunchTimeout as exc:
                item.error = exc
                raise
            except (Exception, SystemExit) as exc:
                item.error = exc
                continue
            if sampler is not None:
                seen.append(sampler.read())
            for low, why, watts in launch_conditions(seen, marks, burst):
                clocks[i].append(low)
                reasons[i].append(why)
                power[i].append(watts)
            samples[i] += times
            rounds_of[i] += [r] * burst
        r += 1
        live = [i for i, item in enumerate(items) if item.error is None]
        counts = [len(samples[i]) for i in live]
        if not counts or min(counts) >= max_samples:
            break
        if min(counts) >= min_samples and (clock() - start_s > budget_s
                                           or all(_settled(samples[i], min_samples) for i in live)):
            break
    seconds = clock() - start_s
    seen = [c for cs in clocks for c in cs if c is not None]
    top = max(seen) if seen else None
    timings: list[Timing | None] = []
    for i in range(len(items)):
        if not samples[i]:
            timings.append(None)
            continue
        recorded = sampler is not None and top is not None  # NVML said the clock: the conditions are known
        hot = mark_throttled(reasons[i], clocks[i], top, full_clock_share)
        timings.append(Timing(tuple(samples[i]), warmup=max(warmup, 1), rounds=tuple(rounds_of[i]),
                              sm_clock_mhz=tuple(clocks[i]) if recorded else None,
                              reasons=tuple(reasons[i]) if recorded else None,
                              power_w=tuple(power[i]) if recorded else None,
                              throttled=tuple(hot) if recorded else None,
                              full_clock_share=full_clock_share if recorded else None))
    return Rounds(timings, r, burst, top, seconds, list(sampler.unsupported) if sampler else [])


def _rotated(xs: list[int], r: int) -> list[int]:
    if not xs:
        return xs
    k = r % len(xs)
    return xs[k:] + xs[:k]


def _watch(events, sampler: Sampler, first: Reading, patience_s: float,
           clock: Callable[[], float] = time.perf_counter) -> tuple[list[Reading], list[int]]:
    """NVML read over and over while a burst runs, from `first` (taken before it) until every
    launch's end event (`events[j][1]`) has completed or `patience_s` has passed. Returns the
    readings and, per launch seen done, the index of the last reading taken before it was seen
    done (launches not seen done have none)."""
    readings, marks = [first], []
    deadline = clock() + patience_s
    while len(marks) < len(events) and clock() < deadline:
        readings.append(sampler.read())
        while len(marks) < len(events) and events[len(marks)][1].done:
            marks.append(len(readings) - 1)
    return readings, marks


def launch_conditions(readings: list[Reading], marks: list[int], launches: int
                      ) -> list[tuple[int | None, str, float | None]]:
    """Per launch of a burst: its clock (MHz, the lowest reading that could have been taken while it
    ran), its throttling reasons (`nvml.reasons_between` across those readings) and the board power
    (W) at the last of them. `readings` run from before the burst to after it (`_watch`, then one
    more); `marks[j]` is the last reading before launch j was seen done, so launch j's readings are
    those from `marks[j - 1]` (the one before it, still running at the next query, preceded it;
    the start for the first) to `marks[j]` (the next one followed its end); a launch not seen done
    gets those to the end. No readings (no sampler): (None, '', None) for each."""
    if not readings:
        return [(None, "", None)] * launches
    out = []
    end = len(readings) - 1
    for j in range(launches):
        lo = 0 if j == 0 else min(marks[j - 1], end) if j - 1 < len(marks) else end
        hi = min(marks[j], end) if j < len(marks) else end
        lo = min(lo, hi)
        out.append(_conditions(readings[lo:hi + 1]))
    return out


def _conditions(readings: list[Reading]) -> tuple[int | None, str, float | None]:
    """Readings' clock (the lowest), the throttling reasons seen across them, and the power at the
    last (W)."""
    known = [x.clock_mhz for x in readings if x.clock_mhz is not None]
    last = readings[-1]
    watts = last.power_mw / 1000 if last.power_mw is not None else None
    seen: list[str] = []
    for a, b in zip(readings, readings[1:] or readings):
        for name in filter(None, reasons_between(a, b).split("+")):
            if name not in seen:
                seen.append(name)
    return (min(known) if known else None), "+".join(seen), watts


def without_rounds(timing: Timing) -> Timing:
    """`timing` with its round numbers dropped: for samples taken in another process, whose rounds
    are not the parent's reference's (a user kernel run in isolation), so that no pairing reads
    them against it."""
    return replace(timing, rounds=None)


def sampling_overhead(item: Item, before: Callable[[], None] | None, sampler: Sampler,
                      repeats: int = 10, hold: Callable[[float], None] | None = None) -> tuple[float, float]:
    """The cost NVML sampling adds to a measured time: the same item timed `repeats` times with
    the sampler and `repeats` times without, alternately (so both see the same clock states),
    MIN_SAMPLES launches each time. Returns the median time in ms with sampling and without."""
    import statistics

    timed: dict[bool, list[float]] = {True: [], False: []}
    for r in range(2 * repeats):
        with_sampler = r % 2 == 0
        got = time_in_rounds([Item(item.launch, item.wait)], before, budget_s=0, max_samples=MIN_SAMPLES,
                             sampler=sampler if with_sampler else None, warmup=1, hold=hold)
        timed[with_sampler] += got.timings[0].samples_ms
    return statistics.median(timed[True]), statistics.median(timed[False])
