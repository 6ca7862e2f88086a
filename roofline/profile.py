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
The profiled process is this module run as a script: it compiles one ladder kernel and launches
it once on random inputs.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys

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
TIMEOUT_S = 300


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


def measured_from(values: dict[str, float]) -> dict:
    """The results file's `measured` object from parsed ncu metric values."""
    out = {key: int(values[m]) for key, m in METRICS.items() if m in values}
    if all(m in values for m in FLOP_METRICS.values()):
        out["fp32_flops"] = int(2 * values[FLOP_METRICS["ffma"]] + values[FLOP_METRICS["fadd"]]
                                + values[FLOP_METRICS["fmul"]])
    return out


def profile(spec, m: int, n: int, k: int) -> dict:
    """Run `spec` once under ncu on an M x N x K problem and return its `measured` object.
    Raises ProfileUnavailable (one line) when ncu is missing, counters are not permitted, or the
    profile fails."""
    exe = ncu_path()
    if exe is None:
        raise ProfileUnavailable("ncu (Nsight Compute) is not on PATH; run without --profile or install it")
    metrics = ",".join(list(METRICS.values()) + list(FLOP_METRICS.values()))
    cmd = [exe, "--clock-control", "none", "--csv", "--page", "raw", "--print-units", "base",
           "-k", spec.template or spec.name, "-c", "1", "--metrics", metrics,
           sys.executable, "-m", "roofline.profile", spec.name, json.dumps(spec.params), str(m), str(n), str(k)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ProfileUnavailable(f"ncu took longer than {TIMEOUT_S} s on {spec.name}") from None
    text = proc.stdout + "\n" + proc.stderr
    if "ERR_NVGPUCTRPERM" in text:
        raise ProfileUnavailable("ncu may not read the GPU's performance counters here "
                                 "(ERR_NVGPUCTRPERM); run as an administrator or allow profiling")
    return measured_from(parse_ncu_csv(proc.stdout))


def attach(doc: dict, output, progress=lambda _: None) -> list[str]:
    """Profile each verified kernel of `output` (a `runner.RunOutput`) and put its `measured`
    object into the matching entry of results document `doc`, then refresh the verdicts.
    Returns notes (one line each) when profiling is unavailable; the document keeps what it had."""
    from . import results

    p = output.problem
    for r, entry in zip(output.kernels, doc["kernels"]):
        if not r.correct:
            continue
        progress(f"{r.spec.name}: Nsight Compute")
        try:
            entry["measured"] = profile(r.spec, p.m, p.n, p.k)
        except ProfileUnavailable as exc:
            return [f"no hardware counters: {exc}; the rest of the run is kept"]
    results.annotate(doc)
    return []


def _launch_once(name: str, params: dict, m: int, n: int, k: int) -> None:
    import cupy

    from . import registry, runner

    spec = registry.autotuned_spec(params) if name == "autotuned" else registry.BY_NAME[name]
    kernel = runner.compile_kernel(spec)
    problem = runner.Problem(m, n, k)
    a, b = runner.random_inputs(problem)
    c = cupy.empty((m, n), dtype=cupy.float32)
    kernel(spec.grid(m, n), spec.block, runner.kernel_args(problem, a, b, c), shared_mem=spec.dynamic_smem_bytes)
    cupy.cuda.get_current_stream().synchronize()


if __name__ == "__main__":
    _launch_once(sys.argv[1], json.loads(sys.argv[2]), *(int(v) for v in sys.argv[3:6]))
