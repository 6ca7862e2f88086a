"""Your kernel file compiled as its author compiles it, without a GPU: `// roofline options:` and
`--compile-option` read and checked (`build_options`), the compiler chosen (nvcc where a toolkit
is found, else NVRTC: `measure.toolchain`), nvcc's command line as a stand-in nvcc records it
(target, -cubin, the options, include folders from the file's folder), the cache key, one-line
errors for a failing nvcc; and, with the machine's own nvcc (marker `nvcc`), whole programs with
host code compiled offline as they are."""

import importlib.util
import json
import os
import stat
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from roofline import build_options
from roofline.build_options import CompileSettings, nvrtc_options, nvrtc_unknown, parse_options
from roofline.cli import app
from roofline.errors import RunError, UsageError
from roofline.ladder.user import from_description, load
from roofline.measure import compile_cache, nvcc_compile, toolchain

PROGRAMS = FIXTURES / "nvcc"
SAXPY = PROGRAMS / "saxpy_program.cu"
TILE_MACRO = PROGRAMS / "tile_sgemm_macro.cu"
TILED_F4 = FIXTURES / "kernels" / "tiled_f4.cu"

GEMM = """// roofline entry: mine
// roofline block: 256
// roofline grid: cdiv(N,16), cdiv(M,16)
{lines}
#include "helpers.cuh"
extern "C" __global__ void mine(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                                float* C) {{
    C[threadIdx.x] = A[threadIdx.x];
}}
"""


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def kernel_file(folder: Path, lines: str = "", name: str = "mine.cu") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "helpers.cuh").write_text("#pragma once\n")
    path = folder / name
    path.write_text(GEMM.format(lines=lines))
    return path


# --- the options a file declares ------------------------------------------------------------------

def test_the_options_line_is_read_with_include_folders_from_the_files_folder(tmp_path):
    path = kernel_file(tmp_path / "src", "// roofline options: -DBLOCK=256 --use_fast_math -default-device "
                                         "-I include -Xptxas -v  // the author's Makefile")
    k = load(path)
    folder = tmp_path / "src"
    assert k.build == CompileSettings("auto", ("-DBLOCK=256", "--use_fast_math", "-default-device",
                                               f"-I{folder / 'include'}", "-Xptxas", "-v"))
    # NVRTC's spelling of each: one word per option
    assert k.compile_options == ("-std=c++17", f"-I{folder}", "-DBLOCK=256", "--use_fast_math", "-default-device",
                                 f"-I{folder / 'include'}", "--ptxas-options=-v")
    assert nvrtc_unknown(k.build.options) is None


@pytest.mark.parametrize("text, expected", [
    ('-D NAME="a b" -UOLD', ("-D", "NAME=a b", "-UOLD")),  # as given: nvcc takes both forms
    ("-I a,b --include-path=c -isystem d -Ie", None),  # include folders, each absolute
    ("-std=c++20 -maxrregcount 64 -lineinfo", ("-std=c++20", "-maxrregcount", "64", "-lineinfo")),
])
def test_options_are_split_as_a_shell_splits_them(tmp_path, text, expected):
    got = parse_options(text, tmp_path, "f.cu")
    if expected is None:
        expected = (f"-I{tmp_path / 'a'}", f"-I{tmp_path / 'b'}", f"-I{tmp_path / 'c'}", "-isystem",
                    str(tmp_path / "d"), f"-I{tmp_path / 'e'}")
    assert got == expected


def test_nvrtc_gets_each_option_in_its_own_spelling_and_refuses_nvccs_alone():
    options = ("-I", "/x", "-isystem", "/y", "-maxrregcount", "64", "-std=c++20", "-include", "/h.cuh", "-G")
    assert nvrtc_options(options) == ("-I/x", "-I/y", "--maxrregcount=64", "--std=c++20", "--pre-include=/h.cuh", "-G")
    assert nvrtc_options(("-D", "NAME=a b", "--define-macro=Y", "-Xptxas", "-O3")) == ("-DNAME=a b", "-DY",
                                                                                       "--ptxas-options=-O3")
    assert build_options.declares_std(options)
    for nvcc_only in (("-O3",), ("-Xcompiler", "-fopenmp"), ("-lcublas",), ("--expt-relaxed-constexpr",)):
        assert nvrtc_unknown(("-DX=1",) + nvcc_only) == " ".join(nvcc_only)


