"""Shared fixtures: a synthetic results document (no GPU needed) and the GPU marker's skip."""

from __future__ import annotations

import copy

import pytest

from roofline import registry
from roofline.device import from_preset
from roofline.model import floors


def pytest_collection_modifyitems(config, items):
    from roofline.device import gpu_available

    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU with a working driver")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


# GFLOP/s per kernel for the synthetic document: shaped like a ladder, not a measurement.
SYNTHETIC_GFLOPS = {"naive": 500.0, "gmem_coalescing": 6000.0, "smem_tiling": 9000.0,
                    "register_tiling_1d": 17000.0, "register_strip": 16000.0, "register_tiling_2d": 25000.0,
                    "vectorized": 31000.0, "bank_conflict_free": 33000.0, "autotuned": 34000.0,
                    "warptiling": 37000.0, "async_copy": 43000.0,
                    "full_tiles": 49000.0}


def make_doc(n: int = 4096, failed: tuple[str, ...] = ()) -> dict:
    """A schema-1 results document for preset H200 built from the model, with made-up speeds;
    kernels named in `failed` are marked as failing verification (no time)."""
    from roofline.arch import parse_arch
    from roofline.occupancy import calculate

    dev = from_preset("h200")
    flops = 2 * n**3
    ref_ms = flops / 50_000e9 * 1e3
    kernels = []
    for spec in registry.LADDER:
        fig = spec.model.figures(n, n, n)
        ok = spec.name not in failed
        g = SYNTHETIC_GFLOPS[spec.name]
        t_ms = flops / (g * 1e9) * 1e3
        kernels.append({
            "name": spec.name, "gflops": g if ok else None, "time_ms": t_ms if ok else None,
            "pct_of_reference": 100 * ref_ms / t_ms if ok else None, "verified": ok,
            "rel_error": 1e-6 if ok else None, "registers": 64, "threads_per_block": spec.threads_per_block,
            "static_smem_bytes": 8192,
            "occupancy": calculate(parse_arch("sm_90"), 64, spec.threads_per_block, 8192).to_dict(),
            "model": fig.to_dict(),
            "floors": floors(fig, dev.peak_fp32_gflops, dev.peak_dram_gbps).to_dict(t_ms if ok else None),
        })
    return {"schema": 1, "device": dev.to_dict(),
            "problem": {"m": n, "n": n, "k": n, "dtype": "float32"},
            "reference": {"name": "cublas", "gflops": flops / (ref_ms * 1e-3) / 1e9, "time_ms": ref_ms},
            "kernels": kernels}


@pytest.fixture
def doc():
    return copy.deepcopy(make_doc())
