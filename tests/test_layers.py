"""The layers import one way: showing, drawing and comparing results files loads no measuring code
(`roofline.measure` needs a GPU, NVRTC or Nsight Compute), and the results and rendering layers
name nothing of it."""

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "plots" / "results-h200.json"
PROFILE = ROOT / "plots" / "profile-h200-transformer.json"


def _imported_modules(package: str) -> dict[str, list[str]]:
    """Every module each file of `roofline/<package>` imports, relative imports resolved."""
    out = {}
    for path in sorted((ROOT / "roofline" / package).glob("*.py")):
        found = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = "roofline." + package if node.level == 1 else "roofline" if node.level == 2 else ""
                module = ".".join(x for x in (base, node.module or "") if x)
                found += [module] + [f"{module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                found += [a.name for a in node.names]
        out[path.name] = found
    return out


def test_results_analysis_and_render_import_nothing_from_measure_or_the_run_conversion():
    for package in ("results", "analysis", "render"):
        for name, modules in _imported_modules(package).items():
            bad = [m for m in modules if m.startswith(("roofline.measure", "roofline.collect", "roofline.api"))]
            assert bad == [], f"roofline/{package}/{name} imports {bad}"


def test_the_report_corridor_is_one_package_the_model_does_not_know():
    """`roofline/nsight` reads every report form without the measuring, results or drawing layers,
    and the model layer names nothing of it."""
    for name, imported in _imported_modules("nsight").items():
        bad = [m for m in imported if m.startswith(("roofline.measure", "roofline.api", "roofline.results",
                                                    "roofline.render"))]
        assert bad == [], f"roofline/nsight/{name} imports {bad}"
    for name, imported in _imported_modules("model").items():
        assert [m for m in imported if m.startswith("roofline.nsight")] == [], name


def _looks_up_ncu(path: Path) -> bool:
    """Whether a source file looks up the ncu executable (`shutil.which("ncu")`)."""
    return any(isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "which"
               and [getattr(a, "value", None) for a in node.args] == ["ncu"]
               for node in ast.walk(ast.parse(path.read_text())))


def test_only_the_report_corridor_runs_ncu():
    """Nsight Compute is found and run by `roofline.nsight` alone, whichever of its modules does
    it: no other part of the package looks the executable up."""
    finders = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "roofline").rglob("*.py") if _looks_up_ncu(p))
    assert finders, "nothing looks up ncu: the check no longer sees how it is found"
    assert [f for f in finders if not f.startswith("roofline/nsight/")] == []


def test_reading_a_report_in_text_starts_no_process(monkeypatch):
    """Every form ncu writes as text (its CSV pages, its printed output, compressed or not) is read
    in the process: only a binary .ncu-rep needs NVIDIA's reader in a child, or ncu itself."""
    import subprocess

    from roofline import nsight

    started = []

    def refused(self, args, *a, **kw):
        started.append(args)
        raise OSError("no process may start while a text report is read")

    monkeypatch.setattr(subprocess.Popen, "__init__", refused)
    ncu = ROOT / "tests" / "fixtures" / "ncu"
    adamw = ncu / "corpus" / "adamw"  # xz-compressed: unpacked in the process as well
    read = 0
    for path in [*sorted((ncu / "forms").glob("*.csv")), adamw / "basic.txt.xz", adamw / "full-all.txt.xz",
                 *sorted(adamw.glob("*-raw.csv.xz"))]:
        try:
            nsight.read(path, gpu="h200")
            read += 1
        except nsight.NoLaunches:  # a page without durations: refused, in the process too
            pass
    assert started == [] and read >= 8


def test_importing_a_report_loads_no_measuring_module(tmp_path):
    report = ROOT / "tests" / "fixtures" / "ncu" / "cupy-h200-base.csv"
    found = _modules_loaded_by([["profile", "--import", str(report), "--out", str(tmp_path / "p.json")]])
    assert found["codes"] == [0]
    assert "roofline.nsight.reader" in found["modules"]
    assert [m for m in found["modules"] if m.startswith("roofline.measure")] == []