@pytest.mark.parametrize("options, needle", [
    ("-arch=sm_80", "roofline compiles for the GPU's own architecture"),
    ("-gencode arch=compute_90,code=sm_90", "roofline compiles for the GPU's own architecture"),
    ("-o out.cubin", "roofline chooses the output"),
    ("-c", "roofline chooses the output"),
    ("-ptx", "roofline chooses the output"),
    ("-rdc=true", "relocatable device code needs a device link"),
    ('-DX="1', "No closing quotation"),
    ("-D", "compile option -D needs a value after it"),
])
def test_an_option_roofline_decides_itself_is_refused_in_one_line(tmp_path, options, needle):
    path = kernel_file(tmp_path, f"// roofline options: {options}")
    r = invoke("kernels", path, "--model-only")
    assert r.exit_code == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output
    assert r.stderr.startswith(f"roofline: error: {path}: ")
    r = invoke("kernels", kernel_file(tmp_path / "plain"), "--model-only", f"--compile-option={options}")
    assert r.exit_code == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output


def test_the_compiler_line_takes_auto_nvcc_or_nvrtc(tmp_path):
    assert load(kernel_file(tmp_path / "a", "// roofline compiler: NVCC")).build.compiler == "nvcc"
    r = invoke("kernels", kernel_file(tmp_path / "b", "// roofline compiler: clang"), "--model-only")
    assert r.exit_code == 2 and "compiler 'clang': choose auto, nvcc, nvrtc" in r.stderr
    r = invoke("kernels", kernel_file(tmp_path / "c"), "--model-only", "--compiler", "clang")
    assert r.exit_code == 2 and r.stderr.strip() == "roofline: error: --compiler takes auto, nvcc or nvrtc, got 'clang'"


def test_the_command_line_adds_its_options_after_the_files_and_replaces_its_compiler(tmp_path, monkeypatch):
    from roofline.commands.gemm import compile_settings, user_kernels
    path = kernel_file(tmp_path / "src", "// roofline options: -DA=1 -I inc\n// roofline compiler: nvrtc")
    monkeypatch.chdir(tmp_path)
    [k] = user_kernels([path], compiling=compile_settings("nvcc", ["-DB=2 -I there", "--use_fast_math"]))
    assert k.build == CompileSettings("nvcc", ("-DA=1", f"-I{tmp_path / 'src' / 'inc'}", "-DB=2",
                                               f"-I{tmp_path / 'there'}", "--use_fast_math"))
    # a child process rebuilds the kernel with the same settings (its nvcc too), not the file's alone
    pinned = k.with_build(CompileSettings("nvcc", k.build.options, "/opt/cuda/bin/nvcc"))
    assert from_description(json.loads(json.dumps(pinned.describe()))).build == pinned.build
    r = invoke("kernels", "--compile-option=-DX", "--model-only")
    assert r.exit_code == 2 and "give the kernel file too" in r.stderr


def test_a_workload_declares_its_options_and_a_callable_none(tmp_path):
    from roofline.workload import spec
    cu = tmp_path / "k" / "scale.cu"
    cu.parent.mkdir()
    cu.write_text("// roofline entry: scale\n// roofline sizes: N=1024\n// roofline arg: x f32[N] inout\n"
                  "// roofline block: 256\n// roofline grid: cdiv(N, 256)\n// roofline reference: x\n"
                  "// roofline options: -DFACTOR=1 -I common\n// roofline compiler: nvcc\n"
                  "extern \"C\" __global__ void scale(float* x) {}\n")
    w = spec.load_kernel(cu)
    assert w.build == CompileSettings("nvcc", ("-DFACTOR=1", f"-I{cu.parent / 'common'}"))
    k = load(cu)  # run FILE.cu reads it as a workload's kernel, its settings with it
    assert k.workload and k.build == w.build and k.declared.build == w.build
    assert from_description(k.describe()).build == w.build
    toml = tmp_path / "c.toml"
    toml.write_text('callable = "m:f"\nargs = ["x f32[4] in", "y f32[4] return"]\nreference = "x"\n'
                    'options = ["-DX=1"]\n')
    with pytest.raises(UsageError, match="options is a kernel's"):
        spec.load_callable("m:f", toml)


