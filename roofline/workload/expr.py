"""Arithmetic over a workload's named sizes: `4*R*C`, `cdiv(R, 256)`, `2*B*H*S*S*D // 2`.

The text is parsed with Python's `ast` ("eval" mode) and walked against a whitelist: integer and
decimal constants, names (each must be one of the workload's sizes), `+ - * / // % **` with
parentheses and unary minus, and the calls `cdiv(a, b)` (ceiling division), `min(...)`,
`max(...)`, `log2(x)` and `ceil(x)`. Nothing is passed to `eval`; anything else (attributes,
subscripts, other names or calls, strings, comparisons) is refused with one line naming the
expression. A power's exponent is at most 64, so no expression runs away.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

from ..errors import UsageError
from ..model.units import cdiv

MAX_CHARS = 300
MAX_EXPONENT = 64
ALLOWED = "numbers, the sizes' names, + - * / // % ** and parentheses, cdiv(a, b), min, max, log2, ceil"
_BINARY = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
           ast.Pow: lambda a, b: a ** b}
_CALLS = {"cdiv": (2, 2), "min": (1, 16), "max": (1, 16), "log2": (1, 1), "ceil": (1, 1)}


def _refuse(what: str, text: str, why: str) -> UsageError:
    return UsageError(f"{what} {text!r}: {why}; an expression holds {ALLOWED}")


@dataclass(frozen=True)
class SizeExpression:
    """A parsed expression over named sizes. `what` names it in messages ('grid', 'flops fp32')."""

    text: str
    what: str = "expression"

    @classmethod
    def parse(cls, text: str, names: tuple[str, ...] | None = None, what: str = "expression") -> "SizeExpression":
        """Check `text` against the whitelist and, when `names` is given, that every name in it is
        one of them. Raises UsageError (one line) otherwise."""
        expr = cls(str(text).strip(), what)
        for name in expr.names():
            if names is not None and name not in names:
                known = ", ".join(names) if names else "none declared"
                raise _refuse(what, expr.text, f"unknown size {name!r} (the sizes: {known})")
        return expr

    def _tree(self) -> ast.expr:
        if not self.text:
            raise _refuse(self.what, self.text, "empty")
        if len(self.text) > MAX_CHARS:
            raise _refuse(self.what, self.text[:40] + "...", f"longer than {MAX_CHARS} characters")
        try:
            tree = ast.parse(self.text, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise _refuse(self.what, self.text, "not an expression") from None
        _check(tree, self)
        return tree

    def names(self) -> list[str]:
        """The size names the expression uses, in order of first use."""
        return list(dict.fromkeys(n.id for n in ast.walk(self._tree()) if isinstance(n, ast.Name)
                                  and n.id not in _CALLS))

    def value(self, sizes: dict[str, int]) -> float:
        """The expression at `sizes` (name -> value). Raises UsageError for a size it names that
        `sizes` lacks, a division by zero, or a result that is not a finite number."""
        try:
            out = _value(self._tree(), sizes, self)
        except ZeroDivisionError:
            raise UsageError(f"{self.what} {self.text!r} divides by zero at {_shown(sizes)}") from None
        except OverflowError:
            raise UsageError(f"{self.what} {self.text!r} overflows at {_shown(sizes)}") from None
        if isinstance(out, complex) or not math.isfinite(out):
            raise UsageError(f"{self.what} {self.text!r} is not a finite number at {_shown(sizes)}")
        return out

    def integer(self, sizes: dict[str, int]) -> int:
        """The expression's value at `sizes` as an integer. Raises UsageError when it is not one."""
        v = self.value(sizes)
        if v != int(v):
            raise UsageError(f"{self.what} {self.text!r} is {v:g} at {_shown(sizes)}, not a whole number")
        return int(v)


def _shown(sizes: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items()) or "no sizes"


def _check(node: ast.expr, expr: SizeExpression) -> None:
    if isinstance(node, ast.Constant):
        if type(node.value) not in (int, float):
            raise _refuse(expr.what, expr.text, f"{node.value!r} is not a number")
    elif isinstance(node, ast.Name):
        if node.id in _CALLS:
            raise _refuse(expr.what, expr.text, f"{node.id} is a function; call it")
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise _refuse(expr.what, expr.text, f"operator {type(node.op).__name__} is not allowed")
        if isinstance(node.op, ast.Pow) and not (isinstance(node.right, ast.Constant)
                                                 and isinstance(node.right.value, (int, float))
                                                 and abs(node.right.value) <= MAX_EXPONENT):
            raise _refuse(expr.what, expr.text, f"a power's exponent must be a number of at most {MAX_EXPONENT}")
        _check(node.left, expr)
        _check(node.right, expr)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        _check(node.operand, expr)
    elif isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in _CALLS or node.keywords:
            raise _refuse(expr.what, expr.text, "the only functions are " + ", ".join(_CALLS))
        low, high = _CALLS[name]
        if not low <= len(node.args) <= high:
            raise _refuse(expr.what, expr.text, f"{name} takes {low if low == high else f'{low} to {high}'} "
                                                f"argument{'s' if high > 1 else ''}, got {len(node.args)}")
        for arg in node.args:
            _check(arg, expr)
    else:
        raise _refuse(expr.what, expr.text, f"{type(node).__name__.lower()} is not allowed")


def _value(node: ast.expr, sizes: dict[str, int], expr: SizeExpression) -> float:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in sizes:
            raise UsageError(f"{expr.what} {expr.text!r}: size {node.id!r} has no value (the sizes: {_shown(sizes)})")
        return sizes[node.id]
    if isinstance(node, ast.UnaryOp):
        v = _value(node.operand, sizes, expr)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Call):
        args = [_value(a, sizes, expr) for a in node.args]
        name = node.func.id
        if name == "cdiv":
            if args[1] == 0:
                raise ZeroDivisionError
            return cdiv(int(args[0]), int(args[1]))
        if name == "log2":
            if args[0] <= 0:
                raise UsageError(f"{expr.what} {expr.text!r}: log2 of {args[0]:g}")
            return math.log2(args[0])
        if name == "ceil":
            return math.ceil(args[0])
        return (min if name == "min" else max)(args)
    return _BINARY[type(node.op)](_value(node.left, sizes, expr), _value(node.right, sizes, expr))
