"""Who launched each profiled kernel, read from the NVTX ranges Nsight Compute recorded around its
launch (`ncu --nvtx`; `roofline profile` turns on the ranges in a PyTorch program, see
`nsight/inject/sitecustomize.py`): the op, forward, backward or optimizer, and the module.

A launch's stack holds, outermost first, the ranges PyTorch's NVTX annotation opens around every op
(`aten::linear, seq = 41`, then `aten::addmm, seq = 41`: the name, then the autograd sequence
number, an op id and shapes where recorded), record_function regions (`Optimizer.step#AdamW.step`)
and the module ranges (`roofline.module GPT.transformer.h.3.mlp`). It is read as a PyTorch profiler
trace's stack is (`traces.ops`):

- the *launcher* is the innermost op, the *op* the outermost dispatcher op (`namespace::name`);
- under `autograd::engine::evaluate_function: AddmmBackward0` the kernel is *backward* work, owned
  by the forward op that made the node: of the forward ranges the profile holds that carry the
  node's sequence number (PyTorch gives it to every op run since the node before), the last whose
  name is the node's (`aten::addmm`), named as a forward kernel's op and with its module. A forward
  op that launched no profiled kernel (`aten::split`, whose backward concatenates) is not in the
  profile: the node is then named by itself, and its module is the deepest one around both forward
  launches whose sequence numbers bracket the node's (modules nest, and forward ops run in
  sequence-number order);
- under `Optimizer.step#...` or `Optimizer.zero_grad#...` it is the *optimizer*'s; else *forward*
  work, its module the innermost module range around it.

A launch with neither an op nor a module range (launched before torch was imported, from another
thread, or by a program that is not PyTorch) has no owner.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass

from .ops import BACKWARD, OPTIMIZER, Owner, node_maker

MODULE_PREFIX = "roofline.module "  # as nsight/inject/sitecustomize.py names a module's range
_RANGE = re.compile(r"^(?P<name>.*?)(?:, seq = (?P<seq>-?\d+))?(?:, op_id = -?\d+)?(?:, sizes = \[.*)?"
                    r"(?:, input_op_ids = .*)?$", re.S)


@dataclass(frozen=True)
class Range:
    """One NVTX range of a launch's stack: its `name` without what PyTorch appends, the autograd
    sequence number where it carries one (None, or for -1), and whether it is a module's (`name`
    then its path)."""

    name: str
    seq: int | None = None
    module: bool = False


def parse(text: str) -> Range:
    """One range's text as a `Range` ('aten::addmm, seq = 41, op_id = 7' -> aten::addmm, 41;
    'roofline.module GPT.h.0' -> the module GPT.h.0)."""
    if text.startswith(MODULE_PREFIX):
        return Range(text[len(MODULE_PREFIX):], None, True)
    m = _RANGE.match(text)
    name, seq = (m.group("name"), m.group("seq")) if m else (text, None)
    number = int(seq) if seq is not None and int(seq) >= 0 else None
    return Range(name.strip(), number)


def _ops(stack: list[Range]) -> list[Range]:
    return [r for r in stack if not r.module and "::" in r.name]


def _module(stack: list[Range]) -> str | None:
    paths = [r.name for r in stack if r.module]
    return paths[-1] if paths else None


def _common(a: str | None, b: str | None) -> str | None:
    """The deepest module path around both `a` and `b` (None where they share none)."""
    if a is None or b is None:
        return None
    pa, pb = a.split("."), b.split(".")
    n = 0
    while n < min(len(pa), len(pb)) and pa[n] == pb[n]:
        n += 1
    return ".".join(pa[:n]) or None


def owners(stacks: list[tuple[int, tuple[str, ...] | list[str] | None]]) -> tuple[list[Owner | None], list[str]]:
    """Each launch's owner from its NVTX stack: `stacks` holds (the launch's place in the launch
    sequence, its ranges outermost first, None where the report recorded none), in any order; the
    owners come back in the same order, with one-line notes on what the reading met."""
    parsed = [(order, [parse(t) for t in (s or ())]) for order, s in stacks]
    # forward ops carrying each sequence number: (place, name, the outer op, module)
    carrying: dict[int, list[tuple[int, str, str, str | None]]] = defaultdict(list)
    points: list[tuple[int, int, str | None]] = []  # (seq, place, module) of forward launches
    for order, stack in parsed:
        if any(r.name.startswith(BACKWARD) or r.name.startswith(OPTIMIZER) for r in stack):
            continue
        ops = _ops(stack)
        module = _module(stack)
        for r in ops:
            if r.seq is not None:
                carrying[r.seq].append((order, r.name, ops[0].name, module))
        if ops and ops[-1].seq is not None:
            points.append((ops[-1].seq, order, module))
    points.sort()
    seqs = [p[0] for p in points]
    notes: set[str] = set()
    out: list[Owner | None] = []
    for order, stack in parsed:
        out.append(_owner(stack, carrying, points, seqs, notes))
    return out, sorted(notes)


def _owner(stack: list[Range], carrying: dict, points: list, seqs: list[int], notes: set[str]) -> Owner | None:
    ops = _ops(stack)
    module = _module(stack)
    if not ops and module is None:
        return None
    launcher = ops[-1].name if ops else "(no op)"
    node_at = next((i for i, r in enumerate(stack) if not r.module and r.name.startswith(BACKWARD)), None)
    if node_at is not None:
        node = stack[node_at].name[len(BACKWARD):]
        seq = stack[node_at].seq
        if seq is None:  # the node's own range ('AddmmBackward0, seq = 41') inside it carries it
            seq = next((r.seq for r in stack[node_at + 1:] if r.name == node and r.seq is not None), None)
        made = node_maker(node, carrying.get(seq, [])) if seq is not None else None
        if made is not None:
            return Owner(made[0], "backward", launcher, made[1], seq)
        if seq is None:
            return Owner(node, "backward", launcher, None, None)
        notes.add("backward nodes whose forward op launched no profiled kernel are named by the node, in the module "
                  "around the forward launches on either side of it")
        return Owner(node, "backward", launcher, _bracketing(seq, points, seqs), seq)
    if any(r.name.startswith(OPTIMIZER) for r in stack if not r.module):
        at = next(i for i, r in enumerate(stack) if not r.module and r.name.startswith(OPTIMIZER))
        inner = _ops(stack[at:])
        return Owner((inner or ops or [stack[at]])[0].name, "optimizer", launcher, None)
    if not ops:
        notes.add("kernels launched outside any PyTorch op (a Triton or custom kernel called from Python) are owned "
                  "by their module, op '(no op)'")
        return Owner("(no op)", "forward", launcher, module)
    return Owner(ops[0].name, "forward", launcher, module)


def _bracketing(seq: int, points: list[tuple[int, int, str | None]], seqs: list[int]) -> str | None:
    """The module around the forward op with sequence number `seq`: the deepest one around the
    forward launches with the nearest numbers below and above it (or the one beside it at an end)."""
    i = bisect.bisect_left(seqs, seq)
    below = points[i - 1][2] if i > 0 else None
    above = points[i][2] if i < len(points) else None
    if i == 0 or i == len(points):
        return None  # outside the forward launches the profile holds: no module can be said
    return _common(below, above)