def _modules_loaded_by(args_lists: list[list[str]]) -> dict:
    """Run each `roofline` command line in one fresh interpreter and list the roofline modules it
    loaded. The charts' drawing (matplotlib, seconds of CPU) is replaced by a recorder: what it
    imports is checked statically above, the rest of `plot`'s path runs as it is."""
    code = (
        "import json, sys\n"
        "from typer.testing import CliRunner\n"
        "from roofline import cli\n"
        "from roofline.render import roofline_chart\n"
        "drawn = []\n"
        "roofline_chart.draw = lambda doc, out, *a, **k: drawn.append(len(doc.kernels)) or out\n"
        "codes = [CliRunner().invoke(cli.app, args).exit_code for args in json.loads(sys.argv[1])]\n"
        "print(json.dumps({'codes': codes, 'drawn': drawn,\n"
        "                  'modules': sorted(m for m in sys.modules if m.startswith('roofline'))}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, json.dumps(args_lists)], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_show_plot_and_compare_load_no_measuring_module(tmp_path):
    found = _modules_loaded_by([
        ["show", str(RESULTS)],
        ["show", str(PROFILE)],
        ["plot", str(RESULTS), "--out", str(tmp_path / "r.svg")],
        ["compare", str(RESULTS), str(RESULTS)],
    ])
    assert found["codes"] == [0, 0, 0, 0]
    assert found["drawn"] == [14]  # the fourteen ladder kernels the file holds, drawn once
    assert "roofline.results.schema" in found["modules"] and "roofline.documents.reading" in found["modules"]
    assert [m for m in found["modules"] if m.startswith("roofline.measure") or m == "roofline.collect"] == []


def test_python_importtime_of_show_lists_no_measuring_module():
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "roofline", "show", str(RESULTS)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "roofline.results.schema" in imported
    assert [m for m in imported if m.startswith("roofline.measure")] == []


def test_each_default_is_one_value_wherever_it_is_read():
    from roofline import defaults
    from roofline.measure import isolated
    from roofline.nsight.run import DEFAULT_LAUNCH_COUNT, Options

    assert Options().launch_count == DEFAULT_LAUNCH_COUNT == defaults.DEFAULT_LAUNCH_COUNT == 500
    assert isolated.DEFAULT_TIMEOUT_S is defaults.DEFAULT_TIMEOUT_S == 5.0


def test_the_library_changes_nothing_in_a_process_that_imports_it():
    """A PyTorch script that imports roofline keeps its CUDA JIT cache: the cache is turned off
    only where roofline compiles (its own command, the processes it starts to compile in)."""
    code = "import os, roofline, roofline.api, roofline.nsight; print(os.environ.get('CUDA_CACHE_DISABLE'))"
    env = {k: v for k, v in __import__("os").environ.items() if k != "CUDA_CACHE_DISABLE"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    assert (done.returncode, done.stdout) == (0, "None\n"), done.stderr
    from roofline.measure.nvrtc_compile import compiler_env

    assert compiler_env()["CUDA_CACHE_DISABLE"] in ("1", __import__("os").environ.get("CUDA_CACHE_DISABLE"))


def _modules_python_finds() -> set[str]:
    """Every module and package of roofline as Python's import system finds them in the checkout
    (pkgutil, not a walk of the folders), as paths: the tree the wheel is held to, found another way."""
    import pkgutil

    import roofline

    found = {"roofline/__init__.py"}
    for info in pkgutil.walk_packages(roofline.__path__, "roofline."):
        path = info.name.replace(".", "/")
        found.add(f"{path}/__init__.py" if info.ispkg else f"{path}.py")
    return found


def test_the_wheel_holds_every_module_and_kernel_source_of_the_tree_and_the_command_points_into_it(tmp_path):
    """The wheel users install (`pip install .`, not editable) holds exactly the source tree's
    Python modules and CUDA sources under one top-level package: a subpackage left out of it ends
    in ModuleNotFoundError only where users run, never in an editable checkout."""
    import zipfile

    import shutil

    had_build = (ROOT / "build").exists()
    try:
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                               str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    finally:
        if not had_build:  # setuptools builds in the checkout: leave it as it was
            shutil.rmtree(ROOT / "build", ignore_errors=True)
    assert done.returncode == 0, done.stderr
    wheel = zipfile.ZipFile(next(tmp_path.glob("roofline-*.whl")))
    files = {n for n in wheel.namelist() if not n.split("/", 1)[0].endswith(".dist-info")}
    assert {n.split("/", 1)[0] for n in files} == {"roofline"}
    tree = {p.relative_to(ROOT).as_posix() for p in (ROOT / "roofline").rglob("*")
            if p.suffix in (".py", ".cu", ".cuh") and "__pycache__" not in p.parts}
    assert tree >= _modules_python_finds() and any(n.endswith(".cu") for n in tree)  # the walk saw the tree
    assert sorted(files ^ tree) == []  # nothing of the tree left out, nothing in the wheel that is not in it
    meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    from roofline import __version__

    assert f"\nVersion: {__version__}\n" in wheel.read(meta).decode()  # one version, roofline.__version__
    entry = next(n for n in wheel.namelist() if n.endswith("entry_points.txt"))
    assert "roofline = roofline.cli:main" in wheel.read(entry).decode()


def _module_imports(path: Path, package: str = "roofline") -> list[str]:
    """The modules a file of `package` imports, relative imports resolved, those under
    `if TYPE_CHECKING:` (annotations only) left out."""
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and getattr(node.test, "id", None) == "TYPE_CHECKING" for n in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = ".".join(parts[:len(parts) - node.level + 1]) if node.level else ""
            module = ".".join(x for x in (base, node.module or "") if x)
            found += [module] + [f"{module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names]
    return found


# The command line's modules, by name: the Typer app and `python -m roofline`, the terminal, what
# each command shows (and the per-command modules the command line may be split into).
COMMAND_LINE = ("roofline.cli", "roofline.__main__", "roofline.console", "roofline.outcome", "roofline.commands",
                "roofline.api")  # (and the library's facade, which calls the commands' work)


def _modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name), and its file."""
    out = {}
    for path in sorted((ROOT / "roofline").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _within(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_command_line_sits_on_top_console_and_outcome_below_it_and_the_library_below_them():
    """The terminal (`roofline.console`) knows no command and starts no measuring; what each
    command shows (`roofline.outcome`) starts no measuring either; nothing of the library imports
    any module of the command line (COMMAND_LINE), whichever files the library is made of."""
    modules = _modules()

    def named(modules_imported, prefixes):
        return [m for m in modules_imported if _within(m, prefixes)]

    def imports(module):
        package = module if modules[module].name == "__init__.py" else module.rpartition(".")[0]
        return _module_imports(modules[module], package)

    assert named(imports("roofline.console"), ["roofline.cli", "roofline.api", "roofline.measure",
                                               "roofline.collect"]) == []
    assert named(imports("roofline.outcome"), ["roofline.cli", "roofline.console", "roofline.api",
                                               "roofline.measure", "roofline.collect"]) == []
    library = [m for m in modules if m != "roofline" and not _within(m, COMMAND_LINE)]
    assert len(library) > len(modules) / 2  # the rule reaches the library, not a corner of it
    for module in library:
        assert named(imports(module), COMMAND_LINE) == [], modules[module]
