"""PyTorch profiler traces (Kineto's Chrome trace JSON, `.json` or `.json.gz`), one per rank: every
kernel with its start, duration, GPU and stream, at full speed (no replay: NCCL's collectives run
as they do in the program), and each NCCL kernel's collective and message.

Where a trace says them: the rank and world size (`distributedInfo`), the GPU's name
(`deviceProperties`), and per NCCL kernel its message in the kernel's own args ("Collective name",
"In msg nelems", "Out msg nelems", "dtype", "Group size": PyTorch 2.2 and later) or, in older
traces, in the CPU ops around the launch that queued it (its "correlation" id names the launch;
`record_param_comms` holds the message; `nccl:all_reduce` and the like, the tensor's "Input Dims"
and "Input type"). A kernel whose trace says no message size keeps its time; its bandwidth is
then unknown, and said so.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..model import collectives

MAX_BYTES = 2 * 2**30


@dataclass(frozen=True)
class Kernel:
    """One kernel on the GPU: its name, start and duration in µs, GPU and stream."""

    name: str
    ts_us: float
    dur_us: float
    device: int | None
    stream: int | None

    @property
    def end_us(self) -> float:
        return self.ts_us + self.dur_us


@dataclass(frozen=True)
class Comm:
    """An NCCL kernel: the kernel, its collective (`model.collectives.COLLECTIVES`), the message in
    bytes (nccl-tests' S: the whole buffer; None where the trace says none), the ranks it spans,
    the element type, the algorithm and protocol its name gives, and where the message was read
    ('kernel args', 'record_param_comms', 'input dims', or None)."""

    kernel: Kernel
    collective: str
    nbytes: float | None
    ranks: int | None
    dtype: str | None = None
    algorithm: str | None = None
    protocol: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class RankTrace:
    """One rank's trace: where it was read from, its rank and world size (None where the trace
    does not say), the GPU's name, every kernel and, among them, the NCCL ones."""

    path: str
    rank: int | None
    world_size: int | None
    gpu: str | None
    kernels: list[Kernel]
    comms: list[Comm] = field(default_factory=list)


def _load(path: Path):
    try:
        if path.stat().st_size > MAX_BYTES:
            raise UsageError(f"{path}: larger than {MAX_BYTES // 2**30} GiB; is it a profiler trace?")
        raw = path.read_bytes()
        text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        return json.loads(text)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such trace file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: a folder; give its trace files, or the folder to `comms` alone") from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise UsageError(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise UsageError(f"{path}: not a JSON trace (PyTorch's profiler writes one with "
                         "prof.export_chrome_trace or tensorboard_trace_handler)") from None


