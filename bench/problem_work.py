"""The work and compulsory bytes of every problem in a folder of kernel-benchmark problems (a PyTorch
Model with get_inputs and get_init_inputs, e.g. KernelBench's level1/), read on PyTorch's meta device
by roofline.workload.problem: one line per problem, or why it was refused, and the count of each.
    python bench/problem_work.py FOLDER
"""

import sys
import time
from pathlib import Path

from roofline.errors import UsageError
from roofline.workload import problem


def main(folder: str) -> None:
    read = refused = 0
    start = time.perf_counter()
    files = sorted(Path(folder).glob("*.py"), key=lambda p: (len(p.name.split("_")[0]), p.name))
    for path in files:
        try:
            w = problem.work(problem.load(path))
        except UsageError as exc:
            refused += 1
            print(f"{path.name[:48]:48}  refused: {exc}")
            continue
        read += 1
        flops = ", ".join(f"{v:.3g} {k}" for k, v in w.work.flops.items()) or "no FLOPs counted"
        print(f"{path.name[:48]:48}  {flops:28}  {w.work.bytes_read / 1e6:10,.1f} MB read  "
              f"{w.work.bytes_written / 1e6:10,.1f} MB written  out {[t.shape for t in w.outputs]}")
    print(f"{read} read, {refused} refused, in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1])