def test_a_graded_kernels_child_compiles_it_as_the_parent_was_asked(tmp_path):
    from roofline.measure.graded_child import _workload, request_for
    from roofline.workload import spec
    w = spec.load_kernel(SAXPY)
    pinned = CompileSettings("nvcc", ("-DX=1", "-I/opt/inc"), "/opt/cuda/bin/nvcc")
    from dataclasses import replace
    request = json.loads(json.dumps(request_for(replace(w, build=pinned), None, None, None, None)))
    assert _workload(request).build == pinned


@pytest.mark.parametrize("target", [SAXPY, TILE_MACRO])
def test_run_refuses_options_nvrtc_does_not_take_before_looking_for_a_gpu(target):
    r = invoke("run", target, "--compiler", "nvrtc", "--compile-option=-O3")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.output
    assert "NVRTC (compiler nvrtc) does not take the compile option '-O3'" in r.stderr
    r = invoke("run", "--tune", "--compiler", "nvcc")
    assert r.exit_code == 2 and "--compiler" in r.stderr


# --- a stand-in nvcc ------------------------------------------------------------------------------

FAKE = '''#!{python}
"""A stand-in nvcc: records its command line and the program it is given, answers --version, and
writes a cubin, the PTX it would keep and ptxas's report, or fails as told."""
import json, os, sys
argv = sys.argv[1:]
if argv == ["--version"]:
    print("nvcc: NVIDIA (R) Cuda compiler driver\\nCuda compilation tools, release {release}, V{version}")
    sys.exit(0)
if argv == ["--list-gpu-arch"]:
    print("\\n".join("compute_" + n for n in {targets!r}))
    sys.exit(0)
program = argv[-1]
with open({log!r}, "a") as log:
    log.write(json.dumps({{"argv": argv, "program": open(program).read()}}) + "\\n")
mode = {mode!r}
if mode == "error":
    included = open(program).read().split('"')[1]
    print(included + "(9): error: identifier \\"undeclared_value\\" is undefined", file=sys.stderr)
    print("      C[i] = undeclared_value;", file=sys.stderr)
    print("1 error detected in the compilation of \\"" + program + "\\".", file=sys.stderr)
    sys.exit(1)
if mode == "entry":
    print(program + "(3): error: identifier \\"nope\\" is undefined", file=sys.stderr)
    sys.exit(1)
out = argv[argv.index("-o") + 1]
open(out, "wb").write(b"\\x7fELF stand-in cubin")
keep = argv[argv.index("-keep-dir") + 1]
open(os.path.join(keep, "mine.roofline.ptx"), "w").write(
    ".visible .entry mine(\\n.param .u32 p\\n)\\n.maxntid {maxntid}, 1, 1\\n{{\\n}}\\n")
target = [a for a in argv if a.startswith("-arch=")][0][6:]
for name, regs in (("_Z20roofline_entry_probeIPFviiifPKfS1_fPfEXadL_Z4mineEEEvv", 2), ("mine", {registers})):
    print("ptxas info    : Compiling entry function '" + name + "' for '" + target + "'", file=sys.stderr)
    print("ptxas info    : Function properties for " + name, file=sys.stderr)
    print("    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", file=sys.stderr)
    print("ptxas info    : Used " + str(regs) + " registers, used 0 barriers, 1024 bytes smem", file=sys.stderr)
'''


CUDA12_TARGETS = ("50", "52", "53", "60", "61", "62", "70", "72", "75", "80", "86", "87", "89", "90")


