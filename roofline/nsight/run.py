"""Nsight Compute (`ncu`) and the tools beside it, run: a command profiled with roofline's one
metric list (`nsight.metrics.COLLECT`), a binary report exported as CSV, mangled names demangled
(`c++filt`). The one module of `nsight` that starts processes; `run --profile`
(`measure.counters`) and `profile -- COMMAND` both profile through here, with one error type
(`NcuError`) and one permission check.

Profiling: `ncu --clock-control none --target-processes all --metrics <COLLECT> -o <report>
[--log-file ...] [filters] COMMAND ...` keeps the clocks as they are and follows child processes.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..defaults import DEFAULT_LAUNCH_COUNT  # launches a profile takes at most unless told
from ..errors import RunError, UsageError
from ..extras import install_hint
from .metrics import COLLECT

# NVLink multicast (NVLS) off in every program roofline starts, unless its user set these: a
# program profiled or measured here must not change how the machine's NVSwitch fabric is shared.
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}

INSTALL_HINT = ("install Nsight Compute (it comes with the CUDA toolkit, or from developer.nvidia.com/nsight-compute) "
                "and put `ncu` on PATH")
PERMISSION_FIX = ("allow profiling for all users: as root, `echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' "
                  "> /etc/modprobe.d/ncu-permissions.conf` and reboot (or run as root)")


class NcuError(RunError):
    """ncu is missing, may not read the counters, or failed; the message says which in one line."""


def find_ncu() -> str:
    """The `ncu` executable on PATH. Raises NcuError saying how to get it."""
    exe = shutil.which("ncu")
    if exe is None:
        raise NcuError(f"ncu (Nsight Compute) is not on PATH; {INSTALL_HINT}")
    return exe


@functools.lru_cache(maxsize=None)
def has_section(exe: str, section: str) -> bool:
    """Whether the ncu at `exe` offers `section` (`ncu --list-sections`; PmSampling from Nsight
    Compute 2023.1); False where it cannot say."""
    try:
        proc = subprocess.run([exe, "--list-sections"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and re.search(rf"(?m)^\s*{re.escape(section)}\s", proc.stdout) is not None


def check_permission(log: str) -> None:
    """Raise NcuError when ncu's output says it may not read the GPU's counters."""
    if "ERR_NVGPUCTRPERM" in log:
        raise NcuError(f"ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM); {PERMISSION_FIX}")


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
                raise UsageError("{kernel_regex} is empty; give a pattern such as 'gemm|attn'", "kernel_regex")
            try:
                re.compile(self.kernel_regex)
            except re.error as exc:
                raise UsageError(f"{{kernel_regex}} {self.kernel_regex!r} is not a regular expression: {exc}",
                                 "kernel_regex") from None
        if self.launch_skip < 0:
            raise UsageError(f"{{launch_skip}} must be 0 or more, got {self.launch_skip}", "launch_skip")
        if self.launch_skip > 10**9:
            raise UsageError(f"{{launch_skip}} must be at most 1,000,000,000, got {self.launch_skip:,}", "launch_skip")
        if not 1 <= self.launch_count <= 100_000:
            raise UsageError(f"{{launch_count}} must be 1 to 100,000, got {self.launch_count}", "launch_count")
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


PM_SAMPLING = "PmSampling"  # ncu's section that samples counters over each launch (2023.1 and newer)


def run(command: list[str], options: Options, report_base: Path, timeout_s: float | None = None,
        stdout_to_stderr: bool = False, capture: bool = False, ops: bool = False,
        timeline: bool = False, xla_dump: Path | None = None, children: bool = True,
        interval_ns: int | None = None, buffer_bytes: int | None = None) -> ProfileRun:
    """Run `command` under ncu with `options` and the metric list `COLLECT`, writing
    `<report_base>.ncu-rep`. The command's own output passes through (its standard output to
    standard error with `stdout_to_stderr`; kept out of sight with `capture`); ncu's log is
    captured. With `ops`, ncu records the NVTX ranges around each launch (`--nvtx`) and a Python
    program starts with PyTorch's op ranges and module ranges turned on (`ops_env`), and a JAX
    program dumps its optimized HLO into `xla_dump` (where given). ncu follows the command's child
    processes (`--target-processes all`), or without `children` the command's own process alone. With
    `timeline`, ncu also samples each launch's counters over its run (`--section PmSampling`, read by
    `nsight.sampling`), into a device buffer of `buffer_bytes` where given (`--pm-sampling-buffer-size`;
    else Nsight Compute's size, which can fill before a long launch ends), one sample every
    `interval_ns` where given (`--pm-sampling-interval`; else
    Nsight Compute's choice). Raises NcuError when ncu is missing, may not read the counters, or
    times out."""
    exe = find_ncu()
    if timeline and not has_section(exe, PM_SAMPLING):
        raise NcuError(f"this ncu ({exe}) offers no {PM_SAMPLING} section, which samples a kernel over its run: "
                       "Nsight Compute 2023.1 or newer has it")
    log_path = Path(str(report_base) + ".log")
    cmd = [exe, "--clock-control", "none", "--target-processes", "all" if children else "application-only",
           "--metrics", ",".join(COLLECT),
           *(["--nvtx"] if ops else []), *(["--section", PM_SAMPLING] if timeline else []),
           *(["--pm-sampling-interval", str(interval_ns)] if timeline and interval_ns else []),
           *(["--pm-sampling-buffer-size", str(buffer_bytes)] if timeline and buffer_bytes else []),
           "--log-file", str(log_path), "-o", str(report_base), "-f", *options.ncu_flags(), *command]
    output = subprocess.DEVNULL if capture else 2 if stdout_to_stderr else None
    try:
        proc = subprocess.run(cmd, timeout=timeout_s, stdout=output, stderr=subprocess.DEVNULL if capture else None,
                              env=ops_env(program_env(), xla_dump) if ops else program_env())
    except subprocess.TimeoutExpired:
        raise NcuError(f"the profile took longer than {timeout_s:g} s; profile fewer launches (--launch-count)") from None
    log = log_path.read_text(errors="replace").splitlines() if log_path.exists() else []
    check_permission("\n".join(log))
    report = Path(str(report_base) + ".ncu-rep")
    return ProfileRun(report if report.exists() else None, proc.returncode, log)


def program_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a program is started in: `base` (this process's) with NVLink multicast
    off (NO_MULTICAST) where the user has not set those variables."""
    env = dict(os.environ if base is None else base)
    for key, value in NO_MULTICAST.items():
        env.setdefault(key, value)
    return env


def ops_env(env: dict[str, str], xla_dump: Path | None = None) -> dict[str, str]:
    """`env` with `nsight/inject` first on PYTHONPATH and ROOFLINE_OPS=1: a Python program started
    in it loads roofline's `sitecustomize`, which turns on PyTorch's NVTX op ranges and a range per
    nn.Module call once the program imports torch (a program of any other kind is not touched).
    With `xla_dump`, XLA_FLAGS also asks XLA (JAX, TensorFlow) to dump each compiled module's
    optimized HLO as text there, which `traces.hlo` reads; where XLA_FLAGS already names a dump
    folder (`xla_dump_folder`), it is left as it is."""
    inject = str(Path(__file__).resolve().parent / "inject")
    out = dict(env)
    out["PYTHONPATH"] = os.pathsep.join([inject, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    out["ROOFLINE_OPS"] = "1"
    if xla_dump is not None and xla_dump_folder(env.get("XLA_FLAGS", "")) is None:
        out["XLA_FLAGS"] = " ".join([*([env["XLA_FLAGS"]] if env.get("XLA_FLAGS") else []),
                                     f"--xla_dump_to={xla_dump}", "--xla_dump_hlo_as_text"])
    return out


def xla_dump_folder(flags: str) -> Path | None:
    """The folder an XLA_FLAGS value dumps HLO into (`--xla_dump_to=DIR`; the last one given), or
    None where it names none, or names a destination that is not a folder ('-', 'sponge')."""
    found = re.findall(r"(?:^|\s)--xla_dump_to[= ](\S+)", flags)
    if not found or found[-1] in ("-", "sponge"):
        return None
    return Path(found[-1].strip("'\""))


def demangle(names: list[str]) -> dict[str, str]:
    """Mangled names ('_Z...', as `--print-kernel-base mangled` exports them) demangled by
    c++filt where it is installed; the others as they are."""
    mangled = sorted({n for n in names if n.startswith("_Z")})
    exe = shutil.which("c++filt")
    if not mangled or exe is None:
        return {}
    proc = subprocess.run([exe], input="\n".join(mangled), capture_output=True, text=True)
    out = proc.stdout.splitlines()
    return dict(zip(mangled, out)) if proc.returncode == 0 and len(out) == len(mangled) else {}


def export_raw(path: Path) -> str:
    """The raw page of binary report `path` as CSV in base units, exported by the `ncu` on PATH
    (`ncu --import REPORT --csv --page raw --print-units base`). Raises NcuError when no ncu is
    there (saying how else to read the report), UsageError when ncu cannot read the file."""
    exe = shutil.which("ncu")
    if exe is None:
        raise NcuError(f"reading {path} (a binary .ncu-rep) needs NVIDIA's report reader: "
                       f"{install_hint('nsight')} (no Nsight Compute needed), or put ncu on the "
                       "PATH; or export it where ncu is, with `ncu --import REPORT --csv --page raw > report.csv`, and "
                       "import the CSV")
    proc = subprocess.run([exe, "--import", str(path), "--csv", "--page", "raw", "--print-units", "base"],
                          capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        why = (proc.stderr or proc.stdout).strip().splitlines()
        raise UsageError(f"{path}: ncu cannot read it as a report ({why[-1] if why else 'no output'})")
    return proc.stdout
