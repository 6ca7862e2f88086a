"""Theoretical occupancy: how many blocks of a kernel fit on one SM, and which resource decides.

The rules are those of the CUDA occupancy calculator (`cuda_occupancy.h` in the toolkit), which the
driver's `cudaOccupancyMaxActiveBlocksPerMultiprocessor` also follows:

- registers: a warp is allocated regs x 32 registers rounded up to 256; the SM's register file is
  split into 4 sub-partitions and a warp's registers live in one of them, so
  warps/SM = 4 x floor((registers_per_sm / 4) / registers_per_warp) and
  blocks = floor(warps/SM / warps per block). (92 regs x 224 threads on sm_80: 2 blocks, not the
  3 that 65536 / (7 x 3072) suggests.) A block needing more than 64 K registers cannot launch.
- shared memory: static + dynamic + the driver's per-block reservation (1 KB from 8.0), rounded up
  to the allocation unit, against the SM's largest carveout. A block asking for more than 48 KB is
  taken to have opted in (cudaFuncAttributeMaxDynamicSharedMemorySize); above the opt-in maximum it
  cannot launch. A block that takes no shared memory at all (none asked for, none reserved: before
  8.0) has no shared-memory limit (the calculator's INT_MAX), so shared memory never limits it.
- warps: max warps per SM / warps per block.
- blocks: the per-SM block limit.

occupancy = active warps / max warps per SM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from annotated_types import Ge, Le

from ..errors import UsageError
from .arch import ArchLimits
from .units import cdiv, plural, round_up

RESOURCES = ("registers", "shared_memory", "warps", "blocks")

INT_MAX = 2**31 - 1  # cudaFuncSetAttribute(MaxDynamicSharedMemorySize) takes an int


@dataclass(frozen=True)
class Occupancy:
    """The result for one (registers, threads, shared memory) configuration on one architecture.

    `block_limits` maps each resource to the blocks per SM it alone would allow, None where the
    block takes none of it (shared memory of a block that asks for none and has none reserved), so
    it allows any number; `limiters` lists every resource whose limit equals `active_blocks_per_sm`
    (a resource the block does not use is never one). When the block cannot
    launch at all, `active_blocks_per_sm` is 0 and `reason` says which resource and by how much.
    Register counts are 32-bit registers; shared memory is in bytes.
    """

    arch: str
    registers_per_thread: int
    threads_per_block: int
    static_smem_bytes: int
    dynamic_smem_bytes: int
    active_blocks_per_sm: int
    active_warps_per_sm: int
    max_warps_per_sm: int
    occupancy: Annotated[float, Ge(0), Le(1)]
    limiters: list[Literal["registers", "shared_memory", "warps", "blocks"]]
    block_limits: dict[str, int | None]
    registers_per_block: int
    smem_per_block_bytes: int
    smem_opt_in: bool
    reason: str | None = None
    reserved_smem_bytes: int = 0
    warp_size: int = 32

    @property
    def warps_per_block(self) -> int:
        """Warps in one block: threads per block over the warp size, rounded up."""
        return cdiv(self.threads_per_block, self.warp_size)

    def to_dict(self) -> dict:
        """The occupancy JSON (the keys `occupancy --json` and results files share, then the allocation details)."""
        return {
            "arch": self.arch,
            "registers_per_thread": self.registers_per_thread,
            "threads_per_block": self.threads_per_block,
            "static_smem_bytes": self.static_smem_bytes,
            "dynamic_smem_bytes": self.dynamic_smem_bytes,
            "active_blocks_per_sm": self.active_blocks_per_sm,
            "active_warps_per_sm": self.active_warps_per_sm,
            "max_warps_per_sm": self.max_warps_per_sm,
            "occupancy": round(self.occupancy, 6),
            "limiters": list(self.limiters),
            "block_limits": dict(self.block_limits),
            "registers_per_block": self.registers_per_block,
            "smem_per_block_bytes": self.smem_per_block_bytes,
            "smem_opt_in": self.smem_opt_in,
            "reserved_smem_bytes": self.reserved_smem_bytes,
            "reason": self.reason,
        }


def validate(limits: ArchLimits, registers: int, threads: int, static_smem: int, dynamic_smem: int) -> None:
    """Raise UsageError unless 1 <= registers <= 255, 1 <= threads <= max threads per block, both
    shared-memory sizes are >= 0 and static shared memory is at most 48 KB (a `__shared__` array
    cannot be larger; only dynamic shared memory can opt in to more)."""
    if not 1 <= registers <= limits.max_registers_per_thread:
        raise UsageError(f"registers per thread must be 1..{limits.max_registers_per_thread}, got {registers}",
                         "registers")
    if not 1 <= threads <= limits.max_threads_per_block:
        raise UsageError(f"threads per block must be 1..{limits.max_threads_per_block}, got {threads}", "threads")
    for what, param, value in (("static shared memory", "static_smem", static_smem),
                               ("dynamic shared memory", "dynamic_smem", dynamic_smem)):
        if value < 0:
            raise UsageError(f"{what} must be >= 0 bytes, got {value}", param)
    if static_smem > limits.default_smem_per_block_bytes:
        raise UsageError(f"static shared memory must be at most {limits.default_smem_per_block_bytes:,} bytes "
                         f"(48 KB), got {static_smem:,}; use {{dynamic_smem}} for more", "static_smem",
                         ["dynamic_smem"])
    if dynamic_smem > INT_MAX:  # a launch's sharedMemBytes is an unsigned int, the opt-in attribute an int
        raise UsageError(f"dynamic shared memory is a launch's byte count, at most {INT_MAX:,}; got {dynamic_smem:,}",
                         "dynamic_smem")


def calculate(limits: ArchLimits, registers: int, threads: int,
              static_smem: int = 0, dynamic_smem: int = 0) -> Occupancy:
    """Theoretical occupancy of blocks of `threads` threads using `registers` per thread and
    `static_smem` + `dynamic_smem` bytes of shared memory, on an SM with `limits`.

    Raises UsageError for out-of-range input (see `validate`). A configuration that is valid but
    cannot launch (too many registers or too much shared memory per block) is not an error: it
    returns 0 blocks with `reason` set.
    """
    validate(limits, registers, threads, static_smem, dynamic_smem)
    warps_per_block = cdiv(threads, limits.warp_size)

    # Registers: per warp, rounded to the allocation unit, packed into sub-partitions.
    regs_per_warp = round_up(registers * limits.warp_size, limits.register_alloc_unit)
    regs_per_block = regs_per_warp * warps_per_block
    warps_per_subpartition = (limits.registers_per_sm // limits.sub_partitions) // regs_per_warp
    reg_blocks = warps_per_subpartition * limits.sub_partitions // warps_per_block

    # Shared memory: static + dynamic + reservation, rounded to the allocation unit.
    requested_smem = static_smem + dynamic_smem
    smem_per_block = round_up(requested_smem + limits.reserved_smem_per_block_bytes, limits.smem_alloc_unit_bytes)
    # A block that takes no shared memory is not limited by it (cuda_occupancy.h: INT_MAX).
    smem_blocks = limits.smem_per_sm_bytes // smem_per_block if smem_per_block else None

    block_limits = {
        "registers": reg_blocks,
        "shared_memory": smem_blocks,
        "warps": limits.max_warps_per_sm // warps_per_block,
        "blocks": limits.max_blocks_per_sm,
    }
    reason = None
    if regs_per_block > limits.max_registers_per_block:
        block_limits["registers"] = 0
        reason = (f"needs {regs_per_block:,} registers per block; the limit is "
                  f"{limits.max_registers_per_block:,}")
    elif reg_blocks == 0:
        reason = (f"needs {warps_per_block} warps of {regs_per_warp:,} registers; the SM's "
                  f"{limits.sub_partitions} sub-partitions hold {warps_per_subpartition * limits.sub_partitions}")
    if requested_smem > limits.max_smem_per_block_optin_bytes:
        block_limits["shared_memory"] = 0
        reason = (f"needs {requested_smem:,} bytes of shared memory per block; the limit is "
                  f"{limits.max_smem_per_block_optin_bytes:,} (opt-in maximum)")
    bounded = {r: b for r, b in block_limits.items() if b is not None}
    blocks = min(bounded.values())
    if blocks == 0 and reason is None:
        short = min(bounded, key=bounded.get)
        reason = f"not even one block fits: {short.replace('_', ' ')} allows 0"
    # a block that asks for no shared memory is never held back by it, whatever its reservation allows
    limiters = [r for r in RESOURCES if block_limits[r] == blocks and not (r == "shared_memory" and not requested_smem)]
    active_warps = blocks * warps_per_block
    return Occupancy(
        arch=limits.arch,
        registers_per_thread=registers,
        threads_per_block=threads,
        static_smem_bytes=static_smem,
        dynamic_smem_bytes=dynamic_smem,
        active_blocks_per_sm=blocks,
        active_warps_per_sm=active_warps,
        max_warps_per_sm=limits.max_warps_per_sm,
        occupancy=active_warps / limits.max_warps_per_sm,
        limiters=limiters,
        block_limits=block_limits,
        registers_per_block=regs_per_block,
        smem_per_block_bytes=smem_per_block,
        smem_opt_in=requested_smem > limits.default_smem_per_block_bytes,
        reason=reason,
        reserved_smem_bytes=limits.reserved_smem_per_block_bytes,
        warp_size=limits.warp_size,
    )


def max_registers_for_blocks(limits: ArchLimits, threads: int, target_blocks: int,
                             static_smem: int = 0, dynamic_smem: int = 0) -> tuple[int | None, str]:
    """The most registers per thread with which `target_blocks` blocks of `threads` threads (and
    the given shared memory) are still resident on one SM: the budget `__launch_bounds__(threads,
    target_blocks)` asks the compiler to meet.

    Returns (registers, explanation); registers is None when no register count reaches the target
    because another resource (warps, blocks, shared memory) caps it, named in the explanation.
    Raises UsageError for out-of-range input or target_blocks < 1.
    """
    validate(limits, 1, threads, static_smem, dynamic_smem)
    if target_blocks < 1:
        raise UsageError(f"{{target_blocks}} must be >= 1, got {target_blocks}", "target_blocks")
    floor = calculate(limits, 1, threads, static_smem, dynamic_smem)
    others = {r: b for r, b in floor.block_limits.items() if r != "registers" and b is not None}
    if min(others.values()) < target_blocks:
        short = min(others, key=others.get)
        return None, (f"{plural(target_blocks, 'block')} of {threads} threads cannot be resident whatever the "
                      f"registers: {short.replace('_', ' ')} allows {others[short]}")
    for regs in range(limits.max_registers_per_thread, 0, -1):
        if calculate(limits, regs, threads, static_smem, dynamic_smem).active_blocks_per_sm >= target_blocks:
            blocks = f"{target_blocks} block{'s' if target_blocks > 1 else ''}"
            return regs, (f"at most {regs} registers per thread keep {blocks} of {threads} "
                          f"threads resident (__launch_bounds__({threads}, {target_blocks}))")
    return None, f"even 1 register per thread does not fit {plural(target_blocks, 'block')} of {threads} threads"


def sweeps(limits: ArchLimits, registers: int, threads: int, static_smem: int = 0,
           dynamic_smem: int = 0) -> dict[str, list[tuple[int, float]]]:
    """Occupancy (0..1) as one input varies and the others stay put, as in Nsight Compute's
    occupancy calculator: 'registers' over 1..255 per thread, 'threads' over multiples of the warp
    size up to the block limit, 'shared_memory' (bytes per block, static + dynamic) over
    0..opt-in maximum in allocation units."""
    smem = static_smem + dynamic_smem
    step = limits.smem_alloc_unit_bytes
    return {
        "registers": [(r, calculate(limits, r, threads, static_smem, dynamic_smem).occupancy)
                      for r in range(1, limits.max_registers_per_thread + 1)],
        "threads": [(t, calculate(limits, registers, t, static_smem, dynamic_smem).occupancy)
                    for t in sorted(set(range(limits.warp_size, limits.max_threads_per_block + 1, limits.warp_size))
                                    | {threads})],
        "shared_memory": [(s, calculate(limits, registers, threads, 0, s).occupancy)
                          for s in range(0, limits.max_smem_per_block_optin_bytes + step, step)]
                         + ([] if smem % step == 0 or smem > limits.max_smem_per_block_optin_bytes
                            else [(smem, calculate(limits, registers, threads, 0, smem).occupancy)]),
    }


@dataclass(frozen=True)
class OccupancyReport:
    """The occupancy of one configuration, and for `--target-blocks` the most registers per
    thread that keep that many blocks resident (None when another resource caps it) with why."""

    limits: ArchLimits
    occupancy: Occupancy
    target_blocks: int | None = None
    target_registers: int | None = None
    target_text: str | None = None

    def to_json(self) -> dict:
        """The occupancy JSON, with `target` when a target was asked for."""
        d = self.occupancy.to_dict()
        if self.target_blocks is not None:
            d["target"] = {"target_blocks": self.target_blocks, "max_registers_per_thread": self.target_registers,
                           "explanation": self.target_text}
        return d
