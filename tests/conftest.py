"""Shared fixtures: a synthetic results document (no GPU needed) and its chart, drawn once, the
skips of the markers `gpu`, `cupy`, `nvrtc` and `nvcc` (pyproject.toml), a private cache folder for
every test (no test touches the user's real cache), one folder of compiled figures and one of
matplotlib's for the session, and user kernels compiled by NVRTC unless a test asks for nvcc."""

from __future__ import annotations

import atexit
import copy
import gc
import json
import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path

import pytest
import typer.testing

from roofline.ladder import families
from roofline.measure.nvml import gpu_available
from roofline.model.arch import parse_arch
from roofline.model.device import from_preset
from roofline.model.occupancy import calculate
from roofline.model.problem import Problem
from roofline.model.traffic import TrafficModel

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# One matplotlib folder for the session, its processes and theirs (set before pytest-xdist starts
# them): no matplotlibrc in the user's config folder changes a chart, the font list is built once, not in
# every process that draws (about half a second each under a test's own empty cache folder).
if "ROOFLINE_TESTS_MPLCONFIGDIR" not in os.environ:
    os.environ["ROOFLINE_TESTS_MPLCONFIGDIR"] = os.environ["MPLCONFIGDIR"] = tempfile.mkdtemp(prefix="roofline-tests-mpl-")
    atexit.register(shutil.rmtree, os.environ["MPLCONFIGDIR"], True)


# The toolkit's nvcc found at the start (None where there is none), before the session turns it off:
# user kernel files compile through NVRTC in every test (and its child processes) unless the test
# names nvcc itself ($ROOFLINE_NVCC, `nvcc_path`), so that a suite's results do not depend on
# whether the machine has a CUDA toolkit.
def _nvcc_found() -> str | None:
    from roofline.errors import UsageError
    from roofline.measure.nvcc_compile import find_nvcc
    try:
        return find_nvcc()
    except UsageError:
        return None


if "ROOFLINE_TESTS_NVCC" not in os.environ:  # the first process of the session (pytest-xdist's workers inherit it)
    os.environ["ROOFLINE_TESTS_NVCC"] = _nvcc_found() or ""
    os.environ["ROOFLINE_NVCC"] = "off"
NVCC = os.environ["ROOFLINE_TESTS_NVCC"] or None


@pytest.fixture
def nvcc_path(monkeypatch) -> str:
    """The machine's nvcc, turned back on for this test and the processes it starts (the tests
    that use it are marked `nvcc`: they skip where there is none)."""
    assert NVCC, "mark the test nvcc"
    monkeypatch.setenv("ROOFLINE_NVCC", NVCC)
    return NVCC


# modules of long tests (the ladder compiled for each target, charts drawn), started first so that
# the processes end together rather than one finishing them alone
LONG_FIRST = {"test_offline", "test_user", "test_chart_layout", "test_html_report"}


# The garbage collector, tuned for a session that keeps many objects alive (the modules, the
# charts drawn once): scanned every 700 allocations it took about 10 s of the suite's CPU. Young
# objects are now scanned every 50,000, and what collection built is frozen, never scanned again.
gc.set_threshold(50_000, 50, 100)


def pytest_collection_finish(session):
    gc.collect()
    gc.freeze()


