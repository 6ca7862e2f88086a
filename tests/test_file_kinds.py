"""Every command that reads a file, against every kind of file roofline writes or reads: a run's
results, a size sweep, a tile search, a run with --energy, a profile with roofs and one without (a
default-set text imported: nothing counted places a kernel), a grade file, and PyTorch profiler
traces (compressed and not).

The commands, their file parameters and their command lines come from the app, as
tests/test_usage_errors.py walks it: every parameter that names a file has a role in ROLES, and every
command with a file parameter the matrix covers says in READS which kinds it reads; a new command or
file parameter fails `test_every_file_parameter_is_classified` until it is given them, and then
joins the matrix with a command line built from its parameters.

Each cell: exit 0 with a result (its value read from --json, and the tables drawn too), or exit 2
with one line on stderr naming what the command reads; never a traceback, never exit 1 for a file
it cannot use. Commands taking two files (compare, and compare --max-drop: the gate) take every kind
against every kind."""

from __future__ import annotations

import gzip
import importlib.util
import itertools
import json
import lzma
import re
import typing
from pathlib import Path

import pytest
import typer.main
from conftest import FIXTURES
from typer.testing import CliRunner

from roofline.cli import app
from roofline.results.sweep_point import sizes

REPO = Path(__file__).resolve().parent.parent
PLOTS = REPO / "plots"
GROUP = typer.main.get_command(app)
NAMES = GROUP.list_commands(None)

# Every parameter that names a file, by role: 'results' reads the files roofline writes (every kind
# goes through it); 'traces' reads profiler traces; 'foreign' reads another tool's file (every
# kind of roofline's is refused); 'grade-baseline' reads a grade file only (run --baseline, for the
# kernels run grades); 'source' and 'spec' the user's own kernels and specs (not files roofline
# writes: out of this matrix); 'output' writes.
ROLES = {
    ("run", "out"): "output", ("run", "spec"): "spec", ("run", "baseline"): "grade-baseline",
    ("profile", "import_report"): "foreign", ("profile", "report"): "output", ("profile", "out"): "output",
    ("profile", "trace"): "source",
    ("comms", "traces"): "traces", ("comms", "chart_out"): "output", ("comms", "nccl_tests"): "source",
    ("plot", "paths"): "results", ("plot", "out"): "output",
    ("show", "paths"): "results",
    ("occupancy", "chart_out"): "output",
    ("kernels", "sources"): "source",
    ("new", "path"): "output",
    ("compare", "before"): "results", ("compare", "after"): "results", ("compare", "chart_out"): "output",
    ("whatif", "results"): "results", ("whatif", "chart_out"): "output",
    ("project", "results"): "results", ("project", "chart_out"): "output",
}


# The kinds of file: (name, family). A family is what a command reads: 'run' (a run, a sweep, a
# tile search: alternatives for one problem), 'profile', 'grade', 'trace'.
KINDS = {"run": "run", "sweep": "run", "tune": "run", "energy": "run", "profile": "profile",
         "profile-noroofs": "profile", "grade": "grade", "trace": "trace", "trace-json": "trace"}

# What each command reads (families), and the words its refusal of any other kind must hold.
READS = {
    "show": ({"run", "profile", "grade", "trace"}, "show reads a run's results"),
    "plot": ({"run", "profile", "grade"}, "plot reads a run's results"),
    "plot-html": ({"run", "profile"}, "plot reads a run's results"),  # a grade file: .png, .svg or .pdf (HTML_GRADE)
    "whatif": ({"run", "profile"}, "whatif reads a run's results (roofline run) or a profile"),
    "project": ({"run", "profile"}, "project reads a run's results (roofline run) or a profile"),
    "comms": ({"trace"}, "comms reads profiler traces"),
    "profile": (set(), "Nsight Compute"),
    "run": ({"grade"}, "grade file (roofline run writes one for a kernel it grades)"),  # its --baseline
    "compare": ({"run", "profile", "grade"}, "two profiles"),
    "compare-gate": ({"run", "profile", "grade"}, "two profiles"),  # compare --max-drop: the gate (was check)
}
VARIANTS = {"plot-html": "plot", "compare-gate": "compare"}  # another command line of a command in READS
HTML_GRADE = "is a grade file: drawn as one roofline chart (.png, .svg or .pdf), not as an HTML report"


def _callbacks() -> dict:
    """Each command's name -> its Python function (Typer names a command after its function)."""
    return {info.name or info.callback.__name__.lower().replace("_", "-"): info.callback
            for info in app.registered_commands}


