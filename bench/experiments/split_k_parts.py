"""Weigh split_k's parts (split_k_parts.cu) beside the library's split_k and cuBLAS, block by block.

    python bench/experiments/split_k_parts.py 1024x1024x16384:4 1024x1024x1024:4 2048x2048x4096:1
    python bench/experiments/split_k_parts.py --once 1024x1024x16384:4   # one launch each, for ncu

For each shape and slice count: the library's split_k and the stamped copies that compute C (mode 0)
are checked against cuBLAS (max relative error under 1e-4, no NaN) and against the library's
bits; then cuBLAS, the library's kernel (the last block of a tile adding its slices, and, where
every block fits on the GPU at once, all of them: `together`, launched cooperatively) and the
variants (m0: all of it; m0s: the same with the partials written 4 bytes at a time; m1s: no sum;
m2: the main loop alone) are timed in alternation, each launch after an L2 flush, the median of
ROUNDS each; then one launch of each variant reports, from the blocks' own global-timer stamps:
the spread of their starts, their main loops' durations (min, median, max), the partials' write and
count-in, the last blocks' sums, and the kernel's span from the first start to the last end.
"""

from __future__ import annotations

import sys
from pathlib import Path

import cupy
import numpy as np

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parent.parent / "roofline" / "kernels"
TILE = (128, 256, 16, 32, 128, 8, 16, 3)  # BM BN BK WM WN TM TN STAGES: split_k's choice at these sizes
ROUNDS = 30


VARIANTS = {"m0": (0, 0), "m0s": (0, 1), "m1s": (1, 1), "m2": (2, 0)}  # (MODE, SCALAR)


