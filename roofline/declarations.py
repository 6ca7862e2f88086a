"""The `// roofline KEY: VALUE` lines of a `.cu` file, read once for every reader.

A kernel file declares what roofline needs to know about it in comment lines

    // roofline entry: my_sgemm<64,64,8,8,8>
    // roofline grid: cdiv(N,64), cdiv(M,64)

anywhere in the file (by custom at its top). `scan` reads a text's lines once, in order, into
`Declaration`s (key, value, line number); the readers interpret the keys they know:
`ladder.user` a GEMM in the ladder's calling convention (entry, block, grid, tile, ...),
`workload.spec` a kernel of any signature (arg, sizes, reference, work, ...). `kind` says which
of the two a text declares, from the same scan: a workload declares its parameters in
`// roofline arg:` lines, a GEMM does not.

One rule for comments after a value: a `//` in a value is floor division where it reads as
one, that is where the value before it ends with an operand (a name, a number, `)` or `]`) and
the text after it, up to the next `//` or the line's end, reads as the rest of an arithmetic
expression (operands joined by operators, parentheses, brackets and commas: never two words side
by side); the first `//` that does not read so starts a comment, which is no part of the value.
So `cdiv(N,128)//2` and `R // 16384` are values whole, and `256   // threads per block` is 256.
A comment of one word reads as a divisor: write more than one word, or none.

A line that names a key in another case, or without the colon, is kept as a `Declaration` with
its `problem` set ('case' or 'colon'): each reader refuses those that name its keys (`refuse`).

Imports nothing of roofline but its errors: any layer may read declarations.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .errors import UsageError

GEMM, WORKLOAD = "gemm", "workload"
_LINE = re.compile(r"//\s*roofline\s+([A-Za-z][\w-]*)\s*:\s*(.*?)\s*")
_NO_COLON = re.compile(r"//\s*roofline\s+([A-Za-z][\w-]*)(?![\w-])(?!\s*:).*", re.IGNORECASE)
_OTHER_CASE = re.compile(r"//\s*roofline\s+([A-Za-z][\w-]*)\s*:.*", re.IGNORECASE)
_TOKEN = re.compile(r"\s*(?:(?P<operand>[A-Za-z_][\w.]*|\.?\d[\w.]*(?:[eE][-+]?\d+)?)|(?P<open>[(\[])|"
                    r"(?P<close>[)\]])|(?P<op>\*\*|//|[-+*/%<>=!&|^~,:]))")


class Declaration(NamedTuple):
    """One `// roofline KEY: VALUE` line: its key, its value (comment and spaces around it
    removed), its line number (from 1). `problem` is 'case' or 'colon' for a line that names
    `key` in another case or without the colon (its value then ''), None for a well-formed one."""

    key: str
    value: str
    line: int
    problem: str | None = None


def scan(text: str) -> list[Declaration]:
    """Every `// roofline` line of `text` (a byte-order mark before it aside), in order."""
    out = []
    for number, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        stripped = line.strip()
        if not stripped.startswith("//"):
            continue
        match = _LINE.fullmatch(stripped)
        if match is not None:
            out.append(Declaration(match.group(1), without_comment(match.group(2)), number))
        elif (bad := _NO_COLON.fullmatch(stripped)) is not None:
            out.append(Declaration(bad.group(1), "", number, "colon"))
        elif (bad := _OTHER_CASE.fullmatch(stripped)) is not None:
            out.append(Declaration(bad.group(1), "", number, "case"))
    return out


def refuse(d: Declaration, where: str, keys: tuple[str, ...]) -> None:
    """Raise UsageError, naming `where` and the line, for a malformed line (`Declaration.problem`)
    that names one of `keys` (in any case); a malformed line naming no key of the reader's is
    another comment, and passes."""
    if d.problem is None or d.key.lower() not in keys:
        return
    if d.problem == "colon":
        raise UsageError(f"{where}:{d.line}: expected '// roofline KEY: VALUE', with a colon after the key")
    raise UsageError(f"{where}:{d.line}: write 'roofline' and the key in lower case: '// roofline KEY: VALUE'")


def kind(declared: list[Declaration]) -> str:
    """WORKLOAD when the declarations hold an `arg` line (a kernel of any signature), else GEMM
    (the ladder's calling convention)."""
    return WORKLOAD if any(d.key == "arg" and d.problem is None for d in declared) else GEMM


def without_comment(value: str) -> str:
    """`value` up to the first `//` that is no floor division (the module's rule), stripped."""
    start = 0
    while (at := value.find("//", start)) >= 0:
        end = value.find("//", at + 2)
        tail = value[at + 2:] if end < 0 else value[at + 2:end]
        if not (_ends_with_operand(value[:at]) and _continues(tail)):
            return value[:at].strip()
        start = at + 2
    return value.strip()


def _ends_with_operand(head: str) -> bool:
    head = head.rstrip()
    return bool(head) and (head[-1].isalnum() or head[-1] in "_)]")


def _continues(tail: str) -> bool:
    """Whether `tail` reads as the rest of an expression after a binary operator: an operand
    (or an opening parenthesis, or a sign) first, no two operands side by side, nothing else."""
    pos, previous = 0, "op"
    tail = tail.rstrip()
    if not tail.strip():
        return False
    while pos < len(tail):
        m = _TOKEN.match(tail, pos)
        if m is None or m.end() == pos:
            return False
        kind_ = m.lastgroup
        if kind_ == "operand" and previous in ("operand", "close"):
            return False  # two words side by side: prose
        previous = kind_
        pos = m.end()
    return previous in ("operand", "close")
