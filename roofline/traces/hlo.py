"""Who launched each kernel of a JAX (XLA) program: the jax op, forward or backward, and the
`jax.named_scope` path, read from the optimized HLO XLA dumps with
`XLA_FLAGS='--xla_dump_to=DIR --xla_dump_hlo_as_text'` (`*after_optimizations.txt`, one file per
compiled module; `roofline profile` turns this on in the program it runs).

An optimized module lists computations. Those that run (the entry, the bodies and conditions of
its while loops, the branches of its conditionals, called computations, a call's `to_apply`
included; not those of the host's CPU) hold, in the schedule's order, the instructions that launch
kernels: fusions, custom calls (cuBLAS, cuDNN, Triton) and the few ops emitted on their own
(copies, collectives). XLA names a fusion's kernel after the instruction, '.' and '-' made '_'
(`%loop_multiply_fusion.2` launches `loop_multiply_fusion_2`), and instructions that compile to
one kernel share it (their `deduplicated_name`); a custom call's kernels carry the library's
names (`nvjet_...`, `sm90_xmma_...`, `ncclDevKernel_...`).

Where ncu recorded XLA's own NVTX range around a launch (`Thunk:#...,hlo_op=NAME`, with the
module's `XlaModule:#hlo_module=...`), that instruction owns it. Elsewhere launches are lined up
with the schedule in the order the profile recorded them (`line_up`): a launch whose name is an
instruction's kernel is that instruction, the next one of that name after the last placed in the
same computation, else in a computation left part-way (the entry resumed after a loop), else a
computation starting again (a loop body's next iteration, the next step); the launches of other
names between two placed ones belong to the instructions between them that launch library
kernels (custom calls, collectives), in order. A launch named as XLA names its own kernels
(`xla_named`) that no instruction carries was launched by a module the dump does not hold.

Each instruction's metadata carries `op_name`, the name stack JAX traced it under:

    jit(step)/transpose(jvp(loss))/layer0/jit(gelu)/mul

Its parts are scopes (`jax.named_scope`, a Flax module's name), frames of jitted functions
(`jit(gelu)`) and of `jnp.einsum` (its subscripts, `...qhd,...khd->...hqk`: the op
`einsum ...qhd,...khd->...hqk`) and, last, the primitive (`mul`; parameters in brackets
dropped). The scopes of control flow (`while`, `body`, `body_pred`, `cond`'s `branch_N_fun`)
and of calls and lifted transformations (`closed_call`, Flax's `eval_jaxpr`) are left out, and a
scope repeated inside a transformation (remat's re-linearised copy, `transpose(jvp(M))/jvp(M)`)
counts once. A transformation wraps the first scope traced under it: `transpose(...)` marks the
reverse pass of automatic differentiation, *backward* work, owned by the op and scope it
differentiates, as a PyTorch backward kernel is by its forward op (`traces.ops.Owner`). An
instruction under no transformation of differentiation that is computed from a gradient (it
reads, through any chain of instructions, backward work: `jit(step)/sgd/sub` taking a weight and
its gradient) is the *optimizer's* (`_updates`); everything else is *forward* work. The first
frame (the function jitted, `jit(step)`) and `jit(main)` are left out; the scopes before any
other frame are the *module* ('.'-joined: `loss.layer0`); the *op* is the outermost jitted
function inside them (`gelu`, as PyTorch's op is the outermost `aten::` call), else the
primitive; the primitive is the *launcher*. A fusion whose instruction has no metadata takes its
fused root's, else the first of its fused instructions' that has some.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..model.units import plural
from .ops import Owner

# '  %name = type opcode(operands), attr=..., metadata={op_name="..." ...}' (ROOT optional); the type may
# be a tuple with nested parentheses, so the opcode is the first word before '(' past the type
_INSTRUCTION = re.compile(r"^\s*(?P<root>ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*(?P<rest>.*)$")
_COMPUTATION = re.compile(r"^\s*(?P<entry>ENTRY\s+)?%?(?P<name>[\w.\-]+)\s.*\{\s*$")
_OPCODE = re.compile(r"(?<![\w.\-\[{%])(?P<opcode>[a-z][\w\-]*)\(")
_OP_NAME = re.compile(r'\bop_name="(?P<v>(?:[^"\\]|\\.)*)"')
_DEDUPLICATED = re.compile(r'\bdeduplicated_name="(?P<v>[^"]*)"')
_CALLS = re.compile(r"\bcalls=%?(?P<v>[\w.\-]+)")
_APPLIES = re.compile(r"\bto_apply=%?(?P<v>[\w.\-]+)")
_TARGET = re.compile(r'\bcustom_call_target="(?P<v>[^"]*)"')
_FRAME = re.compile(r"^(?:jit|pjit|xla_pmap|shard_map|pmap)\((?P<fn>.*)\)$")
# jnp.einsum's scope: its subscripts as written ('...qhd,...khd->...hqk', 'ij, jk -> ik', 'ij,jk')
_EINSUM = re.compile(r"^[A-Za-z.]+(?:,[A-Za-z.]+)*(?:->[A-Za-z.]*)?$")
_TRANSFORM = re.compile(r"^(?P<fn>jvp|transpose|vmap|remat|checkpoint|custom_jvp_call|custom_vjp_call|"
                        r"custom_vjp_call_jaxpr|batched|linearize)\((?P<inner>.*)\)$")
# scopes that name control flow or a lifted transformation's plumbing (Flax's nn.scan runs its body
# under 'eval_jaxpr'), not a module
_STRUCTURE = {"while", "body", "cond", "scan", "cond_fun", "body_fun", "body_pred", "switch", "checkpoint", "remat",
              "rematted_computation", "eval_jaxpr", "closed_call"}
_BRANCH = re.compile(r"^branch_\d+_fun$")  # lax.cond's and lax.switch's branches
# instructions that call a computation with `to_apply` that runs (not a reducer)
_CALLERS = {"call", "call-start", "async-start"}
_REFERENCE = re.compile(r"%(?P<v>[\w.\-]+)")  # an operand: '%gte.1' ('%fusion.2#0': its first output)
# the computations an instruction runs: a fusion's, a loop's body and condition, a conditional's branches, a call's
_CALLED = re.compile(r"\b(?:calls|body|condition|to_apply|true_computation|false_computation)=%?([\w.\-]+)")
_BRANCHES = re.compile(r"\bbranch_computations=\{(?P<v>[^}]*)\}")
# transformations of automatic differentiation: an op traced under one is forward or backward work, never the
# optimizer's
_DIFFERENTIATING = {"jvp", "transpose", "linearize", "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"}
# instructions that launch nothing themselves (the computations they call do; and every '-done' and
# '-update' of an asynchronous pair)
_SILENT = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "after-all", "partition-id",
           "replica-id", "opt-barrier", "while", "call", "conditional", "add-dependency", "domain",
           "copy-start", "copy-done", "send", "send-done", "recv", "recv-done", "async-done", "all-reduce-done",
           "all-gather-done", "collective-permute-done"}


@dataclass(frozen=True)
class HloOp:
    """One instruction of an optimized HLO module that may launch kernels: its `name`
    ('loop_multiply_fusion.2'), `opcode` ('fusion', 'custom-call', 'all-reduce-start'), its
    metadata's `op_name` (None where neither it nor its fused root has one), a custom call's
    `target` ('__cublas$gemm'), the names of the kernels it may launch as (its own and those of the
    instructions it shares a kernel with), the `module` and `computation` it is in, and whether
    its kernels are a library's (`library`: any instruction but a fusion, and a fusion around a
    custom call; a fusion's kernel is named after it)."""

    name: str
    opcode: str
    op_name: str | None
    target: str | None = None
    module: str = ""
    computation: str = ""
    kernels: frozenset[str] = field(default_factory=frozenset)
    library: bool = False  # its kernels carry a library's names (a custom call, a collective), not its own
    update: bool = False  # outside automatic differentiation, computed from a gradient: the optimizer's (`_updates`)

    @property
    def kernel(self) -> str:
        """The name XLA gives this instruction's kernel: '.' and '-' made '_'."""
        return kernel_name(self.name)