def fake_nvcc(folder: Path, mode: str = "ok", version: str = "12.4.131", registers: int = 37,
              maxntid: int = 1024, targets: tuple[str, ...] = CUDA12_TARGETS) -> tuple[Path, Path]:
    """A stand-in nvcc in `folder` (and the log it writes, one JSON line per compile) that builds
    for compute capabilities `targets` (its --list-gpu-arch)."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "calls.jsonl"
    nvcc = folder / "nvcc"
    nvcc.write_text(FAKE.format(python=sys.executable, log=str(log), mode=mode, release=version.rsplit(".", 1)[0],
                                version=version, registers=registers, maxntid=maxntid, targets=list(targets)))
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IXUSR)
    return nvcc, log


@pytest.fixture
def no_toolkit(monkeypatch, tmp_path):
    """A machine without a CUDA toolkit: no nvcc on the PATH, none in $CUDA_HOME, $CUDA_PATH or
    the default folders, $ROOFLINE_NVCC unset."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", f"{empty}{os.pathsep}{os.path.dirname(sys.executable)}")
    for name in ("ROOFLINE_NVCC", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(nvcc_compile, "TOOLKIT_FOLDERS", ())


def on_path(monkeypatch, nvcc: Path) -> None:
    """`nvcc` the one on the PATH (first), as a toolkit's bin folder puts it."""
    monkeypatch.delenv("ROOFLINE_NVCC", raising=False)
    monkeypatch.setenv("PATH", f"{nvcc.parent}{os.pathsep}{os.environ['PATH']}")


def calls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_nvcc_is_found_on_the_path_then_in_cuda_home_then_cuda_path(no_toolkit, monkeypatch, tmp_path):
    assert nvcc_compile.find_nvcc() is None
    path_nvcc, _ = fake_nvcc(tmp_path / "cuda_path" / "bin")
    monkeypatch.setenv("CUDA_PATH", str(tmp_path / "cuda_path"))
    assert nvcc_compile.find_nvcc() == str(path_nvcc)
    home_nvcc, _ = fake_nvcc(tmp_path / "cuda_home" / "bin")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda_home"))
    assert nvcc_compile.find_nvcc() == str(home_nvcc)
    first, _ = fake_nvcc(tmp_path / "bin")
    on_path(monkeypatch, first)
    assert nvcc_compile.find_nvcc() == str(first)
    monkeypatch.setenv("ROOFLINE_NVCC", "off")
    assert nvcc_compile.find_nvcc() is None
    monkeypatch.setenv("ROOFLINE_NVCC", str(tmp_path / "nowhere"))
    with pytest.raises(UsageError, match="ROOFLINE_NVCC names"):
        nvcc_compile.find_nvcc()
    assert nvcc_compile.nvcc_version(str(home_nvcc)) == "12.4.131"


def test_nvccs_command_line_has_the_target_the_options_and_the_files_folder(tmp_path, monkeypatch):
    nvcc, log = fake_nvcc(tmp_path / "bin", registers=37)
    on_path(monkeypatch, nvcc)
    path = kernel_file(tmp_path / "src", "// roofline options: -DBLOCK=256 -I include --use_fast_math")
    r = invoke("kernels", path, "--arch", "sm_90", "--json", "--compile-option=-lineinfo", "--compiler", "nvcc")
    assert r.exit_code == 0, r.output
    [call] = calls(log)
    argv, folder = call["argv"], tmp_path / "src"
    out = argv[argv.index("-o") + 1]
    assert argv[:4] == ["-cubin", "-arch=sm_90", "-o", out] and out.endswith(".cubin")
    assert argv[4:9] == ["-Xptxas", "-v", "-keep", "-keep-dir", os.path.dirname(out)]
    assert argv[9:-1] == [f"-I{folder}", "-DBLOCK=256", f"-I{folder / 'include'}", "--use_fast_math", "-lineinfo"]
    assert argv[-1].endswith("mine.roofline.cu")
    assert call["program"].startswith(f'#include "{path.resolve()}"\n')  # the file whole, by its own path
    assert "(void *)&mine" in call["program"]
    [row] = json.loads(r.stdout)["kernels"]
    assert row["registers"] == 37 and row["static_smem_bytes"] == 1024 and row["compiler"] == "nvcc 12.4.131"
    assert row["source"]["compiler"] == "nvcc" and row["source"]["nvcc"] == str(nvcc)
    assert row["source"]["options"] == f"-DBLOCK=256 -I{folder / 'include'} --use_fast_math -lineinfo"
    assert "compiled through nvcc" in invoke("kernels", path, "--arch", "sm_90", "--compiler", "nvcc").stdout


def test_a_tensor_core_kernel_is_compiled_for_sm_90a_and_its_launch_bounds_read(tmp_path, monkeypatch):
    nvcc, log = fake_nvcc(tmp_path / "bin", maxntid=128)
    on_path(monkeypatch, nvcc)
    path = tmp_path / "mine.cu"
    path.write_text(GEMM.format(lines="// roofline dtype: bf16").replace("#include \"helpers.cuh\"\n", "")
                    .replace("const float* A, const float* B", "const __nv_bfloat16* A, const __nv_bfloat16* B"))
    r = invoke("kernels", path, "--arch", "sm_90", "--compiler", "nvcc")
    assert r.exit_code == 1 and "its __launch_bounds__ allow at most 128 threads per block" in r.stderr
    assert "-arch=sm_90a" in calls(log)[0]["argv"]


def test_without_a_toolkit_nvrtc_compiles_and_an_option_of_nvccs_is_refused_in_one_line(no_toolkit, tmp_path):
    path = kernel_file(tmp_path, "// roofline options: -DBLOCK=256 -O3")
    with pytest.raises(UsageError, match="no nvcc was found"):
        toolchain.choose(load(path))
    r = invoke("kernels", path, "--arch", "sm_90")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.output
    assert r.stderr.strip() == ("roofline: error: mine.cu: the compile option '-O3' is nvcc's, and no nvcc was found "
                                "(not on the PATH, nor in $CUDA_HOME/bin or $CUDA_PATH/bin; $ROOFLINE_NVCC may "
                                "name it); NVRTC, which compiles instead, does not take it: install the CUDA toolkit, "
                                "or leave the option out")
    r = invoke("kernels", path, "--arch", "sm_90", "--compiler", "nvcc")
    assert r.exit_code == 1 and "nvcc is asked for (compiler nvcc), and none was found" in r.stderr


def test_auto_passes_over_an_nvcc_that_does_not_build_for_the_target(no_toolkit, monkeypatch, tmp_path):
    # CUDA 13's nvcc lists compute_75 and up: a kernel for a V100 (sm_70) goes to NVRTC
    nvcc, log = fake_nvcc(tmp_path / "bin", version="13.0.88", targets=("75", "80", "86", "89", "90", "100", "120"))
    on_path(monkeypatch, nvcc)
    import importlib.util
    found = importlib.util.find_spec

    def cupy(present: bool) -> None:  # CuPy (NVRTC's carrier) installed or not, whatever this venv holds
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: (
            (found("importlib") if present else None) if name == "cupy_backends" else found(name, *a)))
    cupy(True)
    path = kernel_file(tmp_path)
    assert toolchain.pinned(load(path), "sm_70").build.compiler == "nvrtc"
    assert toolchain.pinned(load(path), "sm_90a").build.compiler == "nvcc"
    assert toolchain.pinned(load(path)).build.compiler == "nvcc"  # no target known: the toolkit's
    with pytest.raises(UsageError, match=f"the nvcc found \\({nvcc}\\) does not build for sm_70, and NVRTC"):
        toolchain.pinned(load(kernel_file(tmp_path, "// roofline options: -O3", "fast.cu")), "sm_70")
    asked = load(kernel_file(tmp_path, "// roofline compiler: nvcc", "asked.cu"))
    assert toolchain.pinned(asked, "sm_70").build.compiler == "nvcc"  # asked for: its own error then says
    assert calls(log) == []  # the list of targets is no compile
    # without CuPy, the reason NVRTC was wanted is said, not only that CuPy is missing
    cupy(False)
    with pytest.raises(RunError, match=f"mine.cu: the nvcc found \\({nvcc}\\) does not build for sm_70, and NVRTC, "
                                       "which would, comes with CuPy, which is not installed"):
        toolchain.pinned(load(path), "sm_70")


