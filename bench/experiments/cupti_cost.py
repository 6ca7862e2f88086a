"""What CUPTI's records cost a grade's calls from an idle device, and whether fewer records would do.

    python bench/experiments/cupti_cost.py PROBLEM.py

`graded.idle_calls` enables three activity kinds (CONCURRENT_KERNEL, RUNTIME, DRIVER) and owns a
kernel to a call by its launch's API record (`activity.Recording`). The alternative timed here
enables CONCURRENT_KERNEL alone and owns a kernel to a call by its start on the GPU: the device is
idle when the window opens (after a synchronize, the harness's copies and flush done) and when it
closes (after the synchronize that ends the wall clock), so every kernel that starts inside it was
launched by the call or by a thread it left running. Both are CUPTI's one time base
(`cuptiGetTimestamp`).

In one process, on the current GPU, on PROBLEM's reference (its Model) and on a call that leaves a
kernel running on a stream of its own: the five calls from an idle device without CUPTI, CUPTI's
first enable (its set-up), then each recording three times in turn; each one's wall time, records
and flush time, and the kernels each owned to the calls (they must agree).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    import torch

    from roofline.measure import activity, nvml
    from roofline.measure.problem_grade import rolled
    from roofline.measure.timing import l2_flush
    from roofline.workload import problem as problems

    with problems.pytorch_defaults():
        loaded = problems.load(Path(argv[0]))
        device = nvml.describe()
        model = loaded.model(0, device="cuda")
        draw = loaded.inputs(1000, "cuda")
    flush, places, current = l2_flush(device.l2_bytes), iter(range(1, 1 << 30)), [draw]

    def before():
        current[0] = rolled(draw, next(places))
        flush()

    def call():
        with torch.no_grad():
            model(*current[0])

    side = torch.cuda.Stream()
    big = torch.randn(1 << 26, device="cuda")

    def side_call():  # returns with its work still running on a stream of its own
        with torch.cuda.stream(side):
            for _ in range(20):
                big.mul_(1.0000001)

    call()
    side_call()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    activity.preload()
    print(f"{loaded.name} on {device.name}: cupti-python imported in {time.perf_counter() - t0:.3f} s")
    print(f"  no CUPTI: {_plain(call, before):.1f} ms for the 5 calls")
    cupti = activity._cupti()
    t0 = time.perf_counter()
    cupti.activity_enable(cupti.ActivityKind.CONCURRENT_KERNEL)
    cupti.activity_disable(cupti.ActivityKind.CONCURRENT_KERNEL)
    print(f"  CUPTI's first enable and disable: {1000 * (time.perf_counter() - t0):.1f} ms")
    for name, c in (("model", call), ("side stream", side_call)):
        for _ in range(3):
            for how in (_three_kinds, _kernels_alone):
                ms, flush_ms, records, got = how(c, before, activity, cupti)
                print(f"  {name:11} {how.__name__:14} {ms:6.1f} ms (flush {flush_ms:5.1f} ms), {records:6,} records: {got}")
    print(f"  no CUPTI again: {_plain(call, before):.1f} ms for the 5 calls")
    return 0


def _plain(call, before, calls: int = 5) -> float:
    import cupy

    device, t0 = cupy.cuda.Device(), time.perf_counter()
    for _ in range(calls):
        before()
        device.synchronize()
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        call()
        stop.record()
        device.synchronize()
        cupy.cuda.get_elapsed_time(start, stop)
    return 1000 * (time.perf_counter() - t0)


def _three_kinds(call, before, activity, cupti, calls: int = 5):
    """As `graded.idle_calls` records today (`activity.Recording`)."""
    import cupy

    device, t0 = cupy.cuda.Device(), time.perf_counter()
    counted = [0]
    with activity.Recording() as recording:
        inner = activity._SINK[0]

        def counting(records):
            counted[0] += len(records)
            inner(records)
        activity._SINK[0] = counting
        for _ in range(calls):
            before()
            device.synchronize()
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            with recording.window():
                call()
            stop.record()
            device.synchronize()
        f0 = time.perf_counter()
    flush_ms = 1000 * (time.perf_counter() - f0)
    return 1000 * (time.perf_counter() - t0), flush_ms, counted[0], recording.kernels()


def _kernels_alone(call, before, activity, cupti, calls: int = 5):
    """CONCURRENT_KERNEL alone, a kernel owned by its start between two idle points."""
    import cupy

    device, t0 = cupy.cuda.Device(), time.perf_counter()
    kernels, windows = [], []

    def completed(records):
        kernels.extend(activity.KernelRecord(a.correlation_id, a.stream_id, a.start, a.end) for a in records
                       if a.kind == cupti.ActivityKind.CONCURRENT_KERNEL)
    activity._SINK[0] = completed
    if not activity._REGISTERED:
        cupti.activity_register_callbacks(lambda: (activity.BUFFER_BYTES, 0), lambda a: activity._SINK[0](a))
        activity._REGISTERED.append(True)
    cupti.activity_enable(cupti.ActivityKind.CONCURRENT_KERNEL)
    try:
        for _ in range(calls):
            before()
            device.synchronize()
            begin = cupti.get_timestamp()
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            call()
            stop.record()
            device.synchronize()
            windows.append((begin, cupti.get_timestamp()))
        f0 = time.perf_counter()
        cupti.activity_flush_all(1)
        flush_ms = 1000 * (time.perf_counter() - f0)
    finally:
        cupti.activity_disable(cupti.ActivityKind.CONCURRENT_KERNEL)
        activity._SINK[0] = activity._drop
    spans, busy, counts, streams = [], [], [], []
    for begin, end in windows:
        mine = [k for k in kernels if begin <= k.start_ns <= end]
        counts.append(len(mine))
        streams.append(len({k.stream_id for k in mine}))
        spans.append((max(k.end_ns for k in mine) - min(k.start_ns for k in mine)) / 1e6 if mine else 0.0)
        busy.append(activity._union_ns([(k.start_ns, k.end_ns) for k in mine]) / 1e6 if mine else 0.0)
    got = activity.CallKernels(statistics.median(spans), statistics.median(busy), round(statistics.median(counts)),
                               round(statistics.median(streams)), len(windows))
    return 1000 * (time.perf_counter() - t0), flush_ms, len(kernels), got


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