def kernel_name(instruction: str) -> str:
    """The kernel name XLA gives an instruction's kernel: 'loop_add_fusion.2' -> 'loop_add_fusion_2'."""
    return re.sub(r"[.\-]", "_", instruction)


def parse(text: str) -> list[list[HloOp]]:
    """The computations of an optimized HLO module's text that run on their own (not fused into
    another, not a reducer's `to_apply`), each as its instructions that may launch kernels, in the
    text's order (the schedule's, in a scheduled module). Parameters, constants, tuples, bitcasts
    and control flow, which launch nothing themselves, are left out. Raises UsageError for a text
    that holds no HLO module."""
    module = re.search(r"^HloModule\s+([\w.\-]+)", text, re.M)
    if module is None:
        raise UsageError("not an HLO module's text (no 'HloModule' line)")
    computations: dict[str, list[tuple[str, str, bool]]] = {}  # name -> [(instruction, rest, root)]
    order: list[str] = []
    inner: set[str] = set()
    current: str | None = None
    for line in text.splitlines():
        if current is None:
            c = _COMPUTATION.match(line)
            if c and not line.lstrip().startswith("HloModule"):
                current = c["name"]
                computations[current] = []
                order.append(current)
            continue
        if line.lstrip().startswith("}"):  # '}', '}, execution_thread="host"', '} // name'
            if 'execution_thread="host"' in line:
                inner.add(current)  # runs on the host's CPU: no kernel of it
            current = None
            continue
        m = _INSTRUCTION.match(line)
        if m is None:
            continue
        rest = m["rest"]
        computations[current].append((m["name"], rest, bool(m["root"])))
        opcode = _opcode(rest)
        if opcode == "fusion" and (called := _CALLS.search(rest)):
            inner.add(called["v"])
        if opcode not in _CALLERS:  # a reducer's or comparator's computation; a call's runs
            inner.update(a["v"] for a in _APPLIES.finditer(rest))
    # a fused computation's op_name: its root's, else the first of its instructions that has one
    named = {name: next((r for r in [next((rest for _, rest, root in instrs if root), "")]
                         + [rest for _, rest, _ in instrs] if _OP_NAME.search(r)), None)
             for name, instrs in computations.items()}
    backward_in = _holding_backward(computations)
    out: list[list[HloOp]] = []
    groups: dict[str, set[str]] = {}  # deduplicated name -> the kernels of the instructions sharing it
    for comp in order:
        if comp in inner:
            continue
        ops = []
        for name, rest, _ in computations[comp]:
            opcode = _opcode(rest)
            if opcode is None or opcode in _SILENT or opcode.endswith(("-done", "-update")):
                continue
            op_name = _OP_NAME.search(rest)
            if op_name is None and opcode == "fusion" and (called := _CALLS.search(rest)):
                inside = named.get(called["v"])  # the fused instructions' metadata, where the fusion has none
                op_name = _OP_NAME.search(inside) if inside else None
            target = _TARGET.search(rest)
            dedup = _DEDUPLICATED.search(rest)
            if dedup:
                groups.setdefault(dedup["v"], set()).add(kernel_name(name))
            called = _CALLS.search(rest) if opcode == "fusion" else None
            library = opcode != "fusion" or bool(called and any(
                _opcode(r) == "custom-call" for _, r, _ in computations.get(called["v"], [])))
            ops.append((HloOp(name, opcode, op_name["v"] if op_name else None, target["v"] if target else None,
                              module[1], comp, library=library), dedup["v"] if dedup else None))
        updates = _updates(computations[comp], named, backward_in)
        out.append([HloOp(op.name, op.opcode, op.op_name, op.target, op.module, op.computation,
                          frozenset({op.kernel, *groups.get(d, ())} if d else {op.kernel}), op.library,
                          op.name in updates)
                    for op, d in ops])
    return [c for c in out if c]


