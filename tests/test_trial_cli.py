"""What a new user's trial of the command line found: file names that are not UTF-8, an ASCII
terminal, local memory never shown, four ways of saying 'no GPU', Ctrl-C during the imports, cells cut
at 80 and 120 columns, `new` refusing a file name with a space, and help and type errors in
Typer's and pydantic's words."""

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURES, make_doc
from typer.testing import CliRunner

from roofline import cli
from roofline.cli import app
from roofline import files
from roofline.commands import occupancy as occupancy_cmd
from roofline.render import roofline_chart
from roofline.measure import nvml
from roofline.render.text import display_names
from roofline.results import store

REPO = Path(__file__).resolve().parent.parent
PLOTS = sorted((REPO / "plots").glob("*.json"))
runner = CliRunner()


def invoke(*args, columns: int = 200):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": str(columns)})


def one_line_error(result, needle, code=2):
    assert result.exit_code == code, result.output
    assert result.stderr.count("\n") == 1 and needle in result.stderr, result.stderr
    assert result.stderr.startswith("roofline: error: ") and "Traceback" not in result.output


# 1. Paths that are not valid UTF-8 (Python reads their bytes as surrogate escapes)

def test_a_file_name_that_is_not_utf8_works(tmp_path, monkeypatch):
    name = os.fsdecode(b"k\xe9.cu")
    r = invoke("new", tmp_path / name)
    assert r.exit_code == 0, r.output
    assert "kernel k_ (from the file name; --name NAME sets another)" in r.stdout
    assert os.listdir(tmp_path) == [name]
    text = (tmp_path / name).read_text()
    assert "// roofline entry: k_<32>" in text and "// roofline name: k_" in text
    # the chart's own drawing (seconds) left out: the output path is what is checked here
    monkeypatch.setattr(roofline_chart, "draw", lambda doc, out, *args: files.write_atomic(
        out, lambda tmp: Path(tmp).write_bytes(b"\x89PNG")))
    chart = tmp_path / os.fsdecode(b"r\xe9s.png")
    r = invoke("plot", REPO / "plots" / "results-h200.json", "--out", chart)
    assert r.exit_code == 0, r.output
    assert r.stdout == f"wrote {tmp_path}/r\\xe9s.png\n" and chart.read_bytes() == b"\x89PNG"
    one_line_error(invoke("plot", "--out", tmp_path / os.fsdecode(b"no\xe9") / "c.png"), "does not exist")


def test_the_real_streams_print_such_a_name_in_one_line(tmp_path):
    """Through the entry point (its streams, not the test runner's): the byte is shown as \\xe9."""
    out = subprocess.run([sys.executable, "-m", "roofline", "new", b"k\xe9.cu"], cwd=tmp_path, capture_output=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]), LC_ALL="C", PYTHONUTF8="0"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(b"wrote k\\xe9.cu: kernel k_ ") and out.stderr == b""
    assert os.listdir(tmp_path) == [os.fsdecode(b"k\xe9.cu")]


# 2. An ASCII-only standard output (LC_ALL=C PYTHONUTF8=0)

def _run_on_ascii(monkeypatch, *args, columns=80) -> tuple[int, bytes, bytes]:
    """`roofline ARGS` through cli.main() with standard output and error that hold ASCII only, as
    in the C locale; returns (exit code, stdout bytes, stderr bytes)."""
    out, err = io.BytesIO(), io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, encoding="ascii", errors="strict"))
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(err, encoding="ascii", errors="strict"))
    monkeypatch.setattr(sys, "argv", ["roofline", *map(str, args)])
    monkeypatch.setenv("COLUMNS", str(columns))
    try:
        cli.main()
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    sys.stdout.flush()
    sys.stderr.flush()
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("args", [*(["show", p] for p in PLOTS),
                                  ["device", "--gpu", "h200"], ["device", "--gpu", "h100-sxm"],
                                  ["occupancy", "--regs", "93", "--threads", "256", "--arch", "sm_120"],
                                  ["kernels", "--gpu", "h200", "--model-only"],
                                  ["compare", FIXTURES / "results-h200.json", REPO / "plots" / "results-h200.json"],
                                  ["profile", "--import", FIXTURES / "ncu" / "cupy-h200-base.csv", "--out", "{tmp}"]],
                         ids=lambda a: " ".join(Path(str(x)).name for x in a[:3]))
