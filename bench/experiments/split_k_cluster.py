"""Time split_k_cluster.cu (split_k's partial sums added through distributed shared memory, sm_90)
beside cuBLAS, each launch after an L2 flush, the median of ROUNDS launches each, in alternation.

    python bench/experiments/split_k_cluster.py 1024x1024x1024:4 1024x1024x16384:4,8

Each shape's product is checked against cuBLAS's (max relative error under 1e-4, no NaN) before it
is timed. Prints one line per shape and split: ms, GFLOP/s, % of cuBLAS.
"""

from __future__ import annotations

import sys
from pathlib import Path

import cupy

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parent.parent / "roofline" / "kernels"
TILE = (128, 256, 16, 32, 128, 8, 16, 3)  # BM BN BK WM WN TM TN STAGES, split_k's 1024^3 choice
ROUNDS = 30


def build(splits: int):
    name = f"split_k_cluster<{','.join(map(str, TILE))},{splits}>"
    source = (HERE / "split_k_cluster.cu").read_text()
    mod = cupy.RawModule(code=source, options=("-std=c++17", f"-I{KERNELS}", f"-I{HERE}"), name_expressions=[name])
    kernel = mod.get_function(name)
    bm, bn = TILE[0], TILE[1]
    smem = max(3 * 16 * (bm + 4 + bn) * 4, bm * bn * 4)
    kernel.max_dynamic_shared_size_bytes = smem
    threads = (bm // TILE[3]) * (bn // TILE[4]) * 32
    return kernel, smem, threads


def main(argv: list[str]) -> int:
    flush = cupy.empty(512 * 2**20 // 4, dtype=cupy.float32)
    for arg in argv:
        shape, splits = arg.split(":")
        m, n, k = (int(x) for x in shape.split("x"))
        rng = cupy.random.default_rng(0)
        a = rng.standard_normal((m, k), dtype=cupy.float32)
        b = rng.standard_normal((k, n), dtype=cupy.float32)
        ref = a @ b
        for s in (int(x) for x in splits.split(",")):
            kernel, smem, threads = build(s)
            c = cupy.full((m, n), cupy.nan, dtype=cupy.float32)
            grid = ((n + TILE[1] - 1) // TILE[1], (m + TILE[0] - 1) // TILE[0], s)
            args = (cupy.int32(m), cupy.int32(n), cupy.int32(k), cupy.float32(1.0), a, b, cupy.float32(0.0), c)
            kernel(grid, (threads,), args, shared_mem=smem)
            cupy.cuda.Device().synchronize()
            err = float(cupy.max(cupy.abs(c - ref)) / cupy.max(cupy.abs(ref)))
            ok = not bool(cupy.isnan(c).any()) and err < 1e-4
            c2 = cupy.full((m, n), cupy.nan, dtype=cupy.float32)
            kernel(grid, (threads,), args[:-1] + (c2,), shared_mem=smem)
            same_bits = bool((c2.view(cupy.uint32) == c.view(cupy.uint32)).all())
            times = {"cluster": [], "cublas": []}
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            for _ in range(ROUNDS):
                for what in ("cublas", "cluster"):
                    flush.fill(1.0)
                    start.record()
                    if what == "cluster":
                        kernel(grid, (threads,), args, shared_mem=smem)
                    else:
                        cupy.matmul(a, b, out=c2)
                    stop.record()
                    stop.synchronize()
                    times[what].append(cupy.cuda.get_elapsed_time(start, stop))
            med = {w: sorted(t)[len(t) // 2] for w, t in times.items()}
            gf = 2.0 * m * n * k / (med["cluster"] * 1e6)
            print(f"{m}x{n}x{k} splits {s}: verified {ok} (max rel err {err:.2e}, same bits twice {same_bits}); "
                  f"cluster {med['cluster']:.4f} ms ({gf:,.0f} GFLOP/s), cuBLAS {med['cublas']:.4f} ms, "
                  f"{100 * med['cublas'] / med['cluster']:.1f} % of cuBLAS", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
