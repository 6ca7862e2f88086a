"""Peak rates per precision and bandwidths per memory level, as per-SM per-clock throughput x SMs
x clock, each with its source.

Compute (FLOP per clock per SM, dense, two FLOP per multiply-add; tensor-core figures are the
matrix-multiply-accumulate rates without structured sparsity):

    key           what                                        source of the per-SM figure
    fp64          FP64 on the CUDA cores (DFMA)                CUDA C++ Programming Guide, "Arithmetic
    fp32          FP32 on the CUDA cores (FFMA): cores x 2      Instructions" throughput table
                                                               (results per clock per SM)
    fp16          FP16/BF16 on the CUDA cores (HFMA2)          the whitepapers, as below
    fp64_tensor   FP64 tensor-core MMA (DMMA)                  architecture whitepapers' tables of
    fp16_tensor   FP16 in, FP32 accumulate                     peak TFLOPS over SMs x boost clock
    bf16_tensor   BF16 in, FP32 accumulate                     (Volta, Turing, GA100, GA102, Ada,
    tf32_tensor   TF32 in, FP32 accumulate                     Hopper, Blackwell)
    fp8_tensor    FP8 (E4M3/E5M2) in
    fp4_tensor    FP4 (E2M1, NVFP4/MXFP4 block-scaled) in, from Blackwell
    int8_tensor   INT8 in (GOP/s rather than GFLOP/s)

Worked example, H100 SXM5 (132 SMs): FP32 16,896 cores x 2 x 1980 MHz = 66.9 TFLOP/s; dense BF16
132 x 4096 x 1830 MHz = 989.4 TFLOP/s. The datasheet's tensor figures imply 1830 MHz, not the
1980 MHz maximum NVML reports (a tensor-core load runs at the power limit, below the top clock;
cuBLAS's BF16 product measures about 780 TFLOP/s on the H200, DESIGN figures). So tensor-core peaks
use the clock the datasheet implies when the GPU is one the presets know (`tensor_clock_mhz`),
else the maximum SM clock; which clock each figure used is recorded with it. FP64 tensor work is
the exception: the datasheets' figure (H100 SXM: 67 TFLOP/s = 132 x 256 x 1980 MHz) is at the boost
clock, as are FP64 and FP32.

The tensor-core keys are rates with FP32 accumulation, which is what BF16 and TF32 always use and
what frameworks ask of FP16 and FP8. GeForce boards run those at half the rate of their
professional siblings (GA102 whitepaper: RTX 3090 71 TFLOP/s FP16 with FP32 accumulate, 142 with
FP16 accumulate; Ada: RTX 4090 165.2 and 330.3); the table holds the professional (A10, L4) rate
and `compute_peaks(..., geforce=True)` halves it.

Memory levels (bytes per clock):
    L1/SMEM  128 B per SM per clock: 32 banks x 4 bytes (CUDA C++ Programming Guide, "Shared Memory")
    L2       whole-GPU bytes per SM clock: GA100 whitepaper 5,120 B/clk (A100); for Hopper,
             Nsight Compute's lts__t_bytes.sum.peak_sustained on the H200 (9,024 B per L2 cycle at
             the 1.70 GHz L2 clock it measured) expressed per 1,980 MHz SM clock: 7,753 B/clk, i.e.
             58.7 B per SM per clock. Other architectures: not published; only a measured L2 roof.
"""

from __future__ import annotations

import re

from dataclasses import dataclass

from .units import per_clock_giga

GUIDE = "CUDA C++ Programming Guide, arithmetic instruction throughput table"
PRECISIONS = ("fp64", "fp32", "fp16", "fp64_tensor", "fp16_tensor", "bf16_tensor", "tf32_tensor", "fp8_tensor",
              "fp4_tensor", "int8_tensor")
LABELS = {"fp64": "FP64", "fp32": "FP32", "fp16": "FP16/BF16 (CUDA cores)", "fp64_tensor": "FP64 tensor",
          "fp16_tensor": "FP16 tensor", "bf16_tensor": "BF16 tensor", "tf32_tensor": "TF32 tensor",
          "fp8_tensor": "FP8 tensor", "fp4_tensor": "FP4 tensor", "int8_tensor": "INT8 tensor"}
TENSOR = ("fp64_tensor", "fp16_tensor", "bf16_tensor", "tf32_tensor", "fp8_tensor", "fp4_tensor", "int8_tensor")
# The precision a key's work is in, as a profile names it (`kernels[].precision`, with `tensor_core`).
PRECISION_OF = {"fp64": "fp64", "fp32": "fp32", "fp16": "fp16", "fp64_tensor": "fp64", "fp16_tensor": "fp16",
                "bf16_tensor": "bf16", "tf32_tensor": "tf32", "fp8_tensor": "fp8", "fp4_tensor": "fp4", "int8_tensor": "int8"}
