"""The energy a kernel takes, from NVML's total energy counter.

`nvmlDeviceGetTotalEnergyConsumption` counts millijoules since the driver loaded and changes only
when the driver updates it (every few milliseconds to tens of them), so a difference of two
readings around a loop is off by up to one update at each end. Each loop here is therefore read
by the counter's own updates: its launches are enqueued in chunks, one chunk kept ahead, and while
the host waits for a chunk it polls the counter and notes the moment each update is seen. The
board's average power is the slope of the counter against those moments, from the first update
seen SETTLE_S after the loop began to the last one seen while it still ran (`Loop.watts`); a
launch's energy is that power over the loop's wall clock per launch. On an H200 the counter moves
about every 100 ms, at moments that wander by tens of ms: read at a half-second loop's two ends,
six loops of one cuBLAS GEMM spread 19 %; read by their updates inside, 4.8 %
(`bench/energy_counter.py`). Where fewer than two updates fall inside a loop (a counter that
updates slowly), the two ends' readings are used and the record says so (`windowed` False).

Per kernel, LOOPS loops of at least MIN_SECONDS each run in rounds across the kernels of a run
(the order rotated by one each round, as the timing is), so every kernel's loops see the same
card temperatures; the joules per launch are the median over its loops, with their 95 % confidence
interval (`model.energy.Energy.ci95_j`). Each launch is preceded, as when it was timed, by
`before` (the L2 flush), whose own energy per call is measured in the same rounds from loops of it
alone and subtracted, so what is left is the kernel's own energy (the board's static power during
its launches included: energy a kernel's run costs). Needs a GPU whose NVML reports energy (Volta
and later); elsewhere `Sampler.read` gives None and the run says so.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable

from ..model.energy import Energy
from .nvml import Sampler
from .rounds import Item

MIN_SECONDS = 1.0  # one loop's work: about ten updates of an H200's counter
LOOPS = 6  # loops per kernel: the fewest whose median has a 95 % interval (`model.timing.median_ci95`)
SETTLE_S = 0.05  # the power window starts this long into a loop, once the board's power has risen
MIN_WINDOW = 0.4  # the window must span this share of the loop, else the loop's two ends are read
CHUNK_MS = 20.0  # launches enqueued at a time, about this much work
MAX_CHUNK = 256
MAX_LAUNCHES = 100_000
POLL_S = 0.0002


def launches_for(time_ms: float, min_seconds: float = MIN_SECONDS) -> int:
    """Launches of a kernel of `time_ms` that make at least `min_seconds` of work (at most MAX_LAUNCHES)."""
    if time_ms <= 0:
        return MAX_LAUNCHES
    return max(1, min(MAX_LAUNCHES, math.ceil(1000 * min_seconds / time_ms)))


@dataclass(frozen=True)
class Loop:
    """One loop of `launches` launches that took `seconds` of wall clock (the stream idle at both
    ends): the counter's growth over the whole loop in J, and the average board power in W
    (`windowed`: between the counter's updates seen inside it; else over the whole loop)."""

    launches: int
    seconds: float
    joules: float
    watts: float
    windowed: bool
    clock_mhz: int | None = None  # the median SM clock NVML read while it ran (after SETTLE_S), None where not read

    @property
    def joules_per_launch(self) -> float:
        """The loop's power over its wall clock per launch."""
        return self.watts * self.seconds / self.launches


def _cuda_mark() -> Callable[[], bool]:
    """Record an event on the current stream; return whether the work before it has finished
    (raising, as CuPy does, for a fault in it)."""
    import cupy

    event = cupy.cuda.Event(disable_timing=True)
    event.record()
    return lambda: event.done


def run_loop(launch: Callable[[], None], n: int, wait: Callable[[int], None], sampler: Sampler,
             before: Callable[[], None] | None = None, chunk: int = 1,
             mark: Callable[[], Callable[[], bool]] = _cuda_mark,
             clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
             patience_s: float = 60.0) -> Loop | None:
    """`n` launches (each after `before`), enqueued `chunk` at a time with one chunk kept ahead,
    the energy counter polled while the host waits (module docstring). None where NVML gives no
    energy. Raises what a launch or `wait` raises; a chunk still running `patience_s` after the
    host began to wait for it is left to `wait` (whose timeout, where it has one, raises). `mark`,
    `clock` and `sleep` are the stream's event, the host's clock and its pause (a test passes a
    simulated GPU's)."""
    clocks: list[tuple[float, int]] = []  # (when, SM clock MHz) of each reading that gave one

    def energy() -> int | None:
        reading = sampler.read(energy=True)
        if reading.clock_mhz is not None:
            clocks.append((clock(), reading.clock_mhz))
        return reading.energy_mj

    wait(0)
    t0, e0 = clock(), energy()
    if e0 is None:
        return None
    ticks = [(t0, e0)]

    def drain(done: Callable[[], bool], launches: int) -> None:
        deadline = clock() + patience_s
        while not done():
            e = energy()
            if e is not None and e != ticks[-1][1]:
                ticks.append((clock(), e))
            if clock() > deadline:  # far past its time: the item's own wait decides (a timeout raises)
                wait(launches)
                return
            sleep(POLL_S)

    pending: list[tuple[Callable[[], bool], int]] = []
    left = n
    while left > 0:
        k = min(chunk, left)
        for _ in range(k):
            if before is not None:
                before()
            launch()
        left -= k
        pending.append((mark(), k))
        if len(pending) > 1:
            drain(*pending.pop(0))
    for done, k in pending:
        drain(done, k)
    wait(n)
    t1, e1 = clock(), energy()
    seconds = max(t1 - t0, 1e-9)
    joules = ((e1 if e1 is not None else ticks[-1][1]) - e0) / 1000
    inside = [(t, e) for t, e in ticks[1:] if t >= t0 + SETTLE_S]
    held = [c for t, c in clocks if t >= t0 + SETTLE_S] or [c for _, c in clocks]
    mhz = int(statistics.median(held)) if held else None
    if len(inside) >= 2 and inside[-1][0] - inside[0][0] >= MIN_WINDOW * seconds:
        return Loop(n, seconds, joules, _slope_w(inside), True, mhz)
    return Loop(n, seconds, joules, joules / seconds, False, mhz)


def _slope_w(ticks: list[tuple[float, int]]) -> float:
    """The least-squares slope of the counter (mJ) against the moments its updates were seen (s),
    in W: every update inside the window counts, so the jitter of when the driver updates it
    (tens of ms on an H200, whose counter moves every ~100 ms) weighs less than at two ends alone."""
    return statistics.linear_regression([t for t, _ in ticks], [e for _, e in ticks]).slope / 1000


STILL_COUNTER = "energy (its counter did not move while the loops ran)"  # Sampler.unsupported's entry for it


def chunk_for(time_ms: float) -> int:
    """Launches of `time_ms` enqueued at a time: about CHUNK_MS of work, 1 to MAX_CHUNK."""
    return max(1, min(MAX_CHUNK, math.ceil(CHUNK_MS / time_ms) if time_ms > 0 else MAX_CHUNK))


def measure_rounds(items: list[Item], times_ms: list[float], sampler: Sampler,
                   before: Callable[[], None] | None = None, before_ms: float = 0.0, loops: int = LOOPS,
                   min_seconds: float = MIN_SECONDS, **loop_kw) -> tuple[list[Energy | None], float] | None:
    """Each item's `Energy` (`rounds.Item`, whose launch takes about `times_ms`) from `loops` loops
    of at least `min_seconds`, in rounds across the items (the order rotated by one each round),
    each launch after `before` (which takes about `before_ms`; timed here when not given), whose
    energy per call is measured in the same rounds from loops of it alone and subtracted. Returns
    (energies, the flush's joules per call), an energy None for an item whose loop failed (its
    `error` says why) or none of whose loops saw the counter move; None where NVML gives no energy
    counter, or one that never moved over all the loops (STILL_COUNTER is then added to the
    sampler's `unsupported`, for the run's note)."""
    wait = items[0].wait if items else (lambda n: None)
    if before is not None and before_ms <= 0:
        before_ms = _once_ms(before, wait)
    order = list(range(len(items)))
    got: list[list[Loop]] = [[] for _ in items]
    flush_loops: list[Loop] = []
    for r in range(loops):
        if before is not None:
            loop = run_loop(lambda: None, launches_for(before_ms, min_seconds), wait, sampler, before,
                            chunk_for(before_ms), **loop_kw)
            if loop is None:
                return None
            flush_loops.append(loop)
        for i in order[r % len(order):] + order[:r % len(order)]:
            item, each_ms = items[i], times_ms[i] + before_ms
            if item.error is not None:
                continue
            try:
                chunk = chunk_for(each_ms)
                loop = run_loop(item.launch, launches_for(times_ms[i], min_seconds), item.wait, sampler, before,
                                chunk, **{"patience_s": max(2.0, 20 * chunk * each_ms / 1000), **loop_kw})
            except Exception as exc:  # a fault now, after it was timed: its timing stands, its energy is not had
                item.error = exc
                continue
            if loop is None:
                return None
            got[i].append(loop)
    ran = [*flush_loops, *(x for g in got for x in g)]
    if ran and not any(x.joules > 0 for x in ran):
        # the counter never moved over seconds of launches: it is not counting on this GPU
        unsupported = getattr(sampler, "unsupported", None)
        if unsupported is not None and STILL_COUNTER not in unsupported:
            unsupported.append(STILL_COUNTER)
        return None
    flush_j = statistics.median(x.joules_per_launch for x in flush_loops) if flush_loops else 0.0
    # an item none of whose loops saw the counter move has no energy measured, not 0 J
    return [_energy(g, flush_j) if g and item.error is None and any(x.joules > 0 for x in g) else None
            for g, item in zip(got, items)], flush_j


def _once_ms(call: Callable[[], None], wait: Callable[[int], None], n: int = 20) -> float:
    """The wall-clock ms of one of `n` calls of `call` in a row, the stream waited for."""
    wait(0)
    t0 = time.monotonic()
    for _ in range(n):
        call()
    wait(n)
    return 1000 * (time.monotonic() - t0) / n


def _energy(loops: list[Loop], flush_j: float) -> Energy:
    per = [max(x.joules_per_launch - flush_j, 0.0) for x in loops]
    clocks = [x.clock_mhz for x in loops if x.clock_mhz is not None]
    return Energy(statistics.median(per), statistics.median(x.watts for x in loops), loops[0].launches,
                  statistics.median(x.seconds for x in loops), flush_j, tuple(per), all(x.windowed for x in loops),
                  int(statistics.median(clocks)) if clocks else None)


def command_energy(command: list[str], pci_bus_id: str | None = None, timeout_s: float | None = None,
                   stdout_to_stderr: bool = False) -> tuple[float, float, int] | None:
    """The GPU's energy over one unprofiled run of `command`: (joules, seconds, exit code), read
    from NVML's total energy counter of the GPU at `pci_bus_id` (None: NVML's first) before the
    command starts and after it ends, its start-up and idle stretches included. None where NVML
    reports no energy counter. Needs no CuPy (NVML alone). Raises subprocess.TimeoutExpired
    after `timeout_s`."""
    import subprocess
    import sys

    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return None
    try:
        handle = (pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id) if pci_bus_id
                  else pynvml.nvmlDeviceGetHandleByIndex(0))
        e0, t0 = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle), time.monotonic()
        from ..nsight.run import program_env
        done = subprocess.run(command, stdout=sys.stderr if stdout_to_stderr else None, timeout=timeout_s,
                              env=program_env())
        e1, t1 = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle), time.monotonic()
    except pynvml.NVMLError:
        return None
    finally:
        pynvml.nvmlShutdown()
    return (e1 - e0) / 1000, t1 - t0, done.returncode
