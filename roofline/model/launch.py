"""A user kernel's launch, described in text: the grid as an expression in M, N and K, the block
shape, and the block and thread tiles that give its traffic model.

Grid expressions are parsed (Python's `ast`, in "eval" mode) and walked against a whitelist:
integers, the names M, N and K, `cdiv(a, b)` (ceiling division), `+ - * //` and parentheses,
one to three comma-separated dimensions ("cdiv(N,128), cdiv(M,128)"). Nothing is ever passed to
`eval`; any other construct (attributes, other calls or names, `**`, strings, lambdas) is refused
with one line. Limits on the launch come from the CUDA programming guide's table of technical
specifications (grid x up to 2**31 - 1, y and z up to 65,535; a block of up to 1,024 threads
with z up to 64).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..errors import UsageError
from .problem import Problem
from .units import cdiv

MAX_EXPRESSION_CHARS = 200
MAX_GRID = (2**31 - 1, 65_535, 65_535)
MAX_BLOCK = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024
_NAMES = ("M", "N", "K")
_OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
              ast.FloorDiv: lambda a, b: a // b}
_OPERATOR_TEXT = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//"}
_ALLOWED = "integers, M, N, K, cdiv(a, b), + - * // and parentheses"


def _refuse(text: str, why: str) -> UsageError:
    return UsageError(f"grid {text!r}: {why}; a grid is 1 to 3 comma-separated expressions of {_ALLOWED}")


@dataclass(frozen=True)
class GridExpression:
    """A parsed grid: `text` as given, checked once; `evaluate` gives (x, y, z) for a problem."""

    text: str

    @classmethod
    def parse(cls, text: str) -> "GridExpression":
        """Check `text` ('cdiv(N,128), cdiv(M,128)'). Raises UsageError (one line) for anything
        outside the whitelist, more than three dimensions, or over MAX_EXPRESSION_CHARS."""
        grid = cls(text)
        grid._dimensions()
        return grid

    def _dimensions(self) -> list[ast.expr]:
        text = self.text
        if not isinstance(text, str) or not text.strip():
            raise _refuse(str(text), "empty")
        if len(text) > MAX_EXPRESSION_CHARS:
            raise _refuse(text[:40] + "...", f"longer than {MAX_EXPRESSION_CHARS} characters")
        try:
            tree = ast.parse(text.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise _refuse(text, "not an expression") from None
        dims = list(tree.elts) if isinstance(tree, ast.Tuple) else [tree]
        if not 1 <= len(dims) <= 3:
            raise _refuse(text, f"{len(dims)} dimensions")
        for d in dims:
            _check(d, text)
        return dims

    def evaluate(self, problem: Problem) -> tuple[int, int, int]:
        """(x, y, z) blocks for `problem` (missing dimensions are 1). Raises UsageError when a
        dimension divides by zero, is below 1 or above the CUDA limit (x 2**31 - 1, y and z 65,535)."""
        env = {"M": problem.m, "N": problem.n, "K": problem.k}
        values = []
        for d in self._dimensions():
            try:
                values.append(_value(d, env))
            except ZeroDivisionError:
                raise UsageError(f"grid {self.text!r} divides by zero at {problem.text()}") from None
        values += [1] * (3 - len(values))
        for axis, v, most in zip("xyz", values, MAX_GRID):
            if not 1 <= v <= most:
                raise UsageError(f"grid {self.text!r} gives {axis} = {v:,} blocks at {problem.text()}; "
                                 f"CUDA allows 1 to {most:,}")
        return tuple(values)


def _check(node: ast.expr, text: str) -> None:
    if isinstance(node, ast.Constant):
        if type(node.value) is not int:
            raise _refuse(text, f"{node.value!r} is not an integer")
    elif isinstance(node, ast.Name):
        if node.id not in _NAMES:
            raise _refuse(text, f"unknown name {node.id!r}")
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _OPERATORS:
            raise _refuse(text, f"operator {type(node.op).__name__} is not allowed")
        _check(node.left, text)
        _check(node.right, text)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        _check(node.operand, text)
    elif isinstance(node, ast.Call):
        if not (isinstance(node.func, ast.Name) and node.func.id == "cdiv") or node.keywords:
            raise _refuse(text, "the only function is cdiv(a, b)")
        if len(node.args) != 2:
            raise _refuse(text, f"cdiv takes 2 arguments, got {len(node.args)}")
        for arg in node.args:
            _check(arg, text)
    else:
        raise _refuse(text, f"{type(node).__name__.lower()} is not allowed")


def _value(node: ast.expr, env: dict[str, int]) -> int:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        v = _value(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Call):
        a, b = (_value(arg, env) for arg in node.args)
        if b == 0:
            raise ZeroDivisionError
        return cdiv(a, b)
    return _OPERATORS[type(node.op)](_value(node.left, env), _value(node.right, env))


def parse_block(text: str) -> tuple[int, int, int]:
    """Threads per block as '256', '16,16' or '8,8,4' -> (x, y, z). Raises UsageError unless each
    dimension is a positive integer within CUDA's limits (x, y 1024, z 64; 1,024 threads in all)."""
    parts = [p.strip() for p in str(text).split(",")]
    if not 1 <= len(parts) <= 3 or not all(p.isascii() and p.isdigit() for p in parts):
        raise UsageError(f"block {text!r}: give the threads per block as T, or X,Y or X,Y,Z (positive integers)")
    dims = [int(p) for p in parts] + [1] * (3 - len(parts))
    for axis, v, most in zip("xyz", dims, MAX_BLOCK):
        if not 1 <= v <= most:
            raise UsageError(f"block {text!r}: {axis} = {v} threads; CUDA allows 1 to {most}")
    if dims[0] * dims[1] * dims[2] > MAX_THREADS_PER_BLOCK:
        raise UsageError(f"block {text!r}: {dims[0] * dims[1] * dims[2]:,} threads; a block holds at most "
                         f"{MAX_THREADS_PER_BLOCK}")
    return tuple(dims)


_SIZES = re.compile(r"\s*(\d+)\s*(?:[xX,]\s*(\d+)\s*)?(?:[xX,]\s*(\d+)\s*)?", re.ASCII)


def parse_sizes(text: str, count: int, what: str, example: str) -> tuple[int, ...]:
    """'128x128x8' (or '128,128,8') -> (128, 128, 8) for `count` = 3 ('8x8' for 2). Raises UsageError, naming
    `what` and `example`, unless exactly `count` positive integers are given."""
    match = _SIZES.fullmatch(str(text))
    values = [int(g) for g in match.groups() if g is not None] if match else []
    if len(values) != count or min(values) < 1:
        raise UsageError(f"{what} {text!r}: expected {count} positive integers like {example}")
    return tuple(values)
