"""NCCL's collectives as a roofline reads them: which collective a kernel is, how many bytes it
moves, and its algorithm and bus bandwidth.

A kernel's name says its collective (NCCL 2.19 and later: `ncclDevKernel_AllReduce_Sum_bf16_RING_LL`;
before: `ncclKernel_AllReduce_RING_LL_Sum_float`; point to point: `..._SendRecv_...`, which
all-to-all is made of). PyTorch's profiler adds the message where it records one ("Collective name",
"In msg nelems", "Out msg nelems", "dtype", "Group size").

Bandwidth, as nccl-tests defines it (its doc/PERFORMANCE.md): the algorithm bandwidth is the
message's bytes over the time, algbw = S / t; the bus bandwidth scales it by what each rank must
send for that collective on n ranks, so that it compares with the hardware's link bandwidth
whatever n is:

    all-reduce                    busbw = algbw x 2 (n - 1) / n
    all-gather, reduce-scatter    busbw = algbw x (n - 1) / n     (S: the gathered, whole buffer)
    all-to-all                    busbw = algbw x (n - 1) / n
    broadcast, reduce, send/recv  busbw = algbw

Worked figure (public nccl-tests output of a 72-GPU NVLink domain): all-reduce of 536,870,912
bytes in 1,806.7 us is 297.16 GB/s algbw and 297.16 x 2 x 71 / 72 = 586.06 GB/s busbw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv")
LABELS = {"all_reduce": "all-reduce", "all_gather": "all-gather", "reduce_scatter": "reduce-scatter",
          "all_to_all": "all-to-all", "broadcast": "broadcast", "reduce": "reduce", "send_recv": "send/recv"}
# NCCL's names (kernel names, PyTorch's "Collective name") -> the collective
_SPELLINGS = {"allreduce": "all_reduce", "all_reduce": "all_reduce", "allgather": "all_gather",
              "all_gather": "all_gather", "_allgather_base": "all_gather", "allgather_into_tensor_coalesced": "all_gather",
              "reducescatter": "reduce_scatter", "reduce_scatter": "reduce_scatter",
              "_reduce_scatter_base": "reduce_scatter", "reduce_scatter_tensor_coalesced": "reduce_scatter",
              "alltoall": "all_to_all", "all_to_all": "all_to_all", "alltoall_base": "all_to_all",
              "broadcast": "broadcast", "reduce": "reduce", "sendrecv": "send_recv", "send": "send_recv",
              "recv": "send_recv", "allreduce_coalesced": "all_reduce", "_all_gather_base": "all_gather",
              "all_gather_into_tensor": "all_gather", "all_gather_into_tensor_coalesced": "all_gather",
              "reduce_scatter_tensor": "reduce_scatter", "all_to_allv": "all_to_all", "alltoallv": "all_to_all",
              "all_to_all_single": "all_to_all", "_broadcast_oop": "broadcast", "_reduce_oop": "reduce",
              "allgather_coalesced": "all_gather", "reduce_scatter_tensor_coalesced": "reduce_scatter"}
DTYPE_BYTES = {"float": 4, "float32": 4, "f32": 4, "half": 2, "float16": 2, "f16": 2, "bfloat16": 2, "bf16": 2,
               "double": 8, "float64": 8, "f64": 8, "int8_t": 1, "int8": 1, "char": 1, "uint8_t": 1, "uint8": 1,
               "byte": 1, "int": 4, "int32_t": 4, "int32": 4, "uint32_t": 4, "int64_t": 8, "int64": 8, "long": 8,
               "uint64_t": 8, "unsigned char": 1, "signed char": 1, "short": 2, "f8e4m3": 1, "f8e5m2": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "bool": 1}
_NEW = re.compile(r"ncclDevKernel_(\w+)")
PROTOCOLS = ("LL", "LL128", "SIMPLE")
_OLD = re.compile(r"ncclKernel_([A-Za-z]+)_([A-Z]+(?:_[A-Z]+)?)_(LL128|LL|SIMPLE)_([A-Za-z]+)_([A-Za-z0-9_]+)")


@dataclass(frozen=True)
class Collective:
    """What an NCCL kernel does: the collective (COLLECTIVES), and where its name says them the
    reduction op, element type, algorithm (RING, TREE, NVLS, ...) and protocol (LL, LL128, SIMPLE)."""

    collective: str
    op: str | None = None
    dtype: str | None = None
    algorithm: str | None = None
    protocol: str | None = None


def is_nccl(name: str) -> bool:
    """Whether a kernel is NCCL's (its name starts ncclKernel_ or ncclDevKernel_, after any 'void ')."""
    return bool(re.match(r"(void\s+)?nccl(Dev)?Kernel_", name.strip()))


