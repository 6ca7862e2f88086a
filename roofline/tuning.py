"""Tile search for the `autotuned` kernel: the candidates, the winner per GPU, where it is kept.

`candidates()` lists every valid (BM, BN, BK, TM, TN) of `bank_conflict_free_tile`: BM, BN in
{64, 128, 256}, BK in {8, 16, 32}, TM, TN in {4, 8}, with BM*BN / (TM*TN) threads between 64 and
1024, whole float4 loads per thread, and at most 48 KB of static shared memory.
`roofline tune` times them all on the current GPU (`runner.run`) and stores the winner under the
GPU's name in the user's cache (`$XDG_CACHE_HOME/roofline/tuned.json`, else
`~/.cache/roofline/tuned.json`). `tuned_params(name)` answers from that cache, then from
`BUILTIN` (winners recorded on GPUs the project measured), then `DEFAULT`.
"""

from __future__ import annotations

from itertools import product
from pathlib import Path

from . import files

DEFAULT = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}
# Winners of `roofline tune --size 4096` on GPUs this project measured (plots/tune-*.json).
BUILTIN: dict[str, dict[str, int]] = {
    "NVIDIA H200": {"BM": 128, "BN": 128, "BK": 16, "TM": 4, "TN": 8},
}


def candidates() -> list[dict[str, int]]:
    """Every valid tile for `bank_conflict_free_tile`, square ones first."""
    out = []
    for bm, bn, bk, tm, tn in product((64, 128, 256), (64, 128, 256), (8, 16, 32), (4, 8), (4, 8)):
        threads = bm * bn // (tm * tn)
        if not 64 <= threads <= 1024:
            continue
        if (bm * bk // 4) % threads or (bk * bn // 4) % threads:
            continue  # each thread must load whole float4s of both tiles
        if (bk * (bm + 4) + bk * bn) * 4 > 48 * 1024:
            continue  # static shared memory limit
        out.append({"BM": bm, "BN": bn, "BK": bk, "TM": tm, "TN": tn})
    return sorted(out, key=lambda p: (p["BM"] != p["BN"], p["BM"], p["BN"], p["BK"], p["TM"], p["TN"]))


def cache_path() -> Path:
    """Where `roofline tune` keeps its winners."""
    return files.cache_file("tuned.json")


def _valid(params) -> bool:
    return isinstance(params, dict) and params in candidates()


def tuned_params(device_name: str) -> dict[str, int]:
    """The tile to run `autotuned` at on `device_name`: the user's tuned winner, else the built-in
    one for that GPU (matched like `--gpu` names: 'H200' finds 'NVIDIA H200'), else DEFAULT. A
    cached entry that is not a valid candidate is ignored."""
    entry = files.read_cache(cache_path()).get(device_name)
    cached = entry.get("params") if isinstance(entry, dict) else None
    if _valid(cached):
        return dict(cached)
    from .presets import _key

    builtin = {_key(name): params for name, params in BUILTIN.items()}
    return dict(builtin.get(_key(device_name), DEFAULT))


def remember(device_name: str, params: dict[str, int], gflops: float, size: int) -> Path:
    """Store `params` as `device_name`'s winner in the cache (atomically). Returns the cache path."""
    return files.update_cache(cache_path(), device_name, {"params": params, "gflops": gflops, "size": size})


def search(problem, device, progress=lambda _: None) -> dict:
    """Compile, verify and time every candidate tile of `autotuned` on `problem` (a
    `runner.Problem`) and return the results document: every candidate as a kernel entry named by
    its template expression, and `tune` = {kernel, candidates, verified, winner (the params),
    winner_gflops, expression}. Raises RunError when no candidate verifies."""
    from . import registry, results, runner
    from .errors import RunError

    specs = [registry.autotuned_spec(p) for p in candidates()]
    output = runner.run(specs, problem, device, progress)
    doc = results.build(output)
    for entry in doc["kernels"]:
        entry["name"] = entry["template"]
    timed = [r for r in output.kernels if r.ok]
    if not timed:
        raise RunError("no candidate tile compiled and verified")
    best = min(timed, key=lambda r: r.timing.median_ms)
    doc["tune"] = {"kernel": "autotuned", "candidates": len(specs), "verified": len(timed),
                   "winner": dict(best.spec.params), "expression": best.spec.name_expression,
                   "winner_gflops": results.gflops(problem.flops, best.timing.median_ms)}
    return doc
