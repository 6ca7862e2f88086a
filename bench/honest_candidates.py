"""Each problem of a kernel benchmark checked with its own reference as the candidate
(`measure.candidate`, on this machine's CPU): an honest candidate, which must pass every draw and
raise no flag. Each problem in a process of its own, stopped after LIMIT seconds (KernelBench's
sizes are for GPUs: many take longer on a CPU).

    python bench/honest_candidates.py LIMIT PROBLEM.py [PROBLEM.py ...]

Prints one line per problem (verified, flags, or why not) and a count.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ONE = r'''
import json, sys
from pathlib import Path
from roofline.measure import candidate
from roofline.workload import problem
src, cand = Path(sys.argv[1]), Path(sys.argv[2])
cand.write_text(src.read_text() + "\n\nModelNew = Model\n")
with problem.pytorch_defaults():
    c = candidate.check(problem.with_candidate(problem.load(src), cand), device="cpu", draws=2)
print(json.dumps({"verified": c.verified, "flags": [f.code for f in c.flags],
                  "failed": [d.error or next((o.reason for o in d.outputs if not o.passed), "") for d in c.draws if not d.passed]}))
'''


def main(limit: float, paths: list[str]) -> int:
    done = verified = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            cand = Path(tmp) / (Path(path).stem + "_new.py")
            try:
                proc = subprocess.run([sys.executable, "-c", ONE, path, str(cand)], capture_output=True, text=True,
                                      timeout=limit)
            except subprocess.TimeoutExpired:
                print(f"{Path(path).stem}: past {limit:g} s")
                continue
            if proc.returncode != 0:
                print(f"{Path(path).stem}: failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
                continue
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            done += 1
            verified += got["verified"]
            print(f"{Path(path).stem}: {'verified' if got['verified'] else 'NOT verified'}"
                  + (f"; flags {', '.join(got['flags'])}" if got["flags"] else "")
                  + (f"; {'; '.join(got['failed'])}" if got["failed"] else ""))
    print(f"{verified} of {done} checked verified, no flag ({len(paths) - done} not checked)")
    return 0 if verified == done else 1


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(float(sys.argv[1]), sys.argv[2:]))