PRECISION_NAMES = tuple(dict.fromkeys(PRECISION_OF[k] for k in PRECISIONS))  # fp64 fp32 fp16 bf16 tf32 fp8 fp4 int8
NO_PRECISION = "none"  # no floating-point or tensor work: copies, memsets, integer kernels
UNKNOWN_PRECISION = "unknown"  # none of the work that was counted, but some kinds were not counted
TENSOR_OF = {PRECISION_OF[k]: k for k in TENSOR}  # 'bf16' -> 'bf16_tensor': the tensor-core key of a precision

# major.minor -> {precision: FLOP per clock per SM} (fp32 comes from the core count instead).
_WP = {
    "7.0": "Volta V100 whitepaper (125 TFLOP/s FP16 tensor at 80 SMs x 1530 MHz)",
    "7.5": "Turing whitepaper (T4: 65 TFLOP/s FP16, 130 TOPS INT8 tensor at 40 SMs x 1590 MHz)",
    "8.0": "GA100 whitepaper (A100: 312 TFLOP/s FP16/BF16, 156 TF32, 19.5 FP64 tensor, 9.7 FP64 at 108 SMs x 1410 MHz)",
    "8.6": "GA102 whitepaper (A10: 125 TFLOP/s FP16 tensor at 72 SMs x 1695 MHz; GeForce FP32-accumulate at half)",
    "8.7": "Jetson AGX Orin Series technical brief (the 64GB's GPU: 170 sparse INT8 TOPS, 85 dense = 16 SMs x "
           "4,096 x 1.3 GHz, GA100's tensor cores a SM; FP16, BF16 and TF32 tensor rates at GA100's ratios to "
           "INT8; CUDA-core rates as GA102's)",
    "8.9": "Ada whitepaper (L4: 121 TFLOP/s FP16, 242 FP8 tensor at 58 SMs x 2040 MHz; GeForce FP32-accumulate at half)",
    "9.0": "Hopper whitepaper (H100 SXM5: 989.4 TFLOP/s FP16/BF16, 494.7 TF32, 1979 FP8, 66.9 FP64 tensor)",
    "10.0": "HGX B200 datasheet (2.25 PFLOP/s dense FP16/BF16, 4.5 FP8, 9 FP4, 40 TFLOP/s FP64 at 148 SMs)",
    "12.0": "Blackwell GeForce whitepaper (RTX 5090: 419 TFLOP/s FP16, 838 FP8, 1,676 FP4 tensor, FP16 accumulate)",
}
_TABLE: dict[str, dict[str, float]] = {
    "7.0": {"fp64": 64, "fp16": 256, "fp16_tensor": 1024},
    "7.5": {"fp64": 4, "fp16": 256, "fp16_tensor": 1024, "int8_tensor": 2048},
    "8.0": {"fp64": 64, "fp16": 512, "fp64_tensor": 128, "fp16_tensor": 2048, "bf16_tensor": 2048,
            "tf32_tensor": 1024, "int8_tensor": 4096},
    "8.6": {"fp64": 4, "fp16": 256, "fp16_tensor": 1024, "bf16_tensor": 1024, "tf32_tensor": 512,
            "int8_tensor": 2048},
    "8.7": {"fp64": 4, "fp16": 256, "fp16_tensor": 2048, "bf16_tensor": 2048, "tf32_tensor": 1024,
            "int8_tensor": 4096},
    "8.9": {"fp64": 4, "fp16": 256, "fp16_tensor": 1024, "bf16_tensor": 1024, "tf32_tensor": 512,
            "fp8_tensor": 2048, "int8_tensor": 2048},
    "9.0": {"fp64": 128, "fp16": 512, "fp64_tensor": 256, "fp16_tensor": 4096, "bf16_tensor": 4096,
            "tf32_tensor": 2048, "fp8_tensor": 8192, "int8_tensor": 8192},
    "10.0": {"fp64": 128, "fp16": 512, "fp64_tensor": 128, "fp16_tensor": 8192, "bf16_tensor": 8192,
             "tf32_tensor": 4096, "fp8_tensor": 16384, "fp4_tensor": 32768, "int8_tensor": 16384},
    "12.0": {"fp64": 4, "fp16": 256, "fp16_tensor": 1024, "bf16_tensor": 1024, "tf32_tensor": 512,
             "fp8_tensor": 2048, "fp4_tensor": 4096, "int8_tensor": 2048},
}
_SAME_AS = {"7.2": "7.0", "10.3": "10.0", "11.0": "10.0", "12.1": "12.0"}

# FP32 cores per SM (architecture whitepapers), for a GPU known only by its SM count (an imported report).
FP32_CORES_PER_SM = {"7.0": 64, "7.5": 64, "8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128, "10.0": 128,
                     "12.0": 128}


