"""How a user's kernel file is compiled: the compiler asked for and the options it is given, read
once, checked once, and written in each compiler's spelling.

A kernel file declares them in its `// roofline` lines, as its author's build does,

    // roofline options: -DBLOCK=256 --use_fast_math -I include
    // roofline compiler: nvcc

and the command line adds to them (`--compile-option`, repeatable, appended after the file's;
`--compiler`, which replaces the file's). The compilers (`COMPILERS`): `nvcc`, the CUDA toolkit's
compiler, which compiles a whole program (host code, `main`, <stdio.h>) and keeps its device code;
`nvrtc`, the runtime compiler CuPy brings, which takes device code alone; `auto` (the default),
nvcc where a CUDA toolkit is found, else NVRTC (`measure.toolchain` decides).

Options are nvcc's spelling, split as a shell splits them (quotes group). An include folder
(`-I DIR`, `-IDIR`, `--include-path=DIR`, `-isystem DIR`) and a pre-included file that exists
(`-include FILE`) are made absolute where they are read: from a file's line relative to the
file's folder, from the command line relative to the working folder. What roofline decides
itself is refused (`OWNED`): the target (`-arch`, `-gencode`: the GPU's own), the output and
its kind (`-o`, `-c`, `-ptx`, ...: a cubin, loaded by CuPy), relocatable device code (a cubin
that needs a device link). Where NVRTC compiles, each option is written in its spelling
(`nvrtc_options`), and one it does not know is refused by name (`nvrtc_unknown`).

Imports nothing of roofline but its errors: any layer may read the settings.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError

COMPILERS = ("auto", "nvcc", "nvrtc")
DEFAULT_COMPILER = "auto"

_OWNED, _NVCC_ONLY = "owned", None
# Each option roofline reads: its spellings (long, short), whether it takes a value, and its NVRTC
# spelling: a prefix the value is joined to ('-D', '--std='), the flag itself for one without a
# value, None where NVRTC has no such option, _OWNED where roofline decides it.
_TABLE: tuple[tuple[tuple[str, ...], bool, str | None], ...] = (
    (("--define-macro", "-D"), True, "-D"),
    (("--undefine-macro", "-U"), True, "-U"),
    (("--include-path", "-I"), True, "-I"),
    (("--system-include", "-isystem"), True, "-I"),
    (("--pre-include", "-include"), True, "--pre-include="),
    (("--std", "-std"), True, "--std="),
    (("--use_fast_math", "-use_fast_math"), False, "--use_fast_math"),
    (("--device-as-default-execution-space", "-default-device"), False, "-default-device"),
    (("--ftz", "-ftz"), True, "--ftz="),
    (("--prec-div", "-prec-div"), True, "--prec-div="),
    (("--prec-sqrt", "-prec-sqrt"), True, "--prec-sqrt="),
    (("--fmad", "-fmad"), True, "--fmad="),
    (("--maxrregcount", "-maxrregcount"), True, "--maxrregcount="),
    (("--ptxas-options", "-Xptxas"), True, "--ptxas-options="),
    (("--generate-line-info", "-lineinfo"), False, "-lineinfo"),
    (("--device-debug", "-G"), False, "-G"),
    (("--extra-device-vectorization", "-extra-device-vectorization"), False, "--extra-device-vectorization"),
    (("--restrict", "-restrict"), False, "--restrict"),
    (("--disable-warnings", "-w"), False, "-w"),
    (("--display-error-number", "-err-no"), False, "--display-error-number"),
    (("--no-display-error-number", "-no-err-no"), False, "--no-display-error-number"),
    (("--diag-suppress", "-diag-suppress"), True, "--diag-suppress="),
    (("--diag-error", "-diag-error"), True, "--diag-error="),
    (("--diag-warn", "-diag-warn"), True, "--diag-warn="),
    (("--device-int128", "-device-int128"), False, "--device-int128"),
    (("--dopt", "-dopt"), True, "--dopt="),
    # roofline's own: the target, the output and its kind
    (("--gpu-architecture", "-arch"), True, _OWNED),
    (("--gpu-code", "-code"), True, _OWNED),
    (("--generate-code", "-gencode"), True, _OWNED),
    (("--output-file", "-o"), True, _OWNED),
    (("--output-directory", "-odir"), True, _OWNED),
    (("--keep-dir", "-keep-dir"), True, _OWNED),
    (("--keep", "-keep"), False, _OWNED),
    (("--save-temps", "-save-temps"), False, _OWNED),
    (("--compile", "-c"), False, _OWNED),
    (("--cubin", "-cubin"), False, _OWNED),
    (("--ptx", "-ptx"), False, _OWNED),
    (("--fatbin", "-fatbin"), False, _OWNED),
    (("--optix-ir", "-optix-ir"), False, _OWNED),
    (("--cuda", "-cuda"), False, _OWNED),
    (("--preprocess", "-E"), False, _OWNED),
    (("--generate-dependencies", "-M"), False, _OWNED),
    (("--run", "-run"), False, _OWNED),
    (("--lib", "-lib"), False, _OWNED),
    (("--link", "-link"), False, _OWNED),
    (("--device-link", "-dlink"), False, _OWNED),
    (("--device-c", "-dc"), False, _OWNED),
    (("--device-w", "-dw"), False, _OWNED),
    (("--relocatable-device-code", "-rdc"), True, _OWNED),
    # nvcc's alone, with a value that is not an option of its own
    (("--compiler-options", "-Xcompiler"), True, _NVCC_ONLY),
    (("--linker-options", "-Xlinker"), True, _NVCC_ONLY),
    (("--nvlink-options", "-Xnvlink"), True, _NVCC_ONLY),
    (("--compiler-bindir", "-ccbin"), True, _NVCC_ONLY),
    (("--library", "-l"), True, _NVCC_ONLY),
    (("--library-path", "-L"), True, _NVCC_ONLY),
    (("--x", "-x"), True, _NVCC_ONLY),
    (("--threads", "-t"), True, _NVCC_ONLY),
    (("--optimize", "-O"), True, _NVCC_ONLY),
)
_INCLUDE_FOLDERS = ("--include-path", "--system-include")
_TARGET = ("--gpu-architecture", "--gpu-code", "--generate-code")
_RELOCATABLE = ("--relocatable-device-code", "--device-c", "--device-w")


@dataclass(frozen=True)
class Option:
    """One option as given: `text` its tokens (one, or the option and its value), `long` the
    table's long spelling (None for one roofline does not read), `value` its value (None for a
    flag or an option roofline does not read)."""

    text: tuple[str, ...]
    long: str | None = None
    value: str | None = None


def _entry(long: str) -> tuple[tuple[str, ...], bool, str | None]:
    return next(e for e in _TABLE if e[0][0] == long)


def _match(token: str) -> tuple[tuple[tuple[str, ...], bool, str | None], str | None] | None:
    """The table's entry `token` starts and its value where the token holds it ('-DX=1': X=1;
    '--std=c++17': c++17), '' where the value is the next token; None for no entry."""
    for entry in _TABLE:  # the whole spelling first: -lineinfo is not -l ineinfo
        if token in entry[0]:
            return entry, "" if entry[1] else None
    for entry in _TABLE:
        for spelling in entry[0]:
            if entry[1] and token.startswith(spelling + "="):
                return entry, token[len(spelling) + 1:]
    for entry in _TABLE:  # a one-letter short form with its value joined: -DX, -I../inc, -lcublas, -O3
        short = entry[0][1]
        if entry[1] and len(short) == 2 and token.startswith(short) and len(token) > 2:
            return entry, token[2:]
    return None


def split(tokens: tuple[str, ...] | list[str]) -> list[Option]:
    """`tokens` as options: each known option with its value (the next token where it is not
    joined), each other token on its own. Raises UsageError for an option whose value is missing."""
    out, i = [], 0
    while i < len(tokens):
        token = tokens[i]
        found = _match(token)
        if found is None:
            out.append(Option((token,)))
            i += 1
            continue
        (spellings, takes, _), value = found
        if takes and value == "":
            if i + 1 >= len(tokens):
                raise UsageError(f"compile option {token} needs a value after it")
            out.append(Option((token, tokens[i + 1]), spellings[0], tokens[i + 1]))
            i += 2
        else:
            out.append(Option((token,), spellings[0], value))
            i += 1
    return out


def parse_options(text: str, base: Path, where: str) -> tuple[str, ...]:
    """The options of `text` (shell words: '-DN=64 --use_fast_math -I include'), include folders
    and pre-included files made absolute from folder `base`, in nvcc's spelling. Raises
    UsageError naming `where` for unbalanced quotes, a missing value, or an option roofline
    decides itself (`OWNED` in the module's sense)."""
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"{where}: compile options {text!r}: {exc}") from None
    try:
        options = split(tokens)
    except UsageError as exc:
        raise exc.prefixed(f"{where}: ") from None
    out: list[str] = []
    for o in options:
        entry = _entry(o.long) if o.long else None
        if entry is not None and entry[2] == _OWNED:
            raise UsageError(f"{where}: {_owned_reason(o)}")
        if o.long in _INCLUDE_FOLDERS:
            flag = "-I" if o.long == "--include-path" else "-isystem"
            for folder in filter(None, o.value.split(",")):  # nvcc takes a list: -I a,b
                absolute = _absolute(folder, base)
                out += [f"-I{absolute}"] if flag == "-I" else [flag, absolute]
        elif o.long == "--pre-include":
            given = Path(os.path.expanduser(o.value))
            file = given if given.is_absolute() or not (base / given).is_file() else base / given
            out += ["-include", str(file)]
        else:
            out += list(o.text)
    return tuple(out)