@pytest.mark.nvrtc
def test_without_a_toolkit_nvrtc_compiles_with_the_files_options(no_toolkit, tmp_path):
    path = kernel_file(tmp_path, "// roofline options: -DBLOCK=256 --use_fast_math")
    path.write_text(path.read_text().replace("C[threadIdx.x] = A[threadIdx.x];", "C[threadIdx.x] = BLOCK;"))
    assert toolchain.choose(load(path)).name == "nvrtc"
    r = invoke("kernels", path, "--arch", "sm_90", "--json")
    assert r.exit_code == 0, r.output
    [row] = json.loads(r.stdout)["kernels"]
    assert row["compiler"].startswith("NVRTC ") and row["source"]["compiler"] == "nvrtc" and row["registers"] > 0


def test_a_file_nvcc_cannot_compile_is_one_error_with_nvccs_lines(tmp_path, monkeypatch):
    nvcc, _ = fake_nvcc(tmp_path / "bin", mode="error")
    on_path(monkeypatch, nvcc)
    path = kernel_file(tmp_path / "src", "// roofline compiler: nvcc")
    r = invoke("kernels", path, "--arch", "sm_90")
    assert r.exit_code == 1 and "Traceback" not in r.output
    errors = r.stderr.split("roofline: error: ", 1)[1]
    assert errors.startswith("mine does not compile for sm_90 (nvcc 12.4.131):\n")
    assert f'  {path.resolve()}(9): error: identifier "undeclared_value" is undefined' in errors
    assert "roofline.cu" not in errors  # nvcc's summary naming the program is left out
    with pytest.raises(RunError, match=r"mine does not compile for sm_90 \(nvcc 12.4.131\)"):
        toolchain.resources(load(path), "sm_90")


