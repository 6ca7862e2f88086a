"""The command line through Typer's CliRunner: outputs, one-line errors and exit codes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from roofline.cli import app
from roofline.measure.nvml import gpu_available
from roofline.render import roofline_chart

runner = CliRunner()
REPO = Path(__file__).resolve().parent.parent
NO_GPU = pytest.mark.skipif(gpu_available(), reason="checks the no-GPU path")


def invoke(*args):
    return runner.invoke(app, list(args))


def assert_usage_error(result, needle, code=2):
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.stderr
    assert lines[0].startswith("roofline: error: ")
    assert "Traceback" not in result.output
    assert result.stdout == ""


def test_occupancy_json_seed_example():
    r = invoke("occupancy", "--regs", "93", "--threads", "256", "--arch", "sm_120", "--json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert (d["active_blocks_per_sm"], d["active_warps_per_sm"], d["max_warps_per_sm"]) == (2, 16, 48)
    assert d["limiters"] == ["registers"] and d["occupancy"] == pytest.approx(1 / 3, abs=1e-6)


def test_occupancy_that_cannot_launch_says_why_and_exits_1():
    r = invoke("occupancy", "--regs", "96", "--threads", "896", "--arch", "sm_90")
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert "cannot launch: needs 86,016 registers per block; the limit is 65,536" in r.stdout
    j = invoke("occupancy", "--regs", "96", "--threads", "896", "--arch", "sm_90", "--json")
    assert j.exit_code == 1 and json.loads(j.stdout)["active_blocks_per_sm"] == 0


@pytest.mark.parametrize("args, needle", [
    (("--regs", "0", "--threads", "256"), "registers per thread must be 1..255, got 0"),
    (("--regs", "300", "--threads", "256"), "registers per thread must be 1..255, got 300"),
    (("--regs", "32", "--threads", "2000"), "threads per block must be 1..1024, got 2000"),
    (("--regs", "32", "--threads", "256", "--smem", "-1"), "static shared memory must be >= 0 bytes"),
    (("--regs", "32", "--threads", "256", "--dynamic-smem", "-8"), "dynamic shared memory must be >= 0"),
    (("--regs", "abc", "--threads", "256"), "--regs: 'abc' is not an integer"),
    (("--regs", "32", "--threads", "2.5"), "--threads: '2.5' is not an integer"),
    (("--regs", "32", "--threads", "256", "--arch", "sm_42"), "unknown architecture 'sm_42'; known: sm_70"),
    (("--regs", "32", "--threads", "256", "--gpu", "voodoo"), "unknown GPU 'voodoo'; known: v100-sxm2, v100-pcie, t4"),
    (("--regs", "32", "--threads", "256", "--gpu", "h200", "--arch", "sm_90"), "give --gpu or --arch, not both"),
    (("--regs", "32", "--threads", "256", "--gpu", " "), "unknown GPU ' '"),
    (("--regs", "32", "--threads", "256", "--arch", "sm_90", "--smem", "60000"),
     "static shared memory must be at most 49,152 bytes (48 KB), got 60,000; use --dynamic-smem"),
    # past a launch's byte count (an int): refused, where 300k on an H200 is a launch that cannot happen (exit 1)
    (("--regs", "32", "--threads", "256", "--dynamic-smem", "99999999999999999999"),
     "dynamic shared memory is a launch's byte count, at most 2,147,483,647; got 99,999,999,999,999,999,999"),
])
def test_occupancy_bad_input(args, needle):
    if "--arch" not in args and "--gpu" not in args:
        args = args + ("--arch", "sm_90")
    assert_usage_error(invoke("occupancy", *args), needle)


def test_a_file_that_is_no_device_file_is_named_so(tmp_path):
    notes = tmp_path / "cost.txt"
    notes.write_text("19_ReLU: grade 1.71 s\n")
    assert_usage_error(invoke("device", "--gpu", str(notes)),
                       f"{notes}: not a device file (a .toml or .json file with the fields")


@NO_GPU
def test_without_a_gpu():
    """Every command that needs a GPU and finds none: exit 1, one line saying so and what works
    without one (the commands that run kernels: `test_running_without_a_gpu`)."""
    assert_usage_error(invoke("occupancy", "--regs", "32", "--threads", "256"),
                       "no CUDA GPU with a working driver found; without one, name a target with --arch sm_XY", code=1)
    assert_usage_error(invoke("device"), "no CUDA GPU with a working driver found; without one, describe a GPU with "
                                         "--gpu NAME (known: v100-sxm2", code=1)


@NO_GPU
@pytest.mark.cupy  # without CuPy they say how to install it instead
def test_running_without_a_gpu(tmp_path):
    out = tmp_path / "r.json"
    assert_usage_error(invoke("run", "--all", "--out", str(out)), "no CUDA GPU", code=1)
    assert_usage_error(invoke("device", "--measure"), "no CUDA GPU", code=1)
    assert not out.exists()


@pytest.mark.parametrize("driver", [True, False])
def test_running_without_cupy_says_how_to_install_it(tmp_path, monkeypatch, driver):
    """Without CuPy, a command that runs kernels says how to install it; where no driver answers
    either, it says first that there is no GPU (installing CuPy would not give one)."""
    from roofline.measure import nvml

    monkeypatch.setitem(sys.modules, "cupy", None)  # as an install without the cuda12 or cuda13 extra
    monkeypatch.setattr(nvml, "driver_present", lambda: driver)
    out = tmp_path / "r.json"
    for args in (["run", "--all", "--out", str(out)], ["device", "--measure"]):
        r = invoke(*args)  # the extra's packages as the installed metadata spells them
        assert_usage_error(r, "CuPy is not installed: pip install 'cupy-cuda12x" if driver else
                           "no CUDA GPU with a working driver found (and CuPy is not installed: on a machine with "
                           "one, pip install 'cupy-cuda12x", code=1)
        assert "'cuda-toolkit[" in r.stderr and "(roofline's cuda12 extra), or its cuda13 extra's packages" in r.stderr
        assert ("`profile --import`" in r.stderr) is not driver
    assert not out.exists()


@pytest.mark.parametrize("args, needle", [
    (("--kernel", "foo"), "unknown kernel 'foo'; valid: naive, gmem_coalescing"),
    (("--size", "0"), "--size takes positive integers, got '0'"),
    (("--size", "-3"), "--size takes positive integers, got '-3'"),
    (("--size", "M=10", "--size", "N=10", "--size", "K=0"), "--size takes positive integers, got 'K=0'"),
    (("--size", "50000"), "each matrix must have at most 2,147,483,647"),
    (("--m", "10"), "roofline run --m is renamed: --size M=VALUE (with N=VALUE and K=VALUE"),
    (("--size", "M=10", "--size", "M=20"), "--size M is given twice"),
    (("--size", "10", "--size", "20"), "--size N is given twice"),
    (("--all", "--kernel", "naive"), "give --all or --kernel NAME, not both"),
    (("--sweep", "1,x"), "--sweep takes comma-separated sizes N or shapes MxNxK, e.g. 512,1024,8192x1024x4096 "
                         "(or one size's values, K=1024,16384); got '1,x'"),
    (("--sweep", "128,,256"), "--sweep takes comma-separated sizes N or shapes MxNxK"),
    (("--sweep", "128x256"), "got '128x256'"),
    (("--sweep", "0x2x3"), "got '0x2x3'"),
    (("--sizes", "64"), "roofline run --sizes is renamed: --sweep LIST"),
    (("--l2", "hot"), "--l2 takes cold or warm, got 'hot'"),
    (("--sweep", "64", "--size", "64"), "--sweep of sizes or shapes sets every dimension; give --size only with a "
                                        "sweep of one dimension"),
    (("--size", "many"), "--size takes positive integers, got 'many'"),
    (("--autotuned-tile", "1,2"), "--autotuned-tile takes 5 positive integers BM,BN,BK,TM,TN"),
    (("--autotuned-tile", "128,128,8,8,7"), "autotuned: TN = 7 does not divide BN = 128"),
    (("--out", "/nonexistent-dir/r.json"), "folder /nonexistent-dir does not exist"),
    (("--out", "/"), "it is a folder; give a file name"),
    (("--out", "."), "cannot write .: it is a folder; give a file name"),
    (("--out", ""), "cannot write .: it is a folder; give a file name"),  # Typer reads "" as "."
    (("--out", "/proc/r.json"), "folder /proc is not writable"),
    (("--out", "/dev/null"), "cannot write /dev/null: it is a device, pipe or socket, not a file"),
    (("--all", "true"), "true: no such file; give a .cu file, MODULE:FUNCTION, FILE.py:FUNCTION, a spec file .toml, "
                        "or a problem.py"),
    (("tests/fixtures/problems/candidates/matmul_honest.py", "tests/fixtures/problems/small_matmul.py"),
     "tests/fixtures/problems/candidates/matmul_honest.py is a candidate (a ModelNew or a custom_kernel); give its problem first: "
     "roofline run tests/fixtures/problems/small_matmul.py tests/fixtures/problems/candidates/matmul_honest.py ..."),
    (("README.md",), "README.md: not a file roofline runs; give a .cu file"),
    (("tests/fixtures/problems/clamp.py", "nonexist.py"),
     "nonexist.py: no such file; after a problem file (tests/fixtures/problems/clamp.py) give its candidates"),
])
def test_run_bad_input_is_refused_before_any_gpu_work(args, needle):
    assert_usage_error(invoke("run", *args), needle)


def test_help_and_commands():
    top = invoke("-h")
    assert top.exit_code == 0 and "Commands:" in top.stdout
    for command in ("run", "profile", "comms", "plot", "show", "occupancy", "device", "kernels", "new", "compare",
                    "whatif", "project", "schema"):
        assert f"\n  {command} " in top.stdout
    for merged, into in (("tune", "roofline tune is now: roofline run --tune"),
                         ("check", "roofline check is now: roofline compare BASELINE.json NEW.json --max-drop"),
                         ("grade", "roofline grade is now: roofline run TARGETS...")):
        assert f"\n  {merged} " not in top.stdout
        assert_usage_error(invoke(merged), into)
    assert invoke().stdout == top.stdout  # no command: the help
    run_help = invoke("run", "--help").stdout
    assert "--all " in run_help and "<bool>" not in run_help and "--size N " in run_help
    assert_usage_error(invoke("frobnicate"),
                       "No such command 'frobnicate'. Commands: run, profile, comms, plot, show, occupancy, device, kernels, new, "
                       "compare, whatif, project, schema.")
    assert invoke("--version").stdout.startswith("roofline 0.")


@pytest.mark.xdist_group("ladder_chart")  # one process draws the chart, once
def test_plot_and_show_from_recorded_results(ladder_chart):
    res, out, r = ladder_chart  # `plot r.json --out chart.svg` of make_doc (tests/conftest.py)
    assert r.exit_code == 0, r.output
    assert r.stdout == f"wrote {out}\n" and "register_tiling_2d" in out.read_text()
    r = invoke("show", str(res), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["schema"] == 4  # read as the current schema


def test_plot_errors_leave_no_file(tmp_path, doc):
    out = tmp_path / "chart.png"
    assert_usage_error(invoke("plot", str(tmp_path / "none.json"), "--out", str(out)),
                       "no such results file")
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text("{not json")
    assert_usage_error(invoke("plot", str(corrupt), "--out", str(out)), "not valid JSON")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc))
    assert_usage_error(invoke("plot", str(good), "--out", str(tmp_path / "c.gif")),
                       "use a .png, .svg or .pdf file name")
    assert_usage_error(invoke("plot", str(good), "--kind", "pie", "--out", str(out)),
                       "'pie' is not one of 'roofline', 'sweep', 'energy'")
    assert_usage_error(invoke("plot", str(good), "--kind", "sweep", "--measured", "--out", str(out)),
                       "--measured applies to --kind roofline")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corrupt.json", "good.json"]


@pytest.mark.parametrize("mutate, needle", [
    (lambda d: d["kernels"][3].update(gflops="fast"), 'kernels[3].gflops: Input should be a valid number, got "fast"'),
    (lambda d: d["kernels"][0]["model"].update(l1_bytes=1e-300),
     "naive: arithmetic intensity at L1 (model) comes to inf, which cannot be drawn"),
    (lambda d: d["kernels"][2]["model"].update(gmem_bytes=1e-300),
     "smem_tiling: arithmetic intensity at GMEM (model) comes to inf, which cannot be drawn"),
    (lambda d: d["kernels"][2]["model"].update(smem_served_bytes=1e-300),
     "smem_tiling: arithmetic intensity at SMEM (model) comes to inf, which cannot be drawn"),
    (lambda d: d["device"].update(max_sm_clock_mhz=1e-300),
     "device.peak_fp32_gflops: 66,908, but its fp32_cores 16,896 x 2 FLOP x max_sm_clock_mhz 1e-300 give 3.38e-299"),
    (lambda d: d["device"].update(max_sm_clock_mhz=-1980), "device.max_sm_clock_mhz: Input should be greater than 0"),
    (lambda d: d.update(kernels=[]), "no kernels in these results"),
    (lambda d: [k.update(verified=False, gflops=None) for k in d["kernels"]],
     "no kernel in these results was verified and timed"),
    (lambda d: d["kernels"][5].update(gflops=1_000_000.0), "kernels[5].gflops: 1,000,000 GFLOP/s is 14.9x"),
])
def test_plot_refuses_what_cannot_be_drawn(tmp_path, doc, mutate, needle):
    mutate(doc)
    res = tmp_path / "r.json"
    res.write_text(json.dumps(doc))
    out = tmp_path / "c.png"
    assert_usage_error(invoke("plot", str(res), "--out", str(out)), needle)
    assert not out.exists()


def test_plot_notes_replaced_kernels_and_sweep_files(tmp_path, doc, monkeypatch):
    # the notes and the document handed to the chart are checked here; the charts themselves are
    # drawn elsewhere (this document: tests/test_plot.py; sweep-h200's roofline:
    # tests/test_chart_layout.py), so their drawing (seconds) is left out
    drawn = []
    monkeypatch.setattr(roofline_chart, "draw", lambda d, out, *args: drawn.append(d) or Path(out).write_bytes(b"\x89PNG"))
    a, b, out = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.png"
    a.write_text(json.dumps(doc))
    b.write_text(json.dumps(doc))
    r = invoke("plot", str(a), str(b), "--out", str(out))
    assert r.exit_code == 0
    assert r.stderr.count("in an earlier results file too") == 1  # one note for the file given twice, not one per kernel
    assert f"roofline: note: {b}: all its kernels are in an earlier results file too; read from {b}, the last given" in r.stderr
    assert [k.name for k in drawn[-1].kernels] == [k["name"] for k in doc["kernels"]]  # each kernel once
    sweep = REPO / "plots" / "sweep-h200.json"
    r = invoke("plot", str(sweep), "--out", str(out))
    assert r.exit_code == 0
    assert "holds a size sweep: the roofline shows its largest size, 8192x8192x8192" in r.stderr
    assert (drawn[-1].problem.m, len(drawn)) == (8192, 2)
    assert_usage_error(invoke("plot", str(a), str(sweep), "--out", str(out)),
                       f"{sweep} holds a size sweep, which is not merged with other results files")


def test_plot_output_paths(tmp_path, doc):
    res = tmp_path / "r.json"
    res.write_text(json.dumps(doc))
    (tmp_path / "dir.png").mkdir()
    assert_usage_error(invoke("plot", str(res), "--out", str(tmp_path / "dir.png")), "it is a folder")
    assert_usage_error(invoke("plot", str(res), "--out", "/proc/x.png"), "is not writable")
    assert_usage_error(invoke("plot", str(tmp_path), "--out", str(tmp_path / "c.png")),
                       "is a folder, not a results file")
    long_name = str(tmp_path / ("x" * 300 + ".png"))
    assert_usage_error(invoke("plot", str(res), "--out", long_name), "too long")
    assert_usage_error(invoke("plot", long_name), "cannot read")
    assert_usage_error(invoke("plot", str(res), "--out", str(res) + "/c.png"), "is a file, not a folder")
    assert_usage_error(invoke("occupancy", "--regs", "32", "--threads", "256", "--arch", "sm_90", "--chart", long_name),
                       "too long")


# plots/*.json are each drawn as `plot` draws them by tests/test_chart_layout.py and shown at 80
# and 120 columns by tests/test_trial_cli.py; here the fixtures are drawn, one file a test.
@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda x: x.stem)
def test_every_committed_results_file_loads_and_draws(path, tmp_path):
    r = invoke("plot", str(path), "--out", str(tmp_path / f"{path.stem}.png"))
    assert r.exit_code == 0, (path, r.output)


def test_device_preset_json():
    r = invoke("device", "--gpu", "h200", "--json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert d["sm_count"] == 132 and d["peak_fp32_gflops"] == pytest.approx(66_908.2, abs=0.1)
    assert d["peak_dram_gbps"] == 4800 and d["compute_capability"] == "9.0" and d["arch"] == "sm_90"
    assert_usage_error(invoke("device", "--gpu", "h200", "--measure"), "--measure needs this machine's GPU")


def test_kernels_lists_the_ladder_with_floors():
    r = invoke("kernels", "--gpu", "rtx5080", "--model-only", "--json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    two_d = {k["name"]: k for k in d["kernels"]}["register_tiling_2d"]
    assert two_d["model"]["arithmetic_intensity"] == 32
    # the 23.6 GB the banks serve at 84 SMs x 128 B x 2,617 MHz (28.1 TB/s): 0.840 ms; no L2 roof is known
    # for the RTX 5080 and --model-only has no DRAM bytes; the FP32 floor, 2.442 ms, binds
    floors = two_d["floors"]
    assert floors["memory_floor_ms"] == pytest.approx(23.622320128e9 / (84 * 128 * 2.617e6), rel=1e-6)
    assert floors["memory_level"] == "SMEM" and set(floors["levels_ms"]) == {"FP32", "SMEM"}
    assert floors["compute_floor_ms"] == pytest.approx(2.442, abs=0.001)
    assert floors["binding"] == "compute" and floors["binding_level"] == "FP32"


def test_schema_command_prints_the_json_schema():
    r = invoke("schema")
    assert r.exit_code == 0 and json.loads(r.stdout)["properties"]["schema"]["const"] == 4


FAST = """
import json, sys
from typer.testing import CliRunner
from roofline.cli import app
codes = [CliRunner().invoke(app, args).exit_code for args in json.loads(sys.argv[1])]
print(json.dumps({"codes": codes, "heavy": sorted(m for m in ("cupy", "matplotlib", "plotly") if m in sys.modules)}))
"""


@pytest.mark.parametrize("args", [["occupancy", "--regs", "93", "--threads", "256", "--arch", "sm_120"],
                                  ["kernels", "--gpu", "h200", "--model-only"]], ids=" ".join)
def test_fast_commands_import_neither_cupy_nor_matplotlib(args):
    """What keeps these commands quick, checked by what a fresh interpreter loaded for them, not by
    a clock (pytest runs beside other processes; bench/startup_speed.py times them)."""
    out = subprocess.run([sys.executable, "-c", FAST, json.dumps([args])], capture_output=True, text=True,
                         cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1]) == {"codes": [0], "heavy": []}


def test_names_are_text_not_markup(tmp_path, doc):
    doc["kernels"][0]["name"] = "[bold red]x[/]"
    doc["device"]["name"] = "[red]H[/red]$x"
    res = tmp_path / "r.json"
    res.write_text(json.dumps(doc))
    r = runner.invoke(app, ["show", str(res)], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "[bold red]x[/]" in r.stdout and "on [red]H[/red]$x (" in r.stdout
    assert invoke("plot", str(res), "--out", str(tmp_path / "c.png")).exit_code == 0


@pytest.mark.parametrize("columns", ["0", "5", "abc"])
def test_an_unusable_columns_value_falls_back(columns):
    r = runner.invoke(app, ["occupancy", "--regs", "93", "--threads", "256", "--arch", "sm_120"],
                      env={"COLUMNS": columns})
    assert r.exit_code == 0 and "16 of 48 warps = 33.3 %" in r.stdout


def test_errors_of_long_commands_are_one_line_without_a_terminal():
    r = invoke("run", "--kernel", "foo")
    assert r.stderr.startswith("roofline: error: unknown kernel 'foo'")  # no progress bar left behind


def test_show_says_a_sweep_file_holds_every_size():
    r = runner.invoke(app, ["show", str(REPO / "plots" / "sweep-h200.json")], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    assert "holds a size sweep: GFLOP/s at every size first, then the tables of the largest, 8192x8192x8192" in r.stderr
    assert r.stdout.startswith("GFLOP/s by size (M = N = K) on NVIDIA H200")


def test_a_thread_tile_that_does_not_divide_the_block_tile_is_refused_in_the_listing():
    assert_usage_error(invoke("kernels", "--autotuned-tile", "1,2,3,4,5", "--gpu", "h200", "--model-only"),
                       "autotuned: TM = 4 does not divide BM = 1")


def test_kernels_refuses_files_it_cannot_list_and_sizes_a_problem_has_of_its_own():
    assert_usage_error(invoke("kernels", "README.md", "--gpu", "h200"),
                       "README.md: kernels lists CUDA files (.cu, .cuh) or a kernel benchmark's problems (.py)")
    assert_usage_error(invoke("kernels", "tests/fixtures/problems/clamp.py", "--size", "8192", "--gpu", "h200"),
                       "--size picks a GPU MODE task's cases; tests/fixtures/problems/clamp.py is a problem of one "
                       "size, its get_inputs'")
    assert_usage_error(invoke("kernels", "tests/fixtures/problems/clamp.py", "--dtype", "bf16", "--gpu", "h200"),
                       "a problem file lists its own sizes and types: --declare, --ladder and --dtype do not apply")


@pytest.mark.parametrize("suffix", ["png", "svg", "pdf"])
def test_a_chart_never_replaces_the_results_it_reads(tmp_path, suffix):
    results = tmp_path / f"r.{suffix}"
    results.write_bytes((REPO / "plots" / "results-h200.json").read_bytes())
    link = tmp_path / f"link.{suffix}"
    link.symlink_to(results)
    for out in (results, link):
        assert_usage_error(invoke("plot", str(results), "--out", str(out)),
                           "is one of the files read")
    before = tmp_path / "before.json"
    before.write_bytes(results.read_bytes())
    assert_usage_error(invoke("compare", str(before), str(results), "--chart", str(results)), "is one of")
    assert results.read_bytes() == (REPO / "plots" / "results-h200.json").read_bytes()


def test_show_names_the_precision_of_a_tensor_sweep():
    r = runner.invoke(app, ["show", str(REPO / "plots" / "results-h200-tf32.json")],
                      env={"COLUMNS": "200"})
    assert r.exit_code == 0
    assert " ".join(r.stdout.split()).startswith(  # the title wraps at the table's width
        "GFLOP/s by size (M = N = K), GEMM TF32 (TN, FP32 accumulate), on NVIDIA H200")


def test_a_kernel_of_the_other_ladder_is_refused_before_looking_for_a_gpu():
    assert_usage_error(invoke("run", "--ladder", "tensor", "--kernel", "naive"),
                       "naive belongs to the FP32 ladder; it does not run in BF16")
    assert_usage_error(invoke("run", "--kernel", "wgmma_ws"), "wgmma_ws belongs to the tensor ladder")


def test_a_kernel_of_yours_without_a_model_is_listed_against_a_preset():
    r = runner.invoke(app, ["kernels", "tests/fixtures/kernels/bf16_dot.cu", "--gpu", "h200",
                            "--model-only"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "your kernels, BF16 (TN), model at 4096x4096x4096 on H200"
    assert "BF16 tensor ms" in lines[2]
    assert lines[4].split() == ["bf16_dot", "256", "no", "model", "-", "-", "-", "-", "-", "-"]


def test_shared_memory_sizes_take_kib_as_cuda_counts_them():
    from roofline.console import byte_count

    assert byte_count("48k") == byte_count("48 KiB") == byte_count("48KB") == 49_152 and byte_count("100") == 100
    r = CliRunner().invoke(app, ["occupancy", "--regs", "32", "--threads", "256", "--smem", "48k", "--arch", "sm_90"])
    assert r.exit_code == 0 and "49,152 B shared memory per block" in r.output
    r = CliRunner().invoke(app, ["occupancy", "--regs", "32", "--threads", "256", "--smem", "4x", "--arch", "sm_90"])
    assert r.exit_code == 2 and "'4x' is not a size in bytes" in r.output


def test_run_profile_passes_on_what_the_report_reader_said_once_with_its_kernels(monkeypatch):
    """`run --profile`'s counting step: each note the reader gave (a report read through the CSV
    export, say) reaches the run's notes once, naming the kernels it was said of."""
    from types import SimpleNamespace

    from roofline.commands import run as run_command
    from roofline.measure import counters
    from roofline.model.traffic import CountedTraffic
    from roofline.progress import Progress

    said = "Nsight Compute's Python report interface could not read it (exit code -11): read through ncu's CSV export"
    asked = []
    monkeypatch.setattr(counters, "profile", lambda spec, problem, bus, time_ms, cc, timeline:
                        asked.append((time_ms, cc, timeline)) or (CountedTraffic(), None, (said,)))
    kernels = [SimpleNamespace(correct=True, spec=SimpleNamespace(name=n), timing=t)
               for n, t in (("a", SimpleNamespace(median_ms=274.0)), ("b", None))]
    output = SimpleNamespace(kernels=kernels, problem=None, device=SimpleNamespace(compute_capability="9.0"))
    counted, launches, notes = run_command._count(output, None, Progress(), True)  # run --timeline
    assert set(counted) == {"a", "b"} and launches == {} and notes == [f"the counters of a, b: {said}"]
    assert asked == [(274.0, "9.0", True), (None, "9.0", True)]  # each kernel's time: a long launch sampled at its pace
    asked.clear()
    run_command._count(output, None, Progress())  # run --profile: counted, not sampled
    assert asked == [(274.0, "9.0", False), (None, "9.0", False)]


