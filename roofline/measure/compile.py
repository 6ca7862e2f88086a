"""Compiling a kernel for this machine's GPU through CuPy (NVRTC), ready to launch."""

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
    per thread (bytes; spills land there), and the dynamic shared memory it is launched with."""

    spec: KernelSpec | UserKernel
    kernel: Any
    registers: int
    static_smem_bytes: int
    local_bytes: int
    dynamic_smem_bytes: int

    def launch(self, grid: tuple[int, int, int], args: tuple) -> None:
        """Enqueue one launch on the current stream."""
        self.kernel(grid, self.spec.block, args, shared_mem=self.dynamic_smem_bytes)


def compile_kernel(spec: KernelSpec | UserKernel, limits: ArchLimits) -> CompiledKernel:
    """Compile `spec` through NVRTC for the current GPU, whose per-SM `limits` give the target
    (to read the kernel's dynamic shared memory) and the 48 KB above which a block must opt in
    (cudaFuncAttributeMaxDynamicSharedMemorySize), which it then does. Raises RunError with the
    compiler's first error line on failure (a tile the kernel's static_asserts reject, for one)."""
    import cupy

    dynamic = dynamic_smem_bytes(spec, limits.arch)
    if spec.target(limits.arch) != limits.arch:  # sm_90a: compiled here, loaded from the cubin
        cubin, lowered = compile_cubin(spec, limits.arch)
        try:
            kernel = _load_cubin(cubin, lowered)
            registers = kernel.num_regs
            if dynamic > limits.default_smem_per_block_bytes:
                kernel.max_dynamic_shared_size_bytes = dynamic
        except Exception as exc:  # CUDADriverError: a cubin this GPU cannot load
            raise RunError(f"{spec.name_expression}: the {spec.target(limits.arch)} binary does not load: {exc}") from None
        return CompiledKernel(spec, kernel, registers, kernel.shared_size_bytes, kernel.local_size_bytes, dynamic)
    try:
        module = cupy.RawModule(code=spec.source_text(), options=compile_options(spec),
                                name_expressions=[spec.name_expression])
        kernel = module.get_function(spec.name_expression)
        registers = kernel.num_regs  # forces the module load, so load errors surface here
        if dynamic > limits.default_smem_per_block_bytes:
            kernel.max_dynamic_shared_size_bytes = dynamic
    except UsageError:
        raise
    except Exception as exc:  # CompileException, CUDADriverError: both carry the log
        lines = compiler_lines(str(exc)) or [type(exc).__name__]
        raise RunError(f"{spec.name_expression}: compile failed:\n" + "\n".join(f"  {ln}" for ln in lines)) from None
    return CompiledKernel(spec, kernel, registers, kernel.shared_size_bytes, kernel.local_size_bytes, dynamic)


def _load_cubin(cubin: bytes, lowered: str):
    """The kernel `lowered` of a compiled binary, as a CuPy RawKernel (RawModule loads from a file)."""
    import tempfile

    import cupy

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        module = cupy.RawModule(path=f.name)
        kernel = module.get_function(lowered)
        kernel.num_regs  # loads the module while the file exists
    return kernel