def fp32_cores_per_sm(cc: str) -> int:
    """FP32 cores in one SM of compute capability `cc` (128 for an architecture the table lacks)."""
    return FP32_CORES_PER_SM.get(_SAME_AS.get(cc, cc), 128)


SMEM_BYTES_PER_CLOCK_PER_SM = 128  # 32 banks x 4 bytes (CUDA C++ Programming Guide, "Shared Memory")
_L2_PER_SM = {
    "8.0": (5120 / 108, "GA100 whitepaper: 5,120 B/clk L2 bandwidth over 108 SMs"),
    "9.0": (9024 * 1.7015 / 1.980 / 132, "Nsight Compute lts__t_bytes.sum.peak_sustained on the H200: 9,024 B per "
                                         "L2 cycle at 1.70 GHz, per 1,980 MHz SM clock over 132 SMs"),
}


@dataclass(frozen=True)
class Peak:
    """One theoretical ceiling: `per_sm_per_clock` (FLOP or bytes) x `sm_count` x `clock_mhz` =
    `value` (GFLOP/s or GB/s), with where the per-SM figure comes from."""

    key: str
    value: float
    per_sm_per_clock: float
    sm_count: int
    clock_mhz: float
    source: str


def _family(cc: str) -> str | None:
    cc = _SAME_AS.get(cc, cc)
    return cc if cc in _TABLE else None


HALF_ON_GEFORCE = ("fp16_tensor", "bf16_tensor", "tf32_tensor", "fp8_tensor")  # the FP32-accumulate rates


NO_TENSOR_CORES = re.compile(r"GTX 16\d\d|\bMX\s?\d{3}\b", re.I)  # Turing's TU116/TU117 boards: sm_75 without tensor cores


def compute_peaks(cc: str, sm_count: int, fp32_cores: int | None, sm_clock_mhz: float,
                  tensor_clock_mhz: float | None = None, geforce: bool = False,
                  tensor_cores: bool = True) -> dict[str, Peak]:
    """Peak rate per precision (keys of `PRECISIONS`, only those the architecture has) for a GPU
    of compute capability `cc` with `sm_count` SMs: FP32 from the core count (cores x 2 FLOP x
    clock), the rest from the per-SM table above; CUDA-core rates at `sm_clock_mhz`, tensor-core
    rates at `tensor_clock_mhz` (default: the same); on a GeForce board (`geforce`) the
    FP32-accumulate tensor rates at half; without `tensor_cores` (a GTX 16 or MX board, by its
    name: `NO_TENSOR_CORES`) no tensor rate at all. An architecture the table lacks gets FP32
    alone."""
    out: dict[str, Peak] = {}
    if fp32_cores:
        per_sm = 2 * fp32_cores / sm_count
        out["fp32"] = Peak("fp32", per_clock_giga(per_sm * sm_count, sm_clock_mhz), per_sm, sm_count, sm_clock_mhz,
                           f"NVML/datasheet core count x 2 FLOP per FMA ({GUIDE})")
    family = _family(cc)
    if family is None:
        return out
    for key, per_sm in _TABLE[family].items():
        if key in TENSOR and not tensor_cores:
            continue
        clock = (tensor_clock_mhz or sm_clock_mhz) if key in TENSOR and key != "fp64_tensor" else sm_clock_mhz
        source = GUIDE if key == "fp64" else _WP[family]
        if geforce and key in HALF_ON_GEFORCE:
            per_sm, source = per_sm / 2, source + "; GeForce: half, with FP32 accumulate"
        out[key] = Peak(key, per_clock_giga(per_sm * sm_count, clock), per_sm, sm_count, clock, source)
    return {k: out[k] for k in PRECISIONS if k in out}


def memory_peaks(cc: str, sm_count: int, sm_clock_mhz: float) -> dict[str, Peak]:
    """Theoretical bandwidth of the on-chip levels in GB/s: 'L1' (the L1/shared-memory data path,
    128 B per SM per clock) always, 'L2' where a per-clock figure is known (sm_80, sm_90)."""
    out = {"L1": Peak("L1", per_clock_giga(SMEM_BYTES_PER_CLOCK_PER_SM * sm_count, sm_clock_mhz),
                      SMEM_BYTES_PER_CLOCK_PER_SM, sm_count, sm_clock_mhz,
                      "CUDA C++ Programming Guide, shared memory: 32 banks x 4 B per clock")}
    l2 = _L2_PER_SM.get(_SAME_AS.get(cc, cc))
    if l2 is not None:
        out["L2"] = Peak("L2", per_clock_giga(l2[0] * sm_count, sm_clock_mhz), l2[0], sm_count, sm_clock_mhz, l2[1])
    return out
