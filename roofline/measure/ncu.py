"""Nsight Compute (`ncu`) from the outside: run any command under it, and read its reports.

`profile_command` runs the user's command as

    ncu --clock-control none --target-processes all --metrics <METRICS> -o <report> \
        [-k regex:RE] [--launch-skip N] [--launch-count N] [--profile-from-start off] COMMAND ...

(clocks left as they are, child processes followed) and keeps the `.ncu-rep` report. A report is
read through Nsight Compute's own Python interface (`ncu_report`, shipped in its
`extras/python` folder) when it can be found, else through its CSV export
(`ncu --import REPORT --csv --page raw --print-units base`); a raw CSV export made elsewhere is
read with no ncu at all (`parse_raw_csv`). Every reader gives the same rows: one dict per profiled
launch, metric name -> value in base units (bytes, ns, Hz, instructions), plus the launch's
'Kernel Name' (demangled), 'ID', 'Process ID', 'CC' and the 'device__attribute_*' columns.

What the metrics count (the FLOP formulas are Nsight Compute's own roofline sections'):
    time      gpu__time_duration.sum (ns), the launch alone: ncu serialises kernels
    FP64      2 x DFMA + DADD + DMUL thread instructions (smsp__sass_thread_inst_executed_op_d*)
    FP32      2 x FFMA + FADD + FMUL (..._op_f*)
    FP16      2 x HFMA + HADD + HMUL (..._op_h*), BF16 on the CUDA cores included
    tensor    sm__ops_path_tensor_src_{fp16, bf16_dst_fp32, tf32_dst_fp32, fp8, fp64, int8}.sum:
              operations on the tensor cores by input type, two per multiply-add (a BF16 4096^3
              product counts 2 x 4096^3; seen on the H200 with ncu 2025.3.1)
    bytes     DRAM dram__bytes.sum, L2 lts__t_bytes.sum, L1 l1tex__t_bytes.sum, shared memory
              smsp__sass_data_bytes_mem_shared.sum (`counters.METRICS`, as `run --profile`)
    occupancy achieved: sm__warps_active.avg.pct_of_peak_sustained_active; theoretical: the
              project's calculator on launch__registers_per_thread, block size and shared memory
A metric the GPU does not have reads as 'n/a' and is left out of the row.
"""

from __future__ import annotations

import csv
import glob
import math
import importlib
import io
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import RunError, UsageError
from ..model.arch import limits_for_cc
from ..model.device import DeviceSpec
from ..model.peaks import fp32_cores_per_sm
from ..model.roofs import dram_gbps, fp32_gflops
from .counters import FLOP_METRICS, METRICS, PERMISSION_FIX
from .nvml import tensor_clock_mhz

TIME = "gpu__time_duration.sum"
FLOP_INSTRUCTIONS = {
    "fp64": ("smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
             "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum"),
    "fp32": (FLOP_METRICS["ffma"], FLOP_METRICS["fadd"], FLOP_METRICS["fmul"]),
    "fp16": ("smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
             "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum"),
}
TENSOR_OPS = {
    "fp16_tensor": "sm__ops_path_tensor_src_fp16.sum",
    "bf16_tensor": "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "tf32_tensor": "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    "fp8_tensor": "sm__ops_path_tensor_src_fp8.sum",
    "fp64_tensor": "sm__ops_path_tensor_src_fp64.sum",
    "int8_tensor": "sm__ops_path_tensor_src_int8.sum",
}
ACHIEVED = "sm__warps_active.avg.pct_of_peak_sustained_active"
INCOMPLETE = "incomplete row"  # the key a row cut short carries (`parse_raw_csv`): it is left out, and counted
SM_CLOCK = "sm__cycles_elapsed.avg.per_second"
LAUNCH = ("launch__grid_size", "launch__block_size", "launch__registers_per_thread",
          "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
          "launch__grid_dim_x", "launch__grid_dim_y", "launch__grid_dim_z",
          "launch__block_dim_x", "launch__block_dim_y", "launch__block_dim_z")
PROFILE_METRICS = ([TIME] + list(METRICS.values()) + [m for ms in FLOP_INSTRUCTIONS.values() for m in ms]
                   + list(TENSOR_OPS.values()) + [ACHIEVED, SM_CLOCK] + list(LAUNCH))
DEFAULT_LAUNCH_COUNT = 500
INSTALL_HINT = ("install Nsight Compute (it comes with the CUDA toolkit, or from developer.nvidia.com/nsight-compute) "
                "and put `ncu` on PATH")
STRING_COLUMNS = ("Kernel Name", "Process Name", "Host Name", "Block Size", "Grid Size", "CC",
                  "device__attribute_display_name", "device__attribute_chip")


