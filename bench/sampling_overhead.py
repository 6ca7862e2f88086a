"""What NVML sampling adds to a measured time: cuBLAS's SGEMM (and the best tensor-core GEMM) timed
with the clock sampled around each burst and without, alternately, on this GPU.

    python3 bench/sampling_overhead.py [--size 4096] [--out overhead.json]

Prints one line per precision: the median with and without sampling and their ratio."""

from __future__ import annotations

import argparse
import json
import sys

import cupy

from roofline.measure import reference
from roofline.measure.nvml import Sampler
from roofline.measure.rounds import Item, sampling_overhead
from roofline.measure.runner import waiter
from roofline.measure.timing import gpu_hold, l2_flush


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    n = args.size
    rows = []
    flush = l2_flush(cupy.cuda.Device().attributes["L2CacheSize"])
    sampler = Sampler()
    for dtype in ("fp32", "bf16"):
        a, b = reference.random_inputs(n, n, n, dtype)
        c = cupy.empty((n, n), dtype=cupy.float32)
        item = Item(lambda: reference.gemm(a, b, c, dtype), waiter(None))
        sampled, bare = sampling_overhead(item, flush, sampler, hold=gpu_hold())
        rows.append({"dtype": dtype, "size": n, "sampled_ms": sampled, "bare_ms": bare,
                     "overhead": sampled / bare - 1})
        print(f"{dtype} {n}^3 cuBLAS: {sampled:.4f} ms sampled, {bare:.4f} ms not, {100 * (sampled / bare - 1):+.2f} %")
    sampler.close()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
