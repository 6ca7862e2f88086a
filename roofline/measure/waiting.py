"""Waiting for launched work, up to a time limit: how a kernel that never ends is stopped.

A kernel that spins forever holds its stream, and every later call that waits on the GPU (a
synchronisation, a copy to the host, freeing memory, cuBLAS's next launch) waits with it. So the
process that launched it can do nothing more on the GPU: `wait` raises `LaunchTimeout`, and the
code that times user kernels (`measure.isolated`, `measure.graded_child`, each a process of its
own) lets it end the process at once, with a report, instead of carrying on to the next call that
would hang; the driver ends the kernel with the process. `LaunchTimeout` is therefore never set
aside by the code between the launch and that process's top (`rounds.time_in_rounds` and
`runner.run` pass it on).
"""

from __future__ import annotations

import time
from typing import Callable

CUDA_ERROR_NOT_READY = 600  # cudaErrorNotReady (CUDA runtime API, enum cudaError): work still running
POLL_S = 0.0005


class LaunchTimeout(RuntimeError):
    """GPU work did not finish within its time; the kernel may still be running (nothing more can
    be done on the GPU in this process). `waited_s` is how long it was waited for, `launches` how
    many launches the wait covered and `timeout_s` the limit per launch. `partial` is set by the
    code it passes through to what was known before it (e.g. the kernel's compiled figures)."""

    def __init__(self, waited_s: float, launches: int, timeout_s: float):
        self.waited_s, self.launches, self.timeout_s = waited_s, launches, timeout_s
        self.partial = None
        per = f"{launches} launches at {timeout_s:g} s each" if launches > 1 else f"{timeout_s:g} s per launch"
        super().__init__(f"stopped after {waited_s:.1f} s, still running (--timeout: {per})")


def waiter(timeout_s: float | None, device_wide: bool = False) -> Callable[[int], None]:
    """A `wait(launches)` for the current stream: synchronize when `timeout_s` is None, else poll
    the stream (cudaStreamQuery) and raise LaunchTimeout once `launches` x `timeout_s` seconds have
    passed, or the CUDA error a launch left. With `device_wide`, once the stream is done the whole
    device is synchronised too (a callable may enqueue on streams of its own; the legacy default
    stream, CuPy's and PyTorch's default, waits for the blocking ones). Needs CuPy."""
    import cupy

    def wait(launches: int = 1) -> None:
        stream = cupy.cuda.get_current_stream()
        if timeout_s is not None:
            _poll(cupy.cuda.runtime, stream.ptr, launches, timeout_s)
        if device_wide:
            cupy.cuda.Device().synchronize()
        elif timeout_s is None:
            stream.synchronize()
    return wait


def _poll(runtime, stream_ptr: int, launches: int, timeout_s: float) -> None:
    start = time.monotonic()
    deadline = start + launches * timeout_s
    while True:
        # cudaStreamQuery: 0 done, cudaErrorNotReady still running, anything else a fault in the
        # kernel (CuPy's Stream.done reads every non-zero status as "not yet").
        try:
            status = runtime.streamQuery(stream_ptr)
        except runtime.CUDARuntimeError as exc:
            status = exc.status
        if status == 0:
            return
        if status != CUDA_ERROR_NOT_READY:
            raise runtime.CUDARuntimeError(status)
        if time.monotonic() > deadline:
            raise LaunchTimeout(time.monotonic() - start, launches, timeout_s)
        time.sleep(POLL_S)
