"""The kernels a timed call launched, from CUPTI's activity records (NVIDIA's `cupti-python`), beside
its CUDA events: a second clock the call cannot move.

Events time what happens on the stream they are recorded on. A call that puts its work on a stream
of its own, or on another thread, or that replaces the harness's synchronisation, can end its
events early. CUPTI's records come from the driver: every kernel of the process, on any stream,
launched from any thread, with its start and end on the GPU's clock, on CUPTI's one time base
(`cuptiGetTimestamp`).

A `Recording` enables CUPTI's CONCURRENT_KERNEL activity (kernels alone: no record per API call)
while a graded call is called a few times from an idle device (`graded.idle_calls`, the same calls
that its events and the wall clock time). Each call is made in a window that opens with the device
idle (the harness's copies and L2 flush done and waited for) and closes with the device idle again
(after the synchronize that ends the wall clock): every kernel that starts inside it was launched,
on whichever stream, from whichever thread, while the call's work ran (by the call, or by a thread
a call left running). Per call: the span (the first kernel's start to the last one's end), the
busy time (the union of the kernels' intervals), the launches and the streams; the medians of the
calls. Kernels that start once the device is idle again (a thread left running) are not the
call's: the audit after the timing finds what they change.
Owning each kernel by the API call that launched it instead would need CUPTI's RUNTIME and DRIVER
activities: a record for every API call. On an H100 (bench/experiments/cupti_cost.py,
plots/cupti-cost-h100.txt) five calls of a 2.6 ms GEMM made 518 records that way against 5, and
took 26 to 34 ms against 16 (17 ms without CUPTI); both owned the same kernels to every call.

Where `cupti-python` is not installed, or its library does not load, `available()` says why in one
line and nothing is recorded; where another CUPTI client holds the process (Nsight Compute,
PyTorch's profiler), enabling the activities raises, and the caller (`graded.idle_calls`) says
so in one line.
"""

from __future__ import annotations

import statistics
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterable

NS_PER_MS = 1e6
NO_KERNEL = "CUPTI recorded no kernel launched by its calls"  # why a call has no kernels where CUPTI was there
BUFFER_BYTES = 8 << 20  # each activity buffer CUPTI asks for (its samples' size)


@dataclass(frozen=True)
class CallKernels:
    """The kernels of a call (medians over the calls looked at): `span_ms` from the first kernel's
    start to the last one's end, `busy_ms` the union of their intervals, `launches` kernels and the
    `streams` they ran on; `calls` how many calls these are the medians of."""

    span_ms: float
    busy_ms: float
    launches: int
    streams: int
    calls: int


@dataclass(frozen=True)
class KernelRecord:
    """One kernel's activity record: its stream, its start and end (ns, CUPTI's time base)."""

    stream_id: int
    start_ns: int
    end_ns: int


def _drop(activities) -> None:
    """Where records go when no call is looked at (a buffer CUPTI hands back late)."""


_SINK: list[Callable] = [_drop]
_REGISTERED: list[bool] = []


def _cupti():
    from cupti import cupti  # NVIDIA's cupti-python: the `cupti` extra

    return cupti


def preload() -> None:
    """CUPTI's Python bindings imported ahead, where they are installed (half a second on the H100
    machine), nothing called in them; never raises (`available` says later what is wrong)."""
    try:
        _cupti()
    except Exception:  # noqa: BLE001 - not installed, or its library does not load: `available` says so when asked
        pass


def available() -> str | None:
    """None when CUPTI's activity API can be used in this process, else why not, in one line."""
    try:
        cupti = _cupti()
        cupti.get_timestamp()
    except ImportError:
        from ..extras import install_hint
        return f"cupti-python is not installed; {install_hint('cupti')}"
    except Exception as exc:  # noqa: BLE001 - its library missing or of another CUDA: said, not raised
        return f"CUPTI did not load: {type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
    return None


