"""Where a check's time goes (`measure.candidate.check`), by Python's profiler.

    python bench/experiments/check_cost.py PROBLEM.py

In one process on the current GPU: PROBLEM's reference checked against a second instance of
itself (as `grade_reference` checks it) once untimed, then once under cProfile; the functions
that took most of the wall time, by cumulative time (a call that waits for the device carries the
wait), and the check's wall time with and without the profiler.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    import torch

    from roofline.measure.candidate import check
    from roofline.workload import problem as problems

    with problems.pytorch_defaults():
        loaded = problems.load(Path(argv[0]))
        models = (loaded.model(0, device="cuda"), loaded.model(0, device="cuda"))
        check(loaded, "cuda", models=models)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        check(loaded, "cuda", models=models)
        torch.cuda.synchronize()
        plain = time.perf_counter() - t0
        profiler = cProfile.Profile()
        t0 = time.perf_counter()
        profiler.enable()
        check(loaded, "cuda", models=models)
        torch.cuda.synchronize()
        profiler.disable()
        profiled = time.perf_counter() - t0
    print(f"{loaded.name}: check {1000 * plain:.1f} ms ({1000 * profiled:.1f} ms profiled)")
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(28)
    print("\n".join(line for line in text.getvalue().splitlines() if line.strip())[-4000:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