def _file_parameters() -> set[tuple[str, str]]:
    """(command, parameter) for every parameter typed as a path, or whose placeholder says FILE."""
    callbacks = _callbacks()
    found = set()
    for name in NAMES:
        hints = typing.get_type_hints(callbacks[name])
        for param in GROUP.get_command(None, name).params:
            if "Path" in str(hints.get(param.name)) or "FILE" in (param.metavar or ""):
                found.add((name, param.name))
    return found


MATRIX = ("results", "traces", "foreign", "grade-baseline")  # the roles whose commands take every kind of file
# What a command needs besides its files to reach them: the values of its other required options,
# and for run's --baseline a target that run grades (its --baseline is read once the targets are).
NEEDS = {"gpus": "h100-sxm"}
EXTRA = {"run": [REPO / "examples/grade/softmax_naive.cu"]}


def _matrix_commands() -> dict[str, list]:
    """Each command with a file parameter in a MATRIX role -> those parameters, in order."""
    out: dict[str, list] = {}
    for name in NAMES:
        for param in GROUP.get_command(None, name).params:
            if ROLES.get((name, param.name)) in MATRIX:
                out.setdefault(name, []).append(param)
    return out


def _line(name: str, files: list, out: Path, suffix: str = ".png") -> list:
    """`name`'s command line with `files` in its file parameters, every output it writes by default
    in the folder `out` (a chart ends in `suffix`), its other required options from NEEDS and EXTRA."""
    args, files = [name], list(files)
    for param in GROUP.get_command(None, name).params:
        role = ROLES.get((name, param.name))
        if role in MATRIX:
            value = files.pop(0)
        # plot always writes its chart (its --out defaults to KIND.png, worked out from --kind)
        elif role == "output" and param.param_type_name == "option" and (param.default is not None or name == "plot"):
            value = out / f"{param.name}{suffix if name == 'plot' else '.json'}"
        elif param.required:
            value = NEEDS[param.name]
        else:
            continue
        args += [value] if param.param_type_name == "argument" else [max(param.opts, key=len), value]
    return args + EXTRA.get(name, [])


def test_every_file_parameter_is_classified():
    """Every file parameter has a role, every command the matrix covers says what it reads, and its
    command line builds from its parameters (a new required option needs a value in NEEDS)."""
    assert set(_callbacks()) == set(NAMES)
    found = _file_parameters()
    assert found - ROLES.keys() == set(), "give each new file parameter a role in ROLES"
    assert ROLES.keys() - found == set(), "a parameter in ROLES is gone or no longer a file"
    commands = _matrix_commands()
    assert set(commands) - READS.keys() == set(), "say in READS which kinds of file each new command reads"
    assert {c for c in READS if c not in VARIANTS} == set(commands)
    assert all(len(params) in (1, 2) for params in commands.values())
    assert {c for c, params in commands.items() if len(params) == 2} == {"compare"}, \
        "a new command of two files: say in test_two_files when its kinds go together"
    for name, params in commands.items():
        assert _line(name, [Path("f")] * len(params), Path("out"))[0] == name  # every required value known



@pytest.fixture(scope="module")
def kinds(tmp_path_factory) -> dict[str, Path]:
    """One file of each kind: committed ones, and those made from committed data by the tool itself
    (a default-set text imported with `profile --import`; a trace decompressed)."""
    here = tmp_path_factory.mktemp("kinds")
    text = here / "adamw-basic.txt"
    text.write_bytes(lzma.decompress((FIXTURES / "ncu/corpus/adamw/basic.txt.xz").read_bytes()))
    noroofs = here / "profile-noroofs.json"
    r = CliRunner().invoke(app, ["profile", "--import", str(text), "--gpu", "h200", "--out", str(noroofs)])
    assert r.exit_code == 0, r.output
    trace = FIXTURES / "traces/public/sampled_rank-0.json.gz"
    (here / "rank-0.json").write_bytes(gzip.decompress(trace.read_bytes()))
    files = {"run": FIXTURES / "results-h200.json", "sweep": PLOTS / "sweep-h200.json",
             "tune": PLOTS / "tune-h200.json", "energy": PLOTS / "results-h200-energy.json",
             "profile": FIXTURES / "ncu/forms/roofline.json", "profile-noroofs": noroofs,
             "grade": PLOTS / "grades-h200.json", "trace": trace, "trace-json": here / "rank-0.json"}
    assert files.keys() == KINDS.keys()
    return files