class NcuError(RunError):
    """ncu is missing, may not read the counters, or failed; the message says which in one line."""


def find_ncu() -> str:
    """The `ncu` executable on PATH. Raises NcuError saying how to get it."""
    exe = shutil.which("ncu")
    if exe is None:
        raise NcuError(f"ncu (Nsight Compute) is not on PATH; {INSTALL_HINT}")
    return exe


@dataclass(frozen=True)
class Options:
    """What to profile: `kernel_regex` (ncu `-k regex:`), launches to skip first and the most to
    profile (`launch_skip`, `launch_count`), and whether profiling starts with the program
    (`from_start`; off: only between cudaProfilerStart and cudaProfilerStop)."""

    kernel_regex: str | None = None
    launch_skip: int = 0
    launch_count: int = DEFAULT_LAUNCH_COUNT
    from_start: bool = True

    def check(self) -> "Options":
        """Raises UsageError for a regex that does not compile or counts out of range."""
        if self.kernel_regex is not None:
            if not self.kernel_regex.strip():
                raise UsageError("--kernel-regex is empty; give a pattern such as 'gemm|attn'")
            try:
                re.compile(self.kernel_regex)
            except re.error as exc:
                raise UsageError(f"--kernel-regex {self.kernel_regex!r} is not a regular expression: {exc}") from None
        if self.launch_skip < 0:
            raise UsageError(f"--launch-skip must be 0 or more, got {self.launch_skip}")
        if self.launch_skip > 10**9:
            raise UsageError(f"--launch-skip must be at most 1,000,000,000, got {self.launch_skip:,}")
        if not 1 <= self.launch_count <= 100_000:
            raise UsageError(f"--launch-count must be 1 to 100,000, got {self.launch_count}")
        return self

    def ncu_flags(self) -> list[str]:
        """These options as ncu's flags."""
        flags = ["--launch-skip", str(self.launch_skip), "--launch-count", str(self.launch_count)]
        if self.kernel_regex:
            flags += ["-k", f"regex:{self.kernel_regex}"]
        if not self.from_start:
            flags += ["--profile-from-start", "off"]
        return flags


@dataclass(frozen=True)
class ProfileRun:
    """A finished `ncu` run: the report it wrote (None when it wrote none), the command's exit
    code (ncu passes the application's on), and ncu's own lines ('==PROF==', '==ERROR==',
    '==WARNING==', the list of kernels it saw when none matched)."""

    report: Path | None
    returncode: int
    log: list[str]

    def warnings(self) -> list[str]:
        """ncu's warning and error lines, without the prefix (clock control notes left out)."""
        out = []
        for ln in self.log:
            for tag in ("==WARNING==", "==ERROR=="):
                if ln.startswith(tag) and "unmodified GPU clocks" not in ln:
                    out.append(ln[len(tag):].strip())
        return out

    def available_kernels(self) -> list[str]:
        """The kernel names ncu lists when a filter matched none of them."""
        names, inside = [], False
        for ln in self.log:
            if ln.startswith("Available Kernels"):
                inside = True
            elif inside and re.match(r"^\s*\d+\.\s", ln):
                names.append(ln.split(".", 1)[1].strip())
            elif inside:
                inside = False
        return names


def run(command: list[str], options: Options, report_base: Path, timeout_s: float | None = None,
        stdout_to_stderr: bool = False) -> ProfileRun:
    """Run `command` under ncu with `options`, writing `<report_base>.ncu-rep`. The command's own
    output passes through (its standard output to standard error with `stdout_to_stderr`); ncu's
    log is captured. Raises NcuError when ncu is missing, may not read the counters, or times
    out."""
    exe = find_ncu()
    log_path = Path(str(report_base) + ".log")
    cmd = [exe, "--clock-control", "none", "--target-processes", "all", "--metrics", ",".join(PROFILE_METRICS),
           "--log-file", str(log_path), "-o", str(report_base), "-f", *options.ncu_flags(), *command]
    try:
        proc = subprocess.run(cmd, timeout=timeout_s, stdout=2 if stdout_to_stderr else None)
    except subprocess.TimeoutExpired:
        raise NcuError(f"the profile took longer than {timeout_s:g} s; profile fewer launches (--launch-count)") from None
    log = log_path.read_text(errors="replace").splitlines() if log_path.exists() else []
    text = "\n".join(log)
    if "ERR_NVGPUCTRPERM" in text:
        raise NcuError(f"ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM); {PERMISSION_FIX}")
    report = Path(str(report_base) + ".ncu-rep")
    return ProfileRun(report if report.exists() else None, proc.returncode, log)