def test_show_and_plot_without_a_file_read_the_profile_or_grade_file_that_alone_is_here(tmp_path, monkeypatch):
    import shutil

    plots = Path(__file__).resolve().parents[1] / "plots"
    monkeypatch.chdir(tmp_path)
    assert_usage_error(invoke("show"), "roofline-results.json: no such results file; create one with `roofline run")
    shutil.copy(plots / "profile-h200-transformer.json", tmp_path / "roofline-profile.json")  # as `profile` leaves it
    r = invoke("show")
    assert r.exit_code == 0 and r.stdout.startswith("NVIDIA H200:") and "kernels by GPU time" in r.stdout
    r = invoke("plot", "--out", "chart.png")
    assert r.exit_code == 0 and (tmp_path / "chart.png").stat().st_size > 0
    assert_usage_error(invoke("show", "roofline-grades.json"),
                       "roofline-grades.json: no such grade file; create one with `roofline run KERNEL.cu`")
    shutil.copy(plots / "grades-h200.json", tmp_path / "roofline-grades.json")  # two defaults here: neither is guessed
    for command in (("show",), ("plot", "--out", "two.png")):
        assert_usage_error(invoke(*command), "roofline-results.json: no such file here, and roofline-profile.json and "
                                             "roofline-grades.json are: name the one to read")


def test_run_timeline_is_refused_where_it_samples_nothing():
    # --timeline samples GEMM kernels (ladder rungs, your GEMM kernel); tune and graded entries take none
    assert_usage_error(invoke("run", "--tune", "--size", "1024", "--timeline"), "--timeline")
