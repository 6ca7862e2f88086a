"""Usage errors of every command, walked from the app itself: each required argument or option
left out in turn, each option given without its value, an unknown option and an argument too
many. Each is answered in one line on stderr with exit code 2, no traceback, nothing on stdout
and no file written. A new command or option is covered without editing this file.

CI runs this module under the oldest Typer that pyproject.toml admits as well as under the one
the README's install brings (.ci/run), so it holds for the whole declared range."""

from __future__ import annotations

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from roofline.cli import app

GROUP = typer.main.get_command(app)
NAMES = GROUP.list_commands(None)
UNKNOWN = "--no-such-option"
EXTRA = "one-argument-too-many"


def _command(name):
    return GROUP.get_command(None, name)


def _arguments(command):
    return [p for p in command.params if p.param_type_name == "argument"]


def _options(command):
    return [p for p in command.params if p.param_type_name == "option"]


def _shown(param) -> str:
    """How the error names a parameter: an option by its longest flag, an argument by its metavar."""
    flags = [o for o in param.opts if o.startswith("-")]
    return max(flags, key=len) if flags else param.metavar


def _fill(command, leave_out=None) -> list[str]:
    """Every required parameter of `command` given a value (none that exists: the command must
    never run), but `leave_out`."""
    args = []
    for param in command.params:
        if param.required and param is not leave_out:
            args += [max(param.opts, key=len), "1"] if param.param_type_name == "option" else ["1"]
    return args


def _cases():
    """(command line, what the error must name) for every usage error the app's parameters allow."""
    for name in NAMES:
        command = _command(name)
        for param in command.params:
            if param.required:
                yield pytest.param([name, *_fill(command, param)], _shown(param), id=f"{name}-without-{_shown(param)}")
        for param in _options(command):
            if not param.is_flag and not param.count:
                flag = max(param.opts, key=len)
                yield pytest.param([name, *_fill(command), flag], flag, id=f"{name}-{flag}-without-value")
        yield pytest.param([name, *_fill(command), UNKNOWN], UNKNOWN, id=f"{name}-unknown-option")
        if not any(p.nargs == -1 for p in _arguments(command)):  # a command line after -- takes any words
            yield pytest.param([name, *_fill(command), EXTRA], EXTRA, id=f"{name}-extra-argument")
    yield pytest.param(["frobnicate"], "frobnicate", id="unknown-command")
    yield pytest.param([UNKNOWN], UNKNOWN, id="unknown-top-level-option")


def test_the_walk_covers_every_command_and_the_known_cases():
    """The walk reaches every command and the cases the old code got wrong (a positional
    argument left out crashed five commands under Typer 0.29). grade, tune and check are merged into
    run and compare: no longer commands (their spellings are answered below)."""
    assert len(NAMES) >= 13 and {"run", "compare", "whatif", "project", "new", "profile"} <= set(NAMES)
    assert not {"grade", "tune", "check"} & set(NAMES)
    ids = {case.id for case in _cases()}
    for expected in ("compare-without-BEFORE.json", "compare-without-AFTER.json", "whatif-without-RESULTS.json",
                     "project-without-RESULTS.json", "project-without---gpu", "new-without-KERNEL.cu",
                     "occupancy-without---regs", "run---size-without-value", "run---declare-without-value",
                     "compare---chart-without-value", "device-extra-argument", "profile-unknown-option"):
        assert expected in ids
    for takes_any in ("profile", "show", "plot", "run", "kernels", "comms"):  # their arguments take many words
        assert f"{takes_any}-extra-argument" not in ids