def cuda_lacking(marker: str) -> str | None:
    """Why this environment lacks what tests marked `marker` need, None where it has it: 'cupy',
    CuPy itself (no GPU needed); 'nvrtc', NVRTC loaded through CuPy, to compile kernels offline.
    The reason is the line roofline itself gives (`nvrtc_compile.nvrtc_version`): an install of
    roofline without its cuda12 or cuda13 extra has neither."""
    from roofline.errors import RunError
    from roofline.measure.nvml import INSTALL_HINT
    from roofline.measure.nvrtc_compile import nvrtc_version

    try:
        if marker == "cupy":
            import cupy  # noqa: F401
        else:
            nvrtc_version()
    except ImportError:
        return f"CuPy is not installed: {INSTALL_HINT}"
    except RunError as exc:
        return str(exc)
    return None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """The long modules first (LONG_FIRST); under pytest-xdist (`--dist loadgroup`) every GPU test
    in one worker: two workers never time kernels on one GPU at once. Without a GPU, the GPU
    tests skip; without CuPy or its NVRTC, the tests marked `cupy` or `nvrtc`, saying why."""
    items.sort(key=lambda item: item.module.__name__ not in LONG_FIRST)  # stable: the long ones start first
    have_gpu = gpu_available()
    skip = pytest.mark.skip(reason="no CUDA GPU with a working driver")
    lacking = {marker: cuda_lacking(marker) for marker in ("cupy", "nvrtc")}
    lacking["nvcc"] = None if NVCC else "no nvcc on the PATH, in $CUDA_HOME, $CUDA_PATH or /usr/local/cuda"
    for item in items:
        gpu = "gpu" in item.keywords
        if gpu:
            item.add_marker(pytest.mark.xdist_group("gpu"))
        if gpu and not have_gpu:
            item.add_marker(skip)
        for marker, why in lacking.items():
            if why and item.get_closest_marker(marker):
                needs = {"nvrtc": "NVRTC", "cupy": "CuPy", "nvcc": "nvcc"}[marker]
                item.add_marker(pytest.mark.skip(reason=f"needs {needs}: {why}"))


def _command_once(get_command):
    """Typer builds its Click command again on every CliRunner.invoke (about 10 ms, hundreds of
    times a run); the command is the same each time, so build it once per app."""
    built: dict = {}

    def command(typer_app):
        if id(typer_app) not in built:
            built[id(typer_app)] = (typer_app, get_command(typer_app))  # the app kept: its id stays its own
        return built[id(typer_app)][1]

    return command


if hasattr(typer.testing, "_get_command"):  # Typer's own name for it; without it, every invoke builds its own
    typer.testing._get_command = _command_once(typer.testing._get_command)


@pytest.fixture(autouse=True, scope="session")
def shared_compile_cache(tmp_path_factory):
    """One folder of compiled figures for the whole run, child processes and pytest-xdist's
    workers included (ROOFLINE_COMPILE_CACHE; its writes are atomic): each ladder kernel is
    compiled once per target."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if base.name.startswith("popen-gw") else base) / "compiled"
    folder.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ROOFLINE_COMPILE_CACHE", str(folder))
        yield


@pytest.fixture(scope="session")
def cache_folders(tmp_path_factory):
    """The folder that holds every test's cache folder (`private_cache`)."""
    return tmp_path_factory.mktemp("caches")


@pytest.fixture(autouse=True)
def private_cache(cache_folders, monkeypatch):
    """Every test gets its own empty cache folder: tuned tiles and measured ceilings stay out of
    the user's ~/.cache/roofline. A fresh one under `cache_folders` (tempfile.mkdtemp): a
    numbered folder beside the session's other ones (tmp_path_factory.mktemp) lists them all
    first, and every test's tmp_path with it: about a millisecond a test by the end of a session."""
    folder = Path(tempfile.mkdtemp(dir=cache_folders))
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder


# GFLOP/s per kernel for the synthetic document: shaped like a ladder, not a measurement.
SYNTHETIC_GFLOPS = {"naive": 500.0, "gmem_coalescing": 6000.0, "smem_tiling": 9000.0,
                    "register_tiling_1d": 17000.0, "register_strip": 16000.0, "register_tiling_2d": 25000.0,
                    "vectorized": 31000.0, "bank_conflict_free": 33000.0, "autotuned": 34000.0,
                    "warptiling": 37000.0, "async_copy": 43000.0, "full_tiles": 49000.0,
                    "tile_by_shape": 49000.0, "split_k": 48500.0}


