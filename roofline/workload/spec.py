"""A workload: a kernel of any signature, or a Python callable, with what it computes declared.

Declared in a `.cu` file's `// roofline KEY: VALUE` lines, or in a TOML spec file (`--spec`) whose
keys are the same (`args` a list where the lines repeat `arg`; `sizes`, `flops` and `bytes` may
be tables). The keys:

    name        the kernel's name in tables (default: the file's stem or the function's name)
    entry       the kernel to instantiate (a .cu file: required)
    sizes       the named sizes and their defaults: R=4096, C=4096 (`--size R=8192` overrides)
    arg         one per kernel parameter, in order:
                  NAME TYPE[SHAPE] ROLE [DRAW]   a buffer: x f32[R, C] in normal
                  NAME TYPE = EXPR               a scalar: n i32 = R*C, eps f32 = 1e-5
                TYPE is an element type (`model.elements`: f32, bf16, i32, ...), SHAPE
                expressions of the sizes, ROLE `in`, `out`, `inout` (read and written) or, for a
                callable, `return` (what it returns, in order); DRAW how inputs are drawn:
                `normal` (the default), `uniform(LOW, HIGH)`, `randint(LOW, HIGH)`, `ones`, `zeros`
    block       threads per block, T or X,Y or X,Y,Z (a .cu file: required)
    grid        blocks, 1 to 3 expressions of the sizes (a .cu file: required)
    dynamic-smem  dynamic shared memory per block in bytes, an expression of the sizes
    reference   what the outputs should be: a NumPy, CuPy or PyTorch expression of the inputs
                (`torch.softmax(x, dim=-1)`; several outputs as a tuple, in the outputs' order),
                or a function in a Python file, FILE.py:FUNCTION, called with the inputs by name
    tolerance   the relative (Frobenius) error each output may have: 1e-5 (default 1e-4 for
                FP32 outputs, 1e-2 for 16-bit ones, 0 for integers)
    work        a formula (`model.formulas`): softmax(R, C), attention(B, H, S, D, causal=True)
    flops       FLOPs per precision: fp32=5*R*C, bf16_tensor=4*B*H*S*S*D (replaces the formula's)
    bytes       compulsory bytes: read=4*R*C, write=4*R*C, or one expression for both
                (replaces the formula's; without either, each input buffer read once and each
                output written once)
    seed        the inputs' random seed (default 0)
    options     (a .cu file) its compile options, as its author's build gives them:
                -DBLOCK=256 --use_fast_math -I include (`build_options`; folders from the file's)
    compiler    (a .cu file) auto (the default: nvcc where a CUDA toolkit is found, else
                NVRTC), nvcc or nvrtc
    callable    (spec files) the callable graded, MODULE:FUNCTION or FILE.py:FUNCTION
"""

from __future__ import annotations

import ast
import keyword
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..build_options import CompileSettings, declared as declared_build
from ..declarations import WORKLOAD, Declaration, kind, refuse, scan
from ..errors import UsageError
from ..files import read_source
from ..model import formulas
from ..model.elements import Element, element
from ..model.launch import MAX_GRID, parse_block
from ..model.peaks import PRECISIONS
from ..model.sol import Work
from .expr import SizeExpression

KEYS = ("name", "entry", "sizes", "arg", "block", "grid", "dynamic-smem", "reference", "tolerance", "work",
        "flops", "bytes", "seed", "options", "compiler", "callable")
KERNEL_ONLY = ("entry", "block", "grid", "dynamic-smem", "options", "compiler")  # a .cu file's, not a callable's
GEMM_ONLY = ("tile", "thread-tile", "thread-x", "dtype")  # keys of run FILE.cu's GEMM declaration (ladder.user.KEYS) alone
ROLES = ("in", "out", "inout", "return")
MAX_SIZE = 2**40
_NAME = re.compile(r"[A-Za-z_]\w{0,63}")
_BUFFER = re.compile(r"([A-Za-z_]\w*)\s+([A-Za-z]\w*)\s*\[(.*)\]\s*([a-z]+)\s*(.*)")
_SCALAR = re.compile(r"([A-Za-z_]\w*)\s+([A-Za-z]\w*)\s*=\s*(.+)")
_DRAW = re.compile(r"(normal|ones|zeros)|(uniform|randint)\(\s*([-+0-9.eE]+)\s*,\s*([-+0-9.eE]+)\s*\)")