def test_an_entry_nvcc_does_not_find_says_so(tmp_path, monkeypatch):
    nvcc, _ = fake_nvcc(tmp_path / "bin", mode="entry")
    on_path(monkeypatch, nvcc)
    r = invoke("kernels", kernel_file(tmp_path / "src"), "--arch", "sm_90", "--declare", "entry=nope",
               "--compiler", "nvcc")
    assert r.exit_code == 1
    assert "roofline: error: mine: mine.cu has no kernel 'nope'; it has " in r.stderr  # the kernels it has, named


def test_the_cache_key_names_the_compiler_its_version_and_the_options(tmp_path, monkeypatch):
    nvcc, _ = fake_nvcc(tmp_path / "bin")
    on_path(monkeypatch, nvcc)
    path = kernel_file(tmp_path / "src", "// roofline compiler: nvcc").rename(tmp_path / "src" / "alone.cu")  # no file of its folder included
    path.write_text(path.read_text().replace('#include "helpers.cuh"\n', ""))
    k = load(path)
    key = compile_cache.cache_key(k, "sm_90")
    assert key is not None and key == compile_cache.cache_key(load(path), "sm_90")
    assert compile_cache.cache_key(k.with_build(k.build.given(options=("-DX=1",))), "sm_90") != key
    assert compile_cache.cache_key(k, "sm_80") != key
    assert compile_cache.cache_key(k.with_build(k.build.given(options=("-I/somewhere",))), "sm_90") is None
    assert compile_cache.cache_key(k.with_build(k.build.given(compiler="nvrtc")), "sm_90") != key  # NVRTC's (None where there is no NVRTC)
    fake_nvcc(tmp_path / "bin", version="12.6.20")  # another release in the same place
    assert compile_cache.cache_key(k, "sm_90") != key


@pytest.mark.parametrize("demangled, target", [
    ("void roofline_entry_probe<void (*)(float*), &(void k<64>(float*))>()", "void k<64>(float*)"),
    ("void roofline_entry_probe<void (*)(float*, int), &(plain(float*, int))>()", "plain(float*, int)"),
    ("void roofline_entry_probe<void (*)(float (*)(int)), &(void ns::g<(int)3>(float (*)(int)))>()",
     "void ns::g<(int)3>(float (*)(int))"),
    ("void something_else<1>()", None),
])
def test_the_probe_names_the_entry_as_the_demangler_writes_it(demangled, target):
    assert nvcc_compile.probe_target(demangled) == target


