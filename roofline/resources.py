"""Registers, spills and shared memory of the ladder's kernels for any target, without a GPU.

Each kernel is compiled through NVRTC (CuPy's low-level binding, which loads the NVRTC library
from the CUDA wheels or the system toolkit; no driver needed) for `-arch=sm_XY` with
`-Xptxas -v`, and the figures are read from ptxas's report in the program log:

    ptxas info    : Used 128 registers, used 1 barriers, 8192 bytes smem
    ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

(CuPy's own RawModule cannot do this: it appends the current device's -arch after ours.)
NVRTC 13 may answer from the CUDA compute cache without running ptxas; `compile_for` then
compiles once more with a change that defeats the cache.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from .errors import RunError
from .registry import KernelSpec, source

_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


@dataclass(frozen=True)
class KernelResources:
    """ptxas's figures for one kernel on one target. Sizes in bytes."""

    registers: int
    static_smem_bytes: int
    stack_frame_bytes: int
    spill_bytes: int  # spill stores; loads are reported alongside
    spill_load_bytes: int


def parse_ptxas_log(log: str) -> KernelResources:
    """The figures from a `-Xptxas -v` log holding one kernel. Raises RunError when the log has
    no 'Used N registers' line (e.g. ptxas did not run)."""
    used = _USED.search(log)
    if used is None:
        raise RunError("the compiler log holds no ptxas resource report")
    smem = _SMEM.search(log)
    stack = _STACK.search(log)
    frame, stores, loads = (int(g) for g in stack.groups()) if stack else (0, 0, 0)
    return KernelResources(registers=int(used.group(1)), static_smem_bytes=int(smem.group(1)) if smem else 0,
                           stack_frame_bytes=frame, spill_bytes=stores, spill_load_bytes=loads)


def nvrtc_version() -> tuple[int, int]:
    """(major, minor) of the NVRTC library CuPy loads. Raises RunError when there is none."""
    try:
        from cupy_backends.cuda.libs import nvrtc

        return tuple(nvrtc.getVersion())
    except ImportError:
        raise RunError("CuPy is not installed: in the roofline folder run pip install '.[cuda12]' (or '.[cuda13]')") from None
    except Exception as exc:  # the NVRTC shared library could not be found or loaded
        raise RunError(f"NVRTC could not be loaded ({exc}); in the roofline folder run "
                       "pip install '.[cuda12]' (or '.[cuda13]')") from None


def _unsupported(arch: str) -> RunError:
    major, minor = nvrtc_version()
    return RunError(f"this NVRTC ({major}.{minor}) cannot compile for {arch}; the other CUDA flavour may: "
                    "pip install '.[cuda13]' (or '.[cuda12]')")


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


def compile_for(spec: KernelSpec, arch: str, extra_options: tuple[str, ...] = ()) -> KernelResources:
    """Compile `spec` for target `arch` ('sm_90') through NVRTC and return ptxas's figures.

    Raises RunError naming the kernel, the target and the first error line when compilation
    fails (for instance a target this NVRTC no longer supports)."""
    nvrtc_version()
    log = _compile_log(spec, arch, extra_options, source(spec))
    if _USED.search(log) is None:
        # NVRTC 13 keeps compiled code in the CUDA compute cache (~/.nv/ComputeCache) and a cache
        # hit skips ptxas, whose report is then missing. An unused global variable with a fresh
        # name changes the PTX, so ptxas runs again; the kernel's own resources are unaffected.
        nonce = f"\n__device__ int roofline_resources_probe_{uuid.uuid4().hex};\n"
        log = _compile_log(spec, arch, extra_options, source(spec) + nonce)
    try:
        return parse_ptxas_log(log)
    except RunError:
        tail = " | ".join(ln.strip() for ln in log.strip("\x00\n ").splitlines()[-3:]) or "empty log"
        raise RunError(f"{spec.name} for {arch}: the compiler log holds no ptxas resource report "
                       f"(log ends: {tail})") from None


def _compile_log(spec: KernelSpec, arch: str, extra_options: tuple[str, ...], text: str) -> str:
    from cupy_backends.cuda.libs import nvrtc

    prog = nvrtc.createProgram(text, f"{spec.name}.cu", [], [])
    try:
        nvrtc.addNameExpression(prog, spec.name_expression)
        options = [f"-arch={arch}", "-std=c++17", "-Xptxas", "-v", *extra_options]
        try:
            nvrtc.compileProgram(prog, options)
        except Exception as exc:
            log = nvrtc.getProgramLog(prog) or str(exc)
            first = next((ln for ln in log.splitlines() if "error" in ln.lower()), log.strip().splitlines()[0])
            if "gpu-architecture" in log:
                raise _unsupported(arch) from None
            raise RunError(f"{spec.name} does not compile for {arch}: {first.strip()}") from None
        return nvrtc.getProgramLog(prog)
    finally:
        nvrtc.destroyProgram(prog)
