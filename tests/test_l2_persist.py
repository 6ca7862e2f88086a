"""The L2's persisting set-aside put back ahead of each timed call (`measure.l2_persist`): through a
stand-in for the driver here, through the real one in tests/test_gpu_problem.py."""

import ctypes

from roofline.measure import l2_persist


class FakeDriver:
    """cuCtxGetLimit / cuCtxSetLimit / cuCtxResetPersistingL2Cache over one number, and
    cuStreamGetAttribute / cuStreamSetAttribute over the windows of streams (handle -> bytes), with the
    calls kept."""

    def __init__(self, set_aside: int, fails: bool = False, windows: dict | None = None):
        self.set_aside, self.fails, self.calls, self.windows = set_aside, fails, [], dict(windows or {})

    def cuStreamGetAttribute(self, stream, which, out):
        self.calls.append(("getattr", stream.value or 0))
        ctypes.cast(out, ctypes.POINTER(l2_persist._Window)).contents.num_bytes = self.windows.get(stream.value or 0, 0)
        return 0

    def cuStreamSetAttribute(self, stream, which, value):
        self.calls.append(("setattr", stream.value or 0))
        self.windows[stream.value or 0] = ctypes.cast(value, ctypes.POINTER(l2_persist._Window)).contents.num_bytes
        return 0

    def cuCtxGetLimit(self, out, which):
        self.calls.append(("get", which))
        if self.fails:
            return 201  # CUDA_ERROR_INVALID_CONTEXT
        ctypes.cast(out, ctypes.POINTER(ctypes.c_size_t)).contents.value = self.set_aside
        return 0

    def cuCtxSetLimit(self, which, value):
        self.calls.append(("set", which, value.value))
        self.set_aside = value.value
        return 0

    def cuCtxResetPersistingL2Cache(self):
        self.calls.append(("reset",))
        return 0


def _with(monkeypatch, driver):
    monkeypatch.setattr(l2_persist, "_driver", lambda: driver)
    return driver


def test_a_set_aside_is_reset_and_put_back_to_zero(monkeypatch):
    d = _with(monkeypatch, FakeDriver(16 << 20))
    assert l2_persist.limit() == 16 << 20
    assert l2_persist.clear() == 16 << 20
    assert d.calls[-2:] == [("reset",), ("set", l2_persist.CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0)]
    assert l2_persist.limit() == 0 and l2_persist.clear() == 0


def test_persisting_lines_are_reset_even_where_nothing_is_set_aside(monkeypatch):
    # on an H100 a window alone kept a product's input through the flush with the set-aside at 0 (the
    # module's docstring): the lines are reset ahead of every call, the limit left as it is
    d = _with(monkeypatch, FakeDriver(0))
    assert l2_persist.clear() == 0 and [c[0] for c in d.calls] == ["get", "getattr", "reset"]
    d = _with(monkeypatch, FakeDriver(8 << 20, fails=True))  # a limit that cannot be read: the lines reset all the same
    assert l2_persist.limit() is None and l2_persist.clear() == 0
    assert "reset" in [c[0] for c in d.calls] and "set" not in [c[0] for c in d.calls]
    _with(monkeypatch, None)  # no libcuda
    assert l2_persist.limit() is None and l2_persist.clear() == 0


def test_a_window_on_the_stream_is_found_taken_off_and_counted(monkeypatch):
    d = _with(monkeypatch, FakeDriver(0, windows={0: 96 << 10}))
    assert l2_persist.clear() == 96 << 10 and d.windows[0] == 0 and ("setattr", 0) in d.calls
    assert l2_persist.clear() == 0
    # a set-aside and a window at once: the larger
    d = _with(monkeypatch, FakeDriver(4 << 20, windows={0: 96 << 10}))
    assert l2_persist.clear() == 4 << 20 and d.set_aside == 0 and d.windows[0] == 0


def test_a_subject_that_sets_l2_aside_while_it_is_timed_is_flagged_and_the_last_set_aside_put_back(monkeypatch):
    # graded.time_it's rounds stood in for (no GPU): each launch of the subject sets 32 MiB aside, as
    # matmul_persisting_l2 does inside its calls; an honest subject's timing leaves no flag
    from types import SimpleNamespace

    from roofline.measure import graded
    from roofline.model.timing import Timing

    d = _with(monkeypatch, FakeDriver(0))
    monkeypatch.setattr(graded, "l2_flush", lambda l2_bytes: (lambda: None))

    def rounds(launch, before, *args, **kwargs):
        for _ in range(3):
            before()
            launch()
        return Timing(samples_ms=(0.01,) * 5, warmup=1), None
    monkeypatch.setattr(graded, "_in_rounds", rounds)

    def keeps():
        d.cuCtxSetLimit(l2_persist.CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(32 << 20))
    run = graded.Findings()
    graded.time_it(SimpleNamespace(kind="kernel", launch=keeps), run, None)
    assert [f.code for f in run.flags] == ["l2_persisting"] and run.flags[0].figures["set_aside_bytes"] == 32 << 20
    assert run.error.startswith("not graded: marked 32 MiB for persisting in the L2") and not run.verified
    assert d.set_aside == 0  # what the last launch set is put back too
    honest = graded.Findings()
    graded.time_it(SimpleNamespace(kind="kernel", launch=lambda: None), honest, None)
    assert honest.flags == [] and honest.error is None and honest.timing is not None
    # a set-aside made before its timing (another subject's calls, a reference's check) is put back, not charged to it
    d.set_aside = 16 << 20
    before = graded.Findings()
    graded.time_it(SimpleNamespace(kind="kernel", launch=lambda: None), before, None)
    assert before.flags == [] and before.error is None and d.set_aside == 0