def test_the_entrys_name_in_the_cubin(monkeypatch):
    entries = ["_ZN2ns1gIfLi3EEEvPT_", "_Z20roofline_entry_probeIPFvPfEXadL_Z1kILi64EEvS0_EEEvv", "ec",
               "_Z1kILi64EEvPf", "_Z5plainPfi"]
    names = {"_ZN2ns1gIfLi3EEEvPT_": "void ns::g<float, 3>(float*)", "_Z1kILi64EEvPf": "void k<64>(float*)",
             "_Z5plainPfi": "plain(float*, int)",
             entries[1]: "void roofline_entry_probe<void (*)(float*), &(void k<64>(float*))>()"}
    monkeypatch.setattr(nvcc_compile, "demanglers", lambda nvcc=None: ["c++filt"])
    monkeypatch.setattr(nvcc_compile, "demangle",
                        lambda found, nvcc=None, exe=None: {n: names[n] for n in found if n in names})
    lowered = nvcc_compile._lowered
    assert lowered("x", Path("x.cu"), "ec", entries, None) == "ec"  # extern "C": by its own name
    assert lowered("x", Path("x.cu"), "k<64>", entries, None) == "_Z1kILi64EEvPf"
    # a demangler that spaces the names otherwise ('float *') reads the same
    spaced = {k: v.replace("float*", "float *") for k, v in names.items()}
    monkeypatch.setattr(nvcc_compile, "demangle", lambda found, nvcc=None, exe=None: {n: spaced[n] for n in found if n in spaced})
    assert lowered("x", Path("x.cu"), "k<64>", entries, None) == "_Z1kILi64EEvPf"
    monkeypatch.setattr(nvcc_compile, "demanglers", lambda nvcc=None: [])  # no demangler
    assert lowered("x", Path("x.cu"), "plain", ["_Z5plainPfi", "_Z5plainIiEvv", entries[1]], None) == "_Z5plainPfi"
    assert lowered("x", Path("x.cu"), "k<64>", ["_Z1kILi64EEvPf", entries[1]], None) == "_Z1kILi64EEvPf"
    with pytest.raises(RunError, match="takes a demangler"):
        lowered("x", Path("x.cu"), "k<64>", entries, None)


# --- the machine's own nvcc -----------------------------------------------------------------------

@pytest.mark.nvcc
def test_a_whole_program_with_host_code_compiles_unmodified(nvcc_path):
    """saxpy_program.cu: <stdio.h>, <assert.h>, host globals, a host helper and main(). nvcc keeps
    its kernel; NVRTC refuses the file."""
    r = invoke("kernels", SAXPY, "--arch", "sm_90", "--json", "--compiler", "nvcc")
    assert r.exit_code == 0, r.output
    [row] = json.loads(r.stdout)["kernels"]
    assert row["compiler"].startswith("nvcc ") and row["registers"] > 0 and "error" not in row
    assert row["occupancy"]["occupancy"] > 0
    if importlib.util.find_spec("cupy") is None:
        return  # NVRTC comes with CuPy (the cuda12 extra): its refusal is read where it is installed
    r = invoke("kernels", SAXPY, "--arch", "sm_90", "--compiler", "nvrtc")
    assert r.exit_code == 1 and "does not compile" in r.stderr and "compile the file with nvcc" in r.stderr


@pytest.mark.nvcc
def test_a_file_that_needs_a_define_compiles_with_it(nvcc_path):
    r = invoke("kernels", TILE_MACRO, "--arch", "sm_90", "--compiler", "nvcc")
    assert r.exit_code == 1 and "compile with -DTILE=N" in r.stderr and "(nvcc " in r.stderr
    r = invoke("kernels", TILE_MACRO, "--arch", "sm_90", "--compile-option=-DTILE=16", "--json", "--compiler", "nvcc")
    assert r.exit_code == 0, r.output
    [row] = json.loads(r.stdout)["kernels"]
    assert row["static_smem_bytes"] == 2 * 16 * 16 * 4 and row["compiler"].startswith("nvcc ")
    assert row["source"]["options"] == "-DTILE=16" and row["source"]["entry"] == "tile_sgemm<float>"


@pytest.mark.nvcc
def test_a_template_named_only_by_its_entry_is_instantiated_and_its_launch_bounds_read(nvcc_path):
    """tiled_f4<64,64,16,4,4> is used nowhere in its file: the entry alone instantiates it, and its
    __launch_bounds__ (256) come from the PTX nvcc kept."""
    r = invoke("kernels", TILED_F4, "--arch", "sm_90", "--json", "--compiler", "nvcc")
    assert r.exit_code == 0, r.output
    [row] = json.loads(r.stdout)["kernels"]
    assert row["compiler"].startswith("nvcc ") and row["registers"] > 0
    r = invoke("kernels", TILED_F4, "--arch", "sm_90", "--declare", "block=512", "--compiler", "nvcc")
    assert r.exit_code == 1 and "its __launch_bounds__ allow at most 256 threads per block" in r.stderr
    r = invoke("kernels", TILED_F4, "--arch", "sm_90", "--declare", "entry=tiled_f5<64,64,16,4,4>", "--compiler", "nvcc")
    assert r.exit_code == 1 and "tiled_f4.cu has no kernel 'tiled_f5<64,64,16,4,4>'" in r.stderr


