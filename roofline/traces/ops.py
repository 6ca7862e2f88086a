"""Who launched each kernel of a PyTorch profiler trace: the op, forward or backward, and the module
where the trace names one; and the program's GPU time summed by op.

A trace (Kineto's Chrome JSON) ties each kernel to the runtime call that launched it by its
`correlation` id, and that call to the CPU thread it ran on and its time. The ops open on that
thread at that time (their `ts` to `ts + dur` spans it; they nest) are the launch's stack:

- the kernel's *launcher* is the innermost op (`aten::addmm`): the op PyTorch's profiler charges
  the kernel's time to as "self CUDA" time;
- its *op* is the outermost dispatcher op of the stack (`aten::linear`; a `namespace::name`, so
  that a `record_function` region older PyTorch wrote as an op does not swallow the ops in it):
  the call the program made, as the profiler's "CUDA total" of that op counts it;
- a kernel under `autograd::engine::evaluate_function: AddmmBackward0` is a *backward* kernel,
  owned by the forward op its autograd node differentiates, named as a forward kernel's op is:
  the op that made the node by PyTorch's own `fwdbwd` flow from it to the node, where the trace
  has them; else by the node's `Sequence number`, which PyTorch gives the node and every forward
  op (`Fwd thread id` 0) run since the node before it: of those, the last to start whose name is
  the node's (`aten::addmm` for AddmmBackward0); a node none of them matches (a custom autograd
  function's, whose op carries no number) is named by itself;
- one under an `Optimizer.step#...` or `Optimizer.zero_grad#...` annotation is the *optimizer*'s;
  every other kernel is *forward* work;
- its *module* is the chain of `nn.Module: Name_i` frames open around the forward op, where the
  trace was recorded with `with_stack=True` or `with_modules=True` (None otherwise; a backward
  kernel takes its forward op's).

A kernel whose correlation names no launch in the trace (a launch outside the profiled window) has
no owner; its time is counted apart, so the owned share says how much of the GPU time is explained.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from .kineto import Kernel, _int, _load, _number, gpu_name

PHASES = ("forward", "backward", "optimizer")
BACKWARD = "autograd::engine::evaluate_function: "
OPTIMIZER = ("Optimizer.step#", "Optimizer.zero_grad#")
MODULE = "nn.Module: "
STACK_CATEGORIES = ("cpu_op", "user_annotation", "python_function")
LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver")


@dataclass(frozen=True)
class Owner:
    """Who launched a kernel: its `op` (the outermost op; for a backward kernel the forward op it
    differentiates), `phase` ('forward', 'backward', 'optimizer'), `launcher` (the innermost op
    around the launch), `module` (the nn.Module path, '.'-joined, where the trace names one) and
    the autograd `sequence` number that tied a backward kernel to its forward op (None for others,
    and for a backward node whose forward op is outside the trace)."""

    op: str
    phase: str
    launcher: str
    module: str | None = None
    sequence: int | None = None


@dataclass(frozen=True)
class Launch:
    """One kernel of the trace and its owner (None: no launch of it in the trace)."""

    kernel: Kernel
    owner: Owner | None


@dataclass(frozen=True)
class OpRow:
    """One op (or module) in one phase: its GPU time (µs, its kernels' durations summed), launches,
    and its kernels by name with their time, the longest first."""

    name: str
    phase: str
    time_us: float
    launches: int
    kernels: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class OpsTrace:
    """A trace's kernels with their owners. `gpu`: the device name the trace gives; `notes`: what
    the reading met (backward nodes whose forward op is outside the trace)."""

    path: str
    gpu: str | None
    launches: list[Launch]
    notes: list[str] = field(default_factory=list)

    @property
    def read_notes(self) -> list[str]:
        """What reading the file noted (nothing: a trace is read as it is), as for roofline's files."""
        return []

    @property
    def time_us(self) -> float:
        """GPU time of every kernel, µs (overlapping kernels counted each)."""
        return sum(x.kernel.dur_us for x in self.launches)

    @property
    def owned_share(self) -> float:
        """The share of that time whose kernels have an owner (0..1); of the kernels, where they
        took no time at all."""
        total = self.time_us
        if not total:
            return sum(x.owner is not None for x in self.launches) / len(self.launches) if self.launches else 1.0
        return sum(x.kernel.dur_us for x in self.launches if x.owner is not None) / total

    @property
    def has_modules(self) -> bool:
        """Whether any kernel's owner names a module."""
        return any(x.owner is not None and x.owner.module for x in self.launches)

    def by(self, key: str = "op") -> list[OpRow]:
        """The GPU time summed per `key` ('op', 'launcher' or 'module') and phase, the longest first;
        kernels without an owner (or, by module, without a module) in one row named '(no owner)'
        ('(no module)'), phase '-'."""
        if key not in ("op", "launcher", "module"):
            raise ValueError(f"by {key!r}: give op, launcher or module")
        groups: dict[tuple[str, str], list[Kernel]] = defaultdict(list)
        for x in self.launches:
            o = x.owner
            name = getattr(o, key) if o is not None else None
            missing = "(no owner)" if o is None else "(no module)"
            groups[(name or missing, o.phase if o is not None and name else "-")].append(x.kernel)
        rows = []
        for (name, phase), kernels in groups.items():
            by_name: dict[str, float] = defaultdict(float)
            for k in kernels:
                by_name[k.name] += k.dur_us
            rows.append(OpRow(name, phase, sum(by_name.values()), len(kernels),
                              tuple(sorted(by_name.items(), key=lambda kv: -kv[1]))))
        return sorted(rows, key=lambda r: (-r.time_us, r.name, r.phase))


@dataclass(frozen=True)
class _Span:
    start: float
    end: float
    name: str
    category: str
    args: dict


def attribute(path: Path) -> OpsTrace:
    """The kernels of the PyTorch profiler trace at `path` (`.json` or `.json.gz`) with their
    owners, as the module says. Raises UsageError (one line) for a file that is not such a trace or
    holds no GPU kernel."""
    doc = _load(Path(path))
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise UsageError(f"{path}: no traceEvents: not a PyTorch profiler (Chrome) trace")
    return attribute_events(events, str(path), gpu_name(doc))


def attribute_events(events: list, source: str = "trace", gpu: str | None = None) -> OpsTrace:
    """`attribute` for a trace's `traceEvents` already read."""
    kernels: list[tuple[Kernel, int | None]] = []
    launches: dict[int, tuple[float, object]] = {}
    spans: dict[object, list[_Span]] = defaultdict(list)
    flows: dict[object, dict[str, tuple[object, float]]] = defaultdict(dict)  # id -> 's'/'f' -> (thread, ts)
    for e in events:
        if not isinstance(e, dict):
            continue
        cat, args = e.get("cat"), e.get("args") if isinstance(e.get("args"), dict) else {}
        ts, dur = _number(e.get("ts")), _number(e.get("dur"))
        if ts is None:
            continue
        if cat == "fwdbwd" and e.get("ph") in ("s", "f"):
            flows[e.get("id")][e["ph"]] = ((e.get("pid"), e.get("tid")), ts)
        elif cat == "kernel" and dur is not None and dur >= 0 and isinstance(e.get("name"), str):
            kernels.append((Kernel(e["name"], ts, dur, _int(args.get("device")), _int(args.get("stream"))),
                            _int(args.get("correlation"))))
        elif cat in LAUNCH_CATEGORIES and _int(args.get("correlation")) is not None:
            launches[_int(args["correlation"])] = (ts, (e.get("pid"), e.get("tid")))
        elif cat in STACK_CATEGORIES and dur is not None and dur >= 0 and isinstance(e.get("name"), str):
            spans[(e.get("pid"), e.get("tid"))].append(_Span(ts, ts + dur, e["name"], cat, args))
    if not kernels:
        raise UsageError(f"{source}: no GPU kernel in the trace (profile with ProfilerActivity.CUDA)")
    stacks = {thread: _Stacks(s) for thread, s in spans.items()}
    forward = _forward_ops(stacks)
    linked = _linked(flows, stacks)
    notes: set[str] = set()
    out = []
    for k, corr in sorted(kernels, key=lambda kc: kc[0].ts_us):
        launch = launches.get(corr) if corr is not None else None
        owner = None
        if launch is not None and launch[1] in stacks:
            owner = _owner(stacks[launch[1]].at(launch[0]), launch[1], forward, linked, notes)
        out.append(Launch(k, owner))
    return OpsTrace(source, gpu, out, sorted(notes))


class _Stacks:
    """One thread's spans, for the ones open at a time: sorted by start (the outer first at a tie),
    each with its nesting parent."""

    def __init__(self, spans: list[_Span]):
        self.spans = sorted(spans, key=lambda s: (s.start, -s.end))
        self.starts = [s.start for s in self.spans]
        self.parent: list[int | None] = []
        open_: list[int] = []
        for i, s in enumerate(self.spans):
            while open_ and self.spans[open_[-1]].end < s.start:
                open_.pop()
            self.parent.append(open_[-1] if open_ else None)
            open_.append(i)

    def at(self, t: float) -> list[_Span]:
        """The spans open at time `t`, outermost first."""
        i = bisect.bisect_right(self.starts, t) - 1
        chain = []
        while i is not None and i >= 0:
            s = self.spans[i]
            if s.start <= t <= s.end:
                chain.append(s)
                i = self.parent[i]
            else:  # a span that ended before t: its parent may still be open
                i = self.parent[i]
        return chain[::-1]

    def around(self, span: _Span) -> list[_Span]:
        """The spans open around `span` (it included), outermost first."""
        return [s for s in self.at(span.start) if s.start <= span.start and span.end <= s.end]


def _ops(stack: list[_Span]) -> list[_Span]:
    """The dispatcher's ops of a stack (`aten::mm`, `c10d::allreduce_`, `fbgemm::...`: a namespace
    before `::`), outermost first; where it has none, its cpu ops of any name (a `record_function`
    region older PyTorch wrote as one)."""
    ops = [s for s in stack if s.category == "cpu_op"]
    return [s for s in ops if "::" in s.name] or ops


def _module(stack: list[_Span]) -> str | None:
    names = [s.name.removeprefix(MODULE) for s in stack if s.category == "python_function" and s.name.startswith(MODULE)]
    return ".".join(names) or None


def _forward_ops(stacks: dict[object, _Stacks]) -> dict[int, list[tuple[float, str, str, str | None]]]:
    """Sequence number -> the forward cpu ops carrying it (`Fwd thread id` 0, or none), each as
    (its start, its name, the outermost op around it as a forward kernel's op is named, its module)."""
    found: dict[int, list] = defaultdict(list)
    for st in stacks.values():
        for s in st.spans:
            seq = _int(s.args.get("Sequence number"))
            if s.category != "cpu_op" or seq is None or _int(s.args.get("Fwd thread id")) not in (0, None) \
                    or s.name.startswith(BACKWARD):
                continue
            around = st.around(s)
            found[seq].append((s.start, s.name, (_ops(around) or [s])[0].name, _module(around)))
    return found


def node_maker(node: str, carrying: list) -> tuple[str, str | None] | None:
    """Of the forward ops carrying a node's sequence number (`_forward_ops`), the one that made the
    node called `node` ('AddmmBackward0'): the last to start whose name is the node's
    ('aten::addmm', 'aten::relu_' for ReluBackward0), as (its outer op, module); None where none is
    (PyTorch gives the number to every op run since the node before, and a custom C++ function's
    op carries none)."""
    base = node.rsplit("Backward", 1)[0].lower() if "Backward" in node else None
    if not base:
        return None
    same = [c for c in carrying if c[1].split("::")[-1].replace("_", "").lower() == base]
    if not same:
        return None
    _, _, outer, module = max(same)
    return outer, module


def _linked(flows: dict, stacks: dict[object, _Stacks]) -> dict[tuple[object, float], tuple[str, str | None]]:
    """PyTorch's own forward-backward links (`fwdbwd` flows, where the trace has them): (the
    backward node op's thread, its start) -> (the forward op that made the node, named as a forward
    kernel's op is; its module)."""
    out = {}
    for ends in flows.values():
        if "s" not in ends or "f" not in ends or ends["s"][0] not in stacks:
            continue
        thread, ts = ends["s"]
        around = stacks[thread].at(ts)
        ops = _ops(around)
        if ops:
            out[ends["f"]] = (ops[0].name, _module(around))
    return out


def _owner(stack: list[_Span], thread: object, forward: dict, linked: dict, notes: set[str]) -> Owner | None:
    ops = _ops(stack)
    if not ops:
        return None
    launcher = ops[-1].name
    node = next((s for s in ops if s.name.startswith(BACKWARD)), None)
    if node is not None:
        seq = _int(node.args.get("Sequence number"))
        link = next((linked[(thread, s.start)] for s in stack if (thread, s.start) in linked), None)
        if link is not None:  # PyTorch's own link from the node to the op that made it
            return Owner(link[0], "backward", launcher, link[1], seq)
        made = node_maker(node.name.removeprefix(BACKWARD), forward.get(seq, [])) if seq is not None else None
        if made is not None:
            return Owner(made[0], "backward", launcher, made[1], seq)
        name = node.name.removeprefix(BACKWARD)
        if seq is not None:
            notes.add("backward nodes whose forward op the trace does not show (outside it, or a custom autograd "
                      "function's) are named by the node")
        return Owner(name, "backward", launcher, None, None)
    optimizer = next((s for s in stack if s.name.startswith(OPTIMIZER)), None)
    if optimizer is not None:
        inner = [s for s in ops if s.start >= optimizer.start and s.end <= optimizer.end]
        return Owner((inner or ops)[0].name, "optimizer", launcher, None)
    return Owner(ops[0].name, "forward", launcher, _module(stack))
