"""Compiling a kernel for this machine's GPU, ready to launch: through CuPy (NVRTC), or for a user's
file that nvcc compiles (`toolchain.choose`), nvcc's cubin loaded by CuPy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import RunError, UsageError
from ..ladder.families import KernelSpec
from ..ladder.user import UserKernel
from ..model.arch import ArchLimits
from .nvrtc_compile import compile_cubin, compile_options, compiler_lines, dynamic_smem_bytes


@dataclass(frozen=True)
class CompiledKernel:
    """A kernel compiled for this GPU. `kernel` is the CuPy RawKernel; the figures are the
    driver's: 32-bit registers per thread, static shared memory per block (bytes), local memory
    per thread (bytes; spills land there), and the dynamic shared memory it is launched with;
    `compiler` which compiler built it ('NVRTC 12.9', 'nvcc 13.0.88')."""

    spec: KernelSpec | UserKernel
    kernel: Any
    registers: int
    static_smem_bytes: int
    local_bytes: int
    dynamic_smem_bytes: int
    compiler: str | None = None

    def launch(self, grid: tuple[int, int, int], args: tuple) -> None:
        """Enqueue one launch on the current stream."""
        self.kernel(grid, self.spec.block, args, shared_mem=self.dynamic_smem_bytes)


def compile_kernel(spec: KernelSpec | UserKernel, limits: ArchLimits) -> CompiledKernel:
    """Compile `spec` for the current GPU with the compiler `toolchain.choose` gives (NVRTC, or
    nvcc for a user's file where a toolkit is found), whose per-SM `limits` give the target
    (to read the kernel's dynamic shared memory) and the 48 KB above which a block must opt in
    (cudaFuncAttributeMaxDynamicSharedMemorySize), which it then does. The figures are the
    loaded kernel's attributes (the driver's, for a cubin as for CuPy's own compile). Raises
    RunError with the compiler's first error lines on failure (a tile the kernel's static_asserts
    reject, for one), or when the binary does not load; UsageError as `toolchain.choose` does."""
    import cupy

    from . import nvcc_compile
    from .toolchain import NVCC, choose

    dynamic = dynamic_smem_bytes(spec, limits.arch)
    compiler = choose(spec)
    if compiler.name == NVCC:  # the whole file compiled by nvcc, its cubin loaded
        done = nvcc_compile.build(spec, limits.arch, compiler.path)
        return _from_cubin(spec, limits, done.cubin, done.lowered, dynamic, compiler.text)
    if spec.target(limits.arch) != limits.arch:  # sm_90a: compiled here, loaded from the cubin
        cubin, lowered = compile_cubin(spec, limits.arch)
        return _from_cubin(spec, limits, cubin, lowered, dynamic, compiler.text)
    try:
        module = cupy.RawModule(code=spec.source_text(), options=compile_options(spec),
                                name_expressions=[spec.name_expression], enable_cooperative_groups=_cooperative(spec))
        kernel = module.get_function(spec.name_expression)
        registers = kernel.num_regs  # forces the module load, so load errors surface here
        if dynamic > limits.default_smem_per_block_bytes:
            kernel.max_dynamic_shared_size_bytes = dynamic
    except UsageError:
        raise
    except Exception as exc:  # CompileException, CUDADriverError: both carry the log
        lines = compiler_lines(str(exc)) or [type(exc).__name__]
        raise RunError(f"{spec.name_expression}: compile failed:\n" + "\n".join(f"  {ln}" for ln in lines)) from None
    return CompiledKernel(spec, kernel, registers, kernel.shared_size_bytes, kernel.local_size_bytes, dynamic,
                          compiler.text)


def _from_cubin(spec: KernelSpec | UserKernel, limits: ArchLimits, cubin: bytes, lowered: str, dynamic: int,
                compiler: str) -> CompiledKernel:
    """The kernel `lowered` of `cubin` loaded on this GPU, opted in to `dynamic` bytes of shared
    memory where it needs to. Raises RunError (one line) for a binary the GPU or driver refuses."""
    try:
        kernel = _load_cubin(cubin, lowered, _cooperative(spec))
        registers = kernel.num_regs
        if dynamic > limits.default_smem_per_block_bytes:
            kernel.max_dynamic_shared_size_bytes = dynamic
    except Exception as exc:  # CUDADriverError: a cubin this GPU (or its driver) cannot load
        raise RunError(f"{spec.name_expression}: the {spec.target(limits.arch)} binary ({compiler}) does not load: "
                       f"{exc}{_driver_hint(compiler)}") from None
    return CompiledKernel(spec, kernel, registers, kernel.shared_size_bytes, kernel.local_size_bytes, dynamic, compiler)


def _driver_hint(compiler: str) -> str:
    """For a binary nvcc built that does not load: the CUDA version the driver supports, when it
    is older than nvcc's (a newer toolkit's cubin needs a newer driver)."""
    if not compiler.startswith("nvcc "):
        return ""
    try:
        import cupy

        version = cupy.cuda.runtime.driverGetVersion()  # 12040: CUDA 12.4
        major, minor = version // 1000, version % 1000 // 10
        nvcc = tuple(int(p) for p in compiler.split()[1].split(".")[:2])
    except Exception:
        return ""
    if nvcc <= (major, minor):
        return ""
    return (f" (the driver supports CUDA {major}.{minor}, older than this nvcc: update the driver, put an older "
            "toolkit's nvcc first, or compile with NVRTC: compiler nvrtc)")

def _cooperative(spec: KernelSpec | UserKernel) -> bool:
    """Whether `spec` is launched cooperatively (`KernelSpec.cooperative`: blocks that wait for each
    other; the driver then refuses a grid whose blocks cannot all be resident at once)."""
    return isinstance(spec, KernelSpec) and spec.cooperative


def _load_cubin(cubin: bytes, lowered: str, cooperative: bool = False):
    """The kernel `lowered` of a compiled binary, as a CuPy RawKernel (RawModule loads from a file),
    launched cooperatively where `cooperative`."""
    import tempfile

    import cupy

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        module = cupy.RawModule(path=f.name, enable_cooperative_groups=cooperative)
        kernel = module.get_function(lowered)
        kernel.num_regs  # loads the module while the file exists
    return kernel
