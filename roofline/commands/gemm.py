"""The GEMM problems and the user's kernels a command names: sizes, kernel files, their launch
declarations and how they are compiled, the precision of a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING


from ..defaults import DEFAULT_SIZE
from ..errors import UsageError

if TYPE_CHECKING:
    from ..ladder.user import UserKernel
    from ..model.problem import Problem


# The help of `--compile-option` and `--compiler`, alike in every command that has them.
COMPILE_OPTION_HELP = ("An option for the compiler of your kernel files, as your build gives it (repeatable; after "
                       "the file's '// roofline options:'): -DBLOCK=256, --use_fast_math, '-I include' (a folder from "
                       "the working folder).")
COMPILER_HELP = ("The compiler of your kernel files: nvcc (the CUDA toolkit's: host code, main and host headers "
                 "may stay in the file), nvrtc (CuPy's: device code alone), or auto (default: nvcc where a CUDA "
                 "toolkit is found, else NVRTC).")


# What `--declare KEY=VALUE` sets: the launch keys of a GEMM kernel file's '// roofline KEY: VALUE' lines
# (`ladder.user.KEYS` but its precision, which `--dtype` sets).
DECLARE_KEYS = ("entry", "block", "grid", "dynamic-smem", "tile", "thread-tile", "thread-x", "name", "reads-c")
FORMER_FLAGS = tuple(k for k in DECLARE_KEYS if k != "thread-x")  # keys that were flags of their own (--entry ...)


def user_kernels(paths: list[Path], flags: dict[str, str | None] | None = None,
                 compiling: tuple[str | None, tuple[str, ...]] = (None, ())) -> list[UserKernel]:
    """The user kernels in `paths`, each from its file's header with `flags` (keys as
    `ladder.user.KEYS`, None for not given) overriding it, and compiled as `compiling` adds to
    its file's settings (`compile_settings`: the compiler in place of the file's, the options
    after the file's). Raises UsageError (one line) for a file that cannot be read, a launch
    description that does not parse, or two kernels of one name, for launch flags given without
    exactly one file, and for compile settings given without a file."""
    from ..ladder.user import load
    given = [k for k, v in (flags or {}).items() if v is not None]
    if given and not paths:
        raise UsageError(f"{{declare}} {given[0]}= describes your kernel's launch; give the kernel file too "
                         "(FILE.cu before it)", "declare")
    compiler, options = compiling
    if (compiler is not None or options) and not paths:
        flag = "compiler" if compiler is not None else "compile_option"
        raise UsageError(f"{{{flag}}} says how your kernel files are compiled; give the kernel file too (FILE.cu)",
                         flag)
    if given and len(paths) > 1:
        raise UsageError(f"{{declare}} {given[0]}= applies to one kernel file; with several, declare each launch in "
                         "its file ('// roofline KEY: VALUE' lines)", "declare")
    kernels = [load(Path(p), flags) for p in paths]
    if compiler is not None or options:
        kernels = [k.with_build(k.build.given(compiler, options)) for k in kernels]
    names = [k.name for k in kernels]
    for k in kernels:
        if names.count(k.name) > 1:
            raise UsageError(f"two of your kernels are called {k.name!r}; name them apart with '// roofline name:' "
                             "in their files")
    return kernels


def compile_settings(compiler: str | None, options: list[str] | None) -> tuple[str | None, tuple[str, ...]]:
    """`--compiler` and `--compile-option` as `user_kernels` takes them: the compiler's name (None
    where not given) and the options (each value split as a shell splits it, include folders
    made absolute from the working folder). Raises UsageError for a compiler not in
    `build_options.COMPILERS`, or an option `build_options.parse_options` refuses."""
    from ..build_options import COMPILERS, parse_options
    name = compiler.strip().lower() if compiler is not None else None
    if name is not None and name not in COMPILERS:
        raise UsageError(f"{{compiler}} takes {', '.join(COMPILERS[:-1])} or {COMPILERS[-1]}, got {compiler!r}", "compiler")
    try:
        parsed = tuple(o for item in options or [] for o in parse_options(item, Path.cwd(), "{compile_option}"))
    except UsageError as exc:
        raise UsageError(exc.message, "compile_option") from None
    return name, parsed


def pin_compilers(kernels: list[UserKernel]) -> list[UserKernel]:
    """`kernels`, each with its compiler chosen now, before any GPU work, for every process that
    compiles it (`measure.toolchain.pinned`). Raises UsageError for options NVRTC would be given
    and does not take, RunError when nvcc is asked for and there is none."""
    from ..measure.toolchain import pinned
    return [pinned(k) for k in kernels]


def compiled_note(name: str, compiler: str, options: str, target: str) -> str:
    """The note that says how a user's kernel was compiled: 'mine: compiled by nvcc 13.0.88 for
    sm_90 with -DN=64' (`options` as shell words; '' for none)."""
    return f"{name}: compiled by {compiler} for {target}" + (f" with {options}" if options else "")