def _operands(rest: str) -> list[str]:
    """The instructions an instruction's text after '=' reads: the names in its opcode's parentheses
    ('%gte.1' of 'fusion(bf16[8] %p0, %gte.1#0)')."""
    m = _OPCODE.search(rest)
    if m is None:
        return []
    depth, start = 0, m.end() - 1
    for i in range(start, len(rest)):
        depth += {"(": 1, ")": -1}.get(rest[i], 0)
        if depth == 0:
            return _REFERENCE.findall(rest[start:i])
    return _REFERENCE.findall(rest[start:])


def _differentiated(text: str | None) -> tuple[bool, bool]:
    """(backward, under a transformation of automatic differentiation) of the op_name in an
    instruction's text (`_DIFFERENTIATING`); (False, False) where it has none."""
    m = _OP_NAME.search(text) if text else None
    if m is None:
        return False, False
    wrapped = {w for p in _split(re.sub(r"\\(.)", r"\1", m["v"])) for w in _unwrapped(p)[1]}
    return "transpose" in wrapped, bool(wrapped & _DIFFERENTIATING)


def _called(rest: str) -> set[str]:
    """The computations an instruction's text after '=' runs (`_CALLED`, `_BRANCHES`)."""
    return {*_CALLED.findall(rest), *(r for b in _BRANCHES.findall(rest) for r in _REFERENCE.findall(b))}


