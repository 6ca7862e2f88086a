"""Every command of roofline as a user meets it: the wheel installed (not editable) in a venv of its
own, run from a folder outside the checkout, on the inputs the repository carries.

Run by .ci/run with that venv's Python:  .venv-wheel/bin/python .ci/installed_walk.py
Each case runs the installed `roofline` command in a fresh temporary folder and must give a
result (exit 0) or, where it cannot (no GPU here, no Nsight Compute), one line on stderr and the
exit code the README gives (1 runtime, 2 invalid input); never a traceback. Every command the
installed app declares must have a case here, so a new command fails this walk until it has one.
The old spellings (renamed flags; grade, tune and check, merged into run and compare) must each be
answered with one line naming the new one and exit 2 (OLD_SPELLINGS).
Exit status: 0 when every case holds, 1 otherwise (each failure printed).
"""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLOTS, FIXTURES, EXAMPLES = ROOT / "plots", ROOT / "tests" / "fixtures", ROOT / "examples"
NCU_CSV = FIXTURES / "ncu" / "cupy-h200-base.csv"
NCU_TEXT = FIXTURES / "ncu" / "corpus" / "adamw" / "basic.txt.xz"  # a default-set text (xz): no kernel has a roof
NCU_PUBLIC = FIXTURES / "ncu" / "public" / "t4_atomics_mixed_indent.txt"  # someone else's paste
TRACES = FIXTURES / "traces" / "public"

# (command, arguments, the exit codes it may end with). {tmp} is the case's own folder; a case may
# read what an earlier one wrote there only when both are in one tuple of CHAINS.
CASES: list[tuple[str, list[str], set[int]]] = [
    ("occupancy", ["--regs", "93", "--threads", "256", "--arch", "sm_90"], {0}),
    ("occupancy", ["--regs", "300", "--threads", "256", "--arch", "sm_90"], {2}),
    ("device", ["--gpu", "h200"], {0}),
    ("device", [], {1}),  # no GPU here
    ("kernels", ["--gpu", "h200", "--size", "1024", "--model-only"], {0}),
    ("kernels", ["--gpu", "h200", "--size", "1024"], {0, 1}),  # compiles with the cuda12 extra's NVRTC, else one line
    ("new", ["{tmp}/mine.cu"], {0}),
    ("schema", [], {0}),
    ("schema", ["grade"], {0}),
    ("schema", ["compare"], {0}),
    ("run", ["--all", "--out", "{tmp}/r.json"], {1}),
    ("run", ["--tune", "--size", "512"], {1}),  # the tile search, once tune
    ("run", [str(EXAMPLES / "grade" / "softmax_online.cu"), "--out", "{tmp}/g.json"], {1}),  # graded, once grade
    ("profile", ["--import", str(NCU_CSV), "--out", "{tmp}/p.json"], {0}),
    ("profile", ["--import", str(NCU_PUBLIC), "--out", "{tmp}/p.json"], {0}),
    ("profile", ["--out", "{tmp}/p.json", "--", "true"], {1}),  # no ncu here
    ("comms", [str(TRACES / "sampled_rank-0.json.gz"), str(TRACES / "sampled_rank-1.json.gz")], {0}),
    ("show", [str(PLOTS / "results-h200.json")], {0}),
    ("show", [str(PLOTS / "profile-h200-transformer.json")], {0}),
    ("show", [str(PLOTS / "grades-h200.json")], {0}),
    ("show", [str(PLOTS / "sweep-h200.json")], {0}),
    ("show", [str(PLOTS / "tune-h200.json")], {0}),
    ("show", [str(PLOTS / "results-h200-energy.json")], {0}),
    ("show", [str(ROOT / "README.md")], {2}),
    ("plot", [str(PLOTS / "results-h200.json"), "--out", "{tmp}/r.png"], {0}),
    ("plot", [str(PLOTS / "profile-h200-transformer.json"), "--out", "{tmp}/p.html"], {0}),
    ("plot", [str(PLOTS / "grades-h200.json"), "--out", "{tmp}/g.svg"], {0}),
    ("plot", [str(PLOTS / "sweep-h200.json"), "--kind", "sweep", "--out", "{tmp}/s.png"], {0}),
    ("compare", [str(PLOTS / "profile-h200-adamw-foreach.json"), str(PLOTS / "profile-h200-adamw-fused.json")], {0}),
    ("compare", [str(PLOTS / "results-h200-bf16-8192-run1.json"), str(PLOTS / "results-h200-bf16-8192-run2.json")],
     {0}),
    ("compare", [str(PLOTS / "results-h200.json"), str(PLOTS / "profile-h200-gpt2.json")], {0, 2}),
    ("compare", [str(PLOTS / "results-h200-bf16-8192-run1.json"), str(PLOTS / "results-h200-bf16-8192-run2.json"),
                 "--max-drop", "5%"],
     {0, 1}),  # the gate, once check; 1: a kernel slower than its baseline beyond noise
    ("whatif", [str(PLOTS / "profile-h200-gpt2.json")], {0}),
    ("whatif", [str(PLOTS / "grades-h200.json")], {0, 2}),
    ("project", [str(PLOTS / "profile-h200-gpt2.json"), "--gpu", "a100-sxm4-80gb"], {0}),
    ("project", [str(PLOTS / "grades-h200.json"), "--gpu", "t4"], {0, 2}),
]