def _ncu_report_module():
    """Nsight Compute's Python report interface, found beside the `ncu` on PATH, or None."""
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        pass
    exe = shutil.which("ncu")
    if exe is None:
        return None
    real = Path(os.path.realpath(exe)).parent
    patterns = [real / "extras" / "python", real.parent / "extras" / "python",
                *(Path(p) for p in glob.glob(str(real.parent / "nsight-compute*" / "extras" / "python"))),
                *(Path(p) for p in glob.glob("/opt/nvidia/nsight-compute/*/extras/python"))]
    for folder in patterns:
        if (folder / "ncu_report.py").exists():
            sys.path.insert(0, str(folder))
            try:
                return importlib.import_module("ncu_report")
            except ImportError:
                sys.path.remove(str(folder))
    return None


def read_report(path: Path) -> tuple[list[dict], str]:
    """The launches in an `.ncu-rep` report and how they were read ('ncu_report' or 'ncu --csv').
    Raises NcuError when ncu is missing (a binary report needs it) and UsageError when the file
    is not a report ncu can read."""
    module = _ncu_report_module()
    if module is not None:
        try:
            rows = _rows_from_module(module, path)
        except Exception as exc:  # the interface's errors are not typed; fall back to the CSV export
            print(f"ncu_report could not read {path} ({exc}); using ncu's CSV export", file=sys.stderr)
            rows = []
        if rows:  # none: not a report it knows (or an empty one), which ncu itself then says
            return rows, "Nsight Compute's Python report interface (ncu_report)"
    exe = shutil.which("ncu")
    if exe is None:
        raise NcuError(f"reading {path} (a binary .ncu-rep) needs ncu: {INSTALL_HINT}; or export it where ncu is, "
                       "with `ncu --import REPORT --csv --page raw > report.csv`, and import the CSV")
    proc = subprocess.run([exe, "--import", str(path), "--csv", "--page", "raw", "--print-units", "base"],
                          capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        why = (proc.stderr or proc.stdout).strip().splitlines()
        raise UsageError(f"{path}: ncu cannot read it as a report ({why[-1] if why else 'no output'})")
    return parse_raw_csv(proc.stdout, str(path)), "ncu --import --csv --page raw"


def _rows_from_module(module, path: Path) -> list[dict]:
    ctx = module.load_report(str(path))
    demangled = getattr(module.IAction, "NameBase_DEMANGLED", None)
    string_kind = getattr(module.IMetric, "ValueKind_STRING", None)
    rows = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            row: dict = {"ID": len(rows), "Kernel Name": action.name(demangled) if demangled is not None
                         else action.name()}
            for name in action.metric_names():
                metric = action.metric_by_name(name)
                if metric is None or not metric.has_value():
                    continue
                if metric.kind() == string_kind:
                    row[name] = metric.as_string()
                elif name.startswith(("launch__", "device__", "gpu__", "dram__", "lts__", "l1tex__", "sm__", "smsp__")):
                    value = metric.as_double()
                    if value == value:  # NaN: not collected
                        row[name] = value
            for key, metric_name in (("Process ID", "launch__process_id"),):
                if metric_name in row:
                    row[key] = row[metric_name]
            cc = (row.get("device__attribute_compute_capability_major"), row.get("device__attribute_compute_capability_minor"))
            if None not in cc:
                row["CC"] = f"{int(cc[0])}.{int(cc[1])}"
            rows.append(row)
    return rows


_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_TIME = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9}
_BASE_WORDS = ("byte", "inst", "cycle", "warp", "thread", "block", "hz", "pass", "sector", "request", "wavefront")


def unit_scale(unit: str) -> float | None:
    """The factor that takes a value in `unit` (as ncu's CSV header row writes it: 'Mbyte', 'us',
    'Ghz', 'Kbyte/cycle', 'register/thread', '%') to base units (bytes, ns, Hz, ...); None for a
    unit this reader does not know."""
    unit = unit.strip()
    if not unit or unit in ("%", "register/thread", "SM", "cluster", "block", "warp", "thread", "inst"):
        return 1.0
    head = unit.split("/")[0]
    if head in _TIME:
        return _TIME[head]
    for word in _BASE_WORDS:
        if head.lower().endswith(word) and head[: -len(word)] in _PREFIX:
            return _PREFIX[head[: -len(word)]]
    return None


