"""The command line starts light: `roofline --help` (and any command's help, and a usage error)
loads Typer, `roofline.console` and `roofline.defaults` and nothing of the library, and `roofline
occupancy` loads the model and its table's rendering, never numpy, matplotlib, CuPy or the results
models. Checked by what a fresh interpreter loaded, not by a clock: the machine may be busy."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Run in a fresh interpreter: import roofline.cli, check that the import left Ctrl-C's handler as it
# was, run the command line as the `roofline` command does, and write down which roofline modules
# were loaded and, for each heavy package, the file whose import statement loaded it first.
CODE = """
import json, signal, sys
HEAVY = ("numpy", "pydantic", "matplotlib", "cupy", "plotly")
first = {}

class Watch:
    def find_spec(self, name, path=None, target=None):
        if name in HEAVY and name not in first:
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
                frame = frame.f_back
            first[name] = frame.f_code.co_filename if frame is not None else "?"
        return None

sys.meta_path.insert(0, Watch())
out, sys.argv = sys.argv[1], ["roofline", *sys.argv[2:]]
signal.signal(signal.SIGINT, signal.default_int_handler)  # as a shell starts it (a test runner may ignore it)
from roofline import cli
handler_kept = signal.getsignal(signal.SIGINT) is signal.default_int_handler
at_import = sorted(m for m in sys.modules if m.split(".")[0] == "roofline")
try:
    cli.main()
    code = 0
except SystemExit as exc:
    code = exc.code
with open(out, "w") as f:
    json.dump({"code": code, "handler_kept": handler_kept, "at_import": at_import, "first": first,
               "loaded": sorted(m for m in sys.modules if m.split(".")[0] == "roofline")}, f)
"""

# What importing roofline.cli loads of roofline: the terminal, the defaults its help shows, errors,
# and what the console needs to be the terminal (file names as text, the progress protocol).
CLI_ITSELF = {"roofline", "roofline.cli", "roofline.console", "roofline.defaults", "roofline.errors",
              "roofline.files", "roofline.progress"}
# and the commands' rooms (each one's signature; their work imports the library as it runs), with the
# outcome type they return (with its two kinds of line, render.lines)
CLI_ITSELF |= {"roofline.outcome", "roofline.render", "roofline.render.lines", "roofline.commands"} | {
    f"roofline.commands.{p.stem}" for p in (ROOT / "roofline" / "commands").glob("*.py") if p.stem != "__init__"}
# Packages of roofline that occupancy has no use for: the results documents (pydantic's models),
# Nsight Compute's readers, the analyses, the GPU, the ladder, and roofline.api, which loads them all.
NOT_FOR_OCCUPANCY = ("roofline.api", "roofline.results", "roofline.nsight", "roofline.analysis", "roofline.measure",
                     "roofline.ladder", "roofline.collect", "roofline.grading", "roofline.workload", "roofline.traces")


def _started(tmp_path, *args) -> tuple[dict, subprocess.CompletedProcess]:
    out = tmp_path / "loaded.json"
    done = subprocess.run([sys.executable, "-c", CODE, str(out), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert out.exists(), done.stderr
    return json.loads(out.read_text()), done


def _imports_at_load(module: str) -> set[str]:
    """The top-level packages a roofline module's file imports when it is loaded: its imports
    outside functions and `if TYPE_CHECKING:` blocks."""
    path = ROOT.joinpath(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    found, todo = set(), list(ast.parse(path.read_text()).body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo += node.orelse
            continue
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add((node.module or "").split(".")[0])
        todo += [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)]
    return found


def _heavy_importers(loaded: list[str]) -> dict[str, set[str]]:
    """The roofline modules loaded that import a heavy package as they load, and which."""
    heavy = {"numpy", "pydantic", "matplotlib", "cupy", "plotly"}
    return {m: found for m in loaded if (found := _imports_at_load(m) & heavy)}


def _by_typer(path: str) -> bool:
    """Whether a module was imported by Typer's own code (Typer 0.29 validates every option's
    value with pydantic, for any program; older Typers do not import it)."""
    return "typer" in Path(path).parts


def test_importing_the_command_line_loads_nothing_of_the_library(tmp_path):
    found, done = _started(tmp_path, "--version")
    assert (found["code"], done.stdout) == (0, "roofline 0.1.0\n"), done.stderr
    assert set(found["at_import"]) == CLI_ITSELF
    assert found["first"] == {}, found["first"]
    assert found["handler_kept"], "importing roofline.cli left Ctrl-C's handler replaced"


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["show", "--help"], ["occupancy", "--help"],
                                  ["show", "--no-such-option"]], ids=" ".join)
def test_help_and_usage_errors_load_nothing_of_the_library(tmp_path, args):
    found, done = _started(tmp_path, *args)
    assert found["code"] == (2 if "--no-such-option" in args else 0), done.stderr
    assert "Usage: roofline" in done.stdout or done.stderr.startswith("roofline: error: ")
    extra = set(found["loaded"]) - CLI_ITSELF - {"roofline.render", "roofline.render.encoding"}
    assert extra == set(), f"{' '.join(args)} loaded {sorted(extra)}"
    if args == ["--help"]:
        assert found["first"] == {}, found["first"]
    else:  # a command's parameters, parsed by Typer
        assert [name for name, by in found["first"].items() if not _by_typer(by)] == [], found["first"]


@pytest.mark.parametrize("target", [["--arch", "sm_90"], ["--gpu", "h200"]], ids=" ".join)
@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
def test_occupancy_loads_the_model_and_its_table_alone(tmp_path, target, as_json):
    found, done = _started(tmp_path, "occupancy", "--regs", "93", "--threads", "256", *target,
                           *(["--json"] if as_json else []))
    assert found["code"] == 0, done.stderr
    if as_json:
        assert json.loads(done.stdout)["active_warps_per_sm"] == 16
    else:
        assert "16 of 64 warps = 25 %" in done.stdout
    assert {"roofline.commands.occupancy", "roofline.model.occupancy"} <= set(found["loaded"])
    heavy = [m for m in found["loaded"] if m.startswith(NOT_FOR_OCCUPANCY)]
    assert heavy == [], f"occupancy loaded {heavy}"
    assert [name for name, by in found["first"].items() if not _by_typer(by)] == [], found["first"]
    assert set(found["first"]) <= {"pydantic"}, found["first"]
    assert _heavy_importers(found["loaded"]) == {}  # pydantic is Typer's alone: none of ours asks for it
