"""Waves: how a launch's blocks fill the GPU's block slots, and what the last, partial wave costs.

A GPU runs at most `block_slots` = SMs x active blocks per SM (the occupancy calculator's) blocks
at once. A grid of `blocks` blocks runs in ceil(blocks / block_slots) waves; when every block takes
the same time, the launch takes that many block-times however few blocks the last wave holds.
So the fraction of the GPU's block slots kept busy over the launch is

    utilization = blocks / (ceil(blocks / block_slots) x block_slots)

and no implementation of the kernel at this grid runs faster than its roofline floor divided by
it: 32 blocks on the H200's 132 slots (one block per SM) keep 24 % of the GPU busy, a floor
4.1 times higher; 133 blocks take two waves for 1.008 waves of work, 50 % busy; 264 blocks fill
two waves exactly. The last wave's efficiency is the share of slots it fills (1 when full).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from annotated_types import Ge, Gt, Le

from .units import cdiv

TAIL_WORTH_NAMING = 0.10  # a tail that costs more than this share of the time is named in the verdict


@dataclass(frozen=True)
class Waves:
    """`blocks` of a launch over `block_slots` (SMs x active blocks per SM): `waves` =
    blocks / block_slots, and the share of the slots the last wave fills (0..1]."""

    blocks: Annotated[int, Ge(1)]
    block_slots: Annotated[int, Ge(1)]
    waves: Annotated[float, Gt(0)]
    last_wave_efficiency: Annotated[float, Gt(0), Le(1)]

    @classmethod
    def of(cls, blocks: int, block_slots: int) -> "Waves":
        """The waves of `blocks` blocks over `block_slots` slots (both at least 1)."""
        last = blocks - (cdiv(blocks, block_slots) - 1) * block_slots
        return cls(blocks, block_slots, blocks / block_slots, last / block_slots)

    @property
    def full_waves(self) -> int:
        """Waves the launch takes, the partial last one counted whole."""
        return cdiv(self.blocks, self.block_slots)

    @property
    def utilization(self) -> float:
        """Share of the block slots busy over the launch, 0..1: blocks / (waves taken x slots)."""
        return self.blocks / (self.full_waves * self.block_slots)

    @property
    def tail_cost(self) -> float:
        """Time the idle slots add over a perfectly filled GPU, as a share: 1 / utilization - 1."""
        return 1 / self.utilization - 1

    @property
    def tail_matters(self) -> bool:
        """The idle slots cost more than `TAIL_WORTH_NAMING` of the time."""
        return self.tail_cost > TAIL_WORTH_NAMING


def waves_of(grid: tuple[int, ...], sm_count: int, active_blocks_per_sm: int) -> Waves | None:
    """The waves of a launch of `grid` (1 to 3 dimensions) on `sm_count` SMs that each hold
    `active_blocks_per_sm` blocks (from the occupancy calculator); None when a block cannot launch
    (0 blocks per SM)."""
    blocks = 1
    for d in grid:
        blocks *= d
    if active_blocks_per_sm < 1 or blocks < 1:
        return None
    return Waves.of(blocks, sm_count * active_blocks_per_sm)