LADDER_KINDS = ("fp32", "tensor")  # `ladder.families.LADDERS`' keys (a test checks), named without loading the ladder


def precision(ladder_kind: str | None, dtype: str | None, sources: list[UserKernel]) -> str:
    """The precision a run is in: `dtype` when given (bf16, fp16 or tf32 run the tensor ladder,
    fp32 the SGEMM ladder); else BF16 for `ladder_kind` 'tensor'; else the precision the user
    kernels declare ('// roofline dtype: bf16'), which must then agree (with --ladder tensor
    too: a declared TF32 kernel makes a TF32 run); else FP32. Raises UsageError for an unknown
    ladder or precision, a ladder and precision that do not go together (the FP32 ladder in
    BF16, the tensor ladder in FP32), or a user kernel declaring a tensor precision other than
    the run's (its operands are of that type)."""
    from ..model.precision import check_dtype
    from ..ladder.user import check_element
    if ladder_kind is not None and ladder_kind not in LADDER_KINDS:
        raise UsageError(f"{{ladder_kind}} takes {' or '.join(LADDER_KINDS)}, got {ladder_kind!r}", "ladder_kind")
    if dtype is not None:
        check_dtype(dtype)
    if dtype is None:
        declared = sorted({u.dtype for u in sources if not u.workload})  # a workload declares its own types
        if len(declared) > 1:
            raise UsageError(f"your kernels declare different precisions ({', '.join(declared)}); a run (and a "
                             "listing) has one: give them one command each")
        tensor = [d for d in declared if d != "fp32"]  # fp32: declared so, or nothing declared
        dtype = tensor[0] if tensor else "bf16" if ladder_kind == "tensor" else declared[0] if declared else "fp32"
    for u in sources:  # a kernel's declared tensor precision is the type of its operands: no flag changes it
        if u.dtype != "fp32" and u.dtype != dtype and not u.workload:
            raise UsageError(f"{u.path.name} declares dtype {u.dtype} ('// roofline dtype: {u.dtype}'), but this run "
                             f"is in {dtype}: its kernel reads {u.dtype.upper()} operands; drop {{dtype}} or change "
                             "the declaration", "dtype")
        if not u.workload:  # nor does a flag change the type its signature declares
            check_element(u.path, u.source_text(), u.entry, dtype)
    if ladder_kind == "tensor" and dtype == "fp32":
        raise UsageError("the tensor ladder runs in bf16, fp16 or tf32, not fp32; drop {dtype} or choose one of those",
                         "dtype")
    if ladder_kind == "fp32" and dtype != "fp32":
        raise UsageError(f"the FP32 ladder runs in fp32; for {dtype} use {{ladder_kind}} tensor", "dtype", ["ladder_kind"])
    return dtype


def _check_autotuned(autotuned_tile: str | None, dtype: str) -> None:
    """A tile for the autotuned kernel is for the FP32 ladder's: UsageError in another precision."""
    if autotuned_tile is not None and dtype != "fp32":
        raise UsageError("{autotuned_tile} applies to the FP32 ladder's autotuned kernel", "autotuned_tile")



FLAG_KEYS = {"dtype": "--dtype", "compiler": "--compiler", "options": "--compile-option"}  # not --declare's