def _holding_backward(computations: dict[str, list[tuple[str, str, bool]]]) -> set[str]:
    """The computations that hold backward work, in an instruction of their own or in a computation
    they run (a loop body's fusion)."""
    out = {c for c, instrs in computations.items() if any(_differentiated(rest)[0] for _, rest, _ in instrs)}
    runs = {c: set().union(*(_called(rest) for _, rest, _ in instrs)) for c, instrs in computations.items()}
    while grown := {c for c, inner in runs.items() if c not in out and inner & out}:
        out |= grown
    return out


def _updates(instructions: list[tuple[str, str, bool]], named: dict[str, str | None],
             backward_in: set[str]) -> set[str]:
    """The instructions of one computation (`instructions`: name, text after '=', root; in the
    text's order, each after what it reads) that the optimizer runs: computed from a gradient
    (reading, through any chain of instructions, one of backward work, or running a computation of
    `backward_in`, `_holding_backward`: a loop over the backward pass) while their own op_name is
    under no transformation of automatic differentiation (`jit(step)/sgd/sub`, not
    `jit(step)/jvp(loss)/...`). A program that differentiates nothing has none. `named`: each
    computation's op_name source (`parse`)."""
    from_gradient: set[str] = set()
    out: set[str] = set()
    for name, rest, _ in instructions:
        text = rest if _OP_NAME.search(rest) else named.get(m["v"]) if (m := _CALLS.search(rest)) else rest
        backward, traced = _differentiated(text)
        if backward or _called(rest) & backward_in or any(o in from_gradient for o in _operands(rest)):
            from_gradient.add(name)
            if not (backward or traced):
                out.add(name)
    return out


def _opcode(rest: str) -> str | None:
    """The opcode of an instruction's text after '=': the first 'word(' past its shape."""
    m = _OPCODE.search(rest)
    return m["opcode"] if m else None


