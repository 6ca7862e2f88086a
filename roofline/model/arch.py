"""Per-SM resource limits by compute capability, for the occupancy calculator.

Figures come from the CUDA C++ Programming Guide, "Compute Capabilities", table "Technical
Specifications per Compute Capability" (warps, blocks, registers and shared memory per SM and per
block), and from the allocation rules the CUDA occupancy calculator (`cuda_occupancy.h`, shipped
with the toolkit) applies: registers are allocated per warp in units of 256 and held in the SM's
four sub-partitions; shared memory is allocated in units of 256 B before compute capability 8.0
and 128 B from 8.0 on, where the driver also reserves 1 KB per block.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace

from ..errors import UsageError

KIB = 1024


@dataclass(frozen=True)
class ArchLimits:
    """Occupancy-relevant limits of one streaming multiprocessor (SM).

    Units: registers are 32-bit registers, shared memory in bytes, warps of `warp_size` threads.
    `smem_per_sm_bytes` is the largest shared-memory carveout (the occupancy calculator's and the
    driver's default assumption); `max_smem_per_block_optin_bytes` is what a block may use once it
    sets `cudaFuncAttributeMaxDynamicSharedMemorySize`; `default_smem_per_block_bytes` (48 KB) is
    the most it may use without opting in.
    """

    compute_capability: str
    max_warps_per_sm: int
    max_blocks_per_sm: int
    smem_per_sm_bytes: int
    max_smem_per_block_optin_bytes: int
    reserved_smem_per_block_bytes: int
    smem_alloc_unit_bytes: int
    registers_per_sm: int = 64 * KIB
    max_registers_per_block: int = 64 * KIB
    max_registers_per_thread: int = 255
    register_alloc_unit: int = 256
    sub_partitions: int = 4
    max_threads_per_block: int = 1024
    default_smem_per_block_bytes: int = 48 * KIB
    warp_size: int = 32

    @property
    def arch(self) -> str:
        """The target name, e.g. 'sm_90' for compute capability 9.0."""
        major, minor = self.compute_capability.split(".")
        return f"sm_{major}{minor}"

    def to_dict(self) -> dict:
        """All fields as a plain dict (JSON-ready)."""
        return asdict(self)


def _limits(cc, warps, blocks, smem_sm_kib, smem_block_kib):
    major = int(cc.split(".")[0])
    return ArchLimits(
        compute_capability=cc,
        max_warps_per_sm=warps,
        max_blocks_per_sm=blocks,
        smem_per_sm_bytes=smem_sm_kib * KIB,
        max_smem_per_block_optin_bytes=smem_block_kib * KIB,
        reserved_smem_per_block_bytes=1 * KIB if major >= 8 else 0,
        smem_alloc_unit_bytes=128 if major >= 8 else 256,
    )


# compute capability: (max warps/SM, max blocks/SM, shared memory per SM KB, max per block KB).
# The same figures are in NVIDIA's CCCL `cuda::arch_traits` (max_threads_per_multiprocessor / 32,
# max_blocks_per_multiprocessor, max_shared_memory_per_multiprocessor, ..._per_block_optin).
ARCHS: dict[str, ArchLimits] = {
    a.compute_capability: a
    for a in (
        _limits("7.0", 64, 32, 96, 96),     # V100
        _limits("7.2", 64, 32, 96, 96),     # Jetson AGX Xavier
        _limits("7.5", 32, 16, 64, 64),     # T4, RTX 20xx
        _limits("8.0", 64, 32, 164, 163),   # A100
        _limits("8.6", 48, 16, 100, 99),    # A10, RTX 30xx
        _limits("8.7", 48, 16, 164, 163),   # Jetson Orin
        _limits("8.9", 48, 24, 100, 99),    # L4, RTX 40xx
        _limits("9.0", 64, 32, 228, 227),   # H100, H200
        _limits("10.0", 64, 32, 228, 227),  # B200
        _limits("10.3", 64, 32, 228, 227),  # B300
        _limits("11.0", 48, 24, 228, 227),  # Jetson Thor
        _limits("12.0", 48, 24, 100, 99),   # RTX 50xx
        _limits("12.1", 48, 24, 100, 99),   # DGX Spark
    )
}


_ARCH_RE = re.compile(r"^(?:sm_?|compute_)?(\d{1,2})(?:\.?(\d))([af]?)$")
# the architecture-specific ('a': sm_90a's wgmma and setmaxnreg) and family-specific ('f') targets that exist
VARIANTS = {"a": ("9.0", "10.0", "10.3", "11.0", "12.0", "12.1"), "f": ("10.0", "10.3", "11.0", "12.0", "12.1")}


def arch_variant(text: str) -> str:
    """The variant letter a target names ('sm_90a' -> 'a', 'sm_100f' -> 'f', 'sm_90' -> ''). Raises
    UsageError for a variant its architecture does not have (sm_89a) or a target that is not one."""
    match = _ARCH_RE.match(text.strip().lower())
    if match is None:
        parse_arch(text)  # says what is known
    key, letter = f"{int(match.group(1))}.{match.group(2)}", match.group(3)
    if letter and key in ARCHS and key not in VARIANTS[letter]:
        have = ", ".join(ARCHS[k].arch + letter for k in VARIANTS[letter])
        raise UsageError(f"{text!r}: {ARCHS[key].arch} has no {'architecture' if letter == 'a' else 'family'}-specific "
                         f"target; those that exist: {have}")
    return letter


def parse_arch(text: str) -> ArchLimits:
    """Limits for a target named 'sm_90', 'sm90', '90', 'compute_90', 'sm_90a' or '9.0'.

    Raises UsageError naming the known targets when `text` is not one of them.
    """
    match = _ARCH_RE.match(text.strip().lower())
    key = f"{int(match.group(1))}.{match.group(2)}" if match else None
    if key not in ARCHS:
        known = ", ".join(a.arch for a in ARCHS.values())
        raise UsageError(f"unknown architecture {text!r}; known: {known}")
    if match.group(3):
        arch_variant(text)  # a variant that exists: the same limits
    return ARCHS[key]


def limits_for_cc(cc: str, **measured: int) -> ArchLimits:
    """Limits for compute capability `cc` ("9.0"), overridden by a real device's `measured` values.

    The allocation units are not device attributes, so they come from the table; a compute
    capability newer than the table takes the units of the newest entry with the same or a lower
    major version. Raises UsageError for a capability older than 7.0.
    """
    if cc in ARCHS:
        base = ARCHS[cc]
    else:
        older = [a for a in ARCHS.values() if cc_key(a.compute_capability) <= cc_key(cc)]
        if not older:
            raise UsageError(f"compute capability {cc} is older than 7.0, which roofline does not model")
        base = replace(max(older, key=lambda a: cc_key(a.compute_capability)), compute_capability=cc)
    return replace(base, **measured)


def cc_key(cc: str) -> tuple[int, int]:
    """A compute capability "9.0" as (9, 0), to order capabilities by."""
    major, minor = cc.split(".")
    return int(major), int(minor)


NEWEST_CC = max(ARCHS, key=cc_key)  # the newest compute capability the tables hold; a newer one takes its limits