def _invoke(args: list) -> typer.testing.Result:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def _refused(r, *needles: str) -> None:
    """Exit 2, one line on stderr holding each of `needles`, nothing on stdout, no exception."""
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert isinstance(r.exception, SystemExit) and "Traceback" not in r.output
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("roofline: error: "), r.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert r.stdout == ""


def _ran(r) -> None:
    assert r.exit_code == 0 and r.exception is None, (r.exit_code, r.output, r.exception)
    assert "Traceback" not in r.output and r.stdout.strip()


def _value(command: str, kind: str, doc: dict) -> None:
    """A real result: figures read from the command's --json."""
    if command == "show":
        if KINDS[kind] == "grade":
            assert doc["kind"] == "grade" and any(e["time_ms"] > 0 for e in doc["entries"])
        elif KINDS[kind] == "profile":
            assert doc["kind"] == "profile" and doc["total_time_ms"] > 0 and doc["kernels"]
        elif KINDS[kind] == "trace":  # a profiler trace: its GPU time by op, each op's kernels
            assert doc["kind"] == "trace" and doc["time_ms"] > 0 and doc["owned_share"] > 0.99
            assert sum(op["time_ms"] for op in doc["ops"]) == pytest.approx(doc["time_ms"])
        else:
            assert any((k["gflops"] or 0) > 0 for k in doc["kernels"])
    elif command == "whatif":
        assert doc["kernels"] and all(k["time_ms"] > 0 for k in doc["kernels"])
        saved = [k["saved_ms"] for k in doc["kernels"]]
        if kind == "profile-noroofs":  # nothing counted places a kernel: no saving, none made up
            assert saved == [None] * len(saved) and doc["saved_ms_all"] == 0
        else:
            assert any(s and s > 0 for s in saved)
    elif command == "project":
        t = doc["targets"][0]
        estimates = [k["estimated_ms"] for k in t["kernels"]]
        if kind == "profile-noroofs":  # no kernel has a roof: no step estimate, every kernel left out
            assert estimates == [None] * len(estimates) and t["step"]["estimated_ms"] is None
            assert t["step"]["left_out"] == len(estimates) > 0
        else:
            assert any(e and e > 0 for e in estimates)
            if KINDS[kind] == "profile":
                assert t["step"]["estimated_ms"] > 0 and t["step"]["lower_bound_ms"] > 0
    elif command == "comms":
        assert doc["ranks"] and doc["ranks"][0]["span_us"] > 0
    elif command in ("compare", "compare-gate"):  # a file against itself
        if KINDS[kind] == "grade":
            assert doc["passed"] and doc["entries"] and all(e["change"] == 0 for e in doc["entries"])
        elif command == "compare-gate":
            assert doc["passed"] and doc["kernels"] and all(k["slowdown"] == 0 for k in doc["kernels"])
        else:
            assert doc["kernels"] and all(k["time_change"] == 0 for k in doc["kernels"])


def _single(variant: str, path: Path, out: Path) -> list:
    """The command line of a one-file cell: 'plot-html' is plot writing the HTML report."""
    return _line("plot", [path], out, ".html") if variant == "plot-html" else _line(variant, [path], out)


def _has_json(name: str) -> bool:
    return any("--json" in p.opts for p in GROUP.get_command(None, name).params)


# Drawn as a PNG: one kind of each chart module (roofline_chart, profile_chart, grade_chart). A sweep,
# a tile search and a run with --energy are drawn by roofline_chart as the run is (test_chart_layout
# draws sweep-h200 and tune-h200): here they go through plot's reading into the HTML report alone.
DRAWN_AGAIN = {"sweep", "tune", "energy"}
NO_PLOTLY = pytest.mark.skipif(importlib.util.find_spec("plotly") is None, reason="the report extra is not installed")


def _single_cells():
    singles = [c for c, params in _matrix_commands().items() if len(params) == 1]
    variants = [v for c in singles for v in ([c, "plot-html"] if c == "plot" else [c])]
    for command, kind in itertools.product(variants, KINDS):
        marks = []
        if command == "plot" and kind in DRAWN_AGAIN:
            continue
        if command == "plot-html" and KINDS[kind] in READS["plot-html"][0]:
            marks = [NO_PLOTLY]
        if command == "run" and KINDS[kind] == "grade":  # a grade file taken: grading needs a GPU
            marks = [pytest.mark.skip(reason="grading runs kernels on a GPU; the baseline is read, then the GPU")]
        yield pytest.param(command, kind, id=f"{command}-{kind}", marks=marks)