def is_workload(text: str) -> bool:
    """Whether a .cu file's lines declare a workload (any `// roofline arg:` line) rather than a
    GEMM of the ladder's calling convention (`declarations.kind`)."""
    return kind(scan(text)) == WORKLOAD


@dataclass(frozen=True)
class Draw:
    """How an input is drawn: `kind` 'normal' (mean 0, deviation 1), 'uniform' [low, high),
    'randint' [low, high), 'ones' or 'zeros'."""

    kind: str = "normal"
    low: float = 0.0
    high: float = 1.0

    def text(self) -> str:
        """As a spec writes it."""
        return f"{self.kind}({self.low:g}, {self.high:g})" if self.kind in ("uniform", "randint") else self.kind


@dataclass(frozen=True)
class Arg:
    """One argument: a buffer (`shape` expressions, `role` in ROLES, `draw`) or a scalar (`value`)."""

    name: str
    element: Element
    role: str = "scalar"
    shape: tuple[SizeExpression, ...] = ()
    value: SizeExpression | None = None
    draw: Draw = Draw()

    @property
    def buffer(self) -> bool:
        """Whether it is a buffer (else a scalar)."""
        return self.role != "scalar"

    @property
    def reads(self) -> bool:
        """Whether the kernel reads it: an input (in, inout)."""
        return self.role in ("in", "inout")

    @property
    def writes(self) -> bool:
        """Whether it is an output (out, inout, return)."""
        return self.role in ("out", "inout", "return")

    def dims(self, sizes: dict[str, int]) -> tuple[int, ...]:
        """The buffer's shape at `sizes`. Raises UsageError for a dimension below 1 or too large."""
        dims = tuple(e.integer(sizes) for e in self.shape)
        for d in dims:
            if not 1 <= d <= MAX_SIZE:
                raise UsageError(f"arg {self.name}: a dimension of {d:,} at {_shown(sizes)}; give 1 or more")
        return dims

    def nbytes(self, sizes: dict[str, int]) -> int:
        """The buffer's bytes at `sizes`."""
        n = 1
        for d in self.dims(sizes):
            n *= d
        return n * self.element.nbytes

    def text(self) -> str:
        """As a spec writes it."""
        if not self.buffer:
            return f"{self.name} {self.element.name} = {self.value.text}"
        drawn = f" {self.draw.text()}" if self.reads else ""
        return f"{self.name} {self.element.name}[{', '.join(e.text for e in self.shape)}] {self.role}{drawn}"