def _absolute(folder: str, base: Path) -> str:
    path = Path(os.path.expanduser(folder))
    return str(path if path.is_absolute() else Path(os.path.normpath(base / path)))


def _owned_reason(o: Option) -> str:
    shown = " ".join(o.text)
    if o.long in _TARGET:
        return (f"compile option {shown}: roofline compiles for the GPU's own architecture (sm_XY, sm_90a on Hopper "
                "where the kernel needs it); leave the target out")
    if o.long in _RELOCATABLE:
        return (f"compile option {shown}: relocatable device code needs a device link, which roofline does not do; "
                "leave it out (a kernel file is compiled whole)")
    return (f"compile option {shown}: roofline chooses the output (a cubin of the kernel, loaded by CuPy) and where "
            "its files go; leave it out")


def parse_compiler(text: str, where: str) -> str:
    """A compiler's name (`COMPILERS`), in any case. Raises UsageError naming `where` for another."""
    name = text.strip().lower()
    if name not in COMPILERS:
        raise UsageError(f"{where}: compiler {text.strip()!r}: choose {', '.join(COMPILERS)}")
    return name


@dataclass(frozen=True)
class CompileSettings:
    """The compiler asked for (`COMPILERS`: 'auto', 'nvcc' or 'nvrtc') and the options (nvcc's
    spelling, include folders absolute: `parse_options`), in the order given: the file's first,
    the command line's after them; `nvcc` the path of the nvcc chosen for it where one was
    (`measure.toolchain.pinned`: chosen once by the command, used by every process it starts)."""

    compiler: str = DEFAULT_COMPILER
    options: tuple[str, ...] = ()
    nvcc: str | None = None

    def given(self, compiler: str | None = None, options: tuple[str, ...] = ()) -> "CompileSettings":
        """These settings with the command line's: its compiler in place of this one (None: this
        one kept), its options after these."""
        return CompileSettings(compiler or self.compiler, self.options + tuple(options), self.nvcc)

    def describe(self) -> dict[str, str]:
        """As `// roofline` values ('compiler', 'options' as shell words, and 'nvcc' the chosen
        one's path), what differs from the defaults alone: for results files and child processes
        (`from_description`)."""
        out = {}
        if self.compiler != DEFAULT_COMPILER:
            out["compiler"] = self.compiler
        if self.options:
            out["options"] = shlex.join(self.options)
        if self.nvcc:
            out["nvcc"] = self.nvcc
        return out

    @classmethod
    def from_description(cls, d: dict) -> "CompileSettings":
        """The settings `describe` wrote (its keys in `d`; others ignored)."""
        return cls(d.get("compiler") or DEFAULT_COMPILER, tuple(shlex.split(d.get("options") or "")),
                   d.get("nvcc") or None)

    @property
    def text(self) -> str:
        """The options as shell words ('' for none)."""
        return shlex.join(self.options)