def test_every_printing_command_renders_on_an_ascii_terminal(monkeypatch, tmp_path, args):
    args = [str(tmp_path / "p.json") if a == "{tmp}" else a for a in args]
    code, out, err = _run_on_ascii(monkeypatch, *args)
    assert code == 0, err
    assert b"Traceback" not in err and out.isascii() and err.isascii()
    text = out.decode()
    assert "---" in text  # the tables' rules, in ASCII, the layout kept
    assert max(len(line) for line in text.splitlines()) <= 80


def test_an_ascii_terminal_gets_the_ascii_forms_of_names(monkeypatch, tmp_path):
    doc = make_doc()
    doc["kernels"][0]["name"] = "naïve×2"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    code, out, _ = _run_on_ascii(monkeypatch, "show", path, columns=200)
    assert code == 0 and b"naivex2 " in out  # 'i' for 'i' with its diaeresis, 'x' for the multiplication sign


# 5. Spills

def test_local_memory_is_shown_in_the_table_and_the_verdict():
    # the figure is the kernel's local memory per thread (its stack frame: register spills and arrays kept in
    # memory), not the spills alone, so it is named so
    r = invoke("show", REPO / "plots" / "tune-h200.json", columns=200)
    assert r.exit_code == 0
    header = next(line for line in r.stdout.splitlines() if line.lstrip().startswith("kernel "))
    row = next(line for line in r.stdout.splitlines() if line.lstrip().startswith("autotuned<256,256,16,8,8> "))
    assert re.search(r" regs +local +AI ", header) and re.search(r" 32 +1,440 B +64 ", row)
    text = " ".join(r.stdout.split())  # the verdicts wrap at the terminal's width
    verdict = text[text.index("autotuned<256,256,16,8,8>: "):]
    verdict = verdict[:verdict.index(" autotuned<64,128,8,8,8>: ")]
    assert ("; local memory: 1,440 B per thread beside its 32 registers (register spills or arrays kept in memory), "
            "read and written through L1/L2 and not in the model: the likeliest reason it is 62x its floor") in verdict
    assert text.count("; local memory: ") == 1  # no other kernel has local memory
    plain = invoke("show", REPO / "plots" / "results-h200.json", columns=200)
    assert " local " not in plain.stdout.splitlines()[2]  # no kernel has local memory: no column


# 7. No GPU: one way

@pytest.fixture
def no_gpu(monkeypatch):
    """This machine as one without a GPU, whatever it has."""
    monkeypatch.setattr(nvml, "gpu_available", lambda: False)
    monkeypatch.setattr(nvml, "nvml_compute_capability", lambda device_index=0: None)


FOUND_NONE = "no CUDA GPU with a working driver found; without one, "


def test_a_command_that_needs_a_gpu_and_finds_none_exits_1_saying_what_works(no_gpu):
    one_line_error(invoke("device"), FOUND_NONE + "describe a GPU with --gpu NAME (known: v100-sxm2", code=1)
    one_line_error(invoke("occupancy", "--regs", "32", "--threads", "256"),
                   FOUND_NONE + "name a target with --arch sm_XY (e.g. sm_90) or --gpu NAME (e.g. h200)", code=1)


@pytest.mark.cupy  # without CuPy they say how to install it instead
def test_a_command_that_runs_kernels_and_finds_no_gpu_exits_1_saying_what_works(no_gpu, tmp_path):
    one_line_error(invoke("run", "--out", tmp_path / "r.json"), FOUND_NONE + "`roofline show`, `plot`, `compare`, "
                   "`whatif`, `project`, `comms`, `profile --import`", code=1)
    one_line_error(invoke("device", "--measure"), FOUND_NONE, code=1)


def test_kernels_says_on_stderr_that_it_falls_back_to_the_model(no_gpu):
    r = invoke("kernels")
    assert r.exit_code == 0
    assert r.stderr.splitlines()[0] == ("roofline: note: no CUDA GPU found and no target given: the traffic model "
                                        "alone; add --arch sm_XY or --gpu NAME for registers, local memory and occupancy")
    assert "no GPU" not in r.stdout and "regs" not in r.stdout
    r = invoke("kernels", "--model-only")  # asked for: nothing to announce
    assert r.exit_code == 0 and "no CUDA GPU" not in r.stderr


# 8. Ctrl-C

