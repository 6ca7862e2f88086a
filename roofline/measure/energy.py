"""The energy a kernel takes, from NVML's total energy counter.

`nvmlDeviceGetTotalEnergyConsumption` counts millijoules since the driver loaded, updated every
few tens of milliseconds, so it is read around a loop of at least MIN_SECONDS of work: the
launches a loop holds are sized from the kernel's measured time. Each launch is preceded, as when
it was timed, by `before` (the L2 flush), whose own energy per call is measured once per run over
a loop of it alone, itself at least MIN_SECONDS long (`before_joules`), and subtracted, so what
is left is the kernel's own energy (the board's static power during its
launches included: energy a kernel's run costs). Needs a GPU whose NVML reports energy (Volta and
later); elsewhere `Sampler.read` gives None and the run says so.
"""

from __future__ import annotations

import math
import time
from typing import Callable

from ..model.energy import Energy
from .nvml import Sampler

MIN_SECONDS = 1.0
MAX_LAUNCHES = 100_000


def launches_for(time_ms: float, min_seconds: float = MIN_SECONDS) -> int:
    """Launches of a kernel of `time_ms` that make at least `min_seconds` of work (at most MAX_LAUNCHES)."""
    if time_ms <= 0:
        return MAX_LAUNCHES
    return max(1, min(MAX_LAUNCHES, math.ceil(1000 * min_seconds / time_ms)))


def _loop(launch: Callable[[], None], before: Callable[[], None] | None, n: int, wait: Callable[[int], None],
          sampler: Sampler) -> tuple[float, float] | None:
    """(joules, seconds) of `n` launches, each after `before`; None where NVML gives no energy."""
    wait(0)
    e0, t0 = sampler.read(energy=True).energy_mj, time.monotonic()
    for _ in range(n):
        if before is not None:
            before()
        launch()
    wait(n)
    e1, t1 = sampler.read(energy=True).energy_mj, time.monotonic()
    if e0 is None or e1 is None:
        return None
    return (e1 - e0) / 1000, t1 - t0


def before_joules(before: Callable[[], None], wait: Callable[[int], None], sampler: Sampler,
                  min_seconds: float = MIN_SECONDS) -> float | None:
    """The energy one call of `before` (the L2 flush) takes, in J: a loop of it alone sized, from
    its own time, to at least `min_seconds` (a loop as short as a kernel's launches' flushes would
    fall between two updates of the energy counter and read 0 or one whole step). None where
    NVML reports no energy counter."""
    wait(0)
    t0 = time.monotonic()
    for _ in range(20):
        before()
    wait(20)
    once_ms = 1000 * (time.monotonic() - t0) / 20
    n = launches_for(once_ms, min_seconds)
    loop = _loop(lambda: None, before, n, wait, sampler)
    return None if loop is None else loop[0] / n


def measure(launch: Callable[[], None], time_ms: float, wait: Callable[[int], None], sampler: Sampler,
            before: Callable[[], None] | None = None, min_seconds: float = MIN_SECONDS,
            before_j: float = 0.0) -> Energy | None:
    """The energy of `launch` (which takes about `time_ms`), as the module says: `before` ahead of
    each launch as when timed, its own energy per call (`before_joules`, measured once per run)
    subtracted. None where NVML reports no energy counter on this GPU."""
    n = launches_for(time_ms, min_seconds)
    loop = _loop(launch, before, n, wait, sampler)
    if loop is None:
        return None
    joules, seconds = loop
    return Energy(max(joules / n - before_j, 0.0), joules / seconds if seconds > 0 else 0.0, n, seconds, before_j)


def command_energy(command: list[str], pci_bus_id: str | None = None, timeout_s: float | None = None,
                   stdout_to_stderr: bool = False) -> tuple[float, float, int] | None:
    """The GPU's energy over one unprofiled run of `command`: (joules, seconds, exit code), read
    from NVML's total energy counter of the GPU at `pci_bus_id` (None: NVML's first) before the
    command starts and after it ends, its start-up and idle stretches included. None where NVML
    reports no energy counter. Needs no CuPy (NVML alone). Raises subprocess.TimeoutExpired
    after `timeout_s`."""
    import subprocess
    import sys

    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return None
    try:
        handle = (pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id) if pci_bus_id
                  else pynvml.nvmlDeviceGetHandleByIndex(0))
        e0, t0 = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle), time.monotonic()
        done = subprocess.run(command, stdout=sys.stderr if stdout_to_stderr else None, timeout=timeout_s)
        e1, t1 = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle), time.monotonic()
    except pynvml.NVMLError:
        return None
    finally:
        pynvml.nvmlShutdown()
    return (e1 - e0) / 1000, t1 - t0, done.returncode
