"""A timed call's kernels from CUPTI's activity records (`measure.activity`): kernels owned to the
call whose launch began inside it, from any thread and on any stream; the span, the busy time and
the flag read from them (`integrity.kernels_past_events`, `grading.late_work`). Records made by
hand with CUPTI's fields (ns on CUPTI's time base); on the CPU."""

import pytest

from roofline import grading
from roofline.measure import activity
from roofline.measure.activity import CallKernels, KernelRecord, LaunchRecord, per_call


def test_kernels_are_the_calls_whose_launch_began_inside_it_on_any_stream():
    windows = [(1_000, 2_000), (10_000, 11_000)]
    launches = [LaunchRecord(1, 900),  # the harness's flush, launched before the call
                LaunchRecord(2, 1_100), LaunchRecord(3, 1_500),  # the call's: main stream, a side stream
                LaunchRecord(4, 2_500),  # a thread left running launches after the call returned
                LaunchRecord(5, 10_100)]
    kernels = [KernelRecord(1, 7, 1_000, 1_900),
               KernelRecord(2, 7, 2_000, 3_000), KernelRecord(3, 13, 2_500, 1_002_500),
               KernelRecord(4, 7, 3_000, 4_000),
               KernelRecord(5, 7, 10_200, 10_700)]
    got = per_call(windows, launches, kernels)
    # call 1: 2,000 to 1,002,500 ns on two streams, busy the same (the side stream covers the main);
    # call 2: 500 ns on one; medians of the two
    assert got.span_ms == pytest.approx((1.0005 + 0.0005) / 2) and got.busy_ms == pytest.approx(got.span_ms)
    assert (got.launches, got.streams, got.calls) == (2, 2, 2)  # medians of (2, 1) launches, (2, 1) streams
    alone = per_call(windows[:1], launches, kernels)  # the first call alone: the flush and the late launch not its
    assert (alone.span_ms, alone.launches, alone.streams) == (pytest.approx(1.0005), 2, 2)


def test_the_busy_time_counts_overlapping_kernels_once():
    windows = [(0, 100)]
    launches = [LaunchRecord(i, 10 * i) for i in range(1, 4)]
    kernels = [KernelRecord(1, 1, 1_000, 3_000), KernelRecord(2, 2, 2_000, 4_000), KernelRecord(3, 1, 6_000, 7_000)]
    got = per_call(windows, launches, kernels)
    assert got.span_ms == pytest.approx(0.006) and got.busy_ms == pytest.approx(0.004)
    assert (got.launches, got.streams) == (3, 2)


def test_no_kernel_in_any_call_is_none():
    assert per_call([(0, 10)], [LaunchRecord(1, 20)], [KernelRecord(1, 1, 30, 40)]) is None


def test_kernels_that_outrun_the_events_raise_async_return_where_the_wall_clock_did_not():
    side = CallKernels(span_ms=2.5, busy_ms=2.5, launches=2, streams=2, calls=5)
    flag = grading.late_work((0.011, 0.05), side)  # the wall clock fooled (a patched synchronize, say)
    assert flag.code == "async_return" and flag.figures["kernel_span_ms"] == 2.5
    assert "2.5 ms from the first one's start to the last one's end on 2 stream(s)" in flag.evidence
    honest = CallKernels(span_ms=0.009, busy_ms=0.009, launches=1, streams=1, calls=5)
    assert grading.late_work((0.011, 0.013), honest) is None
    assert grading.late_work(None, side) is None
    assert grading.late_work((0.011, 3.0), None).figures["wall_ms"] == 3.0


def test_without_cupti_python_it_says_so_in_one_line():
    why = activity.available()
    if why is None:
        pytest.skip("cupti-python loads here")
    assert "\n" not in why and ("cupti-python" in why or "CUPTI" in why)
    assert grading.activity_notes([why, why, None]) == [
        f"kernel times from CUPTI's activity records not taken: {why}; the events and the wall clock to an idle "
        "device timed the calls"]


def test_preloading_cupti_never_raises(monkeypatch):
    def broken():
        raise OSError("libcupti.so.12: cannot open shared object file")
    monkeypatch.setattr(activity, "_cupti", broken)
    assert activity.preload() is None
    assert activity.available() is not None