INTERRUPT_AT_IMPORT = """
import runpy, sys
module = sys.argv[1]
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == module:
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupt())
sys.argv = ["roofline", *sys.argv[2:]]
runpy.run_module("roofline.cli", run_name="__main__")
"""
OCCUPANCY = ["occupancy", "--regs", "93", "--threads", "256", "--arch", "sm_90"]


@pytest.mark.parametrize("module, args", [
    ("typer", ["device", "--gpu", "h200"]),                    # cli's own imports
    ("roofline.measure.nvml", ["device", "--gpu", "h200"]),    # a command's, as it starts
    ("roofline.model.occupancy", OCCUPANCY),                   # occupancy's (the model alone)
    ("roofline.render.tables", OCCUPANCY),                     # while its outcome is shown
    ("roofline.render.encoding", ["--help"]),                  # console.run's, before the app
], ids=lambda v: v if isinstance(v, str) else " ".join(v[:1]))
def test_ctrl_c_during_the_imports_is_one_line_and_exit_130(module, args):
    out = subprocess.run([sys.executable, "-c", INTERRUPT_AT_IMPORT, module, *args], capture_output=True, text=True,
                         cwd=REPO,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])))
    assert (out.returncode, out.stderr, out.stdout) == (130, "roofline: interrupted\n", "")


def test_ctrl_c_sent_early_to_the_process():
    # Python up and cli.py compiled (a signal before cli's first line is Python's own), then
    # SIGINT while cli's imports run (they take about a second)
    start = ("import importlib.util, sys; code = importlib.util.find_spec('roofline.cli').loader.get_code('roofline.cli'); "
             "sys.argv = ['roofline', 'kernels', '--gpu', 'h200', '--model-only']; print('up', flush=True); "
             "exec(code, {'__name__': '__main__'})")  # compiled first: a signal then lands in cli's own code
    child = subprocess.Popen([sys.executable, "-c", start], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             # as a shell starts it: Ctrl-C not ignored (a test runner's worker may ignore it)
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                             env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])))
    assert child.stdout.readline() == "up\n"
    time.sleep(0.05)  # into cli's code, whose imports take about a second
    deadline = time.monotonic() + 20
    while child.poll() is None and time.monotonic() < deadline:  # again, should a library's bare
        child.send_signal(signal.SIGINT)                         # `except:` swallow one
        time.sleep(0.02)
    out, err = child.communicate(timeout=20)
    assert (child.returncode, err, out) == (130, "roofline: interrupted\n", ""), err


