"""Whether the L2 flush's own writes are paid for inside the next timed launch.

    python bench/experiments/flush_writeback.py [--out FILE]

`measure.timing.l2_flush` wrote zeros over a buffer twice the L2's size ahead of every timed
launch until 2026-12-07 (it reads the buffer since). The L2 writes back: the last L2's worth of those zeros may still be dirty lines when the
launch starts, and a launch that reads through the L2 evicts them, each eviction a DRAM write
inside its events. A flush that reads the buffer (a kernel summing it, storing nothing unless the
sum is an impossible value) leaves clean lines only. On the current GPU, each memory-bound launch
below (a copy and a read-only sum of N bytes) is timed with `time_gpu` after each flush in turn,
three rounds, medians of the rounds' medians:
- 'zeros': the buffer written with zeros (`l2_flush` before 2026-12-07);
- 'read': the buffer read, not written;
- 'zeros+read': written, then read (its dirty lines written back by the read, outside the events);
- 'l2_flush': `measure.timing.l2_flush` as this tree has it (a read since 2026-12-07).
If 'zeros' reads slower than 'read' and 'zeros+read', the flush's write-back is timed with the
launch (an H100 on 2026-12-07: a 16 MiB copy 17.2 µs against 13.1).
"""

from __future__ import annotations

import argparse
import statistics
import sys

def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    import cupy

    from roofline.measure.timing import FLUSH_SOURCE, l2_flush, time_gpu

    device = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(device.id)
    l2 = props["l2CacheSize"]
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    buffer = cupy.zeros(max(2 * l2, 64 * 2**20) // 8, dtype=cupy.uint64)
    written = cupy.empty_like(buffer)

    def zeros() -> None:  # the flush as it was before 2026-12-07: the buffer written
        written.fill(0)
    sink = cupy.zeros(1, dtype=cupy.uint64)
    kernel = cupy.RawKernel(FLUSH_SOURCE, "read_all")  # the reading flush's own kernel
    sms = props["multiProcessorCount"]

    def read() -> None:
        kernel((sms * 4,), (512,), (buffer, cupy.uint64(buffer.size), sink))

    def both() -> None:
        zeros()
        read()
    flushes = {"zeros": zeros, "read": read, "zeros+read": both, "l2_flush": l2_flush(l2)}  # the last: this tree's
    lines = [f"# {name}, L2 {l2 / 2**20:.0f} MiB, flush buffer {buffer.nbytes / 2**20:.0f} MiB; "
             "each launch's median (us) over three rounds of time_gpu, and GB/s it moved"]
    lines.append(f"{'launch':<22}" + "".join(f"{k:>22}" for k in flushes))
    for mib in (1, 4, 16, 48, 128, 512):
        n = mib * 2**20 // 4
        src = cupy.random.random(n, dtype=cupy.float32)
        dst = cupy.empty_like(src)
        launches = {f"copy {mib} MiB": (lambda s=src, d=dst: cupy.copyto(d, s), 2 * src.nbytes),
                    f"sum {mib} MiB": (lambda s=src: s.sum(), src.nbytes)}
        for label, (launch, moved) in launches.items():
            cells = []
            for flush in flushes.values():
                medians = [statistics.median(time_gpu(launch, warmup=3, min_repeat=30, before=flush).samples_ms)
                           for _ in range(3)]
                us = 1000 * statistics.median(medians)
                cells.append(f"{us:9.2f} ({moved / us / 1e3:6.0f})")
            lines.append(f"{label:<22}" + "".join(f"{c:>22}" for c in cells))
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