def _number(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _int(x) -> int | None:
    v = _number(x)
    return int(v) if v is not None and v == int(v) else None


def _roofline_file(doc) -> str:
    """Where `doc` is one of roofline's own files, what it is and what reads it: ' but a profile of
    a program (roofline profile), which show, plot ... read'; else ''."""
    if not isinstance(doc, dict) or "schema" not in doc:
        return ""
    what = {"profile": "a profile of a program (roofline profile)", "grade": "a grade file (roofline run)"}.get(
        doc.get("kind"), "a run's results (roofline run)")
    return f" but {what}, which roofline show reads; comms reads profiler traces, one per rank"


def gpu_name(doc: dict) -> str | None:
    """The GPU's name a trace gives (its first `deviceProperties` entry with one), or None."""
    props = doc.get("deviceProperties") if isinstance(doc.get("deviceProperties"), list) else []
    return next((p.get("name") for p in props if isinstance(p, dict) and p.get("name")), None)


def read(path: Path) -> RankTrace:
    """The trace at `path`. Raises UsageError (one line) for a file that is missing, not JSON, or
    not a profiler trace (no traceEvents), or that holds no GPU kernel."""
    path = Path(path)
    doc = _load(path)
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise UsageError(f"{path}: no traceEvents: not a PyTorch profiler (Chrome) trace{_roofline_file(doc)}")
    info = doc.get("distributedInfo") if isinstance(doc.get("distributedInfo"), dict) else {}
    gpu = gpu_name(doc)
    kernels, launches, ops = [], {}, {}
    raw_kernels = []
    for e in events:
        if not isinstance(e, dict):
            continue
        cat, args = e.get("cat"), e.get("args") if isinstance(e.get("args"), dict) else {}
        ts, dur = _number(e.get("ts")), _number(e.get("dur"))
        if cat == "kernel" and ts is not None and dur is not None and dur >= 0 and isinstance(e.get("name"), str):
            k = Kernel(e["name"], ts, dur, _int(args.get("device")), _int(args.get("stream")))
            kernels.append(k)
            raw_kernels.append((k, args))
        elif cat == "cuda_runtime" and _int(args.get("correlation")) is not None and ts is not None:
            launches[_int(args["correlation"])] = (ts, e.get("tid"))
        elif cat in ("cpu_op", "user_annotation") and ts is not None and dur is not None:
            ops.setdefault(e.get("tid"), []).append((ts, ts + dur, e.get("name", ""), args))
    if not kernels:
        raise UsageError(f"{path}: no GPU kernel in the trace (profile with ProfilerActivity.CUDA)")
    world = _int(info.get("world_size"))
    comms = []
    for k, args in raw_kernels:
        if not collectives.is_nccl(k.name):
            continue
        comm = _comm(k, args, launches, ops, world)
        if comm is not None:
            comms.append(comm)
    kernels.sort(key=lambda k: k.ts_us)
    return RankTrace(str(path), _int(info.get("rank")), world, gpu, kernels, comms)


def _message(args: dict, collective: str) -> tuple[float | None, str | None]:
    """(bytes, dtype) of a message PyTorch recorded ('In msg nelems', 'Out msg nelems', 'dtype'):
    nccl-tests' S, the whole buffer (the gathered output of an all-gather, the input of the others)."""
    size = collectives.dtype_bytes(args.get("dtype"))
    nelems = args.get("Out msg nelems") if collective == "all_gather" else args.get("In msg nelems")
    n = _number(nelems)
    return (n * size if n is not None and size else None), args.get("dtype")


def _comm(k: Kernel, args: dict, launches: dict, ops: dict, world: int | None) -> Comm | None:
    named = collectives.classify(k.name)
    ranks = _int(args.get("Group size"))
    if args.get("Collective name"):
        coll = collectives.collective_of(args["Collective name"]) or (named.collective if named else None)
        if coll is None:
            return None
        nbytes, dtype = _message(args, coll)
        return Comm(k, coll, nbytes, ranks or world, dtype, named.algorithm if named else None,
                    named.protocol if named else None, "kernel args")
    launch = launches.get(_int(args.get("correlation")))
    enclosing = []
    if launch is not None:
        ts, tid = launch
        enclosing = sorted((o for o in ops.get(tid, []) if o[0] <= ts <= o[1]), key=lambda o: o[0])
    for start, end, name, op_args in reversed(enclosing):  # the innermost first
        if name == "record_param_comms" and op_args.get("Collective name"):
            coll = collectives.collective_of(op_args["Collective name"])
            if coll:
                nbytes, dtype = _message(op_args, coll)
                return Comm(k, coll, nbytes, _int(op_args.get("Group size")) or world, dtype,
                            named.algorithm if named else None, named.protocol if named else None,
                            "record_param_comms")
    for start, end, name, op_args in reversed(enclosing):
        coll = collectives.collective_of(name) if name.startswith("nccl:") else None
        if coll is None and name.startswith("c10d::"):
            coll = collectives.collective_of(name.removeprefix("c10d::").rstrip("_"))
        if coll is None:
            continue
        nbytes, dtype = _dims_bytes(op_args)
        ranks = world
        if coll == "all_gather" and nbytes is not None:
            both = next(((whole, part) for *_, a in enclosing for whole, part in [(_dims_bytes(a)[0], _dims_bytes(a, 1)[0])]
                         if whole and part and whole > part and whole % part == 0), None)
            if both:  # an op of (output, input), c10d::_allgather_base_: S is the output, the group their ratio
                nbytes, ranks = both[0], int(both[0] // both[1])
            elif world:
                nbytes *= world  # the op's tensor is one rank's share; S is the gathered whole
        return Comm(k, coll, nbytes, ranks, dtype, named.algorithm if named else None,
                    named.protocol if named else None, "input dims" if nbytes else None)
    if named is None:
        return None
    size = collectives.dtype_bytes(named.dtype)
    return Comm(k, named.collective, None, world, named.dtype if size else None, named.algorithm, named.protocol)


def _dims_bytes(args: dict, which: int = 0) -> tuple[float | None, str | None]:
    """(bytes, type) of an op's `which`-th tensor from its 'Input Dims' and 'Input type' (record_shapes)."""
    dims, types = args.get("Input Dims"), args.get("Input type")
    if not (isinstance(dims, list) and len(dims) > which and isinstance(dims[which], list) and dims[which]):
        return None, None
    kind = types[which] if isinstance(types, list) and len(types) > which else None
    size = collectives.dtype_bytes(kind)
    n = 1
    for d in dims[which]:
        v = _int(d)
        if v is None or v < 0:
            return None, kind
        n *= v
    return (n * size if size else None), kind
