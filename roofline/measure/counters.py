"""Hardware counters per kernel through Nsight Compute (`ncu`), beside the model's counts.

`roofline run --profile` runs each verified kernel once more, alone, under the same ncu as
`roofline profile` (`nsight.run`: clocks left as they are, the one metric list
`nsight.metrics.COLLECT`) and reads the report with the same reader, recording per kernel:

    dram_bytes      bytes read + written in DRAM
    l2_bytes        bytes through the L2 slices
    l1_bytes        bytes through L1/TEX (global, local)
    smem_bytes      bytes moved by shared-memory instructions
    bank_conflicts  extra shared-memory wavefronts
    fp32_flops      2 x FFMA + FADD + FMUL thread instructions
    tensor_flops    tensor-core operations on inputs of the problem's precision (a BF16, FP16
                    or TF32 GEMM: sm__ops_path_tensor_src_<type>.sum)
(`nsight.metrics` says which metrics give each). Without `ncu`, or without permission to read
the counters, one line says so and the run goes on. The profiled process is this module run as a
script (`roofline.child`, its request in a file beside the report: ncu holds the stdin): it
compiles one kernel (a ladder kernel at the tile its name expression gives, or a user's kernel
from its launch description) and launches it once on random inputs, on the GPU the run uses.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from .. import child
from ..ladder.families import KernelSpec
from ..ladder.user import UserKernel, from_argument, to_argument
from ..model.problem import Problem
from ..model.timeline import WHOLE_RUN_BUFFER_BYTES, interval_ns
from ..model.traffic import CountedTraffic
from ..nsight import run as ncu
from ..nsight.binary import read_report
from ..nsight.launches import Launch, from_rows
from ..nsight.metrics import read
from ..nsight.rows import Row
from .compile import compile_kernel
from .nvml import from_nvml
from .runner import kernel_args, random_inputs

CHILD = "roofline.measure.counters"
TIMEOUT_S = 300
FIELDS = {"dram_bytes": "dram", "l2_bytes": "l2", "l1_bytes": "l1", "smem_bytes": "smem",
          "bank_conflicts": "bank_conflicts", "fp32_flops": "fp32"}


def counted_from(row: Row, precision: str = "fp32") -> CountedTraffic:
    """The counted traffic of one report row (a figure the report lacks stays None); for a GEMM
    whose FLOPs are read against tensor-core roof `precision` ('bf16_tensor'), that precision's
    tensor-core operations too."""
    r = read(row.values, row.text)
    fields = dict(FIELDS, **({"tensor_flops": precision} if precision != "fp32" else {}))
    return CountedTraffic(**{name: int(v) for name, key in fields.items() if (v := r.value(key)) is not None})


# A launch longer than this is sampled at an interval of its own (`sampling_interval_ns`) into a buffer that
# holds its whole run (`model.timeline.WHOLE_RUN_BUFFER_BYTES`): Nsight Compute's own choice held 1,296
# samples of 96 us, 45 % of a 274 ms launch, on an H100 (ncu 2025.3.1); its interval alone, 34 %.
LONG_LAUNCH_MS = 50.0


def sampling_interval_ns(time_ms: float | None, compute_capability: str | None) -> int | None:
    """The PM sampling interval (ns) for a launch of `time_ms` that Nsight Compute's own choice
    would sample in part (longer than LONG_LAUNCH_MS): its duration over
    `model.timeline.WHOLE_RUN_SAMPLES`, rounded up to a microsecond (`model.timeline.interval_ns`).
    None for a shorter launch, and on a GPU whose interval Nsight Compute counts in cycles, not ns
    (compute capability 8.0 and older: Turing and the A100)."""
    if not time_ms or time_ms <= LONG_LAUNCH_MS or not compute_capability:
        return None
    major, minor = (int(x) for x in compute_capability.split(".")[:2])
    if (major, minor) <= (8, 0):
        return None
    return interval_ns(time_ms)


def profile(spec: KernelSpec | UserKernel, problem: Problem, pci_bus_id: str | None = None,
            time_ms: float | None = None, compute_capability: str | None = None,
            timeline: bool = True) -> tuple[CountedTraffic, Launch | None, tuple[str, ...]]:
    """Run `spec` (at its own tile) once under ncu on `problem` (on the GPU at `pci_bus_id`, else
    CUDA's first), with `timeline` its counters sampled over its run as well where this ncu can (PM sampling,
    `nsight.sampling`; a launch measured at `time_ms` over LONG_LAUNCH_MS on a GPU of
    `compute_capability` at an interval of its own, `sampling_interval_ns`, into a buffer that holds
    them all, `model.timeline.WHOLE_RUN_BUFFER_BYTES`, and again at Nsight Compute's interval and
    buffer where ncu refuses those), and return what ncu counted, the launch as read (None where
    it cannot be placed), which holds the samples, and the reader's notes on the report (how it
    was read, what it left out). Raises ncu.NcuError (one line) when ncu is missing, counters are
    not permitted, or the profile fails."""
    options = ncu.Options(kernel_regex=f"^{re.escape(spec.kernel_name)}$", launch_count=1)
    timeline = timeline and ncu.has_section(ncu.find_ncu(), ncu.PM_SAMPLING)
    interval = sampling_interval_ns(time_ms, compute_capability) if timeline else None
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="roofline-ncu-") as tmp:
        command = launch_command(spec, problem, Path(tmp), pci_bus_id)
        done = ncu.run(command, options, Path(tmp) / "kernel", TIMEOUT_S, capture=True, timeline=timeline,
                       interval_ns=interval, buffer_bytes=WHOLE_RUN_BUFFER_BYTES if interval else None)
        if done.report is None and interval:  # this ncu took no such interval or buffer: its own choice
            said = done.warnings()
            notes.append(f"ncu refused a PM sampling interval of {interval:,} ns in a buffer of "
                         f"{WHOLE_RUN_BUFFER_BYTES >> 20:,} MiB"
                         + (f" ({said[-1]})" if said else "") + "; sampled at its own, which may cover part of the run")
            done = ncu.run(command, options, Path(tmp) / "kernel", TIMEOUT_S, capture=True, timeline=timeline)
        if done.report is None:
            said = done.warnings()
            raise ncu.NcuError(f"ncu profiled nothing for {spec.name}" + (f": {said[-1]}" if said else ""))
        read = read_report(done.report)
    rows = read.rows
    if not rows:
        raise ncu.NcuError(f"ncu's report for {spec.name} holds no launch")
    launches, said = from_rows(rows[:1])  # its notes too: PM sampling this ncu_report cannot read, above all
    return counted_from(rows[0], problem.precision_key), (launches[0] if launches else None), \
        tuple(notes) + tuple(read.notes) + tuple(said)


def launch_command(spec: KernelSpec | UserKernel, problem: Problem, folder: Path,
                   pci_bus_id: str | None = None) -> list[str]:
    """The command that launches `spec` once, at its own tile, on `problem`: this module run as a
    child (`roofline.child`) whose request, written to `folder`, names the kernel (its name
    expression, which carries every template parameter, or a user kernel's launch description as
    JSON), the problem (M, N, K and precision) and the GPU's PCI bus id (None: the first)."""
    request = {"kernel": to_argument(spec), "problem": [problem.m, problem.n, problem.k, problem.dtype],
               "pci_bus_id": pci_bus_id}
    return child.command(CHILD, child.write_request(request, folder))


def launch_once(request: dict) -> None:
    """Compile the kernel `request` names (`launch_command`) and launch it once on random inputs:
    the process ncu profiles."""
    import cupy

    if request.get("pci_bus_id"):
        cupy.cuda.Device(cupy.cuda.runtime.deviceGetByPCIBusId(request["pci_bus_id"])).use()
    spec = from_argument(request["kernel"])
    problem = Problem(*request["problem"])
    kernel = compile_kernel(spec, from_nvml().arch_limits)
    a, b = random_inputs(problem)
    c = cupy.empty((problem.m, problem.n), dtype=cupy.float32)
    kernel.launch(spec.grid(problem), kernel_args(problem, a, b, c, spec))
    cupy.cuda.get_current_stream().synchronize()


if __name__ == "__main__":
    launch_once(child.request())
    child.answer()
