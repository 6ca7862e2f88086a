"""The hierarchical roofline: ceilings per memory level and compute, and the verdict per kernel.

Levels and their ceilings (GB/s or GFLOP/s), each theoretical and, where measured, measured:
  DRAM   theoretical from NVML (2 x memory clock x bus width / 8); measured by a large copy
  SMEM   SMs x 32 banks x 4 bytes x SM clock (CUDA programming guide, "Shared Memory": 32 banks,
         each delivering 4 bytes per clock; 128 B/clock/SM in the architecture whitepapers)
  FP32   theoretical cores x 2 x SM clock (NVML); measured with independent FMA chains
  L1     for profiled kernels, the L1/TEX bytes against the SMEM ceiling: L1 and shared memory
         share one 128 B/clock data path per SM
A kernel's arithmetic intensity at a level is its FLOPs over its bytes at that level: the model's
GMEM bytes (against DRAM) and SMEM bytes (4 x SMEM accesses per result x M x N), or the bytes
Nsight Compute counted when the run was profiled.

`verdict` reads one kernel the way seed lesson 000 does by hand: the time each ceiling alone
would allow, which one is highest (binds), and how far the measured time is from it.
"""

from __future__ import annotations

from .occupancy import percent

SMEM_BANKS = 32
SMEM_BANK_BYTES = 4


def smem_gbps(sm_count: int, sm_clock_mhz: float) -> float:
    """Shared-memory bandwidth of the whole GPU in GB/s: SMs x 32 banks x 4 B x clock.
    H200: 132 x 32 x 4 B x 1980 MHz = 33,454 GB/s."""
    return sm_count * SMEM_BANKS * SMEM_BANK_BYTES * sm_clock_mhz * 1e6 / 1e9


def ceilings(device: dict) -> dict[str, float]:
    """The ceilings a results file's `device` object allows: 'dram', 'fp32' (theoretical) and,
    when present, 'dram_measured', 'fp32_measured', 'smem' (needs sm_count and max_sm_clock_mhz)."""
    out = {"dram": float(device["peak_dram_gbps"]), "fp32": float(device["peak_fp32_gflops"])}
    for key, name in (("dram_measured", "measured_dram_gbps"), ("fp32_measured", "measured_fp32_gflops")):
        if isinstance(device.get(name), (int, float)) and device[name] > 0:
            out[key] = float(device[name])
    if device.get("max_sm_clock_mhz") and device.get("sm_count"):
        out["smem"] = smem_gbps(int(device["sm_count"]), float(device["max_sm_clock_mhz"]))
    return out


def level_bytes(kernel: dict, problem: dict) -> dict[str, float]:
    """Bytes per level for one kernel: 'gmem' and 'smem' from the model, and 'dram', 'l2', 'l1',
    'smem_measured' from its `measured` object when it was profiled."""
    model = kernel["model"]
    results = problem["m"] * problem["n"]
    out = {"gmem": float(model["gmem_bytes"])}
    if model.get("smem_accesses_per_result"):
        out["smem"] = 4.0 * model["smem_accesses_per_result"] * results
    measured = kernel.get("measured") or {}
    for key, name in (("dram", "dram_bytes"), ("l2", "l2_bytes"), ("l1", "l1_bytes"), ("smem_measured", "smem_bytes")):
        if measured.get(name):
            out[key] = float(measured[name])
    return out


def verdict(kernel: dict, device: dict, problem: dict) -> dict | None:
    """Which ceiling binds a timed kernel and how far it sits from it.

    Floors in ms: compute = FLOPs / FP32 rate (measured if known, else theoretical); DRAM = DRAM
    bytes (measured if profiled, else the model's GMEM bytes) / DRAM bandwidth (measured if known);
    SMEM = SMEM bytes (measured if profiled, else model) / SMEM bandwidth. Returns None for a kernel
    that was not timed. Keys: floors_ms, binding, times_floor, pct_of_ceiling, text."""
    if not (kernel.get("verified") and kernel.get("time_ms")):
        return None
    ceil = ceilings(device)
    by = level_bytes(kernel, problem)
    flops = float(kernel["model"]["flops"])
    fp32 = ceil.get("fp32_measured", ceil["fp32"])
    dram_bw = ceil.get("dram_measured", ceil["dram"])
    floors = {"FP32": flops / (fp32 * 1e9) * 1e3,
              "DRAM": by.get("dram", by["gmem"]) / (dram_bw * 1e9) * 1e3}
    if "smem" in ceil and ("smem_measured" in by or "smem" in by):
        floors["SMEM"] = by.get("smem_measured", by.get("smem")) / (ceil["smem"] * 1e9) * 1e3
    if "smem" in ceil and "l1" in by:
        # L1 and shared memory share the SM's 128 B/clock data path: the same ceiling.
        floors["L1"] = by["l1"] / (ceil["smem"] * 1e9) * 1e3
    binding = max(floors, key=floors.get)
    times = kernel["time_ms"] / floors[binding]
    occ = kernel.get("occupancy") or {}
    occ_text = (f"occupancy {percent(occ['occupancy'])} % ({'+'.join(occ['limiters'])})"
                if occ else "occupancy n/a")
    source = {"FP32": "measured" if "fp32_measured" in ceil else "theoretical",
              "DRAM": ("measured bytes" if "dram" in by else "model bytes")
              + (", measured bandwidth" if "dram_measured" in ceil else ""),
              "SMEM": "measured bytes" if "smem_measured" in by else "model bytes",
              "L1": "measured bytes, the shared-memory data path"}[binding]
    if times >= 1:
        where = f"{times:.2f}x its floor of {floors[binding]:.3f} ms ({100 / times:.0f} % of that ceiling)"
    else:
        where = (f"{1 / times:.2f}x faster than that floor ({floors[binding]:.3f} ms) allows: the hardware "
                 f"moved fewer bytes than counted (caches, broadcasts)")
    text = f"{kernel['name']}: {binding}-bound ({source}); {where}; {occ_text}"
    return {"floors_ms": floors, "binding": binding, "times_floor": times,
            "pct_of_ceiling": 100 / times, "text": text}
