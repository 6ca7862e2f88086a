"""The defaults the command line shows in its help, kept where nothing else is imported: `roofline
--help` and every command's declaration read them before any of the library loads (`roofline.cli`
imports `roofline.api` and the rest inside the command that runs). The modules that own each
value take it from here under their own names (`api.DEFAULT_SIZE`, `store.DEFAULT_PATH`,
`schema.SCHEMA`, `timing.DEFAULT_TIMEOUT_S`, `nsight.run.DEFAULT_LAUNCH_COUNT`, ...), so that there
is one of each.

Nothing but the standard library's pathlib here, ever.
"""

from __future__ import annotations

from pathlib import Path

SCHEMA = 4  # the results file's schema version (`results.schema`)

DEFAULT_SIZE = 4096  # M = N = K of run, tune and kernels unless told
DEFAULT_RESULTS = Path("roofline-results.json")  # run's output and what show, plot read
DEFAULT_TUNE_RESULTS = Path("roofline-tune.json")
DEFAULT_PROFILE = Path("roofline-profile.json")
DEFAULT_GRADES = Path("roofline-grades.json")
PLOT_KINDS = ("roofline", "sweep", "energy", "op", "module", "timeline")


def default_reads() -> Path:
    """The file show and plot read when none is given: DEFAULT_RESULTS where it is in the working
    folder, else the one of DEFAULT_PROFILE and DEFAULT_GRADES that is (a folder where `roofline
    profile` or a grade wrote its default alone), else DEFAULT_RESULTS (whose absence the reader says)."""
    if DEFAULT_RESULTS.exists():
        return DEFAULT_RESULTS
    others = [p for p in (DEFAULT_PROFILE, DEFAULT_GRADES) if p.exists()]
    return others[0] if len(others) == 1 else DEFAULT_RESULTS

DEFAULT_TIMEOUT_S = 5.0  # seconds a user kernel's launch may take before its process is ended
# A sample ran at full clock when no clock event reason that lowers the clock (power cap, thermal,
# hardware slowdown) was seen during it and its SM clock was at least this share of the run's top
# clock (nvbench's throttle threshold is 75 % of the default clock; sustained power capping on an
# H200 shows as 1,980 -> 1,635 MHz, 83 %).
FULL_CLOCK_SHARE = 0.97
DEFAULT_LAUNCH_COUNT = 500  # launches a profile takes at most unless told (each costs a fraction of a second)
DEFAULT_TARGET = 0.8  # whatif: the share of its binding roof each kernel is imagined at
