"""The L2's persisting set-aside put back ahead of each timed call (`measure.l2_persist`): through a
stand-in for the driver here, through the real one in tests/test_gpu_problem.py."""

import ctypes

from roofline.measure import l2_persist


class FakeDriver:
    """cuCtxGetLimit / cuCtxSetLimit / cuCtxResetPersistingL2Cache over one number, with the calls kept."""

    def __init__(self, set_aside: int, fails: bool = False):
        self.set_aside, self.fails, self.calls = set_aside, fails, []

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


def test_nothing_is_changed_where_nothing_is_set_aside_or_nothing_can_be_asked(monkeypatch):
    d = _with(monkeypatch, FakeDriver(0))
    assert l2_persist.clear() == 0 and [c[0] for c in d.calls] == ["get"]  # a query alone, each timed call
    d = _with(monkeypatch, FakeDriver(8 << 20, fails=True))
    assert l2_persist.limit() is None and l2_persist.clear() == 0 and [c[0] for c in d.calls] == ["get", "get"]
    _with(monkeypatch, None)  # no libcuda
    assert l2_persist.limit() is None and l2_persist.clear() == 0
