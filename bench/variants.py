"""Time ladder kernels at other tile sizes next to cuBLAS, for tuning experiments.

    python bench/variants.py --size 4096 'warptiling<128,128,16,32,64,8,8>' 'async_copy<128,128,8,32,64,8,8,4>'

Each variant is compiled, verified against cuBLAS and timed exactly as `roofline run` does
(roofline.runner); the table gives median ms, GFLOP/s, % of cuBLAS, registers and occupancy.
"""

from __future__ import annotations

import argparse

from rich.console import Console

from roofline import registry, results, runner
from roofline.errors import RunError, UsageError
from roofline.report import run_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+", help="name expressions, e.g. warptiling<128,128,16,32,64,8,8>")
    parser.add_argument("--size", type=int, default=4096)
    args = parser.parse_args()
    try:
        specs = [registry.variant(v) for v in args.variants]
        problem = runner.Problem(args.size, args.size, args.size)
        out = runner.run(specs, problem)
    except (UsageError, RunError) as exc:
        raise SystemExit(f"variants: {exc}") from None
    doc = results.build(out)
    for k, spec in zip(doc["kernels"], specs):
        k["name"] = spec.name_expression
    Console(width=200).print(run_table(doc))


if __name__ == "__main__":
    main()
