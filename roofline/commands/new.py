"""`roofline new`: a starter kernel of the user's own, ready to run.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import typer

from ..console import present
from ..errors import UsageError
from ..outcome import Outcome, Plain


MOUNT = dict(short_help="Write a starter kernel of your own, ready to run.")


def command(
    path: Path = typer.Argument(..., metavar="KERNEL.cu", help="The file to write (its folder must exist)."),
    name: Optional[str] = typer.Option(None, "--name", metavar="NAME",
                                       help="The kernel's name: its __global__ function's and in tables and charts "
                                            "(a C identifier; default: the file's name, other characters as '_')."),
    force: bool = typer.Option(False, "--force", help="Replace the file if it exists."),
    dtype: str = typer.Option("fp32", "--dtype", metavar="fp32|bf16|fp16|tf32",
                              help="fp32: an SGEMM; bf16, fp16, tf32: a tensor-core GEMM (mma.sync, B stored N x K)."),
):
    """Write a commented, correct but slow SGEMM kernel (or with --dtype a tensor-core GEMM) with the
    calling convention roofline runs and its launch declared in the header, ready to be improved
    and run with `roofline run KERNEL.cu`."""

    present(view(new(path, force, name, dtype), dtype))


# C++ keywords a derived kernel name could collide with (a file called int.cu, for instance).
_CPP_KEYWORDS = frozenset(
    "alignas alignof asm auto bool break case catch char char16_t char32_t char8_t class const constexpr "
    "const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern false "
    "float for friend goto if inline int long mutable namespace new noexcept nullptr operator private protected "
    "public register reinterpret_cast return short signed sizeof static static_assert static_cast struct switch "
    "template this thread_local throw true try typedef typeid typename union unsigned using virtual void "
    "volatile wchar_t while".split())


_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


_RESERVED = re.compile(r"__|_[A-Z]")  # reserved to the implementation (C++ [lex.name]): __global__, _Float16


@dataclass(frozen=True)
class Starter:
    """A starter kernel written by `new`: its file, its name (the __global__ function's, and the
    kernel's in tables and charts) and whether that name was derived from the file name."""

    path: Path
    name: str
    derived: bool


def kernel_identifier(stem: str) -> str:
    """A C identifier from a file name's stem: every character that cannot be in one becomes '_'
    ('my kernel' -> 'my_kernel', 'k\\xe9' -> 'k_'), with 'k_' before a leading digit, cut to 64."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", stem)[:62]
    return ("k_" + name if not name or name[0].isdigit() else name)[:64]


def _renamed(text: str, old: str, new: str) -> str:
    """`text` with the identifier `old` replaced by `new`, the continuation lines of the
    `__global__` signature it names moved by the difference so that they stay aligned."""
    shift, out, inside = len(new) - len(old), [], False
    for line in re.sub(rf"\b{old}\b", new, text).splitlines(keepends=True):
        if inside:
            indent = len(line) - len(line.lstrip(" "))
            line = " " * max(0, indent + shift) + line.lstrip(" ")
            inside = not line.rstrip().endswith("{")
        elif f"__global__ void {new}(" in line:
            inside = not line.rstrip().endswith("{")
        out.append(line)
    return "".join(out)


def _tensor_starter(dtype: str) -> str:
    from ..model.precision import PRECISIONS
    from ..ladder.sources import source
    starter = PRECISIONS[dtype].starter
    element, include, mma, align_k, step_k = (starter.element, starter.include, starter.mma, starter.align_k,
                                              starter.step_k)
    text = source("starter_tensor.cu")
    for placeholder, value in (("INCLUDE_LINE", include), ("MMA_INSTRUCTION", mma), ("DTYPE_UPPER", dtype.upper()),
                               ("DTYPE", dtype), ("ELEMENT", element), ("ALIGN_K", str(align_k)),
                               ("STEP_K", str(step_k))):
        text = text.replace(placeholder, value)
    return text


def new(path: Path, force: bool = False, name: str | None = None, dtype: str = "fp32") -> Starter:
    """Write the starter kernel (roofline/kernels/starter.cu: a commented, correct, slow SGEMM with its
    launch in the header; for `dtype` bf16, fp16 or tf32 roofline/kernels/starter_tensor.cu, a tensor-core
    GEMM in the tensor ladder's convention) to `path`, atomically. Its __global__ function, and its name in tables,
    is `name` (a C identifier), else one derived from the file name (`kernel_identifier`); a
    header line names it where it differs from the file name. Raises UsageError for a path that
    is not a .cu file, exists (unless `force`) or cannot be written, and for a name that is no C
    identifier, a C++ keyword or a ladder kernel's."""
    from ..model.precision import check_dtype
    from ..ladder.user import check_name
    from .. import files
    from ..ladder.sources import source
    path = Path(path)
    check_dtype(dtype)
    if path.suffix != ".cu":
        raise UsageError(f"{str(path) or 'the file name'}: give the new kernel a .cu file name, e.g. mine.cu")
    files.check_writable(path)  # a folder, a missing folder, a name too long: refused in one line
    if (path.exists() or path.is_symlink()) and not force:
        raise UsageError(f"{path} already exists; choose another name or pass {{force}} to replace it",
                         mentions=["force"])
    derived = name is None
    kernel = kernel_identifier(path.stem) if derived else name
    if derived and kernel in _CPP_KEYWORDS:
        raise UsageError(f"{files.shown_path(path)}: the kernel would be named {kernel!r} after the file, a C++ keyword; "
                         "choose another name with {name} NAME", mentions=["name"])
    if not _C_IDENTIFIER.fullmatch(kernel) or kernel in _CPP_KEYWORDS or _RESERVED.match(kernel):
        raise UsageError(f"{{name}} {kernel!r}: the kernel's name must be a C identifier (at most 64 letters, "
                         "digits and '_', not starting with a digit), no C++ keyword, and not start with '__' "
                         "or '_' and a capital (names the compiler reserves, such as __global__)", "name")
    check_name(kernel, files.shown_path(path) if derived else f"{{name}} {kernel}", remedy="with {name} NAME")
    if dtype == "fp32":
        text = _renamed(source("starter.cu"), "my_sgemm", kernel)
    else:
        text = _renamed(_tensor_starter(dtype), "my_gemm", kernel)
    text = text.replace("THIS_FILE.cu", shlex.quote(files.shown_path(path.name)))
    if kernel != path.stem:  # the table name defaults to the file's: say it where they differ
        last = "// roofline thread-tile: 1x1\n" if dtype == "fp32" else f"// roofline dtype: {dtype}\n"
        text = text.replace(last, f"{last}// roofline name: {kernel}\n", 1)
    files.write_atomic(path, lambda tmp: Path(tmp).write_text(text))
    return Starter(path, kernel, derived)


def view(done: Starter, dtype: str) -> Outcome:
    """A starter kernel written: where, its name (and where the name came from), and how to run it."""
    from ..files import shown_path

    shown = shown_path(done.path)
    how = " (from the file name; --name NAME sets another)" if done.derived and done.name != done.path.stem else ""
    ladder = "--all" if dtype == "fp32" else "--ladder tensor --all"
    return Outcome(view=lambda width: [Plain(f"wrote {shown}: kernel {done.name}{how}; run it beside the ladder "
                                             f"with: roofline run {shlex.quote(shown)} {ladder}")])