def declared(items: list[str] | None) -> dict[str, str | None]:
    """`--declare KEY=VALUE` items as the launch flags `user_kernels` takes (every key of
    DECLARE_KEYS, None where not given). Raises UsageError for an item without '=', an unknown key
    or a key given twice."""
    flags: dict[str, str | None] = dict.fromkeys(DECLARE_KEYS)
    for item in items or []:
        key, eq, value = item.partition("=")
        key = key.strip().lower().replace("_", "-")
        if not eq or not value.strip():
            raise UsageError(f"{{declare}} {item!r}: write KEY=VALUE, e.g. block=256 or grid='cdiv(N,64),cdiv(M,64)'",
                             "declare")
        if key in FLAG_KEYS:  # a file's key that has its own flag on the command line
            raise UsageError(f"{{declare}} {key!r}: give it as {FLAG_KEYS[key]} (the file's `// roofline {key}:` line "
                             "is that flag's)", "declare")
        if key not in flags:
            raise UsageError(f"{{declare}} {key!r}: a kernel's launch is declared by {', '.join(DECLARE_KEYS)}", "declare")
        if flags[key] is not None:
            raise UsageError(f"{{declare}} {key} is given twice", "declare")
        flags[key] = value.strip()
    return flags


def _size_value(text: str, flag: str, item: str | None = None) -> int:
    text = text.strip()
    if not (text.isascii() and text.isdigit() and int(text) > 0):
        raise UsageError(f"{{{flag}}} takes positive integers, got {(item or text)!r}", flag)
    return int(text)


def gemm_problems(sizes: list[str] | None = None, sweep: str | None = None) -> list[Problem]:
    """The GEMM problems `--size` and `--sweep` name, validated. `sizes`: 'N' (M = N = K) and/or
    'M=...', 'N=...', 'K=...' (a dimension not given is the bare size, else DEFAULT_SIZE); `sweep`:
    sizes N or shapes MxNxK ('512,1024,8192x1024x4096', run in order of FLOPs, each once), or one
    dimension's values ('K=1024,16384') with the others from `sizes`. Raises UsageError for what
    does not parse, a name other than M, N, K, or a dimension set twice."""
    from ..model.problem import Problem

    dims: dict[str, int] = {}
    square = None
    for item in sizes or []:
        name, eq, value = item.partition("=")
        if not eq:
            if square is not None:
                raise UsageError("{size} N is given twice", "size")
            square = _size_value(item, "size")
            continue
        name = name.strip().upper()
        if name not in ("M", "N", "K"):
            raise UsageError(f"{{size}} {item!r}: a GEMM's sizes are M, N and K (or N alone: M = N = K)", "size")
        if name in dims:
            raise UsageError(f"{{size}} {name} is given twice", "size")
        dims[name] = _size_value(value, "size", item)
    base = {d: dims.get(d, square if square is not None else DEFAULT_SIZE) for d in "MNK"}
    if sweep is None:
        return [Problem(base["M"], base["N"], base["K"]).validate()]
    name, eq, values = sweep.partition("=")
    found = set()
    if eq:
        name = name.strip().upper()
        if name not in ("M", "N", "K"):
            raise UsageError(f"{{sweep}} {sweep!r}: a GEMM's sizes are M, N and K, e.g. K=1024,16384", "sweep")
        if name in dims:
            raise UsageError(f"{{sweep}} {name} and {{size}} {name} both set it; give one", "sweep", ["size"])
        for v in values.split(","):
            found.add(Problem(**{d.lower(): (_size_value(v, "sweep") if d == name else base[d]) for d in "MNK"}))
    else:
        if sizes:
            raise UsageError("{sweep} of sizes or shapes sets every dimension; give {size} only with a sweep of one "
                             "dimension (e.g. --sweep K=1024,16384)", "sweep", ["size"])
        for item in sweep.split(","):
            parts = item.strip().lower().split("x")
            if len(parts) not in (1, 3) or not all(p.isascii() and p.isdigit() and int(p) > 0 for p in parts):
                raise UsageError(f"{{sweep}} takes comma-separated sizes N or shapes MxNxK, e.g. "
                                 f"512,1024,8192x1024x4096 (or one size's values, K=1024,16384); got {sweep!r}", "sweep")
            values = [int(p) for p in parts]
            found.add(Problem(*(values * 3 if len(values) == 1 else values)))
    return [p.validate() for p in sorted(found, key=lambda p: (p.flops, p.m, p.n))]
