"""How often NVML's total energy counter updates on this GPU, idle and under load, and what the
windowed reading (`roofline.measure.energy.run_loop`) gives against the two-ends reading.

    python bench/energy_counter.py

Prints the intervals between the counter's updates seen by polling it (median, min, max), then
six half-second loops of a cuBLAS FP16 GEMM read both ways, so the spread of each can be compared.
"""

from __future__ import annotations

import statistics
import time

import cupy

from roofline.measure import energy
from roofline.measure.nvml import Sampler


def intervals(sampler: Sampler, seconds: float, busy) -> list[float]:
    seen, last, t_end = [], sampler.read(energy=True).energy_mj, time.monotonic() + seconds
    while time.monotonic() < t_end:
        if busy is not None:
            busy()
        e = sampler.read(energy=True).energy_mj
        if e != last:
            seen.append(time.monotonic())
            last = e
        time.sleep(energy.POLL_S)
    cupy.cuda.get_current_stream().synchronize()
    return [b - a for a, b in zip(seen, seen[1:])]


def main() -> None:
    sampler = Sampler()
    n = 4096
    a = cupy.ones((n, n), dtype=cupy.float16)
    b = cupy.ones((n, n), dtype=cupy.float16)
    c = cupy.empty((n, n), dtype=cupy.float16)
    stream = cupy.cuda.get_current_stream()

    def gemm():
        cupy.matmul(a, b, out=c)

    for name, busy in (("idle", None), ("loaded", gemm)):
        gaps = intervals(sampler, 2.0, busy)
        if gaps:
            print(f"{name}: {len(gaps)} updates; interval median {1000 * statistics.median(gaps):.2f} ms, "
                  f"min {1000 * min(gaps):.2f}, max {1000 * max(gaps):.2f}")
        else:
            print(f"{name}: no update seen in 2 s")
    gemm()
    stream.synchronize()
    t = time.monotonic()
    for _ in range(20):
        gemm()
    stream.synchronize()
    once_ms = 1000 * (time.monotonic() - t) / 20
    launches = energy.launches_for(once_ms)
    rows = []
    for _ in range(6):
        loop = energy.run_loop(gemm, launches, lambda _: stream.synchronize(), sampler,
                               chunk=max(1, int(energy.CHUNK_MS / once_ms)))
        rows.append((loop.joules_per_launch, loop.joules / loop.launches, loop.windowed))
    for j_window, j_ends, windowed in rows:
        print(f"J per launch: windowed {j_window:.4f} ({'inside' if windowed else 'ends'}), two ends {j_ends:.4f}")
    for i, name in ((0, "windowed"), (1, "two ends")):
        xs = [r[i] for r in rows]
        print(f"{name}: spread (max-min)/median {100 * (max(xs) - min(xs)) / statistics.median(xs):.2f} %")
    sampler.close()


if __name__ == "__main__":
    main()