# cases that read what an earlier one of the same chain wrote, in one folder
CHAINS: list[list[tuple[str, list[str], set[int]]]] = [
    [("new", ["{tmp}/mine.cu"], {0}),
     ("kernels", ["{tmp}/mine.cu", "--arch", "sm_90"], {0, 1}),  # NVRTC with the cuda12 extra
     ("run", ["{tmp}/mine.cu", "--out", "{tmp}/r.json"], {1})],
    [("profile", ["--import", str(NCU_TEXT), "--gpu", "h200", "--out", "{tmp}/p.json"], {0}),
     ("project", ["{tmp}/p.json", "--gpu", "h200"], {0, 2}),
     ("whatif", ["{tmp}/p.json"], {0, 2}),
     ("show", ["{tmp}/p.json"], {0}),
     ("plot", ["{tmp}/p.json", "--out", "{tmp}/p.png"], {0, 2})],
]

# The spellings before the flags were renamed and grade, tune and check merged into run and compare:
# each answered with exit 2 and one line saying what to write now (nothing run, nothing written).
OLD_SPELLINGS: list[list[str]] = [
    ["grade", "x.cu"],
    ["tune", "--size", "512"],
    ["check", "new.json", "--baseline", "old.json"],
    ["show", "--results", "f"],
    ["plot", "--results", "f", "--out", "c.png"],
    ["run", "--source", "x.cu"],
    ["run", "--sizes", "512,1024"],
    ["run", "--m", "8192", "--n", "1024", "--k", "4096"],
    ["run", "x.cu", "--entry", "e"],
    ["kernels", "--source", "x.cu"],
    ["compare", "a.json", "b.json", "--out", "c.png"],
    ["occupancy", "--regs", "32", "--threads", "256", "--plot", "o.png"],
    ["schema", "--profile"],
]


def _roofline() -> str:
    exe = Path(sys.executable).parent / "roofline"
    if not exe.is_file():
        sys.exit(f"installed_walk: no roofline command beside {sys.executable}: install the wheel in this venv first")
    return str(exe)


def _installed_apart() -> list[str]:
    """Failures: roofline imported from the checkout rather than the installed wheel, or a module
    of the installed package that does not import (a subpackage left out of the wheel)."""
    import roofline

    where = Path(roofline.__file__).resolve()
    if ROOT / "roofline" in where.parents:
        return [f"roofline is imported from the checkout ({where}), not from the installed wheel"]
    failed = []
    for mod in pkgutil.walk_packages(roofline.__path__, "roofline."):
        if mod.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(mod.name)
        except Exception as exc:  # the walk reports every module that does not import
            failed.append(f"import {mod.name}: {type(exc).__name__}: {exc}")
    return failed


def _check(exe: str, command: str, args: list[str], codes: set[int], folder: Path) -> str | None:
    argv = [exe, command, *(a.replace("{tmp}", str(folder)) for a in args)]
    shown = " ".join(["roofline", command, *args])
    try:
        done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"{shown}: no answer within 300 s"
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("roofline: error:")]
    if "Traceback" in done.stderr or "Traceback" in done.stdout:
        return f"{shown}: a traceback (exit {done.returncode}):\n{done.stderr[-2000:]}"
    if done.returncode not in codes:
        return f"{shown}: exit {done.returncode}, expected {sorted(codes)}:\n{done.stderr[-1000:]}"
    if done.returncode == 2 and len([ln for ln in done.stderr.splitlines() if ln.strip()]) != 1:
        return f"{shown}: exit 2 without exactly one line on stderr:\n{done.stderr[-1000:]}"
    if done.returncode == 1 and not errors and "--max-drop" not in args:  # the gate's 1 is its verdict
        return f"{shown}: exit 1 without a 'roofline: error:' line:\n{done.stderr[-1000:]}"
    if done.returncode == 0 and not (done.stdout.strip() or any(folder.iterdir())):
        return f"{shown}: exit 0 with no output and no file written"
    return None


def _old(exe: str, args: list[str], folder: Path) -> str | None:
    """An old spelling: exit 2, one line on stderr naming the new one, nothing on stdout, no file."""
    shown = " ".join(["roofline", *args])
    try:
        done = subprocess.run([exe, *args], cwd=folder, capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"{shown}: no answer within 300 s"
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    if (done.returncode != 2 or done.stdout or len(lines) != 1 or not lines[0].startswith("roofline: error: ")
            or not (" is renamed: " in lines[0] or " is now: " in lines[0]) or any(folder.iterdir())):
        return f"{shown}: exit {done.returncode}, expected 2 and one line naming the new spelling:\n{done.stderr[-1000:]}"
    return None


def main() -> int:
    exe = _roofline()
    from roofline.cli import app

    declared = {c.name or c.callback.__name__ for c in app.registered_commands}
    covered = {c for c, _, _ in CASES} | {c for chain in CHAINS for c, _, _ in chain}
    failures = [f"command {name!r} has no case in .ci/installed_walk.py" for name in sorted(declared - covered)]
    failures += [f"case for {name!r}, which the installed app does not declare" for name in sorted(covered - declared)]
    failures += _installed_apart()
    start, runs = time.monotonic(), 0
    for chain in [[case] for case in CASES] + CHAINS:
        with tempfile.TemporaryDirectory(prefix="roofline-walk-") as tmp:
            for command, args, codes in chain:
                runs += 1
                failure = _check(exe, command, args, codes, Path(tmp))
                if failure:
                    failures.append(failure)
    for args in OLD_SPELLINGS:
        with tempfile.TemporaryDirectory(prefix="roofline-walk-") as tmp:
            runs += 1
            failure = _old(exe, args, Path(tmp))
            if failure:
                failures.append(failure)
    for f in failures:
        print(f"installed_walk: FAILED {f}", file=sys.stderr)
    print(f"installed_walk: {runs - len(failures)} passed, {len(failures)} failed "
          f"({len(declared)} commands, {runs} runs of the installed command in {time.monotonic() - start:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
