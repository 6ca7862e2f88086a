"""Timing GPU work with CUDA events, kept as data.

`Timing` (`model.timing`, the shape results files record) holds the raw per-launch samples in
milliseconds with the warm-up count; median, min, max and spread are derived from them.
`time_gpu` records one event pair around each launch (pre-allocated, so event creation stays
out of the timed region), synchronises once at the end and returns a `Timing`. With `l2_flush` run before each launch (outside its events) every
timed launch starts with none of its data in L2 ('cold'); without it ('warm') a launch finds
what the one before it left there, all of it when the problem fits in L2.
"""

from __future__ import annotations

import functools
from typing import Callable

from ..model.timing import L2_MODES, NOISY_SPREAD, Timing

__all__ = ["L2_MODES", "NOISY_SPREAD", "Timing", "l2_flush", "repeats_for", "time_gpu"]


def repeats_for(estimate_ms: float, min_repeat: int = 20, budget_ms: float = 500.0,
                max_repeat: int = 200) -> int:
    """How many timed launches fit `budget_ms` at `estimate_ms` each, clamped to
    [min_repeat, max_repeat]: slow kernels get the minimum, fast ones more samples."""
    if estimate_ms <= 0:
        return max_repeat
    return max(min_repeat, min(max_repeat, int(budget_ms / estimate_ms)))


def time_gpu(launch: Callable[[], None], warmup: int = 3, min_repeat: int = 20,
             wait: Callable[[int], None] | None = None, before: Callable[[], None] | None = None) -> Timing:
    """Time `launch` (which enqueues GPU work on the current stream) with CUDA events.

    Runs `warmup` untimed launches (the first also estimates the cost), then at least `min_repeat`
    timed ones, each between its own start/stop event pair. `before`, when given, is enqueued
    ahead of every launch, outside its events (an L2 flush: `l2_flush`). `wait(launches)` waits
    for the stream's work, `launches` launches of it (default: synchronize; a caller with a
    timeout passes its own). Needs CuPy and a GPU; CUDA errors propagate as cupy CUDARuntimeError.
    """
    import cupy

    if wait is None:
        def wait(launches: int) -> None:
            cupy.cuda.get_current_stream().synchronize()

    before = before or (lambda: None)
    probes = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(max(warmup, 1))]
    for start, stop in probes:
        before()
        start.record()
        launch()
        stop.record()
    wait(max(warmup, 1))
    estimate = sum(cupy.cuda.get_elapsed_time(s, e) for s, e in probes) / len(probes)
    repeat = repeats_for(estimate, min_repeat, max_repeat=max(200, min_repeat))
    events = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(repeat)]
    for start, stop in events:
        before()
        start.record()
        launch()
        stop.record()
    wait(repeat)
    return Timing(tuple(cupy.cuda.get_elapsed_time(s, e) for s, e in events), warmup=max(warmup, 1))


FLUSH_MIN_BYTES = 64 * 2**20


FLUSH_SOURCE = r"""
extern "C" __global__ void read_all(const unsigned long long* buffer, unsigned long long n,
                                    unsigned long long* sink) {
    unsigned long long acc = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        acc ^= buffer[i];
    if (acc == 0x9e3779b97f4a7c15ull) sink[0] = acc;  // never, over zeros: the loads are kept, nothing stored
}
"""


@functools.cache
def _flush_kernel():
    """The flush's kernel, made once a process (every timed kernel of a run asks for a flush)."""
    import cupy

    return cupy.RawKernel(FLUSH_SOURCE, "read_all")


def l2_flush(l2_bytes: int | None) -> Callable[[], None]:
    """A `before` for `time_gpu` that leaves none of a launch's data in L2: it reads a buffer of
    zeros of twice the L2's size (at least FLUSH_MIN_BYTES; `l2_bytes` None: that minimum), which
    evicts whatever the previous launch left there (its dirty lines written back now, outside the
    timed interval) and leaves clean lines only. A flush that wrote the buffer instead would leave
    up to an L2 of dirty zeros, written back to DRAM inside the next launch's events as it evicts
    them: on an H100 (`plots/flush-writeback-h100.txt`) a 16 MiB copy read 17.1 µs after a flush
    by writes and 12.3 after this one, a 48 MiB sum 30.3 against 24.1, a 512 MiB copy 1.7 % slower.
    Costs about one DRAM pass over the buffer per launch, outside the timed interval."""
    import cupy
    import numpy as np

    words = max(2 * (l2_bytes or 0), FLUSH_MIN_BYTES) // 8
    buffer = cupy.zeros(words, dtype=cupy.uint64)
    sink = cupy.zeros(1, dtype=cupy.uint64)
    kernel = _flush_kernel()
    blocks = 4 * cupy.cuda.Device().attributes["MultiProcessorCount"]

    def flush() -> None:
        kernel((blocks,), (512,), (buffer, np.uint64(words), sink))
    return flush


_HOLD_SOURCE = r"""
extern "C" __global__ void hold(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"""


@functools.cache
def gpu_hold() -> Callable[[float], None]:
    """A `hold(ms)` that enqueues a one-thread kernel spinning on the GPU's global timer for `ms`
    milliseconds: put ahead of a burst of timed launches, it keeps the stream busy while the host
    enqueues them, so that no launch's events also time the host's work of enqueuing it (cuBLAS's
    gemmEx takes tens of microseconds of host time per call: after an idle stream, its first
    launch would count them). One thread of one block: the rest of the GPU stays idle. Built
    once per process (the current device's)."""
    import cupy
    import numpy as np

    kernel = cupy.RawKernel(_HOLD_SOURCE, "hold")

    def hold(ms: float) -> None:
        kernel((1,), (1,), (np.uint64(int(ms * 1e6)),))
    return hold
