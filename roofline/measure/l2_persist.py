"""The L2's persisting lines put back to normal ahead of each timed call: a program may reserve part
of the L2 for lines it marks persisting (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes),
then an access policy window on its stream), and such lines survive the harness's L2 flush, which
writes with normal priority: its inputs would be L2 hits in every timed call, the flush
notwithstanding.

`clear()`, called ahead of each timed call before the flush, reads the set-aside through the
driver (cuCtxGetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE), a query that waits for nothing) and the
access policy windows of the streams a subject's calls run on (the legacy default stream, and
PyTorch's and CuPy's current ones where loaded, through cuStreamGetAttribute; a window left on a
stream of the subject's own is not seen, though the reset below still turns its lines back to
normal); it takes those windows off, turns every persisting line back to normal
(cuCtxResetPersistingL2Cache) and puts the limit back to 0.
Every time, whatever it found: on an H100 of the device machine (2026-12-06) the driver's own
set-aside was 9.4 MiB, not 0, and a window marking a 256 x 192 x 128 product's input persisting
still kept it through the flush with the set-aside at 0 (its product 9.9 us against 11.2 us for
the reference; 11.4 us with the lines reset before each call, and the reference itself 10.1 us
with the window left on the stream). What it finds is what the subject's own calls set (nothing
else in a grading process sets them, and `Watch` clears on entry what ran before): a subject that
sets either is flagged (`integrity.l2_persisting`).
Without a CUDA driver to ask (or a driver without these calls: CUDA 11.0 and newer have them) it
does nothing.
"""

from __future__ import annotations

import ctypes
import functools

CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06  # CUlimit, cuda.h (CUDA 11.0)
CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1  # CUstreamAttrID, cuda.h (CUDA 11.0)


class _Window(ctypes.Structure):
    """CUaccessPolicyWindow (cuda.h), padded to the 64-byte CUstreamAttrValue union it is read through."""

    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t), ("hitRatio", ctypes.c_float),
                ("hitProp", ctypes.c_int), ("missProp", ctypes.c_int), ("pad", ctypes.c_byte * 36)]


@functools.cache
def _driver():
    """libcuda's two calls and the limit query, or None where the driver cannot be loaded."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        for name in ("cuCtxGetLimit", "cuCtxSetLimit", "cuCtxResetPersistingL2Cache", "cuStreamGetAttribute",
                     "cuStreamSetAttribute"):
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


def _streams() -> list[int]:
    """The handles of the streams a subject's calls run on: the legacy default stream (0, PyTorch's
    and CuPy's unless told otherwise; its window is read and set like any stream's), PyTorch's
    current stream where PyTorch has started CUDA, CuPy's where CuPy is loaded."""
    import sys

    out = [0]
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        out.append(torch.cuda.current_stream().cuda_stream)
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            out.append(cupy.cuda.get_current_stream().ptr)
        except Exception:  # noqa: BLE001 - CuPy without a device or driver: no stream of its own
            pass
    return list(dict.fromkeys(out))


def _take_windows(lib) -> int:
    """The largest access policy window (bytes) found on the subject's streams, each taken off."""
    found = 0
    for handle in _streams():
        window = _Window()
        if lib.cuStreamGetAttribute(ctypes.c_void_p(handle), CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW,
                                    ctypes.byref(window)) != 0 or not window.num_bytes:
            continue
        found = max(found, int(window.num_bytes))
        lib.cuStreamSetAttribute(ctypes.c_void_p(handle), CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW,
                                 ctypes.byref(_Window()))
    return found


def clear() -> int:
    """Any access policy window taken off the subject's streams, every persisting line reset to
    normal and the set-aside put back to 0. Returns the most it found marked for persisting, in
    bytes: the set-aside or a stream's window (0: neither, or no driver to ask)."""
    lib = _driver()
    if lib is None:
        return 0
    now = limit() or 0
    window = _take_windows(lib)
    lib.cuCtxResetPersistingL2Cache()
    if now:
        lib.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(0))
    return max(now, window)


class Watch:
    """The persisting lines over one subject's timing, as a context: cleared on entry (what ran
    before is not the subject's: the driver's own set-aside among it), cleared and recorded at each
    `clear()` (ahead of each timed call) and on exit (after the last); `most` is the most found
    marked for persisting, in bytes (0: none)."""

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
