"""Hardware counters per kernel through Nsight Compute (`ncu`), beside the model's counts.

`roofline run --profile` runs each verified kernel once more, alone, under
`ncu --clock-control none` (the clocks are left as they are) and records, per kernel:

    dram_bytes      dram__bytes.sum                       bytes read + written in DRAM
    l2_bytes        lts__t_bytes.sum                      bytes through the L2 slices
    l1_bytes        l1tex__t_bytes.sum                    bytes through L1/TEX (global, local)
    smem_bytes      smsp__sass_data_bytes_mem_shared.sum  bytes moved by shared-memory instructions
    bank_conflicts  l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum   extra shared-memory wavefronts
    fp32_flops      2 x FFMA + FADD + FMUL thread instructions (..._op_ffma/fadd/fmul_pred_on.sum)

Without `ncu`, or without permission to read the counters, one line says so and the run goes on.
The profiled process is this module run as a script: it compiles one kernel (a ladder kernel at
the tile its name expression gives, or a user's kernel from its launch description) and launches
it once on random inputs, on the GPU the run uses.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys

from ..ladder.families import KernelSpec
from ..ladder.user import UserKernel, from_argument, to_argument
from ..model.problem import Problem
from ..model.traffic import CountedTraffic
from .compile import compile_kernel
from .nvml import from_nvml
from .runner import kernel_args, random_inputs

METRICS = {
    "dram_bytes": "dram__bytes.sum",
    "l2_bytes": "lts__t_bytes.sum",
    "l1_bytes": "l1tex__t_bytes.sum",
    "smem_bytes": "smsp__sass_data_bytes_mem_shared.sum",
    "bank_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
}
FLOP_METRICS = {
    "ffma": "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "fadd": "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "fmul": "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
}
ALL_METRICS = list(METRICS.values()) + list(FLOP_METRICS.values())
TIMEOUT_S = 300
PERMISSION_FIX = ("allow profiling for all users: as root, `echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' "
                  "> /etc/modprobe.d/ncu-permissions.conf` and reboot (or run as root)")


class ProfileUnavailable(RuntimeError):
    """ncu is missing, or may not read the counters; the message says which, in one line."""


def ncu_path() -> str | None:
    """The `ncu` executable on PATH, or None."""
    return shutil.which("ncu")


def parse_ncu_csv(text: str) -> dict[str, float]:
    """Metric name -> value from `ncu --csv --page raw --print-units base` output holding one
    profiled kernel. Raises ProfileUnavailable when the output holds no result row."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        raise ProfileUnavailable("ncu reported no kernel: " + _ncu_error(text))
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    data = [r for r in rows[1:] if r and r[0].strip().isdigit()]
    if not data:
        raise ProfileUnavailable("ncu reported no kernel: " + _ncu_error(text))
    values = {}
    for name, value in zip(header, data[0]):
        try:
            values[name] = float(value.replace(",", ""))
        except ValueError:
            continue
    return values


def _ncu_error(text: str) -> str:
    for ln in text.splitlines():
        if "==ERROR==" in ln:
            return ln.split("==ERROR==", 1)[1].strip()
    return "no ==ERROR== line"


def counted_from(values: dict[str, float]) -> CountedTraffic:
    """The counted traffic from parsed ncu metric values (a counter missing from them stays None)."""
    found = {key: int(values[m]) for key, m in METRICS.items() if m in values}
    if all(m in values for m in FLOP_METRICS.values()):
        found["fp32_flops"] = int(2 * values[FLOP_METRICS["ffma"]] + values[FLOP_METRICS["fadd"]]
                                  + values[FLOP_METRICS["fmul"]])
    return CountedTraffic(**found)


def profile(spec: KernelSpec | UserKernel, problem: Problem, pci_bus_id: str | None = None) -> CountedTraffic:
    """Run `spec` (at its own tile) once under ncu on `problem` (on the GPU at `pci_bus_id`, else
    CUDA's first) and return what ncu counted.
    Raises ProfileUnavailable (one line) when ncu is missing, counters are not permitted, or the
    profile fails."""
    exe = ncu_path()
    if exe is None:
        raise ProfileUnavailable("ncu (Nsight Compute) is not on PATH; run without --profile or install it")
    cmd = [exe, "--clock-control", "none", "--csv", "--page", "raw", "--print-units", "base",
           "-k", spec.kernel_name, "-c", "1", "--metrics", ",".join(ALL_METRICS),
           *launch_command(spec, problem, pci_bus_id)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ProfileUnavailable(f"ncu took longer than {TIMEOUT_S} s on {spec.name}") from None
    text = proc.stdout + "\n" + proc.stderr
    if "ERR_NVGPUCTRPERM" in text:
        raise ProfileUnavailable(f"ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM); "
                                 f"{PERMISSION_FIX}")
    return counted_from(parse_ncu_csv(proc.stdout))


def launch_command(spec: KernelSpec | UserKernel, problem: Problem, pci_bus_id: str | None = None) -> list[str]:
    """The command that launches `spec` once, at its own tile, on `problem`: this module run as a
    script with the kernel's name expression (which carries every template parameter) or a user
    kernel's launch description as JSON, then M N K and the GPU's PCI bus id ('-': the first)."""
    return [sys.executable, "-m", "roofline.measure.counters", to_argument(spec),
            str(problem.m), str(problem.n), str(problem.k), pci_bus_id or "-"]


def launch_once(what: str, problem: Problem, pci_bus_id: str = "-") -> None:
    """Compile the kernel `what` names (a name expression, `families.from_expression`, or a user
    kernel's JSON description) and launch it once on random inputs: the process ncu profiles."""
    import cupy

    if pci_bus_id != "-":
        cupy.cuda.Device(cupy.cuda.runtime.deviceGetByPCIBusId(pci_bus_id)).use()
    spec = from_argument(what)
    kernel = compile_kernel(spec, from_nvml().arch_limits)
    a, b = random_inputs(problem)
    c = cupy.empty((problem.m, problem.n), dtype=cupy.float32)
    kernel.launch(spec.grid(problem), kernel_args(problem, a, b, c, spec))
    cupy.cuda.get_current_stream().synchronize()


if __name__ == "__main__":
    launch_once(sys.argv[1], Problem(*(int(v) for v in sys.argv[2:5])), sys.argv[5] if len(sys.argv) > 5 else "-")