@dataclass(frozen=True)
class Workload:
    """A parsed spec (see the module). `where` names its source in messages; `path` is the .cu file
    (None for a callable), `target` the callable's MODULE:FUNCTION (None for a kernel)."""

    name: str
    where: str
    sizes: dict[str, int]
    args: tuple[Arg, ...]
    reference: str
    tolerance: float | None = None
    work_formula: str | None = None
    flops: dict[str, SizeExpression] = field(default_factory=dict)
    bytes_read: SizeExpression | None = None
    bytes_written: SizeExpression | None = None
    seed: int = 0
    path: Path | None = None
    entry: str | None = None
    block: tuple[int, int, int] | None = None
    grid: tuple[SizeExpression, ...] = ()
    dynamic_smem: SizeExpression | None = None
    target: str | None = None
    base: Path | None = None  # the folder a spec's relative files (a callable's, a reference's) are found from
    spec_file: Path | None = None  # the spec file read, where one was
    build: CompileSettings = CompileSettings()  # a kernel's compiler and options (`build_options`)

    @property
    def inputs(self) -> list[Arg]:
        """The buffers read (in, inout), in order."""
        return [a for a in self.args if a.buffer and a.reads]

    @property
    def outputs(self) -> list[Arg]:
        """The buffers written (out, inout, return), in order: what the reference gives."""
        return [a for a in self.args if a.writes]

    def resized(self, overrides: dict[str, int]) -> "Workload":
        """This workload at other sizes. Raises UsageError for a size it does not declare."""
        for k in overrides:
            if k not in self.sizes:
                raise UsageError(f"{self.where}: no size {k!r} to set (its sizes: {_shown(self.sizes) or 'none'})",
                                 "size")
        out = _replace(self, sizes={**self.sizes, **overrides})
        check_scalars(out)
        return out

    def workload_text(self) -> str:
        """What is computed, at which sizes: the formula (or name) and the sizes."""
        return f"{self.work_formula or self.name} at {_shown(self.sizes)}"

    def work(self) -> Work:
        """The work at this workload's sizes: the formula's, with declared flops and bytes in its
        place where given; without either, the buffers' bytes. Raises UsageError for a formula
        call that does not fit its function, or figures that are not finite or are negative."""
        base = _formula(self.work_formula, self.sizes, self.where) if self.work_formula else None
        flops = dict(base.flops) if base else {}
        if self.flops:
            flops = {k: e.value(self.sizes) for k, e in self.flops.items()}
        if self.bytes_read is not None:
            read = self.bytes_read.value(self.sizes)
            written = self.bytes_written.value(self.sizes) if self.bytes_written is not None else 0.0
        elif base is not None:
            read, written = base.bytes_read, base.bytes_written
        else:
            read = float(sum(a.nbytes(self.sizes) for a in self.args if a.buffer and a.reads))
            written = float(sum(a.nbytes(self.sizes) for a in self.args if a.writes))
        declared = self.flops or self.bytes_read is not None
        source = (base.source + (" with declared figures" if declared else "")) if base else (
            "declared" if declared else "the buffers' bytes (no work declared)")
        try:
            return Work(flops, read, written, source).check()
        except ValueError as exc:
            raise UsageError(f"{self.where}: work {exc}") from None

    def launch(self) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
        """(grid, block, dynamic shared memory bytes) at these sizes. Raises UsageError for a
        grid outside CUDA's limits."""
        values = [e.integer(self.sizes) for e in self.grid] + [1] * (3 - len(self.grid))
        for axis, v, most in zip("xyz", values, MAX_GRID):
            if not 1 <= v <= most:
                raise UsageError(f"{self.where}: grid gives {axis} = {v:,} blocks at {_shown(self.sizes)}; "
                                 f"CUDA allows 1 to {most:,}")
        smem = self.dynamic_smem.integer(self.sizes) if self.dynamic_smem is not None else 0
        if smem < 0:
            raise UsageError(f"{self.where}: dynamic-smem is {smem} bytes at {_shown(self.sizes)}")
        return tuple(values), self.block, smem


def _replace(w: Workload, **changes) -> Workload:
    from dataclasses import replace
    return replace(w, **changes)


