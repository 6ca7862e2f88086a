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


def test_the_report_corridor_is_one_package_that_runs_only_ncu():
    """`roofline/nsight` reads every report form without the measuring layer; of its modules only
    `run` (ncu, c++filt) and `binary` (NVIDIA's reader in a child Python, through `roofline.child`)
    start processes, and the model layer names nothing of it."""
    modules = _imported_modules("nsight")
    assert {"reader.py", "pages.py", "text.py", "binary.py", "metrics.py", "launches.py", "device.py"} <= set(modules)
    for name, imported in modules.items():
        bad = [m for m in imported if m.startswith(("roofline.measure", "roofline.api", "roofline.results",
                                                    "roofline.render"))]
        assert bad == [], f"roofline/nsight/{name} imports {bad}"
    assert sorted(n for n, imported in modules.items() if "subprocess" in imported) == ["run.py"]
    assert sorted(n for n, imported in modules.items() if "roofline.child" in imported) == ["binary.py"]
    for name, imported in _imported_modules("model").items():
        assert [m for m in imported if m.startswith("roofline.nsight")] == [], name
    assert not (ROOT / "roofline" / "measure" / "ncu.py").exists()


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
        ["show", "--results", str(RESULTS)],
        ["show", "--results", str(PROFILE)],
        ["plot", "--results", str(RESULTS), "--out", str(tmp_path / "r.svg")],
        ["compare", str(RESULTS), str(RESULTS)],
    ])
    assert found["codes"] == [0, 0, 0, 0]
    assert found["drawn"] == [14]  # the fourteen ladder kernels the file holds, drawn once
    assert "roofline.results.schema" in found["modules"] and "roofline.commands.reading" in found["modules"]
    assert [m for m in found["modules"] if m.startswith("roofline.measure") or m == "roofline.collect"] == []


def test_python_importtime_of_show_lists_no_measuring_module():
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "roofline", "show", "--results", str(RESULTS)],
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
    assert len(tree) > 120 and any(n.startswith("roofline/workload/") for n in tree)
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


def test_the_command_line_sits_on_top_console_and_outcome_below_it_and_the_library_below_them():
    """cli.py declares; console.py is the terminal and knows no command; outcome.py makes what
    each command shows and starts no measuring; nothing of the library imports any of the three."""
    top = {"roofline.cli", "roofline.console", "roofline.outcome", "roofline.commands", "roofline.api"}

    def named(modules, prefixes):
        return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]

    console = _module_imports(ROOT / "roofline" / "console.py")
    assert named(console, ["roofline.cli", "roofline.api", "roofline.measure", "roofline.collect"]) == []
    outcome = _module_imports(ROOT / "roofline" / "outcome.py")
    assert named(outcome, ["roofline.cli", "roofline.console", "roofline.api", "roofline.measure",
                           "roofline.collect"]) == []
    for path in sorted((ROOT / "roofline").rglob("*.py")):
        if path.parent == ROOT / "roofline" and path.stem in ("cli", "console", "outcome", "api", "__main__", "__init__"):
            continue
        if path.parent == ROOT / "roofline" / "commands":
            continue
        package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
        assert named(_module_imports(path, package), top) == [], path


def test_the_measuring_package_names_every_module_it_holds():
    import roofline.measure as measure

    doc = measure.__doc__
    for path in sorted((ROOT / "roofline" / "measure").glob("*.py")):
        if path.stem != "__init__":
            assert f"\n  {path.stem} " in doc, f"roofline/measure/__init__.py does not name {path.stem}"