def classify(name: str) -> Collective | None:
    """The collective an NCCL kernel's name says, None for a kernel that is not NCCL's or whose
    name says none (`ncclDevKernel_Generic`: read its collective from the profiler's record)."""
    text = name.strip().removeprefix("void ").strip()
    m = _NEW.match(text)
    if m:  # Coll[_Op_type]_ALGO_PROTO: AllReduce_Sum_bf16_RING_LL, AllGather_RING_LL, SendRecv
        parts = m.group(1).split("_")
        coll = _SPELLINGS.get(parts[0].lower())
        if coll is None:
            return None
        rest = parts[1:]
        protocol = rest.pop() if rest and rest[-1] in PROTOCOLS else None
        algorithm = rest.pop() if protocol and rest and rest[-1].isupper() else None
        if algorithm and rest and rest[-1].isupper() and rest[-1] in ("COLLNET", "NVLS"):  # COLLNET_DIRECT, NVLS_TREE
            algorithm = f"{rest.pop()}_{algorithm}"
        op = rest[0] if rest else None
        dtype = "_".join(rest[1:]) or None
        return Collective(coll, op, dtype, algorithm, protocol)
    m = _OLD.match(text)
    if m:
        coll = _SPELLINGS.get(m.group(1).lower())
        return None if coll is None else Collective(coll, m.group(4), m.group(5), m.group(2), m.group(3))
    return None


def collective_of(text: str) -> str | None:
    """A collective from a profiler's spelling ('allreduce', 'all_gather', 'nccl:all_reduce',
    '_reduce_scatter_base'), None for one it does not know."""
    key = str(text).strip().lower().removeprefix("nccl:").removeprefix("c10d::")
    return _SPELLINGS.get(key) or _SPELLINGS.get(key.rstrip("_")) or _SPELLINGS.get(key.lstrip("_"))


def dtype_bytes(dtype: str | None) -> int | None:
    """Bytes per element of a profiler's or NCCL's type name ('Float', 'BFloat16', 'bf16', 'half'),
    None for one it does not know."""
    return DTYPE_BYTES.get(str(dtype).strip().lower().replace("c10::", "")) if dtype else None


def bus_factor(collective: str, ranks: int) -> float:
    """nccl-tests' factor from algorithm to bus bandwidth for `collective` on `ranks` ranks (see
    the module). Raises ValueError for an unknown collective or fewer than one rank."""
    if ranks < 1:
        raise ValueError(f"{ranks} ranks")
    if collective == "all_reduce":
        return 2 * (ranks - 1) / ranks
    if collective in ("all_gather", "reduce_scatter", "all_to_all"):
        return (ranks - 1) / ranks
    if collective in ("broadcast", "reduce", "send_recv"):
        return 1.0
    raise ValueError(f"unknown collective {collective!r}")


def algbw_gbps(nbytes: float, time_ms: float) -> float:
    """Algorithm bandwidth in GB/s: the message's bytes over the time (nccl-tests' algbw)."""
    return nbytes / (time_ms * 1e6)


def busbw_gbps(collective: str, nbytes: float, time_ms: float, ranks: int) -> float:
    """Bus bandwidth in GB/s: algbw x `bus_factor` (nccl-tests' busbw)."""
    return algbw_gbps(nbytes, time_ms) * bus_factor(collective, ranks)