def _shown(sizes: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def read_lines(text: str, where: str, declared: list[Declaration] | None = None) -> dict[str, object]:
    """The `// roofline KEY: VALUE` lines of a .cu file (`declarations.scan` of `text`, or
    `declared` where the caller scanned it already) as {key: value} (`arg` as a list, in order).
    Raises UsageError naming the line for an unknown or repeated key, an empty value, or a line
    that names a key in another case or without the colon."""
    found: dict[str, object] = {}
    for d in scan(text) if declared is None else declared:
        if d.problem is not None:
            refuse(d, where, KEYS + GEMM_ONLY)
            continue
        key, value, number = d.key, d.value, d.line  # a `//` that reads as floor division is kept
        if key in GEMM_ONLY:  # a kernel in the SGEMM calling convention, declared for `roofline run FILE.cu`
            raise UsageError(f"{where}:{number}: {key!r} declares a GEMM for `roofline run FILE.cu` (the ladder's "
                             "calling convention); a graded kernel declares: "
                             f"{', '.join(k for k in KEYS if k != 'callable')}")
        if key not in KEYS or key == "callable":
            raise UsageError(f"{where}:{number}: unknown key {key!r}; a workload's keys: "
                             f"{', '.join(k for k in KEYS if k != 'callable')}")
        if not value:
            raise UsageError(f"{where}:{number}: key {key!r} has no value")
        if key == "arg":
            found.setdefault("arg", []).append((value, f"{where}:{number}"))
        elif key in found:
            raise UsageError(f"{where}:{number}: key {key!r} given twice")
        else:
            found[key] = value
    return found


def read_spec_file(path: Path) -> dict[str, object]:
    """A TOML spec file's keys (`args` read as the repeated `arg`). Raises UsageError for a file
    that is missing, not TOML, or holds an unknown key."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such spec file", "spec") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})", "spec") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not a TOML spec ({exc})", "spec") from None
    out: dict[str, object] = {}
    for key, value in data.items():
        key = "arg" if key == "args" else key.replace("_", "-")
        if key not in KEYS:
            raise UsageError(f"{path}: unknown key {key!r}; a spec's keys: {', '.join(KEYS).replace('arg,', 'args,')}",
                             "spec")
        if key == "arg":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise UsageError(f"{path}: args must be a list of strings like \"x f32[N] in\"", "spec")
            out["arg"] = [(v, f"args[{i}]") for i, v in enumerate(value)]  # prefixed by the parse's where
        elif key == "options" and isinstance(value, list):  # one option a string: ["-DN=64", "-I", "include"]
            if not all(isinstance(v, str) for v in value):
                raise UsageError(f"{path}: options must be a string or a list of strings", "spec")
            import shlex
            out["options"] = shlex.join(value)
        elif isinstance(value, dict):
            out[key] = ", ".join(f"{k}={v}" for k, v in value.items())
        else:
            out[key] = str(value)
    return out


def parse(values: dict[str, object], where: str, default_name: str, kernel: bool,
          path: Path | None = None, target: str | None = None) -> Workload:
    """A Workload from a spec's keys (`read_lines` or `read_spec_file`). `kernel`: a .cu file's
    (entry, block and grid required) rather than a callable's. Raises UsageError (one line, naming
    `where` and the key) for anything missing or that does not parse."""
    try:
        return _parse(values, where, default_name, kernel, path, target)
    except UsageError as exc:
        raise exc if exc.message.startswith(where) else exc.prefixed(f"{where}: ") from None


def _parse(values: dict[str, object], where: str, default_name: str, kernel: bool,
           path: Path | None = None, target: str | None = None) -> Workload:
    def need(key: str) -> str:
        if key not in values:
            raise UsageError(f"{where}: no {key} declared; add '// roofline {key}: ...' (or {key} in the spec file)")
        return str(values[key])

    sizes = _sizes(str(values.get("sizes", "")), where)
    names = tuple(sizes)
    arg_lines = values.get("arg") or []
    if not arg_lines:
        raise UsageError(f"{where}: no arg declared; one per parameter, '// roofline arg: NAME TYPE[SHAPE] ROLE' in "
                         "the file or args = [\"NAME TYPE[SHAPE] ROLE\", ...] in a spec")
    args = tuple(_arg(text, at, names, kernel) for text, at in arg_lines)
    seen = set()
    for a in args:
        if a.name in seen:
            raise UsageError(f"{where}: arg {a.name!r} declared twice")
        if a.name in sizes:
            raise UsageError(f"{where}: arg {a.name!r} has a size's name; rename one")
        seen.add(a.name)
    if not any(a.writes for a in args):
        raise UsageError(f"{where}: no output; give an arg the role out, inout" + ("" if kernel else " or return"))
    name = str(values.get("name", default_name))
    if not re.fullmatch(r"[A-Za-z0-9_.+-]{1,64}", name):
        raise UsageError(f"{where}: name {name!r} must be 1 to 64 letters, digits, '.', '_', '+' or '-'")
    reference = need("reference").strip()
    _check_reference(reference, where, [a.name for a in args if a.buffer and a.reads], tuple(sizes))
    tolerance = None
    if "tolerance" in values:
        tolerance = _number(str(values["tolerance"]), "tolerance", where)
        if not 0 <= tolerance < 1:
            raise UsageError(f"{where}: tolerance {tolerance:g} must be 0 or more and below 1 (a relative error)")
    work = str(values["work"]).strip() if "work" in values else None
    if work is not None:
        _formula(work, sizes, where)  # checks it at the default sizes
    flops = {}
    for key, text in _pairs(str(values.get("flops", "")), "flops", where):
        if key not in PRECISIONS:
            raise UsageError(f"{where}: flops {key!r} is not a precision; valid: {', '.join(PRECISIONS)}")
        flops[key] = SizeExpression.parse(text, names, f"flops {key}")
    read = written = None
    if "bytes" in values:
        text = str(values["bytes"])
        if "=" in text:
            pairs = dict(_pairs(text, "bytes", where))
            unknown = set(pairs) - {"read", "write"}
            if unknown:
                raise UsageError(f"{where}: bytes takes read= and write=, not {', '.join(sorted(unknown))}")
            read = SizeExpression.parse(pairs.get("read", "0"), names, "bytes read")
            written = SizeExpression.parse(pairs.get("write", "0"), names, "bytes write")
        else:
            read = SizeExpression.parse(text, names, "bytes")
    seed_text = str(values.get("seed", "0")).strip()
    if not (seed_text.isascii() and seed_text.isdigit()) or int(seed_text) >= 2**32:
        raise UsageError(f"{where}: seed {seed_text!r} must be a whole number from 0 to 2**32 - 1")
    seed = int(seed_text)
    out = Workload(name=name, where=where, sizes=sizes, args=args, reference=reference, tolerance=tolerance,
                   work_formula=work, flops=flops, bytes_read=read, bytes_written=written, seed=seed, path=path,
                   target=target)
    if kernel:
        entry = need("entry").strip()
        if not re.fullmatch(r"[A-Za-z_]\w*(::[A-Za-z_]\w*)*\s*(<[^;{}]*>)?", entry):
            raise UsageError(f"{where}: entry {entry!r} is not a kernel name or template expression")
        try:
            block = parse_block(need("block"))
        except UsageError as exc:
            raise exc.prefixed(f"{where}: ") from None
        grid_text = need("grid")
        grid = tuple(SizeExpression.parse(t, names, "grid") for t in _split(grid_text))
        if not 1 <= len(grid) <= 3:
            raise UsageError(f"{where}: grid {grid_text!r} has {len(grid)} dimensions; give 1 to 3")
        smem = SizeExpression.parse(str(values["dynamic-smem"]), names, "dynamic-smem") \
            if "dynamic-smem" in values else None
        build = declared_build(values, path.parent if path is not None else Path.cwd(), where)
        out = _replace(out, entry=entry, block=block, grid=grid, dynamic_smem=smem, build=build)
        if any(a.role == "return" for a in args):
            raise UsageError(f"{where}: a kernel returns nothing; give its outputs the role out or inout")
        out.launch()
    elif any(k in values for k in KERNEL_ONLY):
        extra = next(k for k in KERNEL_ONLY if k in values)
        raise UsageError(f"{where}: {extra} is a kernel's; a callable launches its own work")
    out.work()
    for a in args:
        a.dims(sizes) if a.buffer else a.value.value(sizes)
    check_scalars(out)
    return out


INTEGER_RANGE = {"i8": (-2**7, 2**7 - 1), "u8": (0, 2**8 - 1), "i16": (-2**15, 2**15 - 1),
                 "i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1), "i64": (-2**63, 2**63 - 1)}
REFERENCE_NAMES = ("np", "numpy", "cp", "cupy", "torch", "math")
_REFERENCE_FILE = re.compile(r"(.+\.py):([A-Za-z_]\w*)")


def check_scalars(w: "Workload") -> None:
    """Every scalar's value at the workload's sizes fits its type (an integer type's range, a
    whole number for one). Raises UsageError naming the arg otherwise."""
    for a in w.args:
        if a.buffer:
            continue
        v = a.value.value(w.sizes)
        if a.element.name in INTEGER_RANGE:
            low, high = INTEGER_RANGE[a.element.name]
            if v != int(v) or not low <= v <= high:
                raise UsageError(f"{w.where}: arg {a.name} {a.element.name} = {a.value.text} is {v:g} at "
                                 f"{_shown(w.sizes)}, outside {a.element.name}'s whole numbers {low:,} to {high:,}")


def _check_reference(text: str, where: str, inputs: list[str], sizes: tuple[str, ...]) -> None:
    """A reference that is FILE.py:FUNCTION is left to `reference_file`; an expression must
    parse and name only the inputs, the sizes, the libraries (REFERENCE_NAMES) and Python's
    builtins. Raises UsageError otherwise."""
    import builtins

    if _REFERENCE_FILE.fullmatch(text):
        return
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise UsageError(f"{where}: reference {text!r} is not a Python expression ({exc.msg})") from None
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.Lambda) for a in n.args.args}
    known = set(inputs) | set(sizes) | set(REFERENCE_NAMES) | set(dir(builtins)) | bound
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id not in known:
            raise UsageError(f"{where}: reference {text!r} names {n.id!r}, which is none of its inputs "
                             f"({', '.join(inputs) or 'none'}), sizes or np, cp, torch, math")


def reference_file(w: "Workload") -> None:
    """A reference FILE.py:FUNCTION's file exists (beside the spec, or from the working folder).
    Raises UsageError otherwise."""
    m = _REFERENCE_FILE.fullmatch(w.reference)
    if m is None:
        return
    path = Path(m.group(1)).expanduser()
    if not path.is_absolute() and w.base is not None and (w.base / path).is_file():
        return
    if not path.is_file():
        raise UsageError(f"{w.where}: reference {w.reference!r}: no such file {m.group(1)}"
                         + (f" (beside the spec, in {w.base}, or here)" if w.base else ""))


def callable_found(w: "Workload") -> None:
    """A callable's FILE.py exists (beside its spec, or from the working folder), or its
    MODULE's top-level package is installed. Raises UsageError otherwise."""
    import importlib.util

    where_, _ = w.target.rsplit(":", 1)
    if where_.endswith(".py"):
        path = Path(where_).expanduser()
        if path.is_file() or (not path.is_absolute() and w.base is not None and (w.base / path).is_file()):
            return
        raise UsageError(f"{w.target}: no such file {where_}" + (f" (beside the spec, in {w.base}, or here)"
                                                                  if w.base else ""))
    top = where_.split(".")[0]
    try:
        found = importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise UsageError(f"{w.target}: no module {top!r} (is it installed, or on PYTHONPATH?)")


