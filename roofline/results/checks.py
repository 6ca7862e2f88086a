"""What a results file must agree with: itself. Each check compares a recorded figure with what
the file's other figures give, never with what today's code would compute from its inputs, so a
file stays readable after the ladder, the calculator or a table changes, and a hand-edited figure
is refused with the field, its value and what the rest of the file implies.

Each check raises ValueError with one line `path.field: value, but ... give ...` (pydantic turns
it into the validation error `store.load` reports).
"""

from __future__ import annotations

from ..model.device import DeviceSpec
from ..model.occupancy import RESOURCES, Occupancy
from ..model.units import cdiv, figure
from ..model.waves import Waves

AGREE = 1e-3  # relative: a stored figure against what the others give (roofline writes them unrounded)
OCCUPANCY_DIGITS = 1e-6  # `Occupancy.to_dict` rounds the fraction to 6 decimals
CORRUPT = "the file looks hand-edited or corrupt"


def agree(where: str, stored: float, derived: float, how: str = "the file's other figures") -> None:
    """Raise unless `stored` equals `derived` to AGREE (relative); `how` names what gives `derived`."""
    if abs(stored - derived) > AGREE * abs(derived):
        raise ValueError(f"{where}: {figure(stored)} disagrees with the {figure(derived)} {how} give; {CORRUPT}")


def check_device(dev: DeviceSpec) -> None:
    """The device record against itself (`DeviceSpec.disagreements`): peaks against the cores,
    clocks and bus width it records, measured ceilings within reach of their peaks."""
    for key, why in dev.disagreements()[:1]:
        raise ValueError(f"device.{key}: {why}; {CORRUPT}")


def check_occupancy(where: str, occ: Occupancy, max_warps_per_sm: int | None = None) -> None:
    """An occupancy record against itself: active warps = active blocks x warps per block
    (threads over the warp size, rounded up), the fraction = active warps / max warps per SM,
    the blocks = the smallest block limit, the limiters = the resources at that limit, the warps'
    block limit = max warps / warps per block; and max warps per SM as the device's
    (`max_warps_per_sm`, when the record is for the device's architecture)."""
    if occ.warp_size != 32:  # every NVIDIA GPU's since the first CUDA one
        raise ValueError(f"{where}.warp_size: {occ.warp_size}, but a warp is 32 threads; {CORRUPT}")
    wpb = cdiv(occ.threads_per_block, occ.warp_size)
    if occ.active_warps_per_sm != occ.active_blocks_per_sm * wpb:
        raise ValueError(f"{where}.active_warps_per_sm: {occ.active_warps_per_sm}, but its {occ.active_blocks_per_sm} "
                         f"active blocks of {wpb} warps ({occ.threads_per_block} threads) give "
                         f"{occ.active_blocks_per_sm * wpb}; {CORRUPT}")
    if max_warps_per_sm is not None and occ.max_warps_per_sm != max_warps_per_sm:
        raise ValueError(f"{where}.max_warps_per_sm: {occ.max_warps_per_sm}, but the device's SMs hold "
                         f"{max_warps_per_sm}; {CORRUPT}")
    if occ.active_warps_per_sm > occ.max_warps_per_sm:
        raise ValueError(f"{where}.active_warps_per_sm: {occ.active_warps_per_sm}, more than the "
                         f"{occ.max_warps_per_sm} warps an SM holds; {CORRUPT}")
    fraction = occ.active_warps_per_sm / occ.max_warps_per_sm
    if abs(occ.occupancy - fraction) > OCCUPANCY_DIGITS:
        raise ValueError(f"{where}.occupancy: {occ.occupancy:g}, but its active_warps_per_sm {occ.active_warps_per_sm} "
                         f"/ max_warps_per_sm {occ.max_warps_per_sm} give {fraction:g}; {CORRUPT}")
    if set(occ.block_limits) != set(RESOURCES):
        return  # a record without every resource's limit: nothing more to check it by
    # None: a resource the block does not use and the architecture reserves none of (no limit)
    limits = {r: n for r, n in occ.block_limits.items() if n is not None}
    if "warps" not in limits:  # every block uses warps: their limit is never absent
        raise ValueError(f"{where}.block_limits.warps: null, but every block's warps limit the blocks an SM "
                         f"holds; {CORRUPT}")
    blocks = min(limits.values())
    if occ.active_blocks_per_sm != blocks:
        raise ValueError(f"{where}.active_blocks_per_sm: {occ.active_blocks_per_sm}, but its block_limits "
                         f"{dict(limits)} allow {blocks}; {CORRUPT}")
    if limits["warps"] != occ.max_warps_per_sm // wpb:
        raise ValueError(f"{where}.block_limits.warps: {limits['warps']}, but max_warps_per_sm "
                         f"{occ.max_warps_per_sm} / {wpb} warps per block give {occ.max_warps_per_sm // wpb}; {CORRUPT}")
    asks_smem = bool((occ.static_smem_bytes or 0) + (occ.dynamic_smem_bytes or 0))  # none asked: never a limiter
    at_limit = [r for r in RESOURCES if limits.get(r) == blocks and (r != "shared_memory" or asks_smem)]
    if sorted(occ.limiters) != sorted(at_limit):
        raise ValueError(f"{where}.limiters: {list(occ.limiters)}, but the resources whose block_limits equal its "
                         f"{blocks} blocks are {at_limit}; {CORRUPT}")


def check_wave_figures(where: str, w: Waves) -> None:
    """Recorded waves must be what their blocks over their block slots give."""
    want = Waves.of(w.blocks, w.block_slots, w.sm_count)
    if abs(w.waves - want.waves) > 1e-6 * want.waves or abs(w.last_wave_efficiency - want.last_wave_efficiency) > 1e-6:
        raise ValueError(f"{where}.waves: {w.waves:g} waves and a last wave {w.last_wave_efficiency:g} full, but "
                         f"{w.blocks} blocks over {w.block_slots} slots give {want.waves:.6g} and "
                         f"{want.last_wave_efficiency:.6g}; {CORRUPT}")


def check_waves(where: str, w: Waves, sm_count: int, active_blocks_per_sm: int | None) -> None:
    """A kernel's waves against the device's SMs and its occupancy: slots = SMs x active blocks
    per SM (a multiple of the SMs when the occupancy is not recorded), and the waves' figures
    against their blocks and slots (`check_wave_figures`)."""
    if w.sm_count is not None and w.sm_count != sm_count:
        raise ValueError(f"{where}.waves.sm_count: {w.sm_count}, but the device has {sm_count} SMs; {CORRUPT}")
    if active_blocks_per_sm is not None and w.block_slots != sm_count * active_blocks_per_sm:
        raise ValueError(f"{where}.waves.block_slots: {w.block_slots}, but {sm_count} SMs x the "
                         f"{active_blocks_per_sm} blocks per SM of its occupancy are "
                         f"{sm_count * active_blocks_per_sm}; {CORRUPT}")
    if active_blocks_per_sm is None and w.block_slots % sm_count:
        raise ValueError(f"{where}.waves.block_slots: {w.block_slots}, not a whole number of blocks on each of the "
                         f"device's {sm_count} SMs; {CORRUPT}")
    check_wave_figures(where, w)
