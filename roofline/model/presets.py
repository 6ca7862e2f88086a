"""Datasheet figures for GPUs one may not have at hand (`--gpu NAME`).

Each preset gives the SM count, the FP32 core count and boost clock (peak FP32 GFLOP/s = cores x 2
FLOP per FMA x boost clock), the DRAM bandwidth, the memory size and the L2 size, each from the
vendor's datasheet or architecture whitepaper named in `source`. Variants of one GPU (A100 40 and 80
GB, PCIe and SXM; H100 SXM, PCIe and NVL; V100 SXM2 and PCIe) are presets of their own, matched by
the names nvidia-smi prints; the bare family name is refused as ambiguous (GH200 with 96 GB HBM3 or
144 GB HBM3e, whose bandwidths differ). Where variants differ in memory size alone (V100 16 and 32
GB), one preset holds them in `memory_variants` and the name given picks the size ('Tesla
V100-SXM2-16GB': 16 GB); the short name ('v100-sxm2') leaves it unknown, as does a GeForce board
whose sizes nvidia-smi names alike (RTX 4060 Ti and 5060 Ti, 8 or 16 GB). A laptop GPU's boost clock
is a range its maker's power limit picks from; its preset takes the top of NVIDIA's range. CUDA
names every Jetson Orin module 'Orin', so that name is refused with the choices too. Where a
datasheet gives no L2 size, an SM count or (laptops) a memory speed, `source` says the figure is
what CUDA reports on such a GPU. Per-SM limits come from `arch.ARCHS` by compute capability,
per-precision rates from `peaks` (per SM per clock). Where a datasheet's tensor-core figure implies
a lower clock than the boost clock, `tensor_clock_mhz` holds it (H100 SXM and H200: 989.4 TFLOP/s
dense BF16 = 132 SMs x 4096 FLOP/clk x 1830 MHz, while FP32's 66.9 TFLOP/s is at 1980 MHz). On a
machine with the GPU itself, NVML's readings are better (`measure.nvml`).

L2 sizes are the whitepapers' (NVIDIA's "MB" there is 2^20 bytes, which is what CUDA's
`l2CacheSize` reports: 52,428,800 B on an H100 SXM, 4,194,304 B on a T4). The H200's is what its
`l2CacheSize` reported on the GPU itself: 62,914,560 B (`plots/results-h200.json`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import UsageError
from .roofs import fp32_gflops


@dataclass(frozen=True)
class Preset:
    """One GPU's datasheet figures. Clocks in MHz, bandwidth in GB/s (1e9 bytes/s), memory and L2
    in bytes (`memory_bytes` None where the name does not say which of `memory_variants` it is)."""

    name: str
    compute_capability: str
    sm_count: int
    fp32_cores: int
    boost_clock_mhz: float
    dram_gbps: float
    memory_bytes: int | None
    l2_bytes: int
    source: str
    aliases: tuple[str, ...] = ()  # the short name first, then the names nvidia-smi prints
    family: str | None = None  # a short name its variants share ('a100'): ambiguous on its own
    tensor_clock_mhz: float | None = None  # the clock the datasheet's tensor-core figures imply, if not the boost
    memory_variants: tuple[tuple[str, int], ...] = ()  # (name nvidia-smi prints, memory bytes) of each size

    @property
    def short_name(self) -> str:
        """The name `--gpu` lists it by: its first alias ('h200'), else its name."""
        return self.aliases[0] if self.aliases else self.name

    @property
    def peak_fp32_gflops(self) -> float:
        """cores x 2 FLOP (one FMA) x boost clock, in GFLOP/s (`roofs.fp32_gflops`)."""
        return fp32_gflops(self.fp32_cores, self.boost_clock_mhz)


GB = 10**9
MIB = 2**20
A100 = ("NVIDIA A100 Tensor Core GPU datasheet (40 GB: 1,555 GB/s; 80 GB: 1,935 PCIe, 2,039 SXM); "
        "GA100 whitepaper (L2 40 MB)")
H100 = "NVIDIA H100 Tensor Core GPU datasheet (SXM 3.35 TB/s, PCIe 2 TB/s, NVL 3.9 TB/s); Hopper whitepaper (L2 50 MB)"
V100 = ("NVIDIA Tesla V100 datasheet (SXM2 15.7, PCIe 14 TFLOP/s FP32; 900 GB/s; 16 or 32 GB); "
        "Volta whitepaper (L2 6 MB)")
GH200 = ("NVIDIA GH200 Grace Hopper Superchip datasheet (96 GB HBM3 at 4 TB/s or 144 GB HBM3e at 4.9 TB/s; "
         "67 TFLOP/s FP32, 989 TFLOP/s dense BF16 implies 1830 MHz); SM figures as H100 SXM5, the same GH100 "
         "(132 SMs, 16,896 cores, 1980 MHz); L2 50 MB as the Hopper whitepaper's H100 SXM5 (the datasheet gives none)")
A800 = ("NVIDIA A800 Tensor Core GPU datasheet (19.5 TFLOPS FP32; 80 GB HBM2e at 2,039 GB/s SXM, 1,935 GB/s "
        "PCIe; NVLink 400 GB/s, its one difference from the A100); SM figures as the A100's, the same GA100 "
        "(108 SMs, 6,912 cores, 1410 MHz); GA100 whitepaper (L2 40 MB)")
ORIN = ("NVIDIA Jetson AGX Orin Series technical brief (64GB: 2,048 CUDA cores in 16 SMs at up to 1.3 GHz, "
        "5.3 TFLOPS FP32; 32GB: 1,792 cores in 14 SMs at up to 930 MHz; both 256-bit LPDDR5 at 204.8 GB/s, "
        "shared with the CPU; the Orin GPU's L2 4 MB)")
GEFORCE_LAPTOP = ("NVIDIA GeForce RTX 40 Series laptop specifications (boost clock a range the laptop maker's power "
                  "limit, 35-115 W, picks from: this preset takes its top; 8 GB GDDR6 on 128-bit, no memory speed "
                  "given)")
PRESETS: tuple[Preset, ...] = (
    Preset("Tesla V100-SXM2", "7.0", 80, 5120, 1530, 900, None, 6 * MIB, V100, ("v100-sxm2",), "v100",
           memory_variants=(("Tesla V100-SXM2-16GB", 16 * GB), ("Tesla V100-SXM2-32GB", 32 * GB))),
    Preset("Tesla V100-PCIE", "7.0", 80, 5120, 1380, 900, None, 6 * MIB, V100, ("v100-pcie",), "v100",
           memory_variants=(("Tesla V100-PCIE-16GB", 16 * GB), ("Tesla V100-PCIE-32GB", 32 * GB))),
    Preset("Tesla T4", "7.5", 40, 2560, 1590, 320, 16 * GB, 4 * MIB,
           "NVIDIA T4 datasheet; Turing architecture whitepaper (TU104, L2 4 MB)", ("t4",)),
    Preset("A100-SXM4-80GB", "8.0", 108, 6912, 1410, 2039, 80 * GB, 40 * MIB, A100, ("a100-sxm4-80gb",), "a100"),
    Preset("A100-SXM4-40GB", "8.0", 108, 6912, 1410, 1555, 40 * GB, 40 * MIB, A100, ("a100-sxm4-40gb",), "a100"),
    Preset("A100 80GB PCIe", "8.0", 108, 6912, 1410, 1935, 80 * GB, 40 * MIB, A100, ("a100-pcie-80gb",), "a100"),
    Preset("A100-PCIE-40GB", "8.0", 108, 6912, 1410, 1555, 40 * GB, 40 * MIB, A100, ("a100-pcie-40gb",), "a100"),
    Preset("A800-SXM4-80GB", "8.0", 108, 6912, 1410, 2039, 80 * GB, 40 * MIB, A800 + " (SXM4)", ("a800-sxm4-80gb",),
           "a800"),
    Preset("A800 80GB PCIe", "8.0", 108, 6912, 1410, 1935, 80 * GB, 40 * MIB, A800 + " (PCIe)", ("a800-pcie-80gb",),
           "a800"),
    Preset("A30", "8.0", 56, 3584, 1440, 933, 24 * GB, 24 * MIB,
           "NVIDIA A30 Tensor Core GPU datasheet (10.3 TFLOPS FP32, 5.2 FP64, 165 TFLOPS dense BF16 = 56 SMs x 2048 "
           "x 1440 MHz; 933 GB/s, 24 GB HBM2); 56 SMs at 1440 MHz as CUDA reports them on an A30 (3,584 cores x 2 x "
           "1440 MHz = 10.32 TFLOPS); L2 24 MB as CUDA reports it there (24,576 KiB; the datasheet gives none)",
           ("a30",)),
    Preset("A10", "8.6", 72, 9216, 1695, 600, 24 * GB, 6 * MIB,
           "NVIDIA A10 datasheet; Ampere GA102 whitepaper (L2 6 MB)", ("a10",)),
    Preset("RTX A6000", "8.6", 84, 10752, 1800, 768, 48 * GB, 6 * MIB,
           "NVIDIA RTX A6000 datasheet (84 SMs, 10,752 CUDA cores, 38.7 TFLOP/s FP32, 768 GB/s, 48 GB GDDR6; "
           "309.7 TFLOP/s sparse tensor, 154.8 dense = 84 x 1024 x 1800 MHz); clock from 38.7 TFLOP/s over "
           "10,752 cores; GA102 whitepaper (L2 6 MB)", ("rtx-a6000", "a6000")),
    Preset("A40", "8.6", 84, 10752, 1740, 696, 48 * GB, 6 * MIB,
           "NVIDIA A40 datasheet (84 SMs, 10,752 CUDA cores, 37.4 TFLOP/s FP32, 696 GB/s, 48 GB GDDR6; "
           "149.7 TFLOP/s dense BF16 tensor = 84 x 1024 x 1740 MHz); clock from 37.4 TFLOP/s over 10,752 cores; "
           "GA102 whitepaper (L2 6 MB)", ("a40",)),
    Preset("GeForce RTX 3090", "8.6", 82, 10496, 1695, 936, 24 * GB, 6 * MIB,
           "NVIDIA Ampere GA102 whitepaper (L2 6 MB)", ("rtx3090", "3090")),
    Preset("Jetson AGX Orin 64GB", "8.7", 16, 2048, 1300, 204.8, 64 * GB, 4 * MIB, ORIN + "; this module: 64GB",
           ("agx-orin-64gb", "jetson-agx-orin-64gb"), "orin"),
    Preset("Jetson AGX Orin 32GB", "8.7", 14, 1792, 930, 204.8, 32 * GB, 4 * MIB, ORIN + "; this module: 32GB",
           ("agx-orin-32gb", "jetson-agx-orin-32gb"), "orin"),
    Preset("L4", "8.9", 58, 7424, 2040, 300, 24 * GB, 48 * MIB,
           "NVIDIA L4 datasheet; Ada architecture whitepaper (L2 48 MB)", ("l4",)),
    Preset("L40S", "8.9", 142, 18176, 2520, 864, 48 * GB, 96 * MIB,
           "NVIDIA L40S datasheet (18,176 CUDA cores, 91.6 TFLOP/s FP32 = 18,176 x 2 x 2520 MHz, 864 GB/s, "
           "48 GB GDDR6; 362.05 TFLOP/s dense BF16 tensor implies 2490 MHz at 142 SMs x 1024); L2 96 MB as the "
           "AD102's in the Ada whitepaper (the datasheet gives no L2 size; a third-party listing says 48 MB)",
           ("l40s",), None, 2490),
    Preset("RTX 6000 Ada Generation", "8.9", 142, 18176, 2505, 960, 48 * GB, 96 * MIB,
           "NVIDIA RTX 6000 Ada Generation datasheet (142 SMs, 18,176 CUDA cores, 91.1 TFLOP/s FP32, 960 GB/s, "
           "48 GB GDDR6; 1,457 TFLOP/s sparse FP8 tensor, 728.5 dense = 142 x 2048 x 2505 MHz); clock from "
           "91.1 TFLOP/s over 18,176 cores; Ada whitepaper (AD102, L2 96 MB)", ("rtx6000-ada", "rtx-6000-ada")),
    Preset("GeForce RTX 4090", "8.9", 128, 16384, 2520, 1008, 24 * GB, 72 * MIB,
           "NVIDIA Ada Lovelace architecture whitepaper (L2 72 MB)", ("rtx4090", "4090")),
    Preset("GeForce RTX 4070", "8.9", 46, 5888, 2480, 504, 12 * GB, 36 * MIB,
           "NVIDIA GeForce RTX 4070 specifications (5,888 CUDA cores in 46 SMs, 2.48 GHz boost, 12 GB GDDR6X on "
           "192-bit at 504 GB/s; the later GDDR6 board, which nvidia-smi names alike, has 480 GB/s: this preset is "
           "the GDDR6X one); L2 36 MB as NVIDIA's RTX 4060 Ti memory-subsystem briefing gives it (AD104 cut from 48)",
           ("rtx4070", "4070")),
    Preset("GeForce RTX 4060 Ti", "8.9", 34, 4352, 2540, 288, None, 32 * MIB,
           "NVIDIA GeForce RTX 4060 Ti specifications (4,352 CUDA cores in 34 SMs, 2.54 GHz boost, 8 or 16 GB "
           "GDDR6 on 128-bit at 288 GB/s; nvidia-smi names both sizes alike, so the size is left unknown); L2 32 MB "
           "as NVIDIA's RTX 4060 family briefing gives it", ("rtx4060ti", "4060ti")),
    Preset("GeForce RTX 4060", "8.9", 24, 3072, 2460, 272, 8 * GB, 24 * MIB,
           "NVIDIA GeForce RTX 4060 specifications (3,072 CUDA cores in 24 SMs, 2.46 GHz boost, 8 GB GDDR6 on "
           "128-bit at 272 GB/s); L2 24 MB as NVIDIA's RTX 4060 family briefing gives it", ("rtx4060", "4060")),
    Preset("GeForce RTX 4070 Laptop GPU", "8.9", 36, 4608, 2175, 256, 8 * GB, 32 * MIB,
           GEFORCE_LAPTOP + ": RTX 4070 Laptop GPU, 4,608 CUDA cores, boost 1,230-2,175 MHz, so 2175 MHz here; "
           "36 SMs, 256 GB/s (8001 MHz x 2 x 128 bit) and L2 32 MB as CUDA reports them on one such laptop",
           ("rtx4070-laptop", "4070-laptop")),
    Preset("GeForce RTX 4060 Laptop GPU", "8.9", 24, 3072, 2370, 256, 8 * GB, 32 * MIB,
           GEFORCE_LAPTOP + ": RTX 4060 Laptop GPU, 3,072 CUDA cores, boost 1,470-2,370 MHz, so 2370 MHz here; "
           "24 SMs, 16 Gbps GDDR6 (256 GB/s) and L2 32 MB as read off one such laptop (accel-sim's SM89_RTX4060_LAPTOP "
           "configuration, gpgpu-sim_distribution pull request 135)", ("rtx4060-laptop", "4060-laptop")),
    Preset("H100 80GB HBM3", "9.0", 132, 16896, 1980, 3350, 80 * GB, 50 * MIB, H100 + " (SXM5)",
           ("h100-sxm", "H100-SXM5-80GB"), "h100", 1830),
    Preset("H100 PCIe", "9.0", 114, 14592, 1755, 2000, 80 * GB, 50 * MIB,
           H100 + "; clock from the datasheet's 51 TFLOP/s FP32 over 14,592 cores; 756 TFLOP/s BF16 implies 1620 MHz",
           ("h100-pcie",), "h100", 1620),
    Preset("H100 NVL", "9.0", 132, 16896, 1775, 3900, 94 * GB, 50 * MIB,
           H100 + "; clock from the datasheet's 60 TFLOP/s FP32 over 16,896 cores; 835 TFLOP/s BF16 implies 1545 MHz",
           ("h100-nvl",), "h100", 1545),
    Preset("H200", "9.0", 132, 16896, 1980, 4800, 141 * GB, 60 * MIB,
           "NVIDIA H200 datasheet (SXM: 4.8 TB/s; 989 TFLOP/s dense BF16 implies 1830 MHz); SM figures as "
           "H100 SXM5, the same GH100; L2 60 MB as CUDA reports it on an H200", ("h200",), None, 1830),
    Preset("GH200 480GB", "9.0", 132, 16896, 1980, 4000, 96 * GB, 50 * MIB,
           GH200 + "; this variant: 96 GB HBM3 at 4 TB/s (480 GB LPDDR5X on its Grace CPU)",
           ("gh200-96gb", "gh200-hbm3"), "gh200", 1830),
    Preset("GH200 144G HBM3e", "9.0", 132, 16896, 1980, 4900, 144 * GB, 50 * MIB,
           GH200 + "; this variant: 144 GB HBM3e at 4.9 TB/s", ("gh200-144gb", "gh200-hbm3e"), "gh200", 1830),
    Preset("B200", "10.0", 148, 18944, 2110, 8000, 180 * GB, 126 * MIB,
           "NVIDIA DGX/HGX B200 datasheet (80 TFLOP/s FP32, 8 TB/s per GPU; 2.25 PFLOP/s dense BF16 implies "
           "1856 MHz); clock derived from them; L2 126 MB as CUDA reports it (the datasheet gives none)",
           ("b200",), None, 1856),
    Preset("B200 (GB200)", "10.0", 148, 18944, 2375, 8000, 186 * GB, 126 * MIB,
           "NVIDIA GB200 NVL72 specifications per GPU (90 TFLOP/s FP32, 2.5 PFLOP/s dense BF16 implies 2062 MHz, "
           "45 TFLOP/s FP64; 8 TB/s; 13.4 TB HBM3e over 72 GPUs, 186 GB); clock from 90 TFLOP/s over 18,944 "
           "cores; SM count as the HGX B200's, the same die; L2 126 MB as CUDA reports it on a B200 (the "
           "datasheets give none)", ("gb200-b200", "gb200"), None, 2062),
    Preset("GeForce RTX 5080", "12.0", 84, 10752, 2617, 960, 16 * GB, 64 * MIB,
           "NVIDIA GeForce RTX 5080 specifications; RTX Blackwell whitepaper (GB203, L2 64 MB)", ("rtx5080", "5080")),
    Preset("GeForce RTX 5090", "12.0", 170, 21760, 2407, 1792, 32 * GB, 96 * MIB,
           "NVIDIA GeForce RTX 5090 specifications; RTX Blackwell whitepaper (GB202, L2 96 MB)", ("rtx5090", "5090")),
    Preset("GeForce RTX 5070", "12.0", 48, 6144, 2512, 672, 12 * GB, 48 * MIB,
           "NVIDIA GeForce RTX 5070 specifications (6,144 CUDA cores, 2.51 GHz boost, 12 GB GDDR7 on 192-bit); RTX "
           "Blackwell whitepaper (GB205 as the RTX 5070: 48 SMs, 2512 MHz boost, 28 Gbps GDDR7 = 672 GB/s, L2 48 MB)",
           ("rtx5070", "5070")),
    Preset("GeForce RTX 5060 Ti", "12.0", 36, 4608, 2570, 448, None, 32 * MIB,
           "NVIDIA GeForce RTX 5060 Ti specifications (4,608 CUDA cores, 2.57 GHz boost, 8 or 16 GB GDDR7 on 128-bit "
           "at 28 Gbps = 448 GB/s; nvidia-smi names both sizes alike, so the size is left unknown); 36 SMs and L2 "
           "32 MB as CUDA reports them on one (33,554,432 B; NVIDIA gives no L2 size)", ("rtx5060ti", "5060ti")),
)


# What tells a family's variants apart where the name the driver prints does not.
FAMILY_HINTS = {"orin": "CUDA names every Jetson Orin 'Orin'; its SM count tells these apart: 16 on the 64GB, 14 on "
                        "the 32GB"}


def name_key(text: str) -> str:
    """`text` reduced for matching GPU names: lower case, letters and digits only, without the
    words 'nvidia', 'geforce' and 'tesla' ('NVIDIA H200' and 'h200' give the same key)."""
    key = "".join(ch for ch in text.lower() if ch.isalnum())
    for noise in ("nvidia", "geforce", "tesla"):
        key = key.replace(noise, "")
    return key


def find_preset(name: str) -> Preset | None:
    """The preset whose name or alias matches `name`, ignoring case, spaces, dashes and the words
    'NVIDIA', 'GeForce' and 'Tesla' ('rtx 5080', 'RTX-5080' and 'GeForce RTX 5080' all match, as
    do the names nvidia-smi prints: 'NVIDIA A100-SXM4-40GB', 'NVIDIA H100 80GB HBM3'); None when
    nothing matches. A name that gives the memory size of a preset with `memory_variants`
    ('Tesla V100-SXM2-16GB') gets that size and name; its short name ('v100-sxm2') no size. Raises
    UsageError, listing the choices, for a short name several variants share ('a100': 40 or 80 GB,
    PCIe or SXM, whose bandwidths differ by a third; 'Orin', which CUDA calls every Jetson Orin)."""
    key = name_key(name)
    for p in PRESETS:
        for variant, size in p.memory_variants:
            if key == name_key(variant):
                return replace(p, name=variant, memory_bytes=size)
        if key == name_key(p.name) or key in {name_key(a) for a in p.aliases}:
            return p
    variants = [p for p in PRESETS if p.family and key == name_key(p.family)]
    if variants:
        choices = ", ".join(f"{p.aliases[0]} ({p.dram_gbps:,.0f} GB/s)" for p in variants)
        hint = FAMILY_HINTS.get(variants[0].family, "the name nvidia-smi prints works too")
        raise UsageError(f"{name!r} names {len(variants)} GPUs; choose one: {choices} ({hint})")
    return None


def same_gpu(a: str, b: str) -> bool:
    """Whether GPU names `a` and `b` name one GPU model: the same name but for case, spacing and the
    words `name_key` drops ('NVIDIA H200', as a report's raw page names it, and 'H200', the preset a
    text export is read against), or two names of one preset ('NVIDIA H100 80GB HBM3' and 'H100
    SXM'). A short name several presets share matches none of them."""
    if name_key(a) == name_key(b):
        return True
    try:
        pa, pb = find_preset(a), find_preset(b)
    except UsageError:
        return False
    return pa is not None and pb is not None and pa.name == pb.name


SUFFIXES = (".toml", ".json")  # a device file's (`device_file`)


def is_device_file(name: str) -> bool:
    """Whether a `--gpu` value names a device file rather than a preset."""
    return name.strip().lower().endswith(SUFFIXES)


def preset_names() -> list[str]:
    """The short names accepted by `--gpu`, for error messages and help."""
    return [p.short_name for p in PRESETS]


def tensor_clock_mhz(name: str) -> float | None:
    """The clock a known GPU's datasheet tensor-core figures imply (`Preset.tensor_clock_mhz`,
    e.g. 1830 MHz for 'NVIDIA H200' against NVML's 1980 MHz maximum), or None: then tensor-core
    peaks use the maximum SM clock."""
    try:
        preset = find_preset(name)
    except UsageError:
        return None
    return preset.tensor_clock_mhz if preset else None