def parse_raw_csv(text: str, source: str = "report") -> list[dict]:
    """The launches in a raw CSV export of Nsight Compute (`ncu --csv --page raw`, with or without
    `--print-units base`; '==PROF==' log lines before the table are skipped): one dict per launch,
    numbers in base units with their thousands separators removed, 'n/a' left out. Raises
    UsageError (one line, naming `source`) when the text holds no such table or a needed number
    carries a unit this reader does not know."""
    lines = text.removeprefix("\ufeff").splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.lstrip("\ufeff").startswith('"ID","Process ID"')), None)
    if start is None:
        raise UsageError(f"{source}: not a raw Nsight Compute CSV export (no \"ID\",\"Process ID\",... header); "
                         "export one with `ncu --import REPORT --csv --page raw > report.csv`")
    reader = csv.reader(io.StringIO("\n".join(ln.lstrip("\ufeff") for ln in lines[start:] if not ln.startswith("=="))))
    header = next(reader)
    if "Kernel Name" not in header:
        raise UsageError(f"{source}: the CSV has no 'Kernel Name' column; export it with --page raw")
    scales = [1.0] * len(header)
    rows = []
    for record in reader:
        if not record:
            continue
        if not record[0].strip():  # the units row
            scales = [unit_scale(u) for u in record] + [1.0] * (len(header) - len(record))
            continue
        if len(record) < len(header):  # a row cut short (a truncated file): its counters are incomplete
            rows.append({INCOMPLETE: True})
            continue
        row: dict = {}
        for name, value, scale in zip(header, record, scales):
            number = _number(value)
            if name in STRING_COLUMNS or name.startswith("device__attribute_") and number is None:
                row[name] = value
            elif number is not None and math.isfinite(number):
                if scale is None:
                    if name in PROFILE_METRICS:
                        raise UsageError(f"{source}: column {name} has a unit this reader does not know; "
                                         "export with --print-units base")
                    continue
                row[name] = number * scale
        rows.append(row)
    return rows


def _number(text: str) -> float | None:
    """A CSV cell as a number (thousands separators dropped), None when it is none."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _attr(row: dict, name: str) -> float | None:
    value = row.get(f"device__attribute_{name}")
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def device_from_rows(rows: list[dict], source: str = "report") -> DeviceSpec:
    """The GPU a report's first launch ran on, from its device attributes: SM count, max SM and
    memory clocks, bus width and memory (peaks by `model.roofs` and `model.peaks`, FP32 cores from
    the per-SM count of the architecture), per-SM limits for the occupancy calculator. Raises
    UsageError when the report holds no device attributes (then name the GPU with --gpu)."""
    row = rows[0]
    name = str(row.get("device__attribute_display_name", "")).strip()
    sm = _attr(row, "multiprocessor_count")
    major, minor = _attr(row, "compute_capability_major"), _attr(row, "compute_capability_minor")
    cc = f"{int(major)}.{int(minor)}" if major is not None and minor is not None else str(row.get("CC", "")).strip()
    clock_khz = _attr(row, "max_gpu_frequency_khz") or _attr(row, "clock_rate")
    mem_khz = _attr(row, "max_mem_frequency_khz") or _attr(row, "memory_clock_rate")
    bus = _attr(row, "global_memory_bus_width")
    if not (name and sm and cc and clock_khz and mem_khz and bus):
        raise UsageError(f"{source}: the report holds no device attributes to take the GPU's peaks from; "
                         "name the GPU with --gpu NAME")
    limits = limits_for_cc(cc, **{key: int(v) for key, attr in (
        ("max_warps_per_sm", "max_warps_per_multiprocessor"), ("max_blocks_per_sm", "max_blocks_per_multiprocessor"),
        ("registers_per_sm", "max_registers_per_multiprocessor"), ("max_registers_per_block", "max_registers_per_block"),
        ("smem_per_sm_bytes", "max_shared_memory_per_multiprocessor"),
        ("max_smem_per_block_optin_bytes", "max_shared_memory_per_block_optin"),
        ("reserved_smem_per_block_bytes", "reserved_shared_memory_per_block"),
        ("max_threads_per_block", "max_threads_per_block")) if (v := _attr(row, attr)) is not None})
    cores = fp32_cores_per_sm(cc) * int(sm)
    sm_mhz, mem_mhz = clock_khz / 1e3, mem_khz / 1e3
    return DeviceSpec(
        name=name, compute_capability=cc, sm_count=int(sm), peak_fp32_gflops=fp32_gflops(cores, sm_mhz),
        peak_dram_gbps=dram_gbps(mem_mhz, int(bus)), limits=limits,
        source=f"device attributes in the Nsight Compute report ({source}); FP32 cores {fp32_cores_per_sm(cc)} per SM",
        fp32_cores=cores, max_sm_clock_mhz=sm_mhz, max_mem_clock_mhz=mem_mhz, memory_bus_width_bits=int(bus),
        memory_bytes=int(_attr(row, "total_memory") or 0) or None, tensor_clock_mhz=tensor_clock_mhz(name),
    ).with_peaks()
