"""Compiling one kernel through NVRTC for any target, without a GPU: registers, local memory and
shared memory of a kernel, and the dynamic shared memory a kernel file declares.

Each kernel is compiled (CuPy's low-level NVRTC binding, which loads the NVRTC library from the
CUDA wheels or the system toolkit; no driver needed) for `-arch=sm_XY` with `-Xptxas -v`, and the
figures are read from ptxas's report in the program log, one section per kernel of the file (in
an order of ptxas's own, not the file's), of which the entry's is read: the one whose name is the
entry's lowered (mangled) name, as `nvrtcGetLoweredName` gives it for the name expression:

    ptxas info    : Compiling entry function '_Z6entry1PKfPf' for 'sm_90'
    ptxas info    : Function properties for _Z6entry1PKfPf
    ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 128 registers, used 1 barriers, 8192 bytes smem

(CuPy's own RawModule cannot do this: it appends the current device's -arch after ours.)
NVRTC 13 may answer from the CUDA compute cache without running ptxas (and so without the
report). Importing roofline leaves that cache alone: it is turned off only where roofline
compiles, in the processes it starts to compile in (`compiler_env`) and in the `roofline`
command's own process (`roofline.cli.main`).

Each kernel compiled in a process of its own, forked from one server: `compile_pool`; the
figures kept, in the process and on disk: `compile_cache`.

Dynamic shared memory: a kernel that takes it defines the constant `<kernel>_smem_bytes<params>`. Compiling
the name expression `roofline_smem_probe<<kernel>_smem_bytes<params>>` makes the compiler
evaluate it; the number comes back inside the probe's mangled name (`nvrtcGetLoweredName`). Only
the empty probe is instantiated, so this costs a parse, not a kernel build.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from ..errors import RunError
from ..ladder.families import KernelSpec
from ..ladder.sources import source
from ..ladder.user import UserKernel, missing_entry
from ..model.arch import ARCHS, VARIANTS, ArchLimits
from ..model.occupancy import Occupancy, calculate
from ..extras import install_hint
from ..model.units import plural
from .nvml import INSTALL_HINT

_ENTRY_FUNCTION = re.compile(r"Compiling entry function '([^']+)'")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_STACK = re.compile(r"(\d+) bytes stack frame")
_PROBE = "template <int BYTES> __global__ void roofline_smem_probe() {}\n"
_LOWERED_INT = re.compile(r"ILi(\d+)E")
_MAXNTID = re.compile(r"\.maxntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?")
_CACHE_VARIABLE = "CUDA_CACHE_DISABLE"


def compiler_env() -> dict[str, str]:
    """The environment of a process roofline starts to compile in: this one's, with the CUDA
    compute cache off (CUDA_CACHE_DISABLE=1; a caller's own setting wins). NVRTC 13 answers a
    repeated compile from that cache without running ptxas, so without the register report
    `compile_for` reads, and it reads the variable once, when it loads: so the variable is set
    where roofline starts a process (and by the `roofline` command itself, `roofline.cli.main`), never
    in a program that merely imports the library."""
    return {**os.environ, _CACHE_VARIABLE: os.environ.get(_CACHE_VARIABLE, "1")}


@dataclass(frozen=True)
class KernelResources:
    """ptxas's figures for one kernel on one target: 32-bit registers per thread, static shared
    memory per block in bytes, and local memory per thread in bytes (the stack frame, where
    spilled registers go: 0 means nothing spills; the same figure the driver reports as
    `local_size_bytes`); the compiler that built it ('NVRTC 12.9', 'nvcc 13.0.88')."""

    registers: int
    static_smem_bytes: int
    local_bytes: int
    max_threads_per_block: int | None = None  # __launch_bounds__' limit (PTX .maxntid); None: none declared
    compiler: str | None = None  # which compiler and version: 'NVRTC 12.9', 'nvcc 13.0.88'

    def launch_bounds_reason(self, threads: int) -> str | None:
        """Why a block of `threads` cannot launch under the kernel's __launch_bounds__, or None."""
        if self.max_threads_per_block is not None and threads > self.max_threads_per_block:
            return (f"its __launch_bounds__ allow at most {self.max_threads_per_block} threads per block; "
                    f"the block has {threads}")
        return None


def parse_ptxas_log(log: str, entry: str | None = None) -> KernelResources:
    """The figures of kernel `entry` (its lowered, i.e. mangled, name: '_Z6entry1PKfPf'; an
    `extern "C"` kernel's is its own) from a `-Xptxas -v` log: those of the section that starts
    "Compiling entry function 'ENTRY'", up to the next kernel's. A log without such lines is read
    whole. Raises RunError when the log reports several kernels and `entry` is None or none of
    them, or when the entry's section has no 'Used N registers' line (e.g. ptxas did not run)."""
    section = _entry_section(log, entry)
    used = _USED.search(section)
    if used is None:
        raise RunError("the compiler log holds no ptxas resource report")
    smem = _SMEM.search(section)
    stack = _STACK.search(section)  # the entry's own "Function properties" come first in its section
    return KernelResources(registers=int(used.group(1)), static_smem_bytes=int(smem.group(1)) if smem else 0,
                           local_bytes=int(stack.group(1)) if stack else 0)


def _entry_section(log: str, entry: str | None) -> str:
    """The part of `log` about kernel `entry` (`parse_ptxas_log`)."""
    starts = list(_ENTRY_FUNCTION.finditer(log))
    names = [m.group(1) for m in starts]
    if not starts or (entry is None and len(starts) == 1):
        return log
    reported = f"the compiler log reports {plural(len(names), 'kernel')} ({', '.join(names)})"
    if entry is None:
        raise RunError(f"{reported}: name the entry to read")
    if entry not in names:
        raise RunError(f"{reported}, not {entry}")
    i = names.index(entry)
    return log[starts[i].start():starts[i + 1].start() if i + 1 < len(starts) else len(log)]


def nvrtc_version() -> tuple[int, int]:
    """(major, minor) of the NVRTC library CuPy loads. Raises RunError when there is none."""
    try:
        from cupy_backends.cuda.libs import nvrtc

        return tuple(nvrtc.getVersion())
    except ImportError:
        raise RunError(f"CuPy is not installed, so NVRTC cannot compile (your own kernel files compile with nvcc where a "
                       f"CUDA toolkit is found): {INSTALL_HINT} "
                       "(without it, `kernels --model-only` gives the traffic model)") from None
    except Exception as exc:  # the NVRTC shared library could not be found or loaded
        raise RunError(f"NVRTC could not be loaded ({exc}); {INSTALL_HINT} (without it, `kernels --model-only` "
                       "gives the traffic model)") from None


def nvrtc_text() -> str:
    """Which compiler NVRTC is, as records say it: 'NVRTC 12.9'. Raises as `nvrtc_version` does."""
    major, minor = nvrtc_version()
    return f"NVRTC {major}.{minor}"


def _unsupported(arch: str) -> RunError:
    major, minor = nvrtc_version()
    if arch.rstrip("af") not in {a.arch for a in ARCHS.values()}:  # a GPU newer than any CUDA roofline knows
        return RunError(f"this NVRTC ({major}.{minor}) cannot compile for {arch}, and no CUDA roofline knows of "
                        "can: model its kernels without compiling them (roofline kernels --model-only)")
    other = "cuda13" if major < 13 else "cuda12"
    return RunError(f"this NVRTC ({major}.{minor}) cannot compile for {arch}; the other CUDA flavour may: in a "
                    f"fresh environment, {install_hint(other)} (the two CuPy flavours cannot be installed together)")


def check_target(arch: str) -> None:
    """Raise RunError (one line) unless the loaded NVRTC can compile for `arch` ('sm_90',
    'sm_90a'): the CUDA 12 NVRTC stops short of sm_110, the CUDA 13 one has dropped sm_70/72.
    Uses nvrtcGetSupportedArchs; an NVRTC without it is let through (compile errors then say)."""
    nvrtc_version()  # a clean RunError when CuPy or NVRTC is missing
    from cupy_backends.cuda.libs import nvrtc

    try:
        supported = set(nvrtc.getSupportedArchs())
    except Exception:
        return
    if int(arch.removeprefix("sm_").rstrip("af")) not in supported:
        raise _unsupported(arch)


def compile_for(spec: KernelSpec | UserKernel, arch: str) -> KernelResources:
    """Compile `spec` for target `arch` ('sm_90') through NVRTC and return ptxas's figures.

    The program ptxas sees is the kernel's file and nothing else: the CUDA compute cache, which
    would answer a repeated compile without ptxas's report, is turned off in every process
    roofline compiles in (CUDA_CACHE_DISABLE=1, `compiler_env`). Changing the source to miss the cache instead
    changed what ptxas allocated (async_copy read 219 registers in one process and 226 in the
    next). Raises RunError naming the kernel and the target, with the compiler's error lines, when
    it does not compile (a tile the kernel's static_asserts reject, a user's mistake, a target
    this NVRTC does not support), or when the report is missing all the same."""
    nvrtc_version()
    return _resources(spec.source_name, spec.name, spec.target(arch), spec.source_text(), spec.name_expression,
                      compile_options(spec))


def compile_cubin(spec: KernelSpec | UserKernel, arch: str) -> tuple[bytes, str]:
    """(cubin, lowered name) of `spec` compiled for GPU target `arch` at the kernel's own target
    (`spec.target`: 'sm_90a' for wgmma's arch-specific instructions, which CuPy's own compile,
    fixed to the plain 'sm_90', cannot reach). Raises RunError as `compile_for` does."""
    nvrtc_version()
    _, lowered, cubin = _compile(spec.source_name, spec.name_expression, spec.target(arch), spec.source_text(),
                                 spec.name_expression, ptxas=False, options=compile_options(spec), cubin=True)
    return cubin, lowered


@lru_cache(maxsize=None)
def _resources(file_name: str, name: str, arch: str, text: str, expression: str,
               options: tuple[str, ...]) -> KernelResources:
    """`compile_for`, once per source text, kernel, target and options in a process (a user
    kernel's child checks it at the ragged shape and then at the problem's)."""
    log, lowered, ptx = _compile(file_name, name, arch, text, expression, options=options)
    try:
        return replace(parse_ptxas_log(log, lowered), max_threads_per_block=max_threads(ptx, lowered),
                       compiler=nvrtc_text())
    except RunError as exc:
        if not log.strip("\x00\n "):
            raise RunError(f"{name} for {arch}: NVRTC answered from the CUDA compute cache without running "
                           f"ptxas, so there is no register report; start roofline with {_CACHE_VARIABLE}=1 "
                           f"(it is {os.environ.get(_CACHE_VARIABLE)!r} here)") from None
        tail = " | ".join(ln.strip() for ln in log.strip("\x00\n ").splitlines()[-3:])
        raise RunError(f"{name} for {arch}: {exc} (log ends: {tail})") from None


def dynamic_smem_bytes(spec: KernelSpec | UserKernel, arch: str = "sm_80") -> int:
    """The dynamic shared memory `spec` is launched with, in bytes: a user kernel's declared
    figure, or as a ladder kernel's file computes it (0 for a kernel that takes none). Raises
    RunError when the expression does not compile."""
    if spec.smem_expression is None:
        return spec.fixed_dynamic_smem_bytes
    return _probe_smem(spec.family.source_file, spec.name_expression, spec.smem_expression, spec.target(arch))


@lru_cache(maxsize=None)
def _probe_smem(file_name: str, label: str, expression: str, arch: str) -> int:
    """`dynamic_smem_bytes`, compiled once per kernel, tile and target in a process (a size sweep
    launches the same kernels at every size)."""
    nvrtc_version()
    lowered = _compile(file_name, label, arch, source(file_name) + _PROBE, f"roofline_smem_probe<{expression}>",
                       ptxas=False)[1]
    match = _LOWERED_INT.search(lowered)
    if match is None:
        raise RunError(f"{label}: cannot read its dynamic shared memory from {lowered!r}")
    return int(match.group(1))


def max_threads(ptx: str, lowered: str) -> int | None:
    """The product of the `.maxntid X, Y, Z` directive (what `__launch_bounds__` compiles to) of
    entry `lowered` in `ptx`; None when the entry declares none."""
    start = ptx.find(f".entry {lowered}(")
    if start < 0:
        return None
    body = ptx.find("{", start)
    match = _MAXNTID.search(ptx, start, body if body > 0 else len(ptx))
    return None if match is None else int(match.group(1)) * int(match.group(2) or 1) * int(match.group(3) or 1)


def _without_name_map(log: str) -> str:
    """The log without the errors NVRTC reports on its own name-expression lookup (`__nv_name_map`),
    which follow from an error in the file and only repeat the entry."""
    out, in_map = [], False
    for line in log.splitlines():
        if line.startswith("__nv_name_map"):
            in_map = True
        elif not (in_map and (line.startswith(" ") or not line.strip())):  # its quoted lines go with it
            in_map = False
            out.append(line)
    return "\n".join(out)


_CUTLASS_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](?:cute|cutlass)/', re.MULTILINE)


