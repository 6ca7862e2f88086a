"""How quickly the commands that need no GPU answer: `roofline occupancy` and `roofline kernels
--model-only`, each timed in-process after the command line's import (the median of a few runs),
and as a whole process from the interpreter's start. A timing, not a test: tests/test_cli.py and
tests/test_startup.py check what keeps these commands quick (which modules they load), which a
busy machine cannot make fail.

    python bench/startup_speed.py            # one line per command
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = (["occupancy", "--regs", "93", "--threads", "256", "--arch", "sm_120"],
            ["kernels", "--gpu", "h200", "--model-only"])
IN_PROCESS = """
import json, sys, time
from typer.testing import CliRunner
from roofline.cli import app
import roofline.api, roofline.outcome  # what a command imports as it starts, loaded before the timing
args, times = json.loads(sys.argv[1]), []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    result = CliRunner().invoke(app, args)
    times.append(time.perf_counter() - start)
    assert result.exit_code == 0, result.output
print(json.dumps(times))
"""


def main(repeats: int = 5) -> None:
    import json

    for args in COMMANDS:
        done = subprocess.run([sys.executable, "-c", IN_PROCESS, json.dumps(args), str(repeats)], capture_output=True,
                              text=True, cwd=ROOT, check=True)
        in_process = statistics.median(json.loads(done.stdout.splitlines()[-1]))
        whole = []
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "roofline", *args], capture_output=True, cwd=ROOT, check=True)
            whole.append(time.perf_counter() - start)
        print(f"roofline {' '.join(args)}: {in_process * 1e3:.0f} ms in-process (median of {repeats}), "
              f"{statistics.median(whole):.2f} s as a process")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