def _union_ns(intervals: list[tuple[int, int]]) -> int:
    """The length of the union of `intervals` ((start, end) pairs, ns)."""
    total, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def per_call(windows: list[tuple[int, int]], kernels: Iterable[KernelRecord]) -> CallKernels | None:
    """The medians over `windows` (each call's (begin, end), ns on CUPTI's time base, the device idle
    at both) of the kernels that started inside the window, as the module says; None when no call
    launched a kernel. A call without kernels counts as 0 launches and 0 ms."""
    kernels = list(kernels)
    spans, busy, counts, streams = [], [], [], []
    for begin, end in windows:
        mine = [k for k in kernels if begin <= k.start_ns <= end]
        counts.append(len(mine))
        streams.append(len({k.stream_id for k in mine}))
        if mine:
            spans.append((max(k.end_ns for k in mine) - min(k.start_ns for k in mine)) / NS_PER_MS)
            busy.append(_union_ns([(k.start_ns, k.end_ns) for k in mine]) / NS_PER_MS)
        else:
            spans.append(0.0)
            busy.append(0.0)
    if not any(counts):
        return None
    return CallKernels(statistics.median(spans), statistics.median(busy), round(statistics.median(counts)),
                       round(statistics.median(streams)), len(windows))


class Recording:
    """CUPTI's CONCURRENT_KERNEL activity enabled while it is open (`with`), and the calls looked at
    inside it marked by `window()`: a call made inside `with recording.window():`, opened and closed
    with the device idle, owns every kernel that started between the two timestamps it takes
    (module docstring). `kernels` (after the `with`) gives their medians.
    Entering raises RuntimeError where CUPTI cannot be used (`available` says why, and callers ask
    it first), or CUPTI's own error where another client holds it (every kind it had enabled
    disabled again); leaving never raises CUPTI's errors but keeps the first in `error`."""

    def __init__(self) -> None:
        self.windows: list[tuple[int, int]] = []
        self._kernels: list[KernelRecord] = []
        self._enabled: list = []
        self.error: Exception | None = None  # what CUPTI raised as the records were flushed or disabled

    def __enter__(self) -> "Recording":
        why = available()
        if why is not None:
            raise RuntimeError(why)
        cupti = _cupti()

        def completed(activities):
            self._kernels.extend(KernelRecord(a.stream_id, a.start, a.end) for a in activities
                                 if a.kind == cupti.ActivityKind.CONCURRENT_KERNEL)

        _SINK[0] = completed
        if not _REGISTERED:  # once a process: CUPTI's callbacks then hand the buffers to the sink of the moment
            cupti.activity_register_callbacks(lambda: (BUFFER_BYTES, 0), lambda activities: _SINK[0](activities))
            _REGISTERED.append(True)
        try:
            cupti.activity_enable(cupti.ActivityKind.CONCURRENT_KERNEL)
            self._enabled.append(cupti.ActivityKind.CONCURRENT_KERNEL)
        except BaseException:
            self._close(flush=False)
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._close(flush=True)

    def _close(self, flush: bool) -> None:
        """The records flushed (where `flush`), every kind enabled disabled, each whatever the others
        did, and the sink put back; the first error CUPTI raised is kept in `error`, not raised (the
        calls' events and wall clock stand without the records)."""
        cupti = _cupti()
        try:
            if flush:
                try:
                    cupti.activity_flush_all(1)
                except Exception as exc:  # noqa: BLE001 - said by `error`
                    self.error = self.error or exc
            for kind in self._enabled:
                try:
                    cupti.activity_disable(kind)
                except Exception as exc:  # noqa: BLE001 - the other kinds are still disabled
                    self.error = self.error or exc
        finally:
            self._enabled.clear()
            _SINK[0] = _drop

    @contextmanager
    def window(self):
        """The call made inside it is one of the calls looked at (a timestamp before it and after):
        opened and closed with the device idle (module docstring)."""
        cupti = _cupti()
        begin = cupti.get_timestamp()
        try:
            yield
        finally:
            self.windows.append((begin, cupti.get_timestamp()))

    def kernels(self) -> CallKernels | None:
        """The medians over the windows (`per_call`); None when no call launched a kernel, or when
        CUPTI raised while the records were flushed (`error`)."""
        if self.error is not None:
            return None
        return per_call(self.windows, self._kernels)