def declared(values: dict, base: Path, where: str) -> CompileSettings:
    """The settings a kernel file's values declare (`compiler`, `options` keys of `values`; the
    options read from folder `base`, the file's). Raises UsageError as `parse_options` and
    `parse_compiler` do."""
    compiler = parse_compiler(str(values["compiler"]), where) if values.get("compiler") else DEFAULT_COMPILER
    options = parse_options(str(values["options"]), base, where) if values.get("options") else ()
    return CompileSettings(compiler, options)


def declares_std(options: tuple[str, ...]) -> bool:
    """Whether `options` choose the C++ dialect (-std=...)."""
    return any(o.long == "--std" for o in split(options))


def nvrtc_unknown(options: tuple[str, ...]) -> str | None:
    """The first of `options` NVRTC does not take (an nvcc-only option such as -O3, -Xcompiler
    or -lcublas, or one roofline does not know), as given; None where NVRTC takes them all."""
    for o in split(options):
        entry = _entry(o.long) if o.long else None
        if entry is None or entry[2] in (None, _OWNED):
            return " ".join(o.text)
    return None


def nvrtc_options(options: tuple[str, ...]) -> tuple[str, ...]:
    """`options` in NVRTC's spelling, one word each (NVRTC takes no separate values): '-I DIR'
    -> '-IDIR', '-Xptxas -v' -> '--ptxas-options=-v', '-isystem DIR' -> '-IDIR'. An option NVRTC
    does not know (`nvrtc_unknown`) is passed as given, for NVRTC to refuse."""
    out = []
    for o in split(options):
        entry = _entry(o.long) if o.long else None
        if entry is None or entry[2] in (None, _OWNED):
            out += list(o.text)
        elif entry[1]:
            out.append(f"{entry[2]}{o.value}")
        else:
            out.append(entry[2])
    return tuple(out)