def make_doc(n: int = 4096, failed: tuple[str, ...] = (), gpu: str = "h200") -> dict:
    """A schema-3 results document for preset `gpu` built from the model, with made-up speeds;
    kernels named in `failed` are marked as failing verification (no time)."""
    dev = from_preset(gpu)
    problem = Problem(n, n, n)
    ref_ms = problem.flops / 50_000e9 * 1e3
    kernels = []
    for fam in families.LADDER:
        spec = fam.spec()
        ok = fam.name not in failed
        g = SYNTHETIC_GFLOPS[fam.name]
        t_ms = problem.flops / (g * 1e9) * 1e3
        kernels.append({
            "name": fam.name, "gflops": g if ok else None, "time_ms": t_ms if ok else None,
            "pct_of_reference": 100 * ref_ms / t_ms if ok else None, "verified": ok,
            "rel_error": 1e-6 if ok else None, "registers": 64, "threads_per_block": spec.threads_per_block,
            "static_smem_bytes": 8192,
            "occupancy": calculate(parse_arch(dev.arch), 64, spec.threads_per_block, 8192).to_dict(),
            "model": asdict(spec.model.figures(problem)),
            "error": None if ok else f"{fam.name}: failed verification: relative error 0.5 above the limit 0.0001",
        })
    device = json.loads(json.dumps(asdict(dev)))
    return {"schema": 3, "device": device, "problem": {"m": n, "n": n, "k": n, "dtype": "float32"},
            "reference": {"name": "cublas", "gflops": problem.flops / (ref_ms * 1e-3) / 1e9, "time_ms": ref_ms},
            "kernels": kernels}


def set_rate(kernel: dict, gflops: float) -> dict:
    """Give a kernel of a synthetic document another rate, its time following (the schema checks
    that the two agree)."""
    kernel["gflops"] = gflops
    kernel["time_ms"] = kernel["model"]["flops"] / (gflops * 1e9) * 1e3
    kernel.pop("pct_of_reference", None)
    return kernel


@pytest.fixture
def doc():
    return copy.deepcopy(make_doc())


@pytest.fixture(scope="session")
def ladder_chart(tmp_path_factory):
    """The synthetic document (`make_doc`) drawn once per process, as a person draws it:
    `roofline plot r.json --out chart.svg` (with a private cache folder). Returns
    (results path, chart path, the command's CliRunner result); the tests of the command and of
    the chart's content read this one drawing instead of drawing it again (seconds each), in one
    process (their xdist group, "ladder_chart")."""
    from typer.testing import CliRunner

    from roofline.cli import app

    folder = tmp_path_factory.mktemp("ladder-chart")
    res, out = folder / "r.json", folder / "chart.svg"
    res.write_text(json.dumps(make_doc()))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder / "cache"))
        result = CliRunner().invoke(app, ["plot", str(res), "--out", str(out)])
    return res, out, result


def user_record(doc: dict, name: str, model: bool = True, gflops: float = 30_000.0) -> dict:
    """A user kernel's record for document `doc`, as `run --source` writes one: tiled_f4's launch
    with its tiles and model (or, `model` False, neither), a ragged gate passed, a made-up rate."""
    p = Problem(doc["problem"]["m"], doc["problem"]["n"], doc["problem"]["k"])
    arch = parse_arch("sm_" + doc["device"]["compute_capability"].replace(".", ""))
    source = {"name": name, "path": f"/home/you/{name}.cu", "entry": "tiled_f4<64,64,16,4,4>", "block": "256,1,1",
              "grid": "cdiv(N,64), cdiv(M,64)", "dynamic-smem": "8192"}
    figures = None
    if model:
        source.update({"tile": "64x64x16", "thread-tile": "4x4"})
        figures = asdict(TrafficModel(block_tile=(64, 64), thread_tile=(4, 4)).figures(p))
    return {
        "name": name, "summary": f"your kernel tiled_f4<64,64,16,4,4> from {name}.cu",
        "template": "tiled_f4<64,64,16,4,4>", "tile_source": "user", "threads_per_block": 256,
        "dynamic_smem_bytes": 8192, "registers": 40, "static_smem_bytes": 0, "local_bytes": 0,
        "occupancy": calculate(arch, 40, 256, 0, 8192).to_dict(), "verified": True, "rel_error": 2e-7,
        "nan_or_unwritten_elements": 0, "error": None, "model": figures, "source": source,
        "ragged": {"problem": {"m": 511, "n": 383, "k": 255}, "passed": True, "rel_error": 1e-7},
        "gflops": gflops, "time_ms": p.flops / (gflops * 1e9) * 1e3,
    }