def compile_options(spec: KernelSpec | UserKernel) -> tuple[str, ...]:
    """NVRTC options besides the target, for this compile and CuPy's: the kernel's own, and for a
    user's kernel the CUDA header folders (`cuda_include_options`), with `-default-device` where it
    includes CUTLASS or CuTe (whose headers declare helpers without __device__, which NVRTC
    otherwise refuses as host functions; CUTLASS compiles them so under NVRTC itself)."""
    if not isinstance(spec, UserKernel):
        return spec.compile_options
    try:
        cutlass = bool(_CUTLASS_INCLUDE.search(spec.source_text()))
    except Exception:  # an unreadable file: the compile itself says so
        cutlass = False
    own = spec.compile_options
    return own + cuda_include_options() + (("-default-device",) if cutlass and "-default-device" not in own else ())


def launch_check(res: KernelResources, limits: ArchLimits, threads: int, dynamic_smem: int) -> tuple[Occupancy, str | None]:
    """The calculated occupancy of a compiled kernel and why a block of `threads` cannot launch on
    `limits`' SM (a resource over the limit, or its __launch_bounds__), None when it can."""
    occ = calculate(limits, max(res.registers, 1), threads, res.static_smem_bytes, dynamic_smem)
    return occ, occ.reason or res.launch_bounds_reason(threads)


