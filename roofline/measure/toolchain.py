"""Which compiler builds a kernel, and the calls that build it with that compiler.

The ladder's kernels are device code written for NVRTC, and NVRTC compiles them. A user's kernel
file is compiled as its settings ask (`UserKernel.build`, `build_options`): `nvcc` (the CUDA
toolkit's compiler, `nvcc_compile`; a RunError where none is found), `nvrtc` (CuPy's runtime
compiler, `nvrtc_compile`), or `auto`, the default: nvcc where a toolkit is found
(`nvcc_compile.find_nvcc`), as the file's author compiles it (host code, host headers and `main`
are fine), else NVRTC, which also builds where the nvcc found does not build for the target (CUDA
13's nvcc and sm_70). Where NVRTC compiles a file, an option it does not take
(an nvcc-only one: -O3, -Xcompiler, -lcublas) is refused in one line (`choose`). A command
chooses once (`pinned`), before any GPU work, and the processes it starts compile with that one.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, replace

from ..build_options import nvrtc_unknown
from ..errors import RunError, UsageError
from ..ladder.families import KernelSpec
from ..ladder.user import UserKernel
from . import nvcc_compile
from .nvml import INSTALL_HINT
from .nvrtc_compile import KernelResources, compile_for as nvrtc_compile_for, nvrtc_version

NVCC, NVRTC = "nvcc", "nvrtc"


@dataclass(frozen=True)
class Compiler:
    """A compiler: `name` NVCC or NVRTC, its `version` ('13.0.88', '12.9'), and nvcc's `path`
    (None for NVRTC, which CuPy loads)."""

    name: str
    version: str
    path: str | None = None

    @property
    def text(self) -> str:
        """As records and notes say it: 'nvcc 13.0.88', 'NVRTC 12.9'."""
        return f"nvcc {self.version}" if self.name == NVCC else f"NVRTC {self.version}"


def nvrtc() -> Compiler:
    """NVRTC, as CuPy loads it. Raises RunError where CuPy or NVRTC is missing."""
    major, minor = nvrtc_version()
    return Compiler(NVRTC, f"{major}.{minor}")


def choose(spec: KernelSpec | UserKernel, arch: str | None = None) -> Compiler:
    """The compiler that builds `spec` (see the module); for target `arch` ('sm_70'), where given,
    `auto` passes over an nvcc that does not build for it (`nvcc_compile.builds_for`). Raises
    RunError when nvcc is asked for and none is found, or when the one found does not run;
    UsageError when NVRTC would compile a file whose options it does not take, or $ROOFLINE_NVCC
    names no program."""
    if not isinstance(spec, UserKernel):
        return nvrtc()
    name, found = _choice(spec, arch)
    return Compiler(NVCC, nvcc_compile.nvcc_version(found), found) if name == NVCC else nvrtc()


def _choice(spec: UserKernel, arch: str | None = None) -> tuple[str, str | None]:
    """`choose`'s choice for a user's kernel, without asking the compiler its version (NVRTC is not
    loaded): (NVCC, its path) or (NVRTC, None). Raises as `choose` does for the choice itself."""
    wanted = spec.build.compiler
    found = (spec.build.nvcc or nvcc_compile.find_nvcc()) if wanted != NVRTC else None
    passed_over = None  # an nvcc that `auto` found and does not build for `arch`
    if found is not None and wanted != NVCC and arch is not None and not nvcc_compile.builds_for(found, arch):
        passed_over, found = found, None
    if found is not None:
        return NVCC, found
    if wanted == NVCC:
        raise RunError(f"{spec.path.name}: nvcc is asked for ({_asked(spec)}), and none was found: {_searched()}; "
                       "install the CUDA toolkit, or compile with NVRTC (compiler nvrtc)")
    unknown = nvrtc_unknown(spec.build.options)
    if unknown is not None:
        if wanted == NVRTC:
            raise UsageError(f"{spec.path.name}: NVRTC ({_asked(spec)}) does not take the compile option {unknown!r}; "
                             "leave it out, or compile with nvcc")
        if passed_over is not None:
            raise UsageError(f"{spec.path.name}: the nvcc found ({passed_over}) does not build for {arch}, and NVRTC, "
                             f"which compiles instead, does not take the compile option {unknown!r}: leave it out, "
                             "or name an nvcc that builds for it ($ROOFLINE_NVCC)")
        raise UsageError(f"{spec.path.name}: the compile option {unknown!r} is nvcc's, and no nvcc was found "
                         f"({_searched()}); NVRTC, which compiles instead, does not take it: install the CUDA "
                         "toolkit, or leave the option out")
    if passed_over is not None and importlib.util.find_spec("cupy_backends") is None:
        raise RunError(f"{spec.path.name}: the nvcc found ({passed_over}) does not build for {arch}, and NVRTC, which "
                       f"would, comes with CuPy, which is not installed: {INSTALL_HINT}")
    return NVRTC, None


def pinned(spec: UserKernel, arch: str | None = None) -> UserKernel:
    """`spec` with the compiler `choose` gives (for target `arch`, where given) written into its
    settings (its name, and nvcc's path): chosen once by the command, so that every process it
    starts compiles with the same one, whatever its environment; NVRTC is not loaded for it (a
    command refuses its inputs before it says CuPy is missing). Raises as `choose` does for the
    choice."""
    name, path = _choice(spec, arch)
    return spec.with_build(replace(spec.build, compiler=name, nvcc=path))


def _asked(spec: UserKernel) -> str:
    return f"compiler {spec.build.compiler}"


def _searched() -> str:
    if nvcc_compile.turned_off():
        return f"${nvcc_compile.NVCC_VARIABLE} is 'off'"
    places = ["$CUDA_HOME/bin", "$CUDA_PATH/bin", *(f"{f}/bin" for f in nvcc_compile.TOOLKIT_FOLDERS)]
    return (f"not on the PATH, nor in {', '.join(places[:-1])} or {places[-1]}; ${nvcc_compile.NVCC_VARIABLE} may "
            "name it")


def resources(spec: KernelSpec | UserKernel, arch: str) -> KernelResources:
    """ptxas's figures for `spec` on target `arch` ('sm_90'), from the compiler `choose` gives:
    registers, static shared and local memory (bytes), the __launch_bounds__ limit, the compiler.
    Raises RunError (the compiler's error lines) or UsageError as `choose` and the compilers do."""
    compiler = choose(spec)
    if compiler.name == NVCC:
        return nvcc_compile.resources(spec, arch, compiler.path)
    return nvrtc_compile_for(spec, arch)
