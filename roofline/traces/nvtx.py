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
  by the forward op that made the node (the node's number is on its own range,
  `AddmmBackward0, seq = 41`; a kernel launched after the node returned, within the same
  `evaluate_function` call, such as a broadcast gradient summed down, takes it by that call's
  `op_id` from the node's other kernels; a node none of whose kernels ran inside its own range,
  such as AddBackward0's, takes the one number a forward op of its name carries between the numbers
  of the nodes evaluated before and after it, as the engine runs the highest number first): of the forward ranges the profile holds that carry the
  node's sequence number (PyTorch gives it to every op run since the node before), the last whose
  name is the node's (`aten::addmm`), named as a forward kernel's op and with its module. A forward
  op that launched no profiled kernel (a view: `aten::slice`, whose backward copies into zeros) is
  not in the profile. Numbers grow with time on the forward thread, so where the first forward
  launch numbered above the node's sits in an outer op numbered at or below it, that op was open
  when the node was made and owns it (`aten::view` inside `aten::linear`); else a view op's node
  is named after the op (`SliceBackward0`: `aten::slice`), any other by itself, and its module is
  the deepest one around both forward launches whose numbers bracket the node's. A node none of
  whose own kernels the profile holds (a view's, whose gradients are only added up after it)
  shows no number at all: where every number between its neighbours' falls inside the same outer
  op (an input view inside `aten::linear`), that op and its module own it; else it is named so,
  without a module;
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

from ..nsight.inject.sitecustomize import MODULE_PREFIX  # how the program's ranges name a module (inert here)
from .ops import BACKWARD, OPTIMIZER, Owner, node_maker

_RANGE = re.compile(r"^(?P<name>.*?)(?:, seq = (?P<seq>-?\d+))?(?:, op_id = (?P<op_id>-?\d+))?(?:, sizes = \[.*)?"
                    r"(?:, input_op_ids = .*)?$", re.S)


@dataclass(frozen=True)
class Range:
    """One NVTX range of a launch's stack: its `name` without what PyTorch appends, the autograd
    sequence number where it carries one (None, or for -1), PyTorch's id of this call of the op
    (`op_id`, where given), and whether it is a module's (`name` then its path)."""

    name: str
    seq: int | None = None
    module: bool = False
    op_id: int | None = None


def parse(text: str) -> Range:
    """One range's text as a `Range` ('aten::addmm, seq = 41, op_id = 7' -> aten::addmm, 41;
    'roofline.module GPT.h.0' -> the module GPT.h.0)."""
    if text.startswith(MODULE_PREFIX):
        return Range(text[len(MODULE_PREFIX):], None, True)
    m = _RANGE.match(text)
    name, seq, op_id = (m.group("name"), m.group("seq"), m.group("op_id")) if m else (text, None, None)
    number = int(seq) if seq is not None and int(seq) >= 0 else None
    return Range(name.strip(), number, False, int(op_id) if op_id is not None else None)


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


def owners(stacks: list[tuple], numbers: list[int | None] | None = None) -> tuple[list[Owner | None], list[str]]:
    """Each launch's owner from its NVTX stack: `stacks` holds (the launch's place in the launch
    sequence, its ranges outermost first (None where the report recorded none)[, its process]), in
    any order; the owners come back in the same order, with one-line notes on what the reading met.
    Each process numbers its ops and autograd nodes on its own, so each is read apart. `numbers`
    (one per launch, None where not known): the autograd sequence number a PyTorch profiler trace
    of the same step gives a backward launch (`traces.join`), taken where the ranges hold none (a
    gradient added up after a view's node returned: the trace has the node, the report only the
    kernels)."""
    processes: dict = {}
    for i, entry in enumerate(stacks):
        processes.setdefault(entry[2] if len(entry) > 2 else None, []).append(i)
    found: list[Owner | None] = [None] * len(stacks)
    notes: list[str] = []
    for places in processes.values():
        got, said = _owners_of_one([stacks[i][:2] for i in places],
                                   [numbers[i] for i in places] if numbers is not None else None)
        for i, o in zip(places, got):
            found[i] = o
        notes += [n for n in said if n not in notes]
    return found, notes


def _owners_of_one(stacks: list[tuple], given: list[int | None] | None = None) -> tuple[list[Owner | None], list[str]]:
    """`owners` of the launches of one process (`given`: their numbers from a trace, as `owners`)."""
    parsed = [(order, [parse(t) for t in (s or ())]) for order, s in stacks]
    # forward ops carrying each sequence number: (place, name, the outer op, module)
    carrying: dict[int, list[tuple[int, str, str, str | None]]] = defaultdict(list)
    points: list[tuple] = []  # forward launches: (innermost op's seq, place, module, outer op, its seq)
    for order, stack in parsed:
        if any(r.name.startswith(BACKWARD) or r.name.startswith(OPTIMIZER) for r in stack):
            continue
        ops = _ops(stack)
        module = _module(stack)
        for r in ops:
            if r.seq is not None:
                carrying[r.seq].append((order, r.name, ops[0].name, module))
        numbered = [r.seq for r in ops if r.seq is not None]
        if numbered:  # the launch's number: its innermost op that carries one
            points.append((numbered[-1], order, module, ops[0].name, ops[0].seq))
    points.sort()
    seqs = [p[0] for p in points]
    # a backward node's number, by the id of its `evaluate_function` call: its kernels launched
    # inside the node's own range carry it; those launched after the node returned, in the same
    # call (a broadcast gradient summed down, gradients added up), do not
    numbers: dict[int, int] = {}
    for _, stack in parsed:
        for i, r in enumerate(stack[:-1]):
            if r.name.startswith(BACKWARD) and r.op_id is not None and r.seq is None:
                node = r.name[len(BACKWARD):]
                inner = next((x.seq for x in stack[i + 1:] if x.name == node and x.seq is not None), None)
                if inner is not None:
                    numbers[r.op_id] = inner
    brackets = _bracket_numbers(parsed, carrying, numbers)
    notes: set[str] = set()
    out: list[Owner | None] = []
    for i, (order, stack) in enumerate(parsed):
        out.append(_owner(stack, carrying, points, seqs, numbers, notes, brackets, given[i] if given else None))
    return out, sorted(notes)


def _bracket_numbers(parsed: list, carrying: dict, numbers: dict[int, int]) -> None:
    """Number the backward nodes whose own range enclosed no kernel (AddBackward0, whose only kernel
    sums a broadcast gradient down after it returned) from their neighbours: the autograd engine runs
    ready nodes highest sequence number first, so a node evaluated between two numbered ones (by
    their `evaluate_function` ids, which grow with time) carries a number between theirs; where
    exactly one forward op of the node's name carries a number there, that is the node's. Adds to
    `numbers` (evaluate_function id -> number) in place; returns, for each node still unnumbered,
    the numbers it lies strictly between (lower, higher; None where no node is on that side)."""
    calls: dict[int, str] = {}  # evaluate_function id -> node name
    for _, stack in parsed:
        for r in stack:
            if r.name.startswith(BACKWARD) and r.op_id is not None:
                calls.setdefault(r.op_id, r.name[len(BACKWARD):])
                if r.seq is not None:
                    numbers.setdefault(r.op_id, r.seq)
    known = sorted(numbers.items())
    ids = [k for k, _ in known]
    brackets: dict[int, tuple[int | None, int | None]] = {}
    for op_id, node in calls.items():
        if op_id in numbers:
            continue
        i = bisect.bisect_left(ids, op_id)
        above = known[i - 1][1] if i > 0 else None  # evaluated before it: a higher number
        below = known[i][1] if i < len(known) else None  # evaluated after it: a lower number
        fits = {seq for seq, ops in carrying.items()
                if (above is None or seq < above) and (below is None or seq > below)
                and node_maker(node, ops) is not None}
        if len(fits) == 1:
            numbers[op_id] = fits.pop()
        else:
            brackets[op_id] = (below, above)
    return brackets


def _owner(stack: list[Range], carrying: dict, points: list, seqs: list[int], numbers: dict[int, int],
           notes: set[str], brackets: dict | None = None, given: int | None = None) -> Owner | None:
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
        if seq is None and stack[node_at].op_id is not None:  # launched after the node returned
            seq = numbers.get(stack[node_at].op_id)
        if seq is None and given is not None and stack[node_at].op_id is not None:
            # a trace of the step numbers it: taken where it lies between the numbers of the nodes evaluated
            # around it here (a trace of another run of the program may number its ops from elsewhere)
            below, above = (brackets or {}).get(stack[node_at].op_id, (None, None))
            if below is not None and above is not None and below < given < above:
                seq = given
        made = node_maker(node, carrying.get(seq, [])) if seq is not None else None
        if made is not None:
            return Owner(made[0], "backward", launcher, made[1], seq)
        if seq is None:  # no kernel of the node itself: its number is nowhere in the profile
            below, above = (brackets or {}).get(stack[node_at].op_id, (None, None))
            if below is not None and above is not None and above - below <= 8:
                # every number it can carry made inside the same outer op (an input view inside aten::linear)
                found = {_inside(n, points, seqs) for n in range(below + 1, above)}
                if len(found) == 1 and None not in found:
                    outer, where = found.pop()
                    return Owner(outer, "backward", launcher, where, None)
            return Owner(_view_op(node) or node, "backward", launcher, None, None)
        inside = _inside(seq, points, seqs)
        if inside is not None:  # made by an op without kernels inside an op with some (a view in aten::linear)
            return Owner(inside[0], "backward", launcher, inside[1], seq)
        view = _view_op(node)
        if view is not None:
            return Owner(view, "backward", launcher, _bracketing(seq, points, seqs), seq)
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


# Ops that only make a view of their input, so launch no kernel: a backward node of theirs
# ('SliceBackward0') is named after the op ('aten::slice') where no profiled kernel carries its number.
VIEW_OPS = frozenset({"alias", "as_strided", "chunk", "detach", "diagonal", "expand", "narrow", "permute", "reshape",
                      "select", "slice", "split", "split_with_sizes", "squeeze", "t", "transpose", "unbind", "unflatten",
                      "unfold", "unsafe_split", "unsafe_split_with_sizes", "unsqueeze", "view", "view_as_complex",
                      "view_as_real"})


def _view_op(node: str) -> str | None:
    """The view op ('aten::split_with_sizes') a backward node's name ('SplitWithSizesBackward0')
    names, or None for a node of any other op."""
    base = re.sub(r"Backward\d*$", "", node)
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", base).lower()
    return f"aten::{snake}" if snake in VIEW_OPS else None


def _inside(seq: int, points: list[tuple], seqs: list[int]) -> tuple[str, str | None] | None:
    """The outer op (and its module) that was open when the node numbered `seq` was made, where the
    profile shows it: the first forward launch numbered above `seq` sits in an outer op numbered at
    or below it (numbers grow with time on the forward thread, so that op spans the node's making)."""
    i = bisect.bisect_right(seqs, seq)
    if i == len(points):
        return None
    _, _, module, outer, outer_seq = points[i]
    return (outer, module) if outer_seq is not None and outer_seq <= seq else None


def _bracketing(seq: int, points: list[tuple], seqs: list[int]) -> str | None:
    """The module around the forward op with sequence number `seq`: the deepest one around the
    forward launches with the nearest numbers below and above it (or the one beside it at an end)."""
    i = bisect.bisect_left(seqs, seq)
    below = points[i - 1][2] if i > 0 else None
    above = points[i][2] if i < len(points) else None
    if i == 0 or i == len(points):
        return None  # outside the forward launches the profile holds: no module can be said
    return _common(below, above)