# The include folders of NVIDIA's CUDA wheels, under the `nvidia` namespace package: CUDA 12's one
# wheel per component (the runtime's headers; nvcc's carry crt/, which <mma.h> includes; CCCL's
# carry cub/, thrust/ and cuda/ (libcu++: <cuda/pipeline>, <cuda/barrier>); cuRAND's its device
# API, <curand_kernel.h>; cuBLAS's <cublas_v2.h> and <cublasLt.h>, which whole programs' headers
# include), and CUDA 13's merged cu13/include with CCCL in cu13/include/cccl.
WHEEL_INCLUDES = ("cuda_runtime/include", "cuda_nvcc/include", "cuda_cccl/include", "curand/include",
                  "cublas/include", "cu13/include", "cu13/include/cccl", "cu12/include")


def toolkit_roots() -> list[str]:
    """The CUDA toolkits on this machine, first the one CuPy uses: CuPy's CUDA path, $CUDA_PATH,
    $CUDA_HOME, the folder above the `nvcc` on the PATH, /usr/local/cuda; those whose include
    holds cuda_runtime.h and whose CUDA major is NVRTC's (`toolkit_major`)."""
    import shutil

    roots = []
    try:
        import cupy

        roots.append(cupy.cuda.get_cuda_path())
    except Exception:
        pass
    roots += [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    roots.append("/usr/local/cuda")
    major = _cuda_major()
    return [r for r in dict.fromkeys(roots) if r and os.path.isfile(os.path.join(r, "include", "cuda_runtime.h"))
            and (major is None or toolkit_major(r) in (None, major))]


def toolkit_major(root: str) -> int | None:
    """A toolkit's CUDA major version, from CUDA_VERSION in its include/cuda.h (13000 -> 13); None
    where it does not say. A toolkit of another major than NVRTC's is not searched: its CCCL and
    the wheels' would mix."""
    try:
        with open(os.path.join(root, "include", "cuda.h"), encoding="utf-8", errors="replace") as f:
            found = re.search(r"^#define CUDA_VERSION (\d+)", f.read(), re.MULTILINE)
    except OSError:
        return None
    return int(found.group(1)) // 1000 if found else None


def wheel_folder_with(header: str) -> str | None:
    """The include folder of an installed CUDA wheel (WHEEL_INCLUDES) that holds `header`
    ('cublas_v2.h'), or None."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    for base in (spec.submodule_search_locations or []) if spec else []:
        for sub in WHEEL_INCLUDES:
            if os.path.isfile(os.path.join(base, sub, header)):
                return os.path.join(base, sub)
    return None


@lru_cache(maxsize=None)
def cuda_include_options() -> tuple[str, ...]:
    """-I options for the CUDA headers a kernel may include (<cuda_fp16.h>, <cuda_pipeline.h>,
    <mma.h>, <cub/block/block_reduce.cuh>, <cuda/barrier>): the include folders of the CUDA wheels
    (WHEEL_INCLUDES), of the toolkits found (`toolkit_roots`: include, include/cccl) and of
    CUTLASS's wheel, those that exist."""
    import importlib.util

    found = []
    spec = importlib.util.find_spec("nvidia")
    for base in (spec.submodule_search_locations or []) if spec else []:
        for sub in WHEEL_INCLUDES:
            if os.path.isdir(os.path.join(base, sub)):
                found.append(os.path.join(base, sub))
    for root in toolkit_roots():
        for sub in ("include", "include/cccl"):  # CUDA 13's toolkit keeps CCCL in include/cccl
            if os.path.isdir(os.path.join(root, sub)):
                found.append(os.path.join(root, sub))
    cutlass = importlib.util.find_spec("cutlass_library")  # NVIDIA's nvidia-cutlass wheel carries the headers
    for base in (cutlass.submodule_search_locations or []) if cutlass else []:
        if os.path.isdir(os.path.join(base, "source", "include")):
            found.append(os.path.join(base, "source", "include"))
    return tuple(f"-I{folder}" for folder in dict.fromkeys(found))


_MISSING_HEADER = re.compile(r'^(.*?)\(\d+\): catastrophic error: cannot open source file "([^"]+)"', re.MULTILINE)
# The C and C++ standard library headers, which NVRTC does not have (libcu++ has device forms of
# some: <cuda/std/cstdint>, found where it is installed)
_STD_HEADERS = {
    "algorithm", "any", "array", "atomic", "bit", "bitset", "cassert", "cctype", "cerrno", "cfloat", "charconv",
    "chrono", "cinttypes", "climits", "clocale", "cmath", "complex", "concepts", "condition_variable", "cstdarg",
    "cstddef", "cstdint", "cstdio", "cstdlib", "cstring", "ctime", "deque", "exception", "execution", "expected",
    "filesystem", "format", "forward_list", "fstream", "functional", "future", "initializer_list", "iomanip", "ios",
    "iosfwd", "iostream", "istream", "iterator", "limits", "list", "locale", "map", "memory", "mutex", "new",
    "numbers", "numeric", "optional", "ostream", "queue", "random", "ranges", "ratio", "regex", "scoped_allocator",
    "set", "shared_mutex", "span", "sstream", "stack", "stdexcept", "streambuf", "string", "string_view", "thread",
    "tuple", "type_traits", "typeindex", "typeinfo", "unordered_map", "unordered_set", "utility", "valarray",
    "variant", "vector", "version",
    "assert.h", "ctype.h", "errno.h", "float.h", "inttypes.h", "limits.h", "math.h", "stdarg.h", "stddef.h",
    "stdint.h", "stdio.h", "stdlib.h", "string.h", "time.h", "wchar.h"}


def _cuda_major() -> int | None:
    """The major version of the NVRTC this process compiles with (12, 13), None where unknown."""
    try:
        from cupy_backends.cuda.libs import nvrtc

        return nvrtc.getVersion()[0]
    except Exception:
        return None


_HOST_ONLY_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]((?:cub/cub\.cuh|cub/device/|thrust/)[^>"]*)[>"]', re.MULTILINE)


def _folders(options: tuple[str, ...]) -> list[str]:
    return [o[2:] for o in options if o.startswith("-I")]


def missing_header(name: str, source: str = "", where: str | None = None,
                   options: tuple[str, ...] = ()) -> str | None:
    """One line for a header NVRTC could not open (`name` as the log quotes it, 'crt/mma.h'; `where`
    the file that included it; `source` the kernel's own text; `options` the compile's, whose -I
    folders are looked in): which package provides it and how to install it, what to include
    instead, or that no folder searched has it. Packages: NVIDIA's CUDA wheels (CUDA 12: one per
    component, -cu12; CUDA 13: nvidia-cuda-crt, nvidia-cuda-cccl), CUTLASS's nvidia-cutlass."""
    thirteen = _cuda_major() == 13
    folders = _folders(options)
    top = name.split("/", 1)[0]
    by = f" (included by {os.path.basename(where)})" if where else ""
    has_top = any(os.path.isdir(os.path.join(f, top)) for f in folders) if "/" in name else False
    host_only = _HOST_ONLY_INCLUDE.search(source)
    if host_only and top not in ("crt", "cutlass", "cute"):
        return (f"<{host_only.group(1)}> needs the host's C++ library, which NVRTC (the compiler here) does not "
                "have: include CUB's block or warp headers (<cub/block/block_reduce.cuh>, <cub/warp/warp_reduce.cuh>) "
                "or libcu++'s (<cuda/std/complex>, <cuda/std/utility>), which compile under NVRTC")
    if name in _STD_HEADERS:
        if where and os.path.basename(where) in ("cuda.h", "cuda_runtime_api.h", "cudaTypedefs.h", "cuda_runtime.h"):
            return (f"<{os.path.basename(where)}> is the host's CUDA API, which a kernel file does not need (NVRTC "
                    f"cannot compile it: it includes <{name}>); leave it out")
        stem = {"stdint.h": "cstdint", "stddef.h": "cstddef", "stdio.h": "cstdio", "stdlib.h": "cstdlib",
                "math.h": "cmath", "assert.h": "cassert", "string.h": "cstring", "limits.h": "climits",
                "float.h": "cfloat"}.get(name, name)
        device = [f for f in folders if os.path.isfile(os.path.join(f, "cuda", "std", stem))]
        instead = (f"include <cuda/std/{stem}> (CCCL's libcu++) for device code" if device else
                   "libcu++ has no device form of it; leave it out of the kernel file")
        return (f"<{name}>{by} is a host C++ header, which NVRTC (the compiler here) does not have: {instead}; or "
                "compile the file with nvcc (--compiler nvcc, or a '// roofline compiler: nvcc' line; a CUDA toolkit), which "
                "takes host code and headers")
    if top == "crt":
        package, extra = ("nvidia-cuda-crt", "cuda-toolkit[crt]==13.*") if thirteen else \
            ("nvidia-cuda-nvcc-cu12", "cuda-toolkit[nvcc]==12.*")
        return (f"<{name}> (which <mma.h> and other CUDA headers include) is not installed: it comes with "
                f"{package}; pip install '{extra}', or reinstall roofline with its CUDA extra")
    if top in ("cub", "thrust", "cuda", "nv") and not has_top:
        package = "nvidia-cuda-cccl" if thirteen else "nvidia-cuda-cccl-cu12"
        return (f"<{name}> (CCCL: CUB, libcu++) is not installed: it comes with {package}; pip install "
                f"'cuda-toolkit[cccl]=={13 if thirteen else 12}.*', or reinstall roofline with its CUDA extra")
    if top in ("cutlass", "cute") and not has_top:
        return (f"<{name}> (CUTLASS, CuTe) is not installed: NVIDIA's nvidia-cutlass wheel carries its headers; "
                f"{install_hint('cutlass')}")
    if has_top:
        home = next(f for f in folders if os.path.isdir(os.path.join(f, top)))
        return f"<{name}>{by} is not a header of the installed {top}/ (in {home}): check its name"
    return (f"<{name}>{by} is in none of the {len(folders)} folders searched (the kernel's own and the CUDA, CCCL and "
            "CUTLASS include folders): check its name, or put it beside the kernel")


_PTX_LINE = re.compile(r"(ptx input|\.ptx), line \d+(?=;)")  # NVRTC's 'ptx input', nvcc's file
_NEEDS_TARGET = re.compile(r"Feature '([^']+)' requires \.target (sm_\d+[a-z]?)( or higher)?")
_NOT_ON_TARGET = re.compile(r"Instruction '([^']+)' (?:not supported on \.target|cannot be compiled for architecture)")


def variant_hint(target: str, log: str) -> str:
    """'; --arch sm_90a compiles for sm_90's architecture-specific target' where compile `log` says
    an instruction is not on `target` and `target` has such a variant (wgmma and setmaxnreg are
    sm_90a's alone), else ''."""
    m = re.fullmatch(r"sm_(\d+)(\d)", target)
    if not _NOT_ON_TARGET.search(log) or m is None or f"{int(m.group(1))}.{m.group(2)}" not in VARIANTS["a"]:
        return ""
    return f"; --arch {target}a compiles for {target}'s architecture-specific target"


def newer_target(log: str) -> str | None:
    """What a compile that failed only because the target lacks PTX instructions uses, from ptxas's
    errors: "Feature '.m16n8k16' requires .target sm_80 or higher" gives 'uses .m16n8k16 and .bf16,
    which need sm_80 or later' (a feature of one target alone: 'which needs sm_90a'); "Instruction
    'wgmma.fence' not supported on .target 'sm_89'" gives 'uses wgmma.fence'. None where the log has
    other errors too (they are shown as they are)."""
    needs = _NEEDS_TARGET.findall(log)
    missing = list(dict.fromkeys(_NOT_ON_TARGET.findall(log)))
    others = [ln for ln in log.splitlines()
              if re.search(r"\berror\b", ln) and not _NEEDS_TARGET.search(ln) and not _NOT_ON_TARGET.search(ln)]
    if not (needs or missing) or others:
        return None
    by_target: dict[str, list[str]] = {}
    for feature, target, higher in needs:
        key = target + (" or later" if higher else "")
        if feature not in by_target.setdefault(key, []):
            by_target[key].append(feature)

    def named(features: list[str]) -> str:
        return ", ".join(features[:-1]) + (" and " if len(features) > 1 else "") + features[-1]
    said = [f"{named(f)}, which {'needs' if len(f) == 1 else 'need'} {t}" for t, f in by_target.items()]
    return "uses " + "; ".join(said + ([named(missing)] if missing else []))


def compiler_lines(log: str, limit: int = 12) -> list[str]:
    """The lines of an NVRTC log that say what is wrong ('mine.cu(12): error: ...' and the source
    lines it quotes), at most `limit`, without the empty ones and the summary line, and without
    ptxas's report of what compiled (its `-v` lines) where an error follows it; NUL bytes (ptxas
    ends its report with one) left out."""
    lines = [ln.rstrip() for ln in log.replace("\x00", "").strip("\n ").splitlines()
             if ln.strip() and "detected in the compilation" not in ln]
    if any("error" in ln for ln in lines):
        lines = [ln for ln in lines if not ln.lstrip().startswith("ptxas info") and "bytes stack frame" not in ln]
    # ptxas says one thing once per PTX line it meets it on ('ptx input, line 262; error : Feature
    # '.bf16' requires .target sm_80 or higher'): said once, with how many more lines say it
    said: dict[str, int] = {}
    for ln in lines:
        key = _PTX_LINE.sub(r"\1", ln)
        said[key] = said.get(key, 0) + 1
    if any(n > 1 for n in said.values()):
        lines = [k + (f" (and {n - 1} more PTX lines)" if n > 1 else "") for k, n in said.items()]
    return lines[:limit] + ([f"... ({len(lines) - limit} more lines)"] if len(lines) > limit else [])


def _compile(file_name: str, label: str, arch: str, text: str, expression: str,
             ptxas: bool = True, options: tuple[str, ...] = ("-std=c++17",),
             cubin: bool = False) -> tuple[str, str, str | bytes]:
    """Compile `text` (named `file_name` in messages) for `arch` with `expression` instantiated;
    returns (program log, lowered name, PTX), or with `cubin` the binary in place of the PTX. A failure is a RunError whose first line starts with
    `label`, followed by the compiler's own lines (`compiler_lines`)."""
    from cupy_backends.cuda.libs import nvrtc

    prog = nvrtc.createProgram(text, file_name, [], [])
    try:
        nvrtc.addNameExpression(prog, expression)
        flags = [f"-arch={arch}", *options] + (["-Xptxas", "-v"] if ptxas else [])
        try:
            nvrtc.compileProgram(prog, flags)
        except Exception as exc:
            log = nvrtc.getProgramLog(prog) or str(exc)
            if "gpu-architecture" in log:
                raise _unsupported(arch) from None
            errors = [ln for ln in log.splitlines() if ": error" in ln]
            if errors and all(ln.startswith("__nv_name_map") for ln in errors):  # only the entry failed
                raise RunError(f"{label}: {missing_entry(file_name, expression, text)}") from None
            missing = _MISSING_HEADER.search(log)
            if missing and (why := missing_header(missing.group(2), text, missing.group(1), options)):
                raise RunError(f"{label} does not compile: {why}") from None
            if why := newer_target(log):
                raise RunError(f"{label} does not compile for {arch}: it {why} (PTX instructions {arch} does not "
                               f"have){variant_hint(arch, log)}") from None
            lines = compiler_lines(_without_name_map(log)) or [str(exc)]
            raise RunError(f"{label} does not compile for {arch}:\n" + "\n".join(f"  {ln}" for ln in lines)) from None
        try:
            lowered = nvrtc.getLoweredName(prog, expression)
        except Exception:
            raise RunError(f"{label}: {missing_entry(file_name, expression, text)}") from None
        if cubin:
            return nvrtc.getProgramLog(prog), lowered, nvrtc.getCUBIN(prog)
        ptx = nvrtc.getPTX(prog)
        return nvrtc.getProgramLog(prog), lowered, ptx.decode() if isinstance(ptx, bytes) else ptx
    finally:
        nvrtc.destroyProgram(prog)


def warm_up() -> None:
    """Load NVRTC and compile an empty kernel without ptxas: NVRTC's first compile in a process
    spends about 0.3 s starting its front end, which a forked child then inherits instead of
    paying again. Where NVRTC is missing nothing happens here; each compile then says why."""
    try:
        nvrtc_version()
        from cupy_backends.cuda.libs import nvrtc

        arch = f"sm_{max(nvrtc.getSupportedArchs())}"
        _compile("roofline_warm_up.cu", "warm-up", arch, "__global__ void roofline_warm_up() {}\n",
                 "roofline_warm_up", ptxas=False)
    except Exception:
        pass
