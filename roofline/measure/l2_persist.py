"""The L2's persisting set-aside, put back ahead of each timed call: a program may reserve part of the
L2 for lines it marks persisting (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes), then an
access policy window on its stream), and such lines survive the harness's L2 flush, which writes
with normal priority: its inputs would be L2 hits in every timed call, the flush notwithstanding.

`clear()`, called ahead of each timed call before the flush, reads the set-aside through the
driver (cuCtxGetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE), a query that waits for nothing); where it
is not CUDA's default of 0 (no line can persist then), it turns every persisting line back to
normal (cuCtxResetPersistingL2Cache) and puts the limit back to 0: with no set-aside, no line
persists, and the flush evicts everything. The set-aside it finds is what the subject's own calls
set (nothing else in a grading process sets it): a subject that sets it is flagged
(`integrity.l2_persisting`), since on an H100 a product that did so inside each call ran 12 %
faster than its reference with the set-aside put back before every call.
Without a CUDA driver to ask (or a driver without these calls: CUDA 11.0 and newer have them) it
does nothing.
"""

from __future__ import annotations

import ctypes
import functools

CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06  # CUlimit, cuda.h (CUDA 11.0)


@functools.cache
def _driver():
    """libcuda's two calls and the limit query, or None where the driver cannot be loaded."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        for name in ("cuCtxGetLimit", "cuCtxSetLimit", "cuCtxResetPersistingL2Cache"):
            getattr(lib, name)
    except (OSError, AttributeError):
        return None
    return lib


def limit() -> int | None:
    """The current context's persisting L2 set-aside in bytes; None where the driver cannot say
    (none loaded, no current context)."""
    lib = _driver()
    if lib is None:
        return None
    value = ctypes.c_size_t(0)
    if lib.cuCtxGetLimit(ctypes.byref(value), CU_LIMIT_PERSISTING_L2_CACHE_SIZE) != 0:
        return None
    return int(value.value)


def clear() -> int:
    """Where the set-aside is not 0: every persisting line reset to normal and the limit put back to
    0. Returns the set-aside it found, in bytes (0: none, or no driver to ask)."""
    now = limit()
    if not now:
        return 0
    lib = _driver()
    lib.cuCtxResetPersistingL2Cache()
    lib.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(0))
    return now


class Watch:
    """The set-aside over one subject's timing, as a context: put back to 0 on entry (what ran
    before is not the subject's), put back and recorded at each `clear()` (ahead of each timed
    call) and on exit (after the last); `most` is the largest found, in bytes (0: none)."""

    def __init__(self) -> None:
        self.found: list[int] = []

    def __enter__(self) -> "Watch":
        clear()
        return self

    def clear(self) -> None:
        self.found.append(clear())

    def __exit__(self, *exc) -> bool:
        self.clear()
        return False

    @property
    def most(self) -> int:
        return max(self.found, default=0)