@pytest.mark.parametrize("command, kind", list(_single_cells()))
def test_one_file(command, kind, kinds, tmp_path):
    path = kinds[kind]
    reads, phrase = READS[command]
    line = _single(command, path, tmp_path)
    r = _invoke(line)
    if KINDS[kind] not in reads:
        _refused(r, *([HTML_GRADE] if command == "plot-html" and kind == "grade" else [str(path), phrase]))
        assert [p.name for p in tmp_path.iterdir()] == []  # nothing written
        return
    _ran(r)
    if command.startswith("plot"):
        out = line[line.index("--out") + 1]
        assert r.stdout == f"wrote {out}\n" and out.stat().st_size > 1000
    if _has_json(line[0]):
        r = _invoke(line + ["--json"])
        assert r.exit_code == 0, r.output
        _value(command, kind, json.loads(r.stdout))


@pytest.fixture(scope="module")
def contents(kinds) -> dict:
    """Each run file's problems (a sweep's sizes) and kernels, and each profile's kernels: what decides whether two files
    of one family compare."""
    from roofline import documents
    out = {}
    for kind, family in KINDS.items():
        if family in ("run", "profile"):
            doc = documents.load(kinds[kind])
            out[kind] = (frozenset(p.text() for p in sizes(doc)) if family == "run" else None,
                         {k.name for k in doc.kernels if family == "profile" or k.timed})
    return out


def _pair_cells():
    pairs = [c for c, params in _matrix_commands().items() if len(params) == 2]
    variants = [v for c in pairs for v in ([c, "compare-gate"] if c == "compare" else [c])]
    for command, (a, b) in itertools.product(variants, itertools.product(KINDS, KINDS)):
        yield pytest.param(command, a, b, id=f"{command}-{a}-{b}")


@pytest.mark.parametrize("command, a, b", list(_pair_cells()))
def test_two_files(command, a, b, kinds, contents, tmp_path):
    reads, phrase = READS[command]
    if command == "compare-gate":  # the gate: compare BASELINE NEW --max-drop 5%, read as compare reads them
        args = _line("compare", [kinds[a], kinds[b]], tmp_path) + ["--max-drop", "5%"]
    else:  # compare BEFORE AFTER
        args = _line(command, [kinds[a], kinds[b]], tmp_path)
    r = _invoke(args)
    fa, fb = KINDS[a], KINDS[b]
    if fa not in reads or fb not in reads:  # a trace: the first file of a kind it does not read is named
        _refused(r, str(kinds[a] if fa not in reads else kinds[b]), phrase)
        return
    if fa != fb:
        _refused(r, phrase)
        if "grade" in (fa, fb):
            assert "is not a grade file" in r.stderr
        return
    if a != b and fa == "run":  # two runs: of one problem, with kernels in common, or refused saying which
        (pa, ka), (pb, kb) = contents[a], contents[b]
        if not pa & pb:  # a size sweep compares at a size the other file holds
            _refused(r, "different problems" if command == "compare" else "a change of problem")
            return
        if not ka & kb:
            _refused(r, "no kernel in common")
            return
    if a != b and fa == "profile" and not contents[a][1] & contents[b][1]:
        _refused(r, "no kernel in common")
        return
    _ran(r)
    if a == b:
        r = _invoke(args + ["--json"])
        assert r.exit_code == 0, r.output
        _value(command, a, json.loads(r.stdout))


def test_project_says_so_when_no_kernel_has_a_roof(kinds):
    """A profile in which nothing counted places a kernel (a default-set text imported): each kernel
    left out, with why, and the step given no estimate rather than a division by its zero sum."""
    r = _invoke(["project", kinds["profile-noroofs"], "--gpu", "h200", "--gpu", "t4"])
    _ran(r)
    for gpu in ("H200", "Tesla T4"):
        assert (f"{gpu}: no estimate: none of the 2 kernels could be projected (no FLOPs or bytes counted), so the "
                "step has no lower bound or estimate") in r.stdout


@pytest.mark.parametrize("command", ["whatif", "project"])
def test_a_grade_file_is_refused_by_what_reads_kernels(command, kinds):
    args = [command, kinds["grade"]] + (["--gpu", "t4"] if command == "project" else [])
    r = _invoke(args)
    _refused(r, f"{kinds['grade']}: a grade file (roofline run), which show, plot and compare read",
             f"; {command} reads a run's results (roofline run", "or a profile of a program (roofline profile)")
    # check and tune are merged into compare and run: the refusal names only commands there are
    # (the file's path is left out: a checkout under /check/ is not a command)
    gone = re.findall(r"\b(check|tune)\b", r.stderr.replace(str(kinds["grade"]), "FILE"))
    assert not gone, (gone, r.stderr)
