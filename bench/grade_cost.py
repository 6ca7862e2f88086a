"""What grading a problem's candidates costs against what `triton.testing.do_bench` spends timing them.

    python bench/grade_cost.py PROBLEM.py CANDIDATE.py [CANDIDATE.py ...]

In one process, on the current GPU, after one warm-up call of each model and CUPTI's import (which
`roofline run`'s grading processes do before they read their request): the wall time of
`measure.problem_grade.grade` (the reference and every candidate checked on several draws, timed in
rounds behind a hold with the L2 flushed ahead of each call, audited, timed again from an idle
device) against the wall time of `do_bench` (its defaults: 25 ms of warm-up, 100 ms of repeats,
its own L2 flush) on the reference and each candidate. Prints both, their ratio, each model's
median from both (so the times can be compared too) and its samples, each model's own grade time
against `do_bench`'s on it (a candidate's is what grading one more entry costs; the reference's is
paid once per problem), and how the grade's time divides among its checks, its rounds, its calls
from an idle device and CUPTI's calls.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    import torch
    import triton.testing

    from roofline.measure import activity, nvml
    from roofline.measure.problem_grade import grade
    from roofline.workload import problem as problems

    _phases()  # before the problem is loaded: the harness it keeps (and puts back) is the wrapped one
    with problems.pytorch_defaults():
        loaded = problems.load(Path(argv[0]))
        candidates = [problems.with_candidate(loaded, Path(c)) for c in argv[1:]]
        device = nvml.describe()
        if hasattr(activity, "preload"):  # CUPTI's bindings imported ahead, as `roofline run`'s grading process does
            activity.preload()
        draw = loaded.inputs(1000, "cuda")
        models = [("reference", loaded.model(0, device="cuda"))] + \
                 [(c.candidate_path.stem, c.model(0, candidate=True, device="cuda")) for c in candidates]
        with torch.no_grad():
            for _, m in models:  # compiled and autotuned once, before either is timed
                m(*draw)
        torch.cuda.synchronize()
        bench_ms, bench_each, t0 = {}, {}, time.perf_counter()
        with torch.no_grad():
            for name, m in models:
                t1 = time.perf_counter()
                bench_ms[name] = triton.testing.do_bench(lambda m=m: m(*draw))
                torch.cuda.synchronize()
                bench_each[name] = time.perf_counter() - t1
        bench_s = time.perf_counter() - t0
        PHASES.clear()  # the warm-up calls above are not the grade's
        MODELS.clear()
        t0 = time.perf_counter()
        runs = grade(loaded, candidates, device.l2_bytes)
        grade_s = time.perf_counter() - t0
    print(f"{loaded.name}: grade {grade_s:.2f} s, do_bench {bench_s:.2f} s, ratio {grade_s / bench_s:.2f} "
          f"({len(models)} models)")
    for r in runs:
        why = "; ".join(f.code for f in r.check.flags) if r.check is not None and r.check.flags else "failed its check"
        mine = f"{r.timing.median_ms:.4f} ms" if r.timing is not None else (r.error or f"not timed: {why}")
        taken = f" ({len(r.timing.samples_ms)} samples)" if r.timing is not None else ""
        print(f"  {r.name:30} grade {mine:>14}{taken}  do_bench {bench_ms.get(r.name, float('nan')):.4f} ms")
    for r, spent in zip(runs, MODELS if len(MODELS) == len(runs) else []):  # the reference, then each candidate
        theirs = bench_each.get(r.name, float("nan"))
        print(f"  {r.name:30} its grade {spent:.3f} s, do_bench {theirs:.3f} s, ratio {spent / theirs:.2f}")
    rest = grade_s - sum(PHASES.values())
    print("  where the grade's time went: " + ", ".join(f"{k} {v:.2f} s" for k, v in PHASES.items())
          + f", the rest (models built, inputs drawn) {rest:.2f} s")
    return 0


PHASES: dict[str, float] = {}
MODELS: list[float] = []  # each model's grade, wall seconds, in the order graded


def _phases() -> None:
    """Each part of the grade wrapped to add its wall time (the device idle at its end) to PHASES."""
    import torch

    from roofline.measure import graded, problem_grade

    def wrapped(module, name: str, label: str) -> None:
        inner = getattr(module, name, None)
        if inner is None:  # a version of roofline without it
            return

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                torch.cuda.synchronize()
                PHASES[label] = PHASES.get(label, 0.0) + time.perf_counter() - t0
        setattr(module, name, timed)
    for name in ("grade_reference", "grade_candidate"):  # each model's own time, the device idle at its end
        inner_model = getattr(problem_grade, name, None)
        if inner_model is None:  # a version of roofline without it
            continue

        def one(*args, inner_model=inner_model, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner_model(*args, **kwargs)
            finally:
                torch.cuda.synchronize()
                MODELS.append(time.perf_counter() - t0)
        setattr(problem_grade, name, one)
    wrapped(problem_grade, "check", "checks and audits")
    wrapped(graded, "_in_rounds", "rounds")
    wrapped(graded, "wall_and_events", "calls from an idle device")  # before idle_calls: two sets of calls
    wrapped(graded, "kernel_activity", "CUPTI's calls")
    wrapped(graded, "idle_calls", "calls from an idle device, CUPTI's records on")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
