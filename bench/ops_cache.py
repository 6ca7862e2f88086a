"""`roofline profile` of one step of examples/ops/step.py with ncu's caches left as they are between
replayed kernels (`ncu --cache-control none`) instead of flushed before each (ncu's default), for
comparing each op's time with PyTorch's profiler on the same step (docs/profiling.md, "How right
it is"). A bench experiment, not a product flag.
    python bench/ops_cache.py MODEL OUT.json
"""

import subprocess
import sys

from roofline.cli import app

_run = subprocess.run


def _uncached(cmd, *args, **kwargs):
    if isinstance(cmd, list) and cmd and cmd[0].endswith("ncu") and "-o" in cmd:
        cmd = [cmd[0], "--cache-control", "none", *cmd[1:]]
    return _run(cmd, *args, **kwargs)


if __name__ == "__main__":
    subprocess.run = _uncached
    model, out = sys.argv[1], sys.argv[2]
    app(["profile", "--no-profile-from-start", "--out", out, "--", sys.executable, "examples/ops/step.py", model],
        standalone_mode=True)
