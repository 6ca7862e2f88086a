"""A timed call's kernels from CUPTI's activity records (`measure.activity`): kernels owned to the
call that started between the two idle points around it, from any thread and on any stream; the span, the busy time and
the flag read from them (`integrity.kernels_past_events`, `grading.late_work`). Records made by
hand with CUPTI's fields (ns on CUPTI's time base); on the CPU."""

import pytest

from roofline import grading
from roofline.measure import activity
from roofline.measure.activity import CallKernels, KernelRecord, per_call


def test_kernels_are_those_that_started_between_the_idle_points_on_any_stream():
    windows = [(1_000, 1_003_000), (10_000_000, 10_001_000)]
    kernels = [KernelRecord(7, 500, 900),  # the harness's flush, done before the window opened
               KernelRecord(7, 2_000, 3_000), KernelRecord(13, 2_500, 1_002_500),  # the call's: main stream, a side one
               KernelRecord(7, 1_003_100, 1_004_000),  # a thread left running launches once the device is idle
               KernelRecord(7, 10_000_200, 10_000_700)]
    got = per_call(windows, kernels)
    # call 1: 2,000 to 1,002,500 ns on two streams, busy the same (the side stream covers the main);
    # call 2: 500 ns on one; medians of the two
    assert got.span_ms == pytest.approx((1.0005 + 0.0005) / 2) and got.busy_ms == pytest.approx(got.span_ms)
    assert (got.launches, got.streams, got.calls) == (2, 2, 2)  # medians of (2, 1) launches, (2, 1) streams
    alone = per_call(windows[:1], kernels)  # the first call alone: the flush and the late launch not its
    assert (alone.span_ms, alone.launches, alone.streams) == (pytest.approx(1.0005), 2, 2)


def test_the_busy_time_counts_overlapping_kernels_once():
    windows = [(0, 10_000)]
    kernels = [KernelRecord(1, 1_000, 3_000), KernelRecord(2, 2_000, 4_000), KernelRecord(1, 6_000, 7_000)]
    got = per_call(windows, kernels)
    assert got.span_ms == pytest.approx(0.006) and got.busy_ms == pytest.approx(0.004)
    assert (got.launches, got.streams) == (3, 2)


def test_no_kernel_in_any_call_is_none():
    assert per_call([(0, 10)], [KernelRecord(1, 30, 40)]) is None


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


class _FakeCupti:
    """CUPTI's calls that `Recording` makes, with one of them made to fail: records handed to the
    sink at the flush, kinds enabled and disabled counted."""

    class ActivityKind:
        CONCURRENT_KERNEL, RUNTIME = "kernel", "runtime"

    def __init__(self, fail: str = "") -> None:
        self.fail, self.enabled, self.asked, self.t, self.sink = fail, set(), [], 0, None

    def _maybe(self, what: str) -> None:
        if self.fail == what:
            raise RuntimeError(f"CUPTI_ERROR_UNKNOWN in {what}")

    def get_timestamp(self):
        self.t += 10
        return self.t

    def activity_register_callbacks(self, request, completed):
        self.sink = completed

    def activity_enable(self, kind):
        self._maybe(f"enable {kind}")
        self.asked.append(kind)
        self.enabled.add(kind)
        self.enabled_at = self.t

    def activity_disable(self, kind):
        self.enabled.discard(kind)
        self._maybe(f"disable {kind}")

    def activity_flush_all(self, forced):
        self._maybe("flush")
        import types
        records = []
        for i in range(3):  # the i-th call's window: timestamps 2i+1 and 2i+2 after the enabling
            records.append(types.SimpleNamespace(kind="runtime", correlation_id=i, start=self.enabled_at + 20 * i + 15,
                                                 end=self.enabled_at + 20 * i + 16))  # a kind not asked for: ignored
            records.append(types.SimpleNamespace(kind="kernel", correlation_id=i, stream_id=7,
                                                 start=self.enabled_at + 20 * i + 15, end=self.enabled_at + 20 * i + 18))
        activity._SINK[0](records)


@pytest.fixture
def fake_gpu(monkeypatch):
    """A fake CuPy (events of 1 ms) and a fake CUPTI in `activity`; the fake CUPTI returned."""
    import sys
    import types

    cuda = types.SimpleNamespace(Device=lambda *a: types.SimpleNamespace(synchronize=lambda: None),
                                 Event=lambda: types.SimpleNamespace(record=lambda: None),
                                 get_elapsed_time=lambda a, b: 1.0)
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda))
    monkeypatch.setattr(activity, "_REGISTERED", [])
    fake = _FakeCupti()
    monkeypatch.setattr(activity, "_cupti", lambda: fake)
    return fake


def test_one_set_of_calls_gives_the_events_the_wall_clock_and_the_kernels(fake_gpu):
    from roofline.measure.graded import idle_calls

    (events, wall), kernels, why = idle_calls(lambda: None, None, calls=3)
    assert events == 1.0 and wall >= 0 and why is None
    assert kernels == CallKernels(span_ms=0.000003, busy_ms=0.000003, launches=1, streams=1, calls=3)
    assert fake_gpu.asked == ["kernel"]  # kernels alone: no record per API call
    assert fake_gpu.enabled == set() and activity._SINK[0] is activity._drop


@pytest.mark.parametrize("fail", ["flush", "disable kernel", "enable kernel"])
def test_cupti_failing_in_the_calls_is_said_and_the_events_stand(fake_gpu, fail):
    from roofline.measure.graded import idle_calls

    fake_gpu.fail = fail
    (events, _), kernels, why = idle_calls(lambda: None, None, calls=3)
    assert events == 1.0 and kernels is None
    assert why.startswith("CUPTI could not record: RuntimeError: CUPTI_ERROR_UNKNOWN in ") and "\n" not in why
    assert fake_gpu.enabled == set() and activity._SINK[0] is activity._drop  # nothing left recording


def test_a_call_that_raises_leaves_cupti_off(fake_gpu):
    from roofline.measure.graded import idle_calls

    def call():
        raise ValueError("the candidate's own error")
    with pytest.raises(ValueError):
        idle_calls(call, None, calls=3)
    assert fake_gpu.enabled == set() and activity._SINK[0] is activity._drop
