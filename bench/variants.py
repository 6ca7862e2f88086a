"""Time ladder kernels at other tiles (split_k at other slices of K too) next to cuBLAS, for tuning
experiments.

    python bench/variants.py --size 4096 'warptiling<128,128,16,32,64,8,8>' 'async_copy<128,128,8,32,64,8,8,4>'
    python bench/variants.py --shape 1024x1024x16384 'split_k<128,256,16,32,128,8,16,3,4>'

Each variant is compiled, verified against cuBLAS and timed exactly as `roofline run` does
(roofline.measure.runner); the table gives median ms, GFLOP/s, % of cuBLAS, occupancy and the rest.
"""

from __future__ import annotations

import argparse

from rich.console import Console

from roofline.errors import RunError, UsageError
from roofline.ladder.families import from_expression
from roofline.measure import runner
from roofline.model.problem import Problem
from roofline.render.tables import run_tables
from roofline import collect


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+", help="name expressions, e.g. warptiling<128,128,16,32,64,8,8>")
    parser.add_argument("--size", type=int, default=4096, help="M = N = K")
    parser.add_argument("--shape", help="MxNxK instead of a cube, e.g. 1024x1024x16384")
    args = parser.parse_args()
    try:
        m, n, k = (int(x) for x in args.shape.lower().split("x")) if args.shape else (args.size,) * 3
        specs = [from_expression(v) for v in args.variants]
        out = runner.run(specs, Problem(m, n, k).validate())
    except (UsageError, RunError) as exc:
        raise SystemExit(f"variants: {exc}") from None
    doc = collect.from_run(out, by_template=True)
    console = Console(width=200)
    for table in run_tables(doc, console.width):
        console.print(table)


if __name__ == "__main__":
    main()
