"""Time ladder kernels at other tile sizes next to cuBLAS, for tuning experiments.

    python bench/variants.py --size 4096 'warptiling<128,128,16,32,64,8,8>' 'async_copy<128,128,8,32,64,8,8,4>'

Each variant is compiled, verified against cuBLAS and timed exactly as `roofline run` does
(roofline.measure.runner); the table gives median ms, GFLOP/s, % of cuBLAS, occupancy and the rest.
"""

from __future__ import annotations

import argparse

from rich.console import Console

from roofline.errors import RunError, UsageError
from roofline.ladder.families import variant
from roofline.measure import runner
from roofline.model.problem import Problem
from roofline.render.tables import run_tables
from roofline import collect


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+", help="name expressions, e.g. warptiling<128,128,16,32,64,8,8>")
    parser.add_argument("--size", type=int, default=4096)
    args = parser.parse_args()
    try:
        specs = [variant(v) for v in args.variants]
        out = runner.run(specs, Problem(args.size, args.size, args.size).validate())
    except (UsageError, RunError) as exc:
        raise SystemExit(f"variants: {exc}") from None
    doc = collect.from_run(out, by_template=True)
    console = Console(width=200)
    for table in run_tables(doc, console.width):
        console.print(table)


if __name__ == "__main__":
    main()
