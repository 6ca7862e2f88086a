"""Waves: how a launch's blocks fill the GPU's block slots, and what the last, partial wave costs.

A GPU runs at most `block_slots` = SMs x active blocks per SM (the occupancy calculator's) blocks
at once. A grid of `blocks` blocks runs in ceil(blocks / block_slots) waves; when every block takes
the same time, the launch takes that many wave-times however few blocks the last wave holds. The
scheduler spreads a partial wave over the SMs first, one block each, and an SM holding fewer
blocks than it could still runs near its full rate (the ladder's kernels hide latency with
independent accumulators, not with many resident blocks), so the share of the GPU kept busy is
counted in SMs:

    utilization = (full waves x SMs + min(blocks in the last wave, SMs)) / (waves taken x SMs)

and no implementation of the kernel at this grid runs faster than its roofline floor divided by
it: 32 blocks on the H200's 132 SMs (one block per SM) keep 24 % of the GPU busy, a floor 4.1
times higher; 133 blocks take two waves for 1.008 waves of work, 50 % busy; 264 blocks fill two
waves exactly; 64 blocks of a kernel that fits 2 per SM fill 64 of its 264 slots but 64 of 132
SMs, 48 %. The last wave's efficiency is the share of slots it fills (1 when full).
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
    sm_count: Annotated[int, Ge(1)] | None = None  # None: one slot per SM

    @classmethod
    def of(cls, blocks: int, block_slots: int, sm_count: int | None = None) -> "Waves":
        """The waves of `blocks` blocks over `block_slots` slots on `sm_count` SMs (default: one
        slot per SM), all at least 1."""
        last = blocks - (cdiv(blocks, block_slots) - 1) * block_slots
        return cls(blocks, block_slots, blocks / block_slots, last / block_slots, sm_count)

    @property
    def sms(self) -> int:
        """The SMs the slots are on."""
        return self.sm_count or self.block_slots

    @property
    def last_wave_blocks(self) -> int:
        """Blocks in the last wave (a full wave's slots when it is full)."""
        return self.blocks - (self.full_waves - 1) * self.block_slots

    @property
    def full_waves(self) -> int:
        """Waves the launch takes, the partial last one counted whole."""
        return cdiv(self.blocks, self.block_slots)

    @property
    def utilization(self) -> float:
        """Share of the SMs busy over the launch, 0..1: full waves keep them all busy, the last
        one min(its blocks, SMs) of them."""
        full = self.full_waves - 1
        return (full * self.sms + min(self.last_wave_blocks, self.sms)) / (self.full_waves * self.sms)

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
    return Waves.of(blocks, sm_count * active_blocks_per_sm, sm_count)
