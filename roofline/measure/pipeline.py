"""What every timed Subject goes through, in whichever process it runs: the parts the ladder's
path (`runner`, and `isolated` for a user's GEMM kernel) and the workloads' path (`graded`, in
`graded_child`) share, so that they stay one.

A Subject is what is timed: a ladder rung (`ladder.families.KernelSpec`, the table's entries at
their tiles), a user's GEMM kernel (`ladder.user.UserKernel`), a workload's kernel or a Python
callable (`workload.spec.Workload`, bound to its buffers as `graded.Subject`). Each has a name, a
source (a rung's name expression, a file, MODULE:FUNCTION), a launch at given sizes, its work at
those sizes, a reference and a tolerance (`Subject` below names what the shared parts use).

Shared, step by step:
  - the request and answer of a child process (`roofline.child`), and a launch that outlives
    its time ending that child (`waiting.LaunchTimeout`, reported with `child.seconds_before`);
  - the wait for a launch (`waiting.waiter`), the outputs poisoned with NaN before a checked
    launch, the check by relative Frobenius error where NaN never passes (`model.verify`);
  - the timing: rounds behind a hold, the L2 flushed ahead of each launch, NVML's clock per
    launch (`time_items`, the one call of `rounds.time_in_rounds` both paths make).

What still differs between the two paths, and why, is written in docs/architecture.md (measure/).
"""

from __future__ import annotations

from typing import Callable, Protocol

from .rounds import WARMUP, Item, Rounds, time_in_rounds
from .timing import gpu_hold


class Subject(Protocol):
    """What is timed (see the module): the shared parts need its name; each path reads the rest
    from its own kind (a GEMM's `grid`, `figures`; a workload's `launch`, `work`, `reference`)."""

    @property
    def name(self) -> str: ...


def time_items(items: list[Item], flush: Callable[[], None] | None, budget_s: float | None = None,
               sampler=None, full_clock_share: float | None = None, warmup: int = WARMUP) -> Rounds:
    """`items` timed in rounds (`rounds.time_in_rounds`) behind a hold (`timing.gpu_hold`), `flush`
    ahead of each launch (None: the L2 left warm), within `budget_s`, NVML's readings from
    `sampler`, samples below `full_clock_share` of the top clock marked throttled (None: the
    rounds' default), after `warmup` untimed launches of each (which estimate its time). Raises
    LaunchTimeout (`waiting`) for a launch still running past its time."""
    share = {} if full_clock_share is None else {"full_clock_share": full_clock_share}
    return time_in_rounds(items, flush, budget_s=budget_s, sampler=sampler, hold=gpu_hold(), warmup=warmup, **share)
