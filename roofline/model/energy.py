"""The energy a kernel took, as recorded: joules per launch from NVML's energy counter read around
a loop of its launches (`measure.energy`), the average board power over the loop, and what follows
from them with the kernel's work: GFLOP per joule and bytes per joule. Pure Python: reading a
file never loads the measuring code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Energy:
    """Joules per launch over `launches` launches that took `seconds` of wall clock (the stream
    synchronised at both ends), the average board power over them in W, and the joules per
    launch of the L2 flush that preceded each launch, measured alone and subtracted (0 without
    one)."""

    joules_per_launch: float
    watts: float
    launches: int
    seconds: float
    subtracted_j: float = 0.0

    def gflop_per_j(self, flops: float) -> float | None:
        """GFLOP per joule of a launch doing `flops` FLOPs (None for no energy measured)."""
        return flops / self.joules_per_launch / 1e9 if self.joules_per_launch > 0 else None

    def bytes_per_j(self, nbytes: float | None) -> float | None:
        """Bytes per joule of a launch moving `nbytes` (None without bytes or energy)."""
        return nbytes / self.joules_per_launch if nbytes and self.joules_per_launch > 0 else None