@pytest.mark.parametrize("args, named", list(_cases()))
def test_usage_error_is_one_line_exit_2(args, named, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2, (args, r.output, r.exception)
    assert isinstance(r.exception, SystemExit), r.exception  # no exception of Typer's or ours escaped
    assert "Traceback" not in r.output
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("roofline: error: "), r.stderr
    assert named in lines[0], lines[0]
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("args, expected", [
    (["compare", "a.json"], "missing AFTER.json, the later results, profile or grade file; "
                            "usage: roofline compare [OPTIONS] BEFORE.json AFTER.json"),
    (["project", "x.json"], "missing --gpu NAME, a preset GPU (or device file, mygpu.toml) to project onto "
                            "(repeatable); "
                            "usage: roofline project [OPTIONS] RESULTS.json"),
    (["occupancy", "--regs"], "Option '--regs' requires an argument: --regs R, registers per thread (1..255)"),
    (["new", "a.cu", "--bogus"], "roofline new has no option --bogus; its options: --name, --force, --dtype, -h"),
    (["run", "--sise", "3"], "roofline run has no option --sise; did you mean --size or --spec or --sweep? "
                             "(roofline run -h lists them all)"),
    (["device", "a", "b"], "Got unexpected extra argument(s) (a b); usage: roofline device [OPTIONS]"),
    (["occupancy", "--regs", "9", "--threads", "x"], "--threads: 'x' is not an integer"),
    (["whatif", "r.json", "--target", "most"], "--target: 'most' is not a share (0.97 or 97%)"),
    (["run", "--kernel", "naive", "--device", "cpu"],  # said on a machine without a GPU too
     "--device 'cpu': give a GPU index (0, 1, ...) or a PCI bus id like 0000:19:00.0"),
])
def test_usage_errors_name_what_is_missing_and_what_is_valid(args, expected):
    """The wording, word for word: the same under every supported Typer."""
    r = CliRunner().invoke(app, args)
    assert (r.exit_code, r.stderr) == (2, f"roofline: error: {expected}\n")


@pytest.mark.parametrize("args, expected", [
    (["grade", "x.cu"], "roofline grade is now: roofline run TARGETS... (grading is run's: run FILE.cu, "
                        "run MODULE:FUNCTION --spec FILE.toml)"),
    (["check", "new.json", "--baseline", "old.json"], "roofline check is now: roofline compare BASELINE.json "
                                                      "NEW.json --max-drop 5% (the gate is compare's)"),
    (["tune", "--size", "4096"], "roofline tune is now: roofline run --tune [--size N] (the tile search is run's)"),
    (["show", "--results", "f"], "roofline show --results is renamed: give the files as arguments: "
                                 "roofline show FILE [FILE ...]"),
    (["plot", "--results", "f"], "roofline plot --results is renamed: give the files as arguments: "
                                 "roofline plot FILE [FILE ...] --out chart.png"),
    (["plot", "p.json", "--by", "op"], "roofline plot --by is renamed: --kind op or --kind module (show's --by is "
                                       "plot's --kind)"),
    (["run", "--source", "x.cu"], "roofline run --source is renamed: give your kernel files as arguments: "
                                  "roofline run FILE.cu (beside the ladder: --all)"),
    (["run", "--sizes", "512,1024"], "roofline run --sizes is renamed: --sweep LIST (sizes N or shapes MxNxK, or "
                                     "one size's values: K=1024,16384)"),
    (["run", "--m", "8192"], "roofline run --m is renamed: --size M=VALUE (with N=VALUE and K=VALUE; --size N "
                             "alone for M = N = K)"),
    (["run", "x.cu", "--entry", "e"], "roofline run --entry is renamed: --declare entry=VALUE"),
    (["kernels", "--source", "x.cu"], "roofline kernels --source is renamed: give your kernel files as arguments: "
                                      "roofline kernels FILE.cu"),
    (["compare", "a.json", "b.json", "--out", "c.png"], "roofline compare --out is renamed: --chart FILE draws "
                                                        "each kernel's move"),
    (["occupancy", "--regs", "9", "--threads", "32", "--plot", "x.png"],
     "roofline occupancy --plot is renamed: --chart FILE draws the what-if chart"),
    (["schema", "--grade"], "roofline schema --grade is renamed: give the kind as an argument: roofline schema grade"),
])
def test_an_old_spelling_is_answered_with_the_new_one(args, expected, tmp_path, monkeypatch):
    """A renamed flag or a merged command: one line naming the new spelling, exit 2, nothing run."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, args)
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"roofline: error: {expected}\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", [None, *NAMES])
def test_help_renders_at_80_columns(name):
    args = ["-h"] if name is None else [name, "-h"]
    r = CliRunner().invoke(app, args, env={"COLUMNS": "80"}, prog_name="roofline")
    assert r.exit_code == 0 and r.exception is None, (args, r.output)
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Usage: roofline") and max(map(len, lines)) <= 80, r.stdout
    if name is not None:
        command = _command(name)
        usage = " ".join(["Usage: roofline", name, "[OPTIONS]",
                          *(p.metavar if p.required else f"[{p.metavar}]" for p in _arguments(command))])
        assert lines[0] == usage
        for param in _options(command):
            assert max(param.opts, key=len) in r.stdout
        assert "<path>" not in r.stdout and "<list[" not in r.stdout


def test_the_declared_typer_range_is_the_one_installed():
    """pyproject.toml states the Typer range the walk was run on; the installed one lies in it."""
    import re
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    spec = next(d for d in pyproject["project"]["dependencies"] if d.startswith("typer"))
    low, high = re.fullmatch(r"typer>=([\d.]+),<([\d.]+)", spec).groups()

    def version(text):
        return tuple(int(p) for p in re.match(r"[\d.]+", text).group(0).rstrip(".").split("."))

    assert version(low) <= version(typer.__version__) < version(high)