@pytest.mark.nvcc
def test_a_demangler_that_cannot_read_the_probe_gives_way_to_the_next(nvcc_path, tmp_path, monkeypatch):
    """Two instances of one template (MatrixMulCUDA<16> and <32>, as cuda-samples' matrixMul.cu
    launches both from main): which is the entry is read from the probe's demangled name. A
    cu++filt first on the PATH that hands the names back unread (as one did on an H100 image) does
    not stop it: c++filt, next, reads it."""
    if nvcc_compile.shutil.which("c++filt") is None:
        pytest.skip("no c++filt here")
    fake = tmp_path / "bin" / "cu++filt"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\ncat\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    source = tmp_path / "two.cu"
    source.write_text("#include <stdio.h>\ntemplate <int B> __global__ void mm(float* c, float* a, int n) "
                      "{ __shared__ float s[B][B]; s[threadIdx.y][threadIdx.x] = a[threadIdx.x]; __syncthreads(); "
                      "c[threadIdx.x] = s[threadIdx.x][threadIdx.y] * n; }\n"
                      "int main() { mm<16><<<1, dim3(16, 16)>>>(0, 0, 1); mm<32><<<1, dim3(32, 32)>>>(0, 0, 1); "
                      "printf(\"done\\n\"); return 0; }\n")
    assert nvcc_compile.demanglers()[0] == str(fake)
    r = invoke("kernels", str(source), "--arch", "sm_90", "--json", "--compiler", "nvcc",
               "--declare", "entry=mm<32>", "--declare", "block=32,32", "--declare", "grid=1")
    assert r.exit_code == 0, r.output
    [row] = json.loads(r.stdout)["kernels"]
    assert row["static_smem_bytes"] == 32 * 32 * 4


@pytest.mark.nvcc
def test_an_architecture_specific_target_is_compiled_for_when_named(nvcc_path, tmp_path):
    """A float GEMM that issues sm_90a's wgmma.fence and setmaxnreg: not built for sm_90 (the line says
    which instructions, and that --arch sm_90a is the target that has them), built for sm_90a."""
    f = tmp_path / "wg.cu"
    f.write_text("// roofline entry: wg\n// roofline block: 128\n// roofline grid: cdiv(N, 128), cdiv(M, 128)\n"
                 "__global__ void wg(int M, int N, int K, float alpha, const float* A, const float* B, float beta, "
                 "float* C) {\n  asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
                 "  asm volatile(\"setmaxnreg.inc.sync.aligned.u32 240;\\n\");\n  C[0] = alpha * A[0] * B[0];\n}\n")
    r = invoke("kernels", f, "--arch", "sm_90", "--compiler", "nvcc")
    assert r.exit_code == 1 and ("it uses wgmma.fence and setmaxnreg.inc (PTX instructions sm_90 does not have); "
                                 "--arch sm_90a compiles for sm_90's architecture-specific target") in r.stderr
    r = invoke("kernels", f, "--arch", "sm_90a", "--compiler", "nvcc", "--json")
    assert r.exit_code == 0, r.output
    listing = json.loads(r.stdout)
    [row] = listing["kernels"]
    assert row["registers"] > 0 and "error" not in row and listing["arch"] == "sm_90a"  # the target it was built for
    schema = json.loads(invoke("schema", "kernels").stdout)
    import jsonschema
    jsonschema.validate(listing, schema)


@pytest.mark.parametrize("arch, says", [("sm_89a", "sm_89 has no architecture-specific target; those that exist: "
                                                   "sm_90a, sm_100a"),
                                        ("sm_80f", "sm_80 has no family-specific target")])
def test_a_variant_an_architecture_does_not_have_is_refused(arch, says):
    r = invoke("occupancy", "--regs", "32", "--threads", "256", "--arch", arch)
    assert r.exit_code == 2 and says in r.stderr and len(r.stderr.splitlines()) == 1


@pytest.mark.nvcc
def test_a_tensor_starter_listed_for_sm_90_names_the_sm_90a_it_is_built_for(nvcc_path, tmp_path):
    f = tmp_path / "b16.cu"
    assert invoke("new", f, "--dtype", "bf16").exit_code == 0
    r = invoke("kernels", f, "--arch", "sm_90", "--compiler", "nvcc", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["arch"] == "sm_90a"