def _split(text: str) -> list[str]:
    """Top-level comma-separated parts of `text` (commas inside parentheses kept)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch in "([" and 1 or 0
        depth -= ch in ")]" and 1 or 0
        cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()] if text.strip() else []


def _pairs(text: str, what: str, where: str) -> list[tuple[str, str]]:
    out = []
    for part in _split(text):
        if "=" not in part:
            raise UsageError(f"{where}: {what} {part!r}: write KEY=EXPRESSION pairs separated by commas")
        key, value = (s.strip() for s in part.split("=", 1))
        out.append((key, value))
    return out


def _sizes(text: str, where: str) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for key, value in _pairs(text, "sizes", where):
        if not _NAME.fullmatch(key):
            raise UsageError(f"{where}: size name {key!r} must be a name like N or rows")
        sizes[key] = parse_size_value(value, f"{where}: size {key}")
    return sizes


def parse_size_value(text: str, where: str) -> int:
    """A size's value: a positive integer (underscores allowed, 2**k not). Raises UsageError."""
    t = str(text).strip().replace("_", "")
    if not (t.isascii() and t.isdigit()) or not 1 <= int(t) <= MAX_SIZE:
        raise UsageError(f"{where}: {text!r} is not a positive integer up to 2**40")
    return int(t)