def test_ctrl_c_while_a_command_runs(monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(occupancy_cmd, "occupancy", interrupted)  # as the command calls it
    r = invoke("occupancy", "--regs", "32", "--threads", "256", "--arch", "sm_90")
    assert (r.exit_code, r.stderr, r.stdout) == (130, "roofline: interrupted\n", "")


# 10. 80 and 120 columns: nothing cut, names distinct, nothing wider than the terminal

def _checked(stdout: str, columns: int) -> list[str]:
    lines = stdout.splitlines()
    assert [line for line in lines if len(line) > columns] == []
    assert [line for line in lines if "…" in line] == []  # rich's mark of a cut cell
    assert [line for line in lines if line != line.rstrip()] == []
    return lines


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("path", PLOTS, ids=lambda p: p.name)
def test_show_at_80_and_120_columns_cuts_nothing(path, columns):
    r = invoke("show", path, columns=columns)
    assert r.exit_code == 0, r.output
    lines = _checked(r.stdout, columns)
    doc = store.load(path, profile=True)
    names = list(dict.fromkeys(k.name for k in getattr(doc, "kernels", None) or doc.entries))
    shown = display_names(names, 40) if getattr(doc, "kind", None) == "profile" else names
    assert len(set(shown)) == len(names)  # different kernels, different names
    keys = {line.split("  ")[0].strip() for line in lines if line.startswith(" ")}
    assert set(shown) <= keys
    if path.name.startswith("profile"):  # the verdicts whole, wrapped rather than cut
        joined = " ".join(line.strip() for line in lines)
        assert ("latency or instruction issue, not bandwidth" in joined
                or "tail: 64 blocks fill 64 of 2,112 block slots (64 of 132 SMs): 48 % of the GPU busy" in joined)


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("args", [["device", "--gpu", "h200"], ["device", "--gpu", "h100-sxm"],
                                  ["occupancy", "--regs", "64", "--threads", "1024", "--gpu", "rtx5080", "--smem",
                                   "40000", "--dynamic-smem", "60000"],
                                  ["kernels", "--gpu", "h200", "--model-only"]],
                         ids=lambda a: " ".join(str(x) for x in a[:3]))
def test_other_tables_at_80_and_120_columns_cut_nothing(args, columns):
    r = invoke(*args, columns=columns)
    assert r.exit_code == 0, r.output
    lines = _checked(r.stdout, columns)
    if args[0] == "occupancy":  # every header whole
        assert re.search(r"resource +blocks/SM +one block takes +limits$", "\n".join(lines), re.M)
    if args[0] == "device":  # each value near its label, not across the terminal
        assert re.search(r"^  SMs +132$", r.stdout, re.M).end() - re.search(r"^  SMs", r.stdout, re.M).start() < 60
        assert "FP16 tensor " in r.stdout and "tens…" not in r.stdout


# 11. `new`, type errors, help

def test_new_takes_a_path_with_spaces_and_derives_a_c_identifier(tmp_path):
    folder = tmp_path / "dir with space"
    folder.mkdir()
    r = invoke("new", folder / "my kernel.cu")
    assert r.exit_code == 0, r.output
    assert r.stdout == (f"wrote {folder}/my kernel.cu: kernel my_kernel (from the file name; --name NAME sets "
                        f"another); run it beside the ladder with: roofline run '{folder}/my kernel.cu' --all\n")
    text = (folder / "my kernel.cu").read_text()
    assert text.startswith("// roofline entry: my_kernel<32>\n") and "// roofline name: my_kernel\n" in text
    assert "__global__ void my_kernel(int M" in text and "my_sgemm" not in text
    listed = json.loads(invoke("kernels", folder / "my kernel.cu", "--model-only", "--json").stdout)
    assert [k["name"] for k in listed["kernels"]] == ["my_kernel"]


def test_new_takes_a_name(tmp_path):
    r = invoke("new", tmp_path / "a.cu", "--name", "fast_gemm")
    assert r.exit_code == 0 and "kernel fast_gemm;" in r.stdout
    text = (tmp_path / "a.cu").read_text()
    assert "// roofline entry: fast_gemm<32>" in text and "// roofline name: fast_gemm" in text
    r = invoke("new", tmp_path / "mine.cu")
    assert r.exit_code == 0 and "kernel mine;" in r.stdout and "name:" not in (tmp_path / "mine.cu").read_text()
    one_line_error(invoke("new", tmp_path / "b.cu", "--name", "9lives"), "--name '9lives': the kernel's name must be "
                   "a C identifier")
    one_line_error(invoke("new", tmp_path / "b.cu", "--name", "my-gemm"), "must be a C identifier")
    one_line_error(invoke("new", tmp_path / "int.cu"), "the kernel would be named 'int' after the file, a C++ keyword")
    one_line_error(invoke("new", tmp_path / "b.cu", "--name", "naive"), "'naive' is the name of a ladder kernel")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.cu", "mine.cu"]


@pytest.mark.parametrize("args, message", [
    (["occupancy", "--regs", "abc", "--threads", "256", "--arch", "sm_90"], "--regs: 'abc' is not an integer"),
    (["run", "--timeout", "soon"], "--timeout: 'soon' is not a number"),
    (["plot", "--kind", "pie"], "--kind: 'pie' is not one of 'roofline', 'sweep', 'energy', 'op', 'module', 'timeline'"),
    (["profile", "--launch-count", "1.5", "--", "x"], "--launch-count: '1.5' is not an integer"),
])
def test_type_errors_name_the_flag_and_the_value(args, message):
    r = invoke(*args)
    one_line_error(r, message)
    assert r.stderr == f"roofline: error: {message}\n"


def test_help_reads_naturally():
    for command in ("run", "profile", "comms", "plot", "show", "occupancy", "device", "kernels", "new", "compare",
                    "whatif", "project", "schema"):
        text = invoke(command, "-h").stdout
        assert not re.search(r"\{[A-Z]|<list\[|<path>|<str>|<int>", text), (command, text)
    assert invoke("new", "-h").stdout.split("\n")[0].endswith(" new [OPTIONS] KERNEL.cu")
    assert "--name NAME" in invoke("new", "-h").stdout
    assert " compare [OPTIONS] BEFORE.json AFTER.json\n" in invoke("compare", "-h").stdout.split("\n\n")[0] + "\n"
    assert "[OPTIONS] [-- COMMAND [ARGS]]" in invoke("profile", "-h").stdout
    show = " ".join(invoke("show", "-h").stdout.split())
    assert "every schema roofline has written (1 to 4)" in show and "profile (roofline profile)" in show
    device = " ".join(invoke("device", "-h").stdout.split())
    for roof in ("FP64", "FP32", "FP16/BF16 on the CUDA cores", "TF32", "FP8", "INT8", "DRAM, L2, L1/shared"):
        assert roof in device
    assert "DRAM, L2, shared memory, FP32, tensor-core FP16" in device


def _cli_env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]), COLUMNS="80")


