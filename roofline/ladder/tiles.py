"""Where the autotuned kernel's tile comes from, said out loud.

`resolve(device_name, flag)` picks, in this order: a tile given on the command line ('flag'); the
winner `roofline run --tune` stored for this GPU in the user's cache ('tuned';
`$XDG_CACHE_HOME/roofline/tuned.json`, else `~/.cache/roofline/tuned.json`); the winner this
project recorded for the GPU ('built-in', `BUILTIN`); else the family's own tile ('default').
GPU names are matched the way `--gpu` names are (`presets.name_key`: 'H200' finds 'NVIDIA H200'),
for the cache and the built-in table alike. The chosen `KernelSpec` records its source, and so do
the results.

`candidates()` is the grid `roofline run --tune` searches; which of its tiles are valid is decided by
compiling them (the kernel's static_asserts and the compiler's shared-memory limit), not here.
"""

from __future__ import annotations

from itertools import product
from pathlib import Path

from .. import files
from ..errors import UsageError
from ..model.presets import name_key
from .families import BY_NAME, TUNABLE, KernelSpec

# Winners of `roofline run --tune --size 4096` on GPUs this project measured (plots/tune-*.json).
BUILTIN: dict[str, dict[str, int]] = {
    "NVIDIA H200": {"BM": 128, "BN": 128, "BK": 16, "TM": 4, "TN": 8},
}
SEARCH = {"BM": (64, 128, 256), "BN": (64, 128, 256), "BK": (8, 16, 32), "TM": (4, 8), "TN": (4, 8)}

STATIC_SMEM_BYTES = 48 * 1024  # the static shared memory one block may declare (CUDA C++ Programming Guide)


def candidates() -> list[dict[str, int]]:
    """Every tile of the search grid `SEARCH` (108), square block tiles first. Some do not compile
    (too many threads, float4 loads that do not divide, too much shared memory); `roofline run --tune`
    reports those as invalid."""
    tiles = [dict(zip(SEARCH, values)) for values in product(*SEARCH.values())]
    return sorted(tiles, key=lambda p: (p["BM"] != p["BN"], p["BM"], p["BN"], p["BK"], p["TM"], p["TN"]))


def cache_path() -> Path:
    """Where `roofline run --tune` keeps its winners."""
    return files.cache_file("tuned.json")


def tuned(device_name: str) -> dict[str, int] | None:
    """The winner `roofline run --tune` stored for `device_name`, or None. An entry that does not name
    the tunable kernel's parameters with positive integers is ignored."""
    entries = {name_key(k): v for k, v in files.read_cache(cache_path()).items()}
    entry = entries.get(name_key(device_name))
    params = entry.get("params") if isinstance(entry, dict) else None
    names = BY_NAME[TUNABLE].params
    if (isinstance(params, dict) and set(params) == set(names)
            and all(type(v) is int and v > 0 for v in params.values())):
        return {k: params[k] for k in names}
    return None


def builtin(device_name: str) -> dict[str, int] | None:
    """The winner this project recorded for `device_name`, or None."""
    return {name_key(k): v for k, v in BUILTIN.items()}.get(name_key(device_name))


def parse_tile(text: str) -> dict[str, int]:
    """'128,128,16,4,8' (or 128x128x16x4x8) as the tunable kernel's parameters BM, BN, BK, TM, TN.
    Raises UsageError naming the expected form."""
    names = BY_NAME[TUNABLE].params
    try:
        values = [int(v) for v in text.replace("x", ",").split(",")]
    except ValueError:
        values = []
    if len(values) != len(names) or min(values, default=0) < 1:
        raise UsageError(f"{{autotuned_tile}} takes {len(names)} positive integers {','.join(names)}, "
                         f"e.g. 128,128,16,4,8; got {text!r}", "autotuned_tile")
    return dict(zip(names, values))


def _broken_rule(p: dict[str, int]) -> str | None:
    """The first of the tunable kernel's rules (its static_asserts in bank_conflict_free.cu and
    common.cuh's loads) that tile `p` breaks, said as the kernel says it; None where it keeps them
    all. The thread tile dividing the block tile is `Family.spec`'s rule, checked before."""
    if p["TM"] % 4 or p["TN"] % 4 or p["BK"] % 4:
        return "tiles must be whole float4s (TM, TN and BK multiples of 4)"
    threads = p["BM"] * p["BN"] // (p["TM"] * p["TN"])
    if not 32 <= threads <= 1024:
        return f"a block holds 32 to 1024 threads, and BM*BN/(TM*TN) is {threads:,}"
    smem = 4 * p["BK"] * (p["BM"] + 4 + p["BN"])  # As (BK x BM+4, transposed and padded) and Bs (BK x BN), floats
    if smem > STATIC_SMEM_BYTES:
        return (f"its shared tiles, 4*BK*(BM+4+BN) = {smem:,} bytes, are over the {STATIC_SMEM_BYTES:,} a block may "
                "hold statically")
    for matrix, size in (("A", p["BM"]), ("B", p["BN"])):  # common.cuh's tile loads
        if (size * p["BK"] // 4) % threads:
            return (f"every thread loads whole float4s of {matrix}: B{'M' if matrix == 'A' else 'N'}*BK/4 = "
                    f"{size * p['BK'] // 4:,} is not a multiple of the {threads:,} threads")
    return None


def resolve(device_name: str | None, flag: str | None = None) -> KernelSpec:
    """The autotuned kernel at the tile that runs on `device_name` (None: no GPU named), with its
    source: the flag's tile, the user's tuned winner, the built-in winner, or the default. Raises
    UsageError for a flag's tile the kernel cannot build (`parse_tile`, `Family.spec`, the
    kernel's own rules)."""
    fam = BY_NAME[TUNABLE]
    if flag is not None:
        spec = fam.spec(parse_tile(flag), "flag")
        broken = _broken_rule(spec.params)
        if broken:
            raise UsageError(f"{{autotuned_tile}} {flag}: {broken}", "autotuned_tile")
        return spec
    if device_name is not None:
        for source, params in (("tuned", tuned(device_name)), ("built-in", builtin(device_name))):
            if params is not None:
                return fam.spec(params, source)
    return fam.spec(None, "default")


def remember(device_name: str, params: dict[str, int], gflops: float, size: int) -> Path:
    """Store `params` as `device_name`'s winner in the cache (atomically). Returns the cache path."""
    return files.update_cache(cache_path(), device_name, {"params": params, "gflops": gflops, "size": size})