def _number(text: str, what: str, where: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise UsageError(f"{where}: {what} {text!r} is not a number") from None


def _not_a_keyword(name: str, at: str) -> None:
    """Refuse an argument named as a Python keyword ('in', 'from', 'lambda'): the reference reads the
    arguments by name as Python, where such a name cannot stand."""
    if keyword.iskeyword(name):
        raise UsageError(f"{at}: arg {name}: {name!r} is a Python keyword, which the reference cannot name; "
                         f"call it otherwise here (the kernel's own parameter name may stay {name!r})")


def _arg(text: str, at: str, names: tuple[str, ...], kernel: bool) -> Arg:
    text = text.strip()
    scalar = _SCALAR.fullmatch(text)
    if scalar and "[" not in scalar.group(2):
        name, type_name, expr = scalar.groups()
        _not_a_keyword(name, at)
        el = element(type_name, f"{at}: arg {name}")
        return Arg(name, el, value=SizeExpression.parse(expr, names, f"arg {name}"))  # its range: `check_scalars`
    buffer = _BUFFER.fullmatch(text)
    if buffer is None:
        raise UsageError(f"{at}: arg {text!r}: write NAME TYPE[SHAPE] ROLE [DRAW] (x f32[R, C] in) or "
                         "NAME TYPE = EXPR (n i32 = R*C)")
    name, type_name, shape_text, role, rest = buffer.groups()
    _not_a_keyword(name, at)
    el = element(type_name, f"{at}: arg {name}")
    if role not in ROLES or (kernel and role == "return"):
        valid = ROLES if not kernel else ROLES[:3]
        raise UsageError(f"{at}: arg {name}: role {role!r}; valid: {', '.join(valid)}")
    shape = tuple(SizeExpression.parse(t, names, f"arg {name} shape") for t in _split(shape_text))
    if not shape:
        raise UsageError(f"{at}: arg {name}: an empty shape; give its dimensions, [N] or [R, C]")
    draw = Draw()
    if rest.strip():
        m = _DRAW.fullmatch(rest.strip())
        if m is None:
            raise UsageError(f"{at}: arg {name}: draw {rest.strip()!r}; valid: normal, uniform(LOW, HIGH), "
                             "randint(LOW, HIGH), ones, zeros")
        if role in ("out", "return"):
            raise UsageError(f"{at}: arg {name}: an output is not drawn (it is filled with NaN before the launch)")
        draw = Draw(m.group(1)) if m.group(1) else Draw(m.group(2), float(m.group(3)), float(m.group(4)))
        if draw.kind in ("uniform", "randint") and not draw.low < draw.high:
            raise UsageError(f"{at}: arg {name}: {draw.text()} needs LOW below HIGH")
    return Arg(name, el, role, shape, draw=draw)


def _formula(text: str, sizes: dict[str, int], where: str) -> Work:
    """The Work of a formula call such as 'softmax(R, C, dtype=bf16)' at `sizes`."""
    try:
        call = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        call = None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise UsageError(f"{where}: work {text!r}: name a formula, e.g. softmax(R, C); formulas: "
                         f"{', '.join(formulas.FORMULAS)}")
    fn = formulas.FORMULAS.get(call.func.id)
    if fn is None:
        raise UsageError(f"{where}: work {text!r}: no formula {call.func.id!r}; formulas: {', '.join(formulas.FORMULAS)}")

    def value(node: ast.expr):
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, str)):
            return node.value
        if isinstance(node, ast.Name) and node.id not in sizes:
            if node.id in ("True", "False"):
                return node.id == "True"
            return node.id  # a dtype written bare: dtype=bf16
        return SizeExpression.parse(ast.unparse(node), tuple(sizes), f"work {call.func.id}").value(sizes)

    try:
        args = [value(a) for a in call.args]
        kwargs = {k.arg: value(k.value) for k in call.keywords}
        for a in args:
            if isinstance(a, float) and a != int(a):
                raise UsageError(f"work {text!r}: a size of {a:g} at {_shown(sizes)}; a formula counts whole elements")
        return fn(*(int(a) if isinstance(a, float) else a for a in args), **kwargs)
    except UsageError as exc:
        raise exc.prefixed(f"{where}: ") if not exc.message.startswith(where) else exc from None
    except TypeError as exc:
        raise UsageError(f"{where}: work {text!r}: {exc}") from None


