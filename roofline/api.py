"""roofline as a library: what a Python program asks of it, by its own parameters (a usage
error names them as passed: `size`, `out`), each returning typed data and writing nothing it
was not told to. The command line's rooms (`roofline.commands`) do the same work for the terminal.

    import roofline
    doc = roofline.read("roofline-results.json")          # any file roofline writes
    done = roofline.run(kernels=["warptiling"], size=4096)  # the GEMM ladder on this GPU (run)
    done = roofline.profile(["python", "train.py"])         # a program under Nsight Compute
    done = roofline.import_report("report.ncu-rep")         # a report made elsewhere
    done = roofline.grade(["softmax.cu"])                   # any kernel against its speed of light (run)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .defaults import DEFAULT_GRADES, DEFAULT_PROFILE, DEFAULT_RESULTS, DEFAULT_TIMEOUT_S, FULL_CLOCK_SHARE

if TYPE_CHECKING:
    from .commands.grade import GradeReport
    from .results.grades import GradeResults
    from .results.profile import ProfileResults
    from .results.schema import Results
    from .commands.profile import ProfileReport
    from .commands.run import RunReport

__all__ = ["read", "run", "profile", "import_report", "grade"]


def read(path: str | Path) -> Results | ProfileResults | GradeResults:
    """The results, profile or grade file at `path`, read, checked and migrated to the current
    schema (its `read_notes` say what a migration filled in). Raises UsageError for a file that is
    missing, unreadable, invalid or of no kind roofline writes."""
    from . import documents

    return documents.load(Path(path))


def run(kernels: list[str] | None = None, size: int | str | list[str] | None = None, sweep: str | None = None,
        sources: list[str | Path] = (), out: str | Path = DEFAULT_RESULTS, dtype: str | None = None,
        profile: bool = False, device: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
        budget_s: float | None = None, compile_option: list[str] | None = None,
        compiler: str | None = None) -> RunReport:
    """Compile, verify against cuBLAS and time the GEMM ladder of `dtype`'s precision (fp32: the
    SGEMM ladder; bf16, fp16, tf32: the tensor-core ladder), or the `kernels` named, and the
    user's GEMM kernel files in `sources`, on this machine's GPU (`device`: index or PCI bus id),
    at `size` as `run --size` takes it (4096, or ['M=8192', 'N=1024', 'K=4096']) or at each size of
    `sweep` ('512,1024,8192x1024x4096', or 'K=1024,16384'); with `profile`, count each with Nsight
    Compute. `compile_option` and `compiler` compile the files as `run --compile-option` and
    `--compiler` do. Writes `out` atomically. Raises UsageError for bad input, RunError when there
    is no GPU."""
    from .commands import gemm
    from .commands.run import run as run_ladder
    from .model.timing import TimingOptions

    users = gemm.user_kernels([Path(p) for p in sources], compiling=gemm.compile_settings(compiler, compile_option))
    sizes = [str(size)] if isinstance(size, (int, str)) else list(size or [])
    return run_ladder(gemm.gemm_problems(sizes, sweep), Path(out), kernels, sweep=sweep is not None, profile=profile,
                      sources=users, ladder=not users or bool(kernels), gpu=device, dtype=dtype,
                      timing=TimingOptions(timeout_s, budget_s))


def profile(command: list[str], out: str | Path = DEFAULT_PROFILE, kernel_regex: str | None = None,
            launch_skip: int = 0, launch_count: int | None = None, from_start: bool = True,
            report_out: str | Path | None = None, ops: bool = True) -> ProfileReport:
    """Run `command` under Nsight Compute and read every kernel it launches against the roof of
    its own precision; writes the profile to `out` atomically (and ncu's report to `report_out`).
    With `ops`, each kernel's PyTorch op and module are recorded (`commands.profile.profile`).
    Raises UsageError for bad options or a program that does not exist, RunError when ncu is
    missing, may not read the counters, or no kernel was profiled."""
    from .commands.profile import profile as profile_program
    from .nsight.run import DEFAULT_LAUNCH_COUNT, Options

    options = Options(kernel_regex, launch_skip, DEFAULT_LAUNCH_COUNT if launch_count is None else launch_count,
                      from_start)
    return profile_program(list(command), Path(out), options, Path(report_out) if report_out else None, ops=ops)


def import_report(path: str | Path, out: str | Path = DEFAULT_PROFILE, gpu: str | None = None,
                  trace: str | Path | None = None) -> ProfileReport:
    """Read an Nsight Compute report made elsewhere (.ncu-rep, any CSV export, ncu's text output;
    against the preset or device file `gpu` where the report names no GPU) and write it as a
    profile to `out` atomically; with `trace` (a PyTorch profiler trace of the same step), each
    kernel owned by the op and module of the trace's kernel it lines up with. Raises UsageError for
    a file that cannot be read."""
    from .commands.profile import import_profile

    return import_profile(Path(path), Path(out), gpu, Path(trace) if trace else None)


def grade(targets: list[str], out: str | Path = DEFAULT_GRADES, spec: str | Path | None = None,
          size: list[str] | None = None, sweep: str | None = None, baseline: list[str] | None = None,
          profile: bool = False, device: str | None = None, budget_s: float | None = None,
          timeout_s: float = DEFAULT_TIMEOUT_S, full_clock_share: float = FULL_CLOCK_SHARE,
          compile_option: list[str] | None = None, compiler: str | None = None) -> GradeReport:
    """Verify, time and grade each target (FILE.cu, MODULE:FUNCTION or FILE.py:FUNCTION with
    `spec`, or a spec FILE.toml) against its speed of light on this GPU, each in a process of its
    own, at the sizes `size` sets (['C=8192']) or at each value of `sweep` ('C=1024,4096'); writes
    the grade file `out` atomically (what `roofline run TARGETS` does); kernel files compiled as
    `compile_option` and `compiler` say (`run --compile-option`, `--compiler`). Raises UsageError
    for bad input before any GPU work, RunError when there is no GPU."""
    from .commands import gemm
    from .commands.grade import grade as grade_targets
    from .model.timing import TimingOptions

    return grade_targets(list(targets), Path(out), Path(spec) if spec else None, size, baseline, profile, device,
                         TimingOptions(timeout_s, budget_s, full_clock_share), sweep=sweep,
                         compiling=gemm.compile_settings(compiler, compile_option))