def build(splits: int):
    t = ",".join(map(str, TILE))
    names = {"library": f"split_k<{t},{splits},1>", "together": f"split_k<{t},{splits},{splits}>"} | \
        {key: f"split_k_stamped<{t},{splits},{m},{sc}>" for key, (m, sc) in VARIANTS.items()}
    source = '#include "split_k.cu"\n' + (HERE / "split_k_parts.cu").read_text().replace('#include "pipeline.cuh"', "")
    plain = {k: v for k, v in names.items() if k != "together"}
    mod = cupy.RawModule(code=source, options=("-std=c++17", f"-I{KERNELS}"), name_expressions=list(plain.values()))
    coop = cupy.RawModule(code=source, options=("-std=c++17", f"-I{KERNELS}"), name_expressions=[names["together"]],
                          enable_cooperative_groups=True)
    smem = 3 * 16 * (TILE[0] + 4 + TILE[1]) * 4
    kernels = {}
    for key, name in names.items():
        k = (coop if key == "together" else mod).get_function(name)
        k.max_dynamic_shared_size_bytes = smem
        kernels[key] = k
    return kernels, smem, (TILE[0] // TILE[3]) * (TILE[1] // TILE[4]) * 32


def us(x) -> str:
    return f"{x / 1000:.1f}"


def main(argv: list[str]) -> int:
    once = argv[:1] == ["--once"]
    flush = cupy.empty(512 * 2**20 // 4, dtype=cupy.float32)
    for arg in argv[1:] if once else argv:
        shape, splits = arg.split(":")
        s = int(splits)
        m, n, k = (int(x) for x in shape.split("x"))
        rng = cupy.random.default_rng(0)
        a = rng.standard_normal((m, k), dtype=cupy.float32)
        b = rng.standard_normal((k, n), dtype=cupy.float32)
        ref = a @ b
        kernels, smem, threads = build(s)
        grid = ((n + TILE[1] - 1) // TILE[1], (m + TILE[0] - 1) // TILE[0], s)
        blocks = grid[0] * grid[1] * grid[2]
        partials = cupy.zeros(grid[0] * grid[1] * s * TILE[0] * TILE[1], dtype=cupy.float32)
        arrivals = cupy.zeros(2 * grid[0] * grid[1], dtype=cupy.uint32)
        stamps = cupy.zeros(4 * blocks, dtype=cupy.uint64)
        sms = cupy.zeros(blocks, dtype=cupy.uint32)
        c = cupy.full((m, n), cupy.nan, dtype=cupy.float32)
        base = (cupy.int32(m), cupy.int32(n), cupy.int32(k), cupy.float32(1.0), a, b, cupy.float32(0.0), c,
                partials, arrivals)

        def launch(key: str) -> None:
            if key == "cublas":
                cupy.matmul(a, b, out=c)
            elif key in ("library", "together"):
                kernels[key](grid, (threads,), base, shared_mem=smem)
            else:
                kernels[key](grid, (threads,), base + (stamps, sms, cupy.int32(0)), shared_mem=smem)

        if once:  # cuBLAS then the library's kernel, once each after a warm-up, for a profiler
            for key in ("cublas", "library", "cublas", "library"):
                launch(key)
            cupy.cuda.Device().synchronize()
            continue
        bits = None
        fits = s > 1 and blocks <= 132  # every block resident at once on a 132-SM GPU
        for key in ("library", "m0", "m0s") + (("together",) if fits else ()):
            c.fill(cupy.nan)
            try:
                launch(key)
                cupy.cuda.Device().synchronize()
            except cupy.cuda.driver.CUDADriverError as exc:
                print(f"{m}x{n}x{k}:{s} {key}: {exc}", flush=True)
                continue
            err = float(cupy.max(cupy.abs(c - ref)) / cupy.max(cupy.abs(ref)))
            ok = not bool(cupy.isnan(c).any()) and err < 1e-4
            bits = c.view(cupy.uint32).copy() if bits is None else bits
            same = bool((c.view(cupy.uint32) == bits).all())
            print(f"{m}x{n}x{k}:{s} {key}: verified {ok} (max rel err {err:.2e}); the library's bits {same}; "
                  f"counters back to 0: {int(arrivals.sum()) == 0}", flush=True)
        keys = ["cublas", "library"] + (["together"] if fits else []) + ["m0", "m0s", "m1s", "m2"]
        times = {key: [] for key in keys}
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        for r in range(ROUNDS):
            for key in keys[r % len(keys):] + keys[:r % len(keys)]:
                flush.fill(1.0)
                start.record()
                launch(key)
                stop.record()
                stop.synchronize()
                times[key].append(cupy.cuda.get_elapsed_time(start, stop))
        med = {key: float(np.median(t)) for key, t in times.items()}
        print(f"{m}x{n}x{k}:{s} ({blocks} blocks) medians, ms: " +
              ", ".join(f"{key} {med[key]:.4f}" for key in keys) +
              f"; library {100 * med['cublas'] / med['library']:.1f} % of cuBLAS", flush=True)
        for mode in [k for k in keys if k.startswith("m")]:
            flush.fill(1.0)
            launch(mode)
            cupy.cuda.Device().synchronize()
            st = cupy.asnumpy(stamps).reshape(blocks, 4).astype(np.int64)
            t0 = st[:, 0].min()
            st = st - t0
            loop = st[:, 1] - st[:, 0]
            after = st[:, 2] - st[:, 1]
            tail = st[:, 3] - st[:, 2]
            per_sm = np.bincount(cupy.asnumpy(sms), minlength=1)
            summed = tail[tail > np.median(tail) + 1000] if mode.startswith("m0") else tail[:0]
            print(f"  {mode}: starts spread {us(st[:, 0].max())} us; loops min/median/max "
                  f"{us(loop.min())}/{us(np.median(loop))}/{us(loop.max())} us; loop ends "
                  f"{us(st[:, 1].min())}..{us(st[:, 1].max())}; partials+count median/max "
                  f"{us(np.median(after))}/{us(after.max())}; sums ({len(summed)}) median/max "
                  f"{us(np.median(summed)) if len(summed) else '-'}/{us(summed.max()) if len(summed) else '-'}; "
                  f"span {us(st[:, 3].max())} us; SMs used {int((per_sm > 0).sum())}, most blocks on one "
                  f"{int(per_sm.max())}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
