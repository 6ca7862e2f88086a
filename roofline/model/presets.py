"""Datasheet figures for GPUs one may not have at hand (`--gpu NAME`).

Each preset gives the SM count, the FP32 core count and boost clock (peak FP32 GFLOP/s = cores x 2
FLOP per FMA x boost clock), and the DRAM bandwidth, each from the vendor's datasheet or
architecture whitepaper named in `source`. Per-SM limits come from `arch.ARCHS` by compute
capability. On a machine with the GPU itself, NVML's readings are better (`measure.nvml`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .roofs import fp32_gflops


@dataclass(frozen=True)
class Preset:
    """One GPU's datasheet figures. Clocks in MHz, bandwidth in GB/s (1e9 bytes/s)."""

    name: str
    compute_capability: str
    sm_count: int
    fp32_cores: int
    boost_clock_mhz: float
    dram_gbps: float
    memory_bytes: int
    source: str
    aliases: tuple[str, ...] = ()

    @property
    def peak_fp32_gflops(self) -> float:
        """cores x 2 FLOP (one FMA) x boost clock, in GFLOP/s (`roofs.fp32_gflops`)."""
        return fp32_gflops(self.fp32_cores, self.boost_clock_mhz)


GB = 10**9
PRESETS: tuple[Preset, ...] = (
    Preset("Tesla V100-SXM2", "7.0", 80, 5120, 1530, 900, 32 * GB,
           "NVIDIA Tesla V100 datasheet; Volta architecture whitepaper", ("v100",)),
    Preset("Tesla T4", "7.5", 40, 2560, 1590, 320, 16 * GB,
           "NVIDIA T4 datasheet; Turing architecture whitepaper", ("t4",)),
    Preset("A100-SXM4-80GB", "8.0", 108, 6912, 1410, 2039, 80 * GB,
           "NVIDIA A100 datasheet (80 GB SXM); Ampere GA100 whitepaper", ("a100",)),
    Preset("A10", "8.6", 72, 9216, 1695, 600, 24 * GB,
           "NVIDIA A10 datasheet", ("a10",)),
    Preset("GeForce RTX 3090", "8.6", 82, 10496, 1695, 936, 24 * GB,
           "NVIDIA Ampere GA102 whitepaper", ("rtx3090", "3090")),
    Preset("L4", "8.9", 58, 7424, 2040, 300, 24 * GB,
           "NVIDIA L4 datasheet; Ada architecture whitepaper", ("l4",)),
    Preset("GeForce RTX 4090", "8.9", 128, 16384, 2520, 1008, 24 * GB,
           "NVIDIA Ada Lovelace architecture whitepaper", ("rtx4090", "4090")),
    Preset("H100-SXM5-80GB", "9.0", 132, 16896, 1980, 3350, 80 * GB,
           "NVIDIA H100 datasheet (SXM5); Hopper architecture whitepaper", ("h100",)),
    Preset("H200", "9.0", 132, 16896, 1980, 4800, 141 * GB,
           "NVIDIA H200 datasheet (SXM: 4.8 TB/s); SM figures as H100 SXM5", ("h200",)),
    Preset("B200", "10.0", 148, 18944, 2110, 8000, 180 * GB,
           "NVIDIA DGX/HGX B200 datasheet (80 TFLOP/s FP32, 8 TB/s per GPU); clock derived from them",
           ("b200",)),
    Preset("GeForce RTX 5080", "12.0", 84, 10752, 2617, 960, 16 * GB,
           "NVIDIA GeForce RTX 5080 specifications; Blackwell GB203", ("rtx5080", "5080")),
    Preset("GeForce RTX 5090", "12.0", 170, 21760, 2407, 1792, 32 * GB,
           "NVIDIA GeForce RTX 5090 specifications; Blackwell GB202", ("rtx5090", "5090")),
)


def name_key(text: str) -> str:
    """`text` reduced for matching GPU names: lower case, letters and digits only, without the
    words 'nvidia', 'geforce' and 'tesla' ('NVIDIA H200' and 'h200' give the same key)."""
    key = "".join(ch for ch in text.lower() if ch.isalnum())
    for noise in ("nvidia", "geforce", "tesla"):
        key = key.replace(noise, "")
    return key


def find_preset(name: str) -> Preset | None:
    """The preset whose name or alias matches `name`, ignoring case, spaces, dashes and the words
    'NVIDIA', 'GeForce' and 'Tesla' ('rtx 5080', 'RTX-5080' and 'GeForce RTX 5080' all match);
    None when nothing matches."""
    key = name_key(name)
    for p in PRESETS:
        if key == name_key(p.name) or key in {name_key(a) for a in p.aliases}:
            return p
    return None


def preset_names() -> list[str]:
    """The short names accepted by `--gpu`, for error messages and help."""
    return [p.aliases[0] if p.aliases else p.name for p in PRESETS]
