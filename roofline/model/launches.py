"""Profiled kernel launches (rows of an Nsight Compute report, `measure.ncu`) read as roofline
figures, and grouped: launches of the same kernel with the same configuration become one kernel
with a count, total and median time and a share of the profiled GPU time.

Per launch: FLOPs per precision (`FLOP_INSTRUCTIONS`: 2 per FMA instruction + adds + multiplies
on the CUDA cores; `TENSOR_OPS`: tensor-core operations by input type), bytes at DRAM, L2, L1 and
shared memory, grid, block, registers, shared memory and achieved occupancy. A kernel's precision
is the one with the most operations ('none' when it has no floating-point or tensor work: copies,
memsets, integer kernels), and `tensor_core` says whether that work ran on the tensor cores. A
kernel doing fewer than one operation per `MIN_OPS_PER_BYTE`^-1 = 64 bytes it moves (through its
busiest level) counts as moving data, while a float64 elementwise add (one DADD per 24 bytes)
stays FP64.

Half precision on the CUDA cores needs more evidence: Nsight Compute's HFMA counter also counts
the `HFMA2.MMA` instructions compilers use to move constants into registers, so a plain copy
kernel shows "FP16 work" (PyTorch's bf16 direct_copy: 0.49 HFMA operations per byte, no FP32; a
bf16 add: 2 HFMA per FADD it really does). CUDA-core FP16 is a kernel's precision only when it
has `FP16_OVER_FP32` times the FP32 and FP64 operations and at least `FP16_OPS_PER_BYTE` per byte;
otherwise its FP16 count is kept but not used to classify the kernel.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from .peaks import PRECISIONS

BYTE_METRICS = {"dram": "dram__bytes.sum", "l2": "lts__t_bytes.sum", "l1": "l1tex__t_bytes.sum",
                "smem": "smsp__sass_data_bytes_mem_shared.sum"}
BANK_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
MIN_OPS_PER_BYTE = 1 / 64
FP16_OVER_FP32 = 4
FP16_OPS_PER_BYTE = 1.0
PRECISION_NAMES = {"fp64": "fp64", "fp32": "fp32", "fp16": "fp16", "fp64_tensor": "fp64", "fp16_tensor": "fp16",
                   "bf16_tensor": "bf16", "tf32_tensor": "tf32", "fp8_tensor": "fp8", "int8_tensor": "int8"}


def precision_key(precision: str, tensor_core: bool) -> str | None:
    """The `peaks.PRECISIONS` key of a kernel's precision name and tensor-core flag ('bf16', True
    -> 'bf16_tensor'; 'fp32', False -> 'fp32'); None for 'none' or a pair no GPU runs."""
    for key, name in PRECISION_NAMES.items():
        if name == precision and ("tensor" in key) == tensor_core:
            return key
    return None


@dataclass(frozen=True)
class Launch:
    """One profiled launch. Times in ns, bytes in bytes, `flops` per precision key
    (`peaks.PRECISIONS`), `achieved_occupancy` a fraction 0..1 (None where not counted)."""

    name: str                 # the function's name without template arguments or parameters
    demangled: str            # the full demangled name, as ncu prints it
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    registers: int
    static_smem_bytes: int
    dynamic_smem_bytes: int
    time_ns: float
    flops: dict[str, float]
    nbytes: dict[str, float]
    bank_conflicts: float | None = None
    achieved_occupancy: float | None = None
    sm_clock_hz: float | None = None
    process_id: int | None = None

    @property
    def key(self) -> tuple:
        """What makes two launches the same kernel: name, grid, block, registers, shared memory."""
        return (self.demangled, self.grid, self.block, self.registers, self.static_smem_bytes, self.dynamic_smem_bytes)

    @property
    def threads_per_block(self) -> int:
        """Threads in one block."""
        return self.block[0] * self.block[1] * self.block[2]


def short_name(demangled: str) -> str:
    """A kernel's function name without return type, namespaces, template arguments or
    parameters: 'void native::vectorized_elementwise_kernel<4, ...>(int, ...)' ->
    'vectorized_elementwise_kernel'. Names that are not C++ signatures come back as they are."""
    text = demangled.strip().replace("<unnamed>", "_").replace("(anonymous namespace)", "_")
    depth, cut = 0, len(text)
    for i, ch in enumerate(text):  # the first '(' or '<' at depth 0 ends the qualified name
        if ch in "<(" and depth == 0:
            cut = i
            break
    head = text[:cut].strip()
    head = head.split(" ")[-1] if " " in head else head
    return head.split("::")[-1] or demangled.strip()


def _dims(row: dict, prefix: str, text_key: str) -> tuple[int, int, int]:
    dims = [row.get(f"launch__{prefix}_dim_{a}") for a in "xyz"]
    if all(isinstance(d, (int, float)) for d in dims):
        return tuple(int(d) for d in dims)
    found = re.findall(r"\d+", str(row.get(text_key, "")))
    if len(found) == 3:
        return tuple(int(d) for d in found)
    raise ValueError(f"launch has no {prefix} size")


def from_row(row: dict, flop_instructions: dict[str, tuple[str, str, str]], tensor_ops: dict[str, str],
             time_metric: str, achieved_metric: str, clock_metric: str) -> Launch:
    """One report row (metric name -> base-unit value, `measure.ncu`) as a `Launch`. The metric
    names are passed in so that this model stays free of the profiler. Raises ValueError for a
    row without a kernel name, a time, or its grid and block."""
    demangled = str(row.get("Kernel Name", "")).strip()
    if not demangled:
        raise ValueError("launch without a kernel name (or a row cut short)")
    time_ns = row.get(time_metric)
    if not isinstance(time_ns, (int, float)) or time_ns <= 0:
        raise ValueError(f"{demangled[:60]}: no {time_metric}")
    flops = {}
    for key, (fma, add, mul) in flop_instructions.items():
        if fma in row:
            flops[key] = 2 * row[fma] + row.get(add, 0.0) + row.get(mul, 0.0)
    for key, metric in tensor_ops.items():
        if metric in row:
            flops[key] = row[metric]
    achieved = row.get(achieved_metric)
    return Launch(
        name=short_name(demangled), demangled=demangled,
        grid=_dims(row, "grid", "Grid Size"), block=_dims(row, "block", "Block Size"),
        registers=int(row.get("launch__registers_per_thread", 0)),
        static_smem_bytes=int(row.get("launch__shared_mem_per_block_static", 0)),
        dynamic_smem_bytes=int(row.get("launch__shared_mem_per_block_dynamic", 0)),
        time_ns=float(time_ns), flops={k: v for k, v in flops.items() if v},
        nbytes={k: row[m] for k, m in BYTE_METRICS.items() if m in row},
        bank_conflicts=row.get(BANK_CONFLICTS),
        achieved_occupancy=achieved / 100 if isinstance(achieved, (int, float)) else None,
        sm_clock_hz=row.get(clock_metric),
        process_id=int(row["Process ID"]) if isinstance(row.get("Process ID"), (int, float)) else None,
    )


@dataclass(frozen=True)
class KernelGroup:
    """Every profiled launch of one kernel at one configuration."""

    launches: tuple[Launch, ...] = field(repr=False)

    @property
    def first(self) -> Launch:
        """The first launch (they share name, grid, block, registers and shared memory)."""
        return self.launches[0]

    @property
    def count(self) -> int:
        """Number of launches."""
        return len(self.launches)

    @property
    def time_ms(self) -> float:
        """Total GPU time of the launches, ms."""
        return sum(x.time_ns for x in self.launches) / 1e6

    @property
    def median_ms(self) -> float:
        """Median time of one launch, ms."""
        return statistics.median(x.time_ns for x in self.launches) / 1e6

    def total(self, what: str) -> dict[str, float]:
        """Summed `flops` or `nbytes` over the launches, per key."""
        out: dict[str, float] = {}
        for x in self.launches:
            for k, v in getattr(x, what).items():
                out[k] = out.get(k, 0.0) + v
        return out

    @property
    def flops(self) -> dict[str, float]:
        """Operations per precision key, summed over the launches (ordered as `peaks.PRECISIONS`)."""
        t = self.total("flops")
        return {k: t[k] for k in PRECISIONS if t.get(k)}

    @property
    def nbytes(self) -> dict[str, float]:
        """Bytes per level ('dram', 'l2', 'l1', 'smem'), summed over the launches."""
        return self.total("nbytes")

    @property
    def dominant(self) -> str | None:
        """The precision key with the most operations; None without floating-point or tensor work,
        or with less than `MIN_OPS_PER_BYTE` operations per byte of its busiest memory level."""
        f = dict(self.flops)
        busiest = max(self.nbytes.values(), default=0.0)
        half = f.get("fp16", 0.0)
        if half and (half < FP16_OVER_FP32 * (f.get("fp32", 0.0) + f.get("fp64", 0.0))
                     or half < FP16_OPS_PER_BYTE * busiest):
            del f["fp16"]  # register moves (HFMA2.MMA), not half-precision arithmetic
        if not f:
            return None
        key = max(f, key=f.get)
        return key if sum(f.values()) >= MIN_OPS_PER_BYTE * busiest else None

    @property
    def precision(self) -> str:
        """'fp64', 'fp32', 'fp16', 'bf16', 'tf32', 'fp8', 'int8' or 'none'."""
        d = self.dominant
        return PRECISION_NAMES[d] if d else "none"

    @property
    def achieved_occupancy(self) -> float | None:
        """Time-weighted mean achieved occupancy, 0..1 (None where not counted)."""
        pairs = [(x.achieved_occupancy, x.time_ns) for x in self.launches if x.achieved_occupancy is not None]
        total = sum(t for _, t in pairs)
        return sum(o * t for o, t in pairs) / total if pairs and total else None


def group(launches: list[Launch]) -> list[KernelGroup]:
    """Launches grouped by `Launch.key`, the groups ordered by total time, longest first."""
    by_key: dict[tuple, list[Launch]] = {}
    for x in launches:
        by_key.setdefault(x.key, []).append(x)
    return sorted((KernelGroup(tuple(v)) for v in by_key.values()), key=lambda g: -g.time_ms)