def read_dump(folder: Path) -> list[list[HloOp]]:
    """The computations (`parse`) of every optimized module XLA dumped into `folder` (the GPU
    backend's `*after_optimizations.txt`, or gzipped `.txt.gz`), module by module in the order of
    their file names (XLA numbers its modules); `folder` may also be one such file. Raises
    UsageError where the folder is missing or holds none, or a file cannot be read or is not HLO."""
    import gzip

    folder = Path(folder)
    if folder.is_file():
        files = [folder]
    elif folder.is_dir():
        # regular files only (not a pipe or a folder of that name), not empty (a dump cut short by a crash),
        # and not the modules XLA compiled for the host's CPU, which launch no GPU kernel
        files = sorted(f for f in [*folder.glob("*after_optimizations.txt"), *folder.glob("*after_optimizations.txt.gz")]
                       if f.is_file() and f.stat().st_size and "cpu_after_optimizations" not in f.name)
    else:
        raise UsageError(f"{folder}: no such folder; give the folder XLA dumped its HLO into (--xla_dump_to=DIR)")
    if not files:
        raise UsageError(f"{folder}: no optimized HLO in it (*after_optimizations.txt); dump it with "
                         "XLA_FLAGS='--xla_dump_to=DIR --xla_dump_hlo_as_text'")
    out = []
    for f in files:
        try:
            raw = f.read_bytes()
            text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode(errors="replace").lstrip("\ufeff")
        except (OSError, EOFError) as exc:
            raise UsageError(f"{f}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
        try:
            out += parse(text)
        except UsageError as exc:
            raise UsageError(f"{f}: {exc}") from None
    return out


def xla_named(kernel: str) -> bool:
    """Whether a kernel's name is one XLA gives its own kernels (after a fusion or an instruction:
    'loop_add_fusion_2', 'gemm_fusion_dot_3', 'triton_softmax_1', 'wrapped_subtract'), not a
    library's ('nvjet_...', 'ncclDevKernel_...')."""
    return bool(re.fullmatch(r"(?:[a-z0-9]+_)*fusion(?:_\w+)?|(?:triton|wrapped)_\w+", kernel))


def _split(path: str) -> list[str]:
    """`op_name` split at each '/' outside brackets and parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(path):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch == "/" and depth == 0:
            parts.append(path[start:i])
            start = i + 1
    parts.append(path[start:])
    return [p for p in parts if p]


def _unwrapped(part: str) -> tuple[str, list[str]]:
    """A part taken out of the transformations around it: 'transpose(jvp(layer0))' -> ('layer0',
    ['transpose', 'jvp'])."""
    wrappers = []
    while m := _TRANSFORM.match(part):
        wrappers.append(m["fn"])
        part = m["inner"]
    return part, wrappers


def owner(op_name: str | None, fallback: str = "", update: bool = False) -> Owner | None:
    """Who launched an instruction's kernels, from its `op_name` (module docstring): the op, forward
    or backward (or the optimizer's, for an instruction that is an `update`: `HloOp.update`), the
    module and the primitive as the launcher. `fallback` names the op where the name stack is empty.
    None where there is no op_name."""
    if not op_name:
        return None
    parts = _split(re.sub(r"\\(.)", r"\1", op_name))  # the printer's escapes (\" and \\) undone
    scopes: list[str] = []
    frame: str | None = None
    backward = False
    for i, raw in enumerate(parts[:-1]):
        part, wrappers = _unwrapped(raw)
        backward = backward or "transpose" in wrappers
        if not part:  # 'transpose(jvp())': a transformation around no scope
            continue
        compact = part.replace(" ", "")
        f = _FRAME.match(part) or (_EINSUM.match(compact) if "->" in compact or "," in compact else None)
        if f:
            fn = f["fn"] if "fn" in f.groupdict() else f"einsum {compact}"
            if (i == 0 or fn == "main") or frame is not None:
                continue
            frame = fn  # the outermost jitted function inside the scopes is the op
        elif frame is None and part not in _STRUCTURE and not _BRANCH.match(part):
            if not (wrappers and scopes and scopes[-1] == part):  # remat's re-linearised copy of the scope
                scopes.append(part)
    last, wrappers = _unwrapped(parts[-1]) if parts else ("", [])
    backward = backward or "transpose" in wrappers
    primitive = re.sub(r"\[.*$", "", last, flags=re.S) or fallback or "?"
    return Owner(op=frame or primitive, phase="backward" if backward else "optimizer" if update else "forward",
                 launcher=primitive, module=".".join(scopes) or None)


def line_up(names: list[str], computations: list[list[HloOp]]) -> list[HloOp | None]:
    """The instruction that launched each of `names` (kernel names in launch order), or None,
    lining the launches up with `computations`' schedules (module docstring)."""
    where: dict[str, list[tuple[int, int]]] = {}  # kernel name -> [(computation, index)]
    for c, ops in enumerate(computations):
        for i, op in enumerate(ops):
            for k in op.kernels:
                where.setdefault(k, []).append((c, i))
    seen = set(names)
    # where launches under other names go: the instructions of library kernels that no launch names
    library = [[op.library and not (op.kernels & seen) for op in ops] for ops in computations]
    cursor = [0] * len(computations)
    current: int | None = None
    out: list[HloOp | None] = [None] * len(names)
    waiting: list[int] = []  # launches of other names since the last placed one

    def slots(c: int | None, start: int, stop: int) -> list[tuple[int, int]]:
        return [(c, i) for i in range(start, stop) if library[c][i]] if c is not None else []

    def place_waiting(found: list[tuple[int, int]]) -> None:
        for n, j in enumerate(waiting):
            if found:
                c, i = found[min(n, len(found) - 1)]
                out[j] = computations[c][i]
        waiting.clear()

    for j, name in enumerate(names):
        places = where.get(name)
        if not places:
            waiting.append(j)
            continue
        ahead = [(c, i) for c, i in places if i >= cursor[c]]
        here = [(c, i) for c, i in ahead if c == current]
        resumed = [(c, i) for c, i in ahead if cursor[c] > 0]
        if here:
            c, i = min(here, key=lambda p: p[1])
        elif resumed:
            c, i = min(resumed, key=lambda p: p[1] - cursor[p[0]])
        else:
            c, i = min(places, key=lambda p: (p[1], p[0]))  # a computation starting (again)
        if waiting:  # between two launches of one run of a computation, else at the end of the one left
            if current is None:
                place_waiting(slots(c, 0, i))
            elif c == current and i >= cursor[c]:
                place_waiting(slots(c, cursor[c], i))
            else:  # the end of the one left, else (a called computation returned) before i in the new one
                place_waiting(slots(current, cursor[current], len(computations[current]))
                              or slots(c, cursor[c] if i >= cursor[c] else 0, i))
        out[j] = computations[c][i]
        cursor[c], current = i + 1, c
    if waiting and current is not None:
        place_waiting(slots(current, cursor[current], len(computations[current])))
    return out


def owners(names: list[str], computations: list[list[HloOp]]) -> tuple[list[Owner | None], list[str]]:
    """Each launch's owner (`owner` of the instruction `line_up` places it at; None where none is
    found or it has no op_name), and notes on what could not be placed."""
    placed = line_up(names, computations)
    found = [owner(op.op_name, op.opcode, op.update) if op is not None else None for op in placed]
    notes = []
    lost = sorted({n for n, op in zip(names, placed) if op is None})
    if lost:
        notes.append(f"{len([p for p in placed if p is None]):,} launches match no instruction of the dumped HLO "
                     f"(e.g. {', '.join(lost[:3])}): launched outside the dumped modules, or by another program")
    bare = sorted({op.name for op, o in zip(placed, found) if op is not None and o is None})
    if bare:
        notes.append(f"{len(bare)} HLO instructions carry no op_name metadata (e.g. {', '.join(bare[:3])}): "
                     "their kernels have no op")
    return found, notes


SOURCE = "XLA's optimized HLO (each instruction's op_name metadata)"


# Of the launches XLA named after its own instructions, the share a dump may lack before it is taken
# for another program's (XLA names each such kernel after an instruction of the module it compiled).
FOREIGN_SHARE = 0.05


def attribute(launches: list, folder: Path, strict: bool = False) -> tuple[str, list[Owner | None], list[str]] | None:
    """Each of `launches` (`nsight.launches.Launch`, any order) owned as the instruction of the HLO
    XLA dumped into `folder` it lines up with, each process's launches in their launch order
    (`owners`): (source, one owner or None per launch in `launches`' order, notes), the form
    `results.convert.from_profile` takes; None where no launch is owned. Raises UsageError where
    the folder holds no optimized HLO (`read_dump`), and with `strict` where more than
    FOREIGN_SHARE of the launches XLA named after its instructions have no instruction of that
    name in the dump (the dump of another program)."""
    computations = read_dump(folder)
    known = {k for ops in computations for op in ops for k in op.kernels}
    own = [x.demangled for x in launches if xla_named(x.demangled)]
    missing = sorted({n for n in own if n not in known})
    share = sum(n in missing for n in own) / len(own) if own else 0.0
    if strict and share > FOREIGN_SHARE:
        raise UsageError(f"{folder}: {share:.0%} of the launches XLA named after its own instructions have no "
                         f"instruction of that name in this HLO ({', '.join(missing[:3])}"
                         f"{', ...' if len(missing) > 3 else ''}): is it the dump of the program the report profiled?")
    found: list[Owner | None] = [None] * len(launches)
    notes: list[str] = []
    processes: dict[int | None, list[int]] = {}
    for i, x in enumerate(launches):
        processes.setdefault(x.process_id, []).append(i)
    for idx in processes.values():
        idx.sort(key=lambda i: (launches[i].order if launches[i].order is not None else i, i))
        got, said = owners([launches[i].demangled for i in idx], computations)
        for i, o in zip(idx, got):
            found[i] = o
        notes += [n for n in said if n not in notes]
    # where ncu recorded XLA's own NVTX range around a launch (its thunk, 'hlo_op=NAME'), that
    # instruction owns it, whatever the line-up said
    by_name = {(op.module, op.name): op for ops in computations for op in ops}
    ranged = 0
    for i, x in enumerate(launches):
        thunk = thunk_of(x.nvtx)
        op = by_name.get(thunk) if thunk else None
        if op is not None:
            found[i], ranged = owner(op.op_name, op.opcode, op.update), ranged + 1
    if ranged:
        notes.append(f"{plural(ranged, 'launch', 'launches')} placed by the NVTX range XLA opened around each (its thunk's "
                     "instruction)")
    if not any(o is not None for o in found):
        return None
    return SOURCE, found, notes


_THUNK_OP = re.compile(r"\bThunk:#[^#]*\bhlo_op=(?P<op>[^,#\s\"]+)")
_XLA_MODULE = re.compile(r"\bXlaModule:#[^#]*\bhlo_module=(?P<module>[^,#\s\"]+)")


def thunk_of(nvtx: tuple[str, ...] | None) -> tuple[str, str] | None:
    """The (module, instruction) of the XLA thunk whose NVTX range was open around a launch, as
    XLA names them in its ranges ('TSL:XlaModule:#hlo_module=jit_step,program_id=9950#' and
    'TSL:Thunk:#name=...,hlo_op=gemm_fusion_dot.3,...#', which ncu records with --nvtx); None
    where the launch has no such ranges."""
    if not nvtx:
        return None
    text = " ".join(nvtx)
    op, module = _THUNK_OP.search(text), _XLA_MODULE.search(text)
    return (module["module"], op["op"]) if op and module else None