def spec_beside(path: Path) -> Path | None:
    """The spec file of .cu file `path` kept beside it (the same stem, `.toml`), or None. A file
    with one is a kernel of any signature, declared there, even where its own lines declare
    nothing (a public file graded as it is): what the spec lacks is the spec's error."""
    beside = Path(path).expanduser().with_suffix(".toml")
    return beside if beside.is_file() else None


def load_kernel(path: Path, spec_file: Path | None = None, text: str | None = None,
                declared: list[Declaration] | None = None) -> Workload:
    """The workload of a .cu file: its `// roofline` lines, with a spec file's keys (`spec_file`,
    or a .toml of the same stem beside it) added. `text` and `declared` are the file's text and
    its declarations where the caller has read them already (`ladder.user.load`): the file is then
    not read again. Raises UsageError as `parse` does, or for a file that cannot be read."""
    path = Path(path).expanduser()
    values = read_lines(read_source(path) if text is None else text, str(path), declared)
    spec_file = spec_file if spec_file is not None else spec_beside(path)
    where = str(path)
    if spec_file is not None:
        extra = read_spec_file(spec_file)
        both = sorted(set(extra) & set(values) - {"arg"})
        if both:
            raise UsageError(f"{path}: {', '.join(both)} declared both in its lines and in {spec_file}", "spec")
        if "arg" in extra and "arg" in values:
            raise UsageError(f"{path}: args declared both in its lines and in {spec_file}", "spec")
        values.update(extra)
        where = f"{path} (with {spec_file})"
    w = _replace(parse(values, where, path.stem, kernel=True, path=path.resolve()), base=path.resolve().parent,
                 spec_file=Path(spec_file).resolve() if spec_file is not None else None)
    reference_file(w)
    return w


def load_callable(target: str, spec_file: Path | None) -> Workload:
    """The workload of a callable MODULE:FUNCTION (or FILE.py:FUNCTION) from `spec_file`. Raises
    UsageError without a spec file, or as `parse` does."""
    values = read_spec_file(spec_file) if spec_file is not None else None
    if values is None:
        raise UsageError(f"{target}: a callable needs a spec file ({{spec}} FILE.toml) declaring its args, "
                         "reference and work", "spec")
    values.pop("callable", None)
    where_, function = target.rsplit(":", 1)
    name = f"{Path(where_).stem if where_.endswith('.py') else where_.rsplit('.', 1)[-1]}.{function}"
    w = _replace(parse(values, f"{spec_file}", name, kernel=False, target=target),
                 base=Path(spec_file).resolve().parent, spec_file=Path(spec_file).resolve())
    reference_file(w)
    callable_found(w)
    return w


def callable_in(spec_file: Path) -> str | None:
    """The `callable` a spec file names, None where it names none."""
    value = read_spec_file(spec_file).get("callable")
    return str(value) if value else None