def test_a_reader_that_leaves_early_ends_it_quietly():
    child = subprocess.Popen([sys.executable, "-m", "roofline", "show", "plots/profile-h200-transformer.json"],
                             cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_cli_env())
    assert child.stdout.readline().startswith(b"NVIDIA H200: 65 kernels")
    child.stdout.close()  # as `| head -1` does
    assert (child.wait(timeout=60), child.stderr.read()) == (0, b"")


def test_a_reader_of_output_and_errors_together_that_leaves_early_ends_it_quietly():
    # `2>&1 | head`: a note written while the command runs meets the closed pipe inside Click, which would end
    # the process with 1 and no word; a command whose write fails so ends quietly with 0, as `| head` alone does
    program = ("import typer\nfrom roofline import console\n"
               "app = typer.Typer(cls=console.OneLineErrors)\n"
               "@app.command()\ndef one():\n    raise BrokenPipeError(32, 'Broken pipe')\n"
               "@app.command()\ndef two():\n    pass\n"
               "console.run(app)\n")
    done = subprocess.run([sys.executable, "-c", program, "one"], cwd=REPO, capture_output=True, text=True,
                          env=_cli_env(), timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_failed_gate_keeps_its_exit_code_when_its_reader_leaves_early():
    # `compare ... --max-drop 5% | head -1` under `set -o pipefail`: the gate failed, so 1, whoever read it
    child = subprocess.Popen([sys.executable, "-m", "roofline", "compare", "plots/profile-h200-gcn-ops.json",
                              "plots/profile-h200-resnet-ops.json", "--max-drop", "5%"], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_cli_env())
    child.stdout.close()  # before it writes a line
    assert child.wait(timeout=60) == 1


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_an_output_that_cannot_be_written_is_one_line():
    with open("/dev/full", "w") as full:
        out = subprocess.run([sys.executable, "-m", "roofline", "show", "plots/results-h200.json"],
                             cwd=REPO, stdout=full, stderr=subprocess.PIPE, text=True, env=_cli_env())
    assert (out.returncode, out.stderr) == (1, "roofline: error: cannot write (standard output): "
                                               "No space left on device\n")


@pytest.mark.parametrize("name", ["__global__", "_Float16", "__x"])
def test_new_refuses_names_the_compiler_reserves(tmp_path, name):
    r = invoke("new", str(tmp_path / "x.cu"), "--name", name)
    assert r.exit_code == 2 and "names the compiler reserves" in r.stderr and not (tmp_path / "x.cu").exists()


@pytest.mark.nvrtc
def test_a_kernel_whose_file_name_is_not_utf8_compiles(tmp_path):
    path = Path(os.fsdecode(bytes(tmp_path) + b"/bad\xff.cu"))
    assert invoke("new", str(path)).exit_code == 0
    r = invoke("kernels", str(path), "--arch", "sm_90", "--json")
    assert r.exit_code == 0, r.stderr
    row = json.loads(r.stdout)["kernels"][-1]
    assert row["name"] == "bad_" and row["registers"] > 0


def test_a_profile_of_one_kernel_says_kernel(tmp_path):
    doc = json.loads((REPO / "plots" / "profile-h200-transformer.json").read_text())
    k = doc["kernels"][0]
    doc["kernels"], k["time_share"] = [k], 1.0
    doc["total_time_ms"], doc["launches_profiled"] = k["time_ms"], k["launches"]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(doc))
    r = invoke("show", str(path))
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith(f"NVIDIA H200: 1 kernel by GPU time, {k['launches']} launches,")
