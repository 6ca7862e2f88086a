"""Your own kernel, without a GPU: the grid-expression parser, the block and tile syntax, the file
header, `kernels --source` for three targets with occupancy checked by hand, compile errors, the
starter kernel of `roofline new`, and register counts that agree across processes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from roofline.cli import app
from roofline.errors import RunError, UsageError
from roofline.ladder.user import load, read_header
from roofline.model.launch import GridExpression, parse_block, parse_sizes
from roofline.model.problem import Problem

KERNELS = FIXTURES / "kernels"
TILED_F4 = str(KERNELS / "tiled_f4.cu")
P = Problem(4096, 2048, 1000)


def invoke(*args):
    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize("text, expected", [
    ("cdiv(N,128), cdiv(M,128)", (16, 32, 1)),
    ("cdiv(N, 64),cdiv(M,64),1", (32, 64, 1)),
    ("cdiv(M*N, 256)", (32768, 1, 1)),
    ("(N + 127) // 128, M // 64", (16, 64, 1)),
    ("K - 999", (1, 1, 1)),
    ("2 * cdiv(cdiv(M, 2), 64)", (64, 1, 1)),
    ("-(-N // 128)", (16, 1, 1)),  # ceiling division written another way
    ("7", (7, 1, 1)),
])
def test_a_grid_expression_is_evaluated_for_the_problem(text, expected):
    assert GridExpression.parse(text).evaluate(P) == expected


@pytest.mark.parametrize("text, needle", [
    ("__import__('os').system('true')", "the only function is cdiv"),
    ("M.__class__", "attribute is not allowed"),
    ("lambda: 1", "lambda is not allowed"),
    ("M ** 2", "operator Pow is not allowed"),
    ("M / 2", "operator Div is not allowed"),
    ("'M'", "'M' is not an integer"),
    ("1.5", "1.5 is not an integer"),
    ("True", "True is not an integer"),
    ("cdiv(M)", "cdiv takes 2 arguments, got 1"),
    ("cdiv(M, b=2)", "the only function is cdiv"),
    ("max(M, N)", "the only function is cdiv"),
    ("M if N else K", "ifexp is not allowed"),
    ("[M, N]", "list is not allowed"),
    ("X + 1", "unknown name 'X'"),
    ("1, 2, 3, 4", "4 dimensions"),
    ("M +", "not an expression"),
    ("", "empty"),
    ("(" * 500 + "M" + ")" * 500, "longer than 200 characters"),
    ("M; import os", "not an expression"),
    ("M == N", "compare is not allowed"),
])
def test_anything_else_in_a_grid_is_refused_in_one_line(text, needle):
    with pytest.raises(UsageError) as exc:
        GridExpression.parse(text)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("text, needle", [
    ("cdiv(N, K - 1000)", "divides by zero at 4096x2048x1000"),
    ("N // (K - 1000)", "divides by zero"),
    ("K - 1000", "gives x = 0 blocks"),
    ("1, M * 100", "gives y = 409,600 blocks"),
    ("M * N * K", "gives x = 8,388,608,000 blocks"),
])
def test_an_impossible_grid_is_refused_at_evaluation(text, needle):
    with pytest.raises(UsageError) as exc:
        GridExpression.parse(text).evaluate(P)
    assert needle in str(exc.value)


def test_block_and_tile_syntax():
    assert parse_block("256") == (256, 1, 1)
    assert parse_block("16, 16") == (16, 16, 1)
    assert parse_block("8,8,4") == (8, 8, 4)
    for bad in ("0", "2048", "64,64", "1,1,65", "a", "1,2,3,4", "-1", ""):
        with pytest.raises(UsageError):
            parse_block(bad)
    assert parse_sizes("128x128x8", 3, "tile", "") == (128, 128, 8)
    assert parse_sizes("8X4", 2, "thread-tile", "") == (8, 4)
    for bad in ("128x128", "8x0x8", "axbxc", "128x128x8x2"):
        with pytest.raises(UsageError):
            parse_sizes(bad, 3, "tile", "128x128x8")


def test_the_header_declares_the_launch_and_flags_override_it():
    k = load(Path(TILED_F4))
    assert (k.name, k.entry, k.block, k.dynamic_smem_bytes) == ("tiled_f4", "tiled_f4<64,64,16,4,4>", (256, 1, 1), 8192)
    assert (k.tile, k.thread_tile, k.kernel_name) == ((64, 64, 16), (4, 4), "tiled_f4")
    assert k.grid(Problem(1000, 1000, 10)) == (16, 16, 1)
    # Seed lesson 000's counts for a 64x64 block tile and 4x4 thread tile: K/32 GMEM and K/2 SMEM per result.
    figures = k.model.figures(Problem(4096, 4096, 4096))
    assert (figures.gmem_accesses_per_result, figures.smem_accesses_per_result) == (128, 2048)
    k2 = load(Path(TILED_F4), {"name": "mine2", "dynamic-smem": "0", "grid": "cdiv(N,32), cdiv(M,32)"})
    assert (k2.name, k2.dynamic_smem_bytes, k2.grid(Problem(64, 64, 1))) == ("mine2", 0, (2, 2, 1))


def test_the_model_reads_a_warp_along_x_so_broadcasts_are_served_once():
    # the starter (32 x 32 threads, 1 x 1 thread tiles) is smem_tiling: a warp is one row of 32
    # results, reading one A element (a broadcast) and 32 of B per step of K: 300.6 GB served at
    # 4096^3, against the 549.8 GB its threads request
    from roofline.ladder.families import BY_NAME

    p = Problem(4096, 4096, 4096)
    starter = load(Path(__file__).resolve().parent.parent / "roofline" / "kernels" / "starter.cu")
    assert starter.warp_layout == (1, 32)
    ladder = BY_NAME["smem_tiling"].spec({"BS": 32}).figures(p)
    assert starter.figures(p).smem_served_bytes == pytest.approx(ladder.smem_served_bytes) == pytest.approx(300.6e9, rel=1e-3)
    # 256 threads of 4 x 4 over 64 x 64: a warp is two rows of 16 thread tiles (tiled_f4's tx = tid % 16)
    assert load(Path(TILED_F4)).warp_layout == (2, 16)
    # a block whose x counts the rows of thread tiles (8 x 32 threads over 32 x 128 in 4 x 4): down the rows
    assert load(Path(TILED_F4), {"block": "8,32", "tile": "32x128x16"}).warp_layout == (8, 4)
    # a committed file that recorded no served bytes for it is read with them, and says so
    from roofline import api

    doc = api.read(Path(__file__).resolve().parent.parent / "plots" / "user-kernel-h200.json")
    mine = next(k for k in doc.kernels if k.name == "tiled_f4")
    assert mine.model.smem_served_bytes == pytest.approx(load(Path(TILED_F4)).figures(p).smem_served_bytes)
    assert mine.model.smem_served_bytes / 1e9 == pytest.approx(47.24, abs=0.01)
    assert any("today's model gives the shared-memory bytes served of tiled_f4, which the file did not record" in n
               for n in doc._read_notes)


NAIVE = """// roofline entry: my_naive
// roofline block: 32,32
// roofline grid: cdiv(M,32), cdiv(N,32)
// roofline tile: 1x1x1
// roofline thread-tile: 1x1
{declared}
extern "C" __global__ void my_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                                    float* C) {{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < M && y < N) {{
        float acc = 0.f;
        for (int i = 0; i < K; ++i) acc += A[x * K + i] * B[i * N + y];
        C[x * N + y] = alpha * acc + beta * C[x * N + y];
    }}
}}
"""


@pytest.mark.parametrize("walk, ladder, warp", [("rows", "naive", (32, 1)), ("cols", "gmem_coalescing", (1, 32))])
def test_a_kernel_of_one_result_per_thread_declares_how_its_threads_walk_and_gets_an_l1_level(tmp_path, walk, ladder,
                                                                                               warp):
    # threadIdx.x down the rows of C: each warp's step of K reads 32 rows of A (32 sectors) and one element of B
    # (one sector), the ladder's naive; along a row, gmem_coalescing's 1 + 4 sectors
    from roofline.ladder.families import BY_NAME
    from roofline.model.roofs import plain_verdict
    from roofline.model.device import from_preset

    path = tmp_path / "mine.cu"
    path.write_text(NAIVE.format(declared=f"// roofline thread-x: {walk}"))
    k, p = load(path), Problem(4096, 4096, 4096)
    assert k.model.warp_layout == warp and k.model.thread_tile is None
    mine, theirs = k.figures(p), BY_NAME[ladder].spec().figures(p)
    assert mine.l1_bytes == pytest.approx(theirs.l1_bytes) and mine.smem_bytes is None
    sectors = warp[0] + -(-warp[1] // 8)  # per warp and step of K: a sector per row of A, B's row in 8-float sectors
    assert mine.l1_bytes == pytest.approx(32 * sectors * p.results * p.k / 32)  # 33 or 5 B per result and step
    h200 = from_preset("h200")
    assert plain_verdict(mine, h200.roofs, precision="fp32").binding.level == "L1"
    assert k.launch_notes(p) == []  # 1,024 threads a block, one result each: the grid covers C
    assert k.describe()["thread-x"] == walk


@pytest.mark.parametrize("walk, warp, per_result", [("rows", (24, 2), 25), ("cols", (2, 24), 5)])
def test_a_block_x_that_does_not_divide_a_warp_spans_the_lines_its_threads_meet(tmp_path, walk, warp, per_result):
    # block 24 x 8: a warp's 32 threads are x = 0..23 of one y and x = 0..7 of the next. Down the rows:
    # 24 rows of A (24 sectors) and 2 columns of B (one sector), 25 sectors for 32 results a step of K,
    # so 25 B a result; along the columns: 2 rows and 24 columns (3 sectors), 5
    path = tmp_path / "mine.cu"
    path.write_text(NAIVE.format(declared=f"// roofline thread-x: {walk}").replace("block: 32,32", "block: 24,8"))
    k, p = load(path), Problem(4096, 4096, 4096)
    assert k.model.warp_layout == warp
    assert k.figures(p).l1_bytes == pytest.approx(per_result * p.results * p.k)


def test_thread_x_gives_no_l1_level_to_a_kernel_of_another_precision(tmp_path):
    # a BF16 GEMM's B is N x K of 2-byte elements: the sectors a warp meets are not the FP32 count
    path = tmp_path / "mine.cu"
    path.write_text(NAIVE.format(declared="// roofline thread-x: cols\n// roofline dtype: bf16").replace(
        "const float* A, const float* B", "const __nv_bfloat16* A, const __nv_bfloat16* B"))
    k = load(path)
    assert k.figures(Problem(64, 64, 64, "bf16")).l1_bytes is None
    assert any("thread-x gives an L1 level to an FP32 kernel alone" in n for n in k.launch_notes(Problem(64, 64, 64, "bf16")))


def test_a_kernel_of_one_result_per_thread_without_thread_x_is_told_how_to_get_its_l1_level(tmp_path):
    path = tmp_path / "mine.cu"
    path.write_text(NAIVE.format(declared=""))
    k = load(path)
    assert k.figures(Problem(64, 64, 64)).l1_bytes is None
    assert [n for n in k.launch_notes(Problem(64, 64, 64)) if "thread-x: rows' or 'cols'" in n]
    for value in ("diagonal", "Rows", "columns"):  # written exactly so, as every declaration is
        path.write_text(NAIVE.format(declared=f"// roofline thread-x: {value}"))
        with pytest.raises(UsageError, match=f"thread-x '{value}' must be rows or cols: the dimension of C that "
                                             r"consecutive threads \(threadIdx.x\) step along"):
            load(path)


@pytest.mark.parametrize("gpu", ["v100-sxm2", "t4"])
def test_a_tensor_core_kernel_listed_for_a_gpu_without_its_roof_has_no_floors_and_says_why(tmp_path, gpu):
    # a BF16 starter against a GPU whose datasheet gives no BF16 tensor roof: a row without floors and a note
    path = tmp_path / "mine_bf16.cu"
    assert invoke("new", str(path), "--dtype", "bf16").exit_code == 0
    r = invoke("kernels", str(path), "--gpu", gpu, "--model-only", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert "floors" not in doc["kernels"][0] and doc["kernels"][0]["model"]["flops"] == 2 * 4096**3
    assert any(n.startswith("mine_bf16: the ") and "has no BF16 tensor-core roof" in n for n in doc["notes"])


def test_a_compute_floor_with_no_memory_floor_beside_it_says_it_is_the_only_one(tmp_path):
    # an FP16 starter on a V100, model only: no L2 bandwidth known, no DRAM without waves, no SMEM model
    path = tmp_path / "mine_fp16.cu"
    assert invoke("new", str(path), "--dtype", "fp16").exit_code == 0
    r = CliRunner().invoke(app, ["kernels", str(path), "--gpu", "v100-sxm2", "--model-only"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    row = next(line for line in r.stdout.splitlines() if line.strip().startswith("mine_fp16"))
    assert row.rstrip().endswith("FP16 tensor (the only floor)") and " - " in row


def test_header_errors_name_the_line(tmp_path):
    body = "extern \"C\" __global__ void k(int M) {}\n"
    # The lines count wherever they are (after an #include, say); other comments are left alone.
    text = "#include \"x.cuh\"\n// roofline entry: k\n// a roofline of it: later\nint x;\n// roofline block: 64\n"
    assert read_header("\ufeff" + text) == {"entry": "k", "block": "64"}
    cases = {
        "// roofline entry: k\n// roofline entri: k\n": "x.cu:2: unknown key 'entri' in '// roofline entri:'",
        "// roofline entry: k\n// roofline entry: j\n": "x.cu:2: key 'entry' given twice",
        "// roofline entry:\n": "x.cu:1: key 'entry' has no value",
        "//roofline block 16,16\n": "x.cu:1: expected '// roofline KEY: VALUE', with a colon after the key",
        "// ROOFLINE Block: 64\n": "x.cu:1: write 'roofline' and the key in lower case",
    }
    for text, needle in cases.items():
        with pytest.raises(UsageError) as exc:
            read_header(text, "x.cu")
        assert str(exc.value).startswith(needle)
    f = tmp_path / "mine.cu"
    for header, needle in [
        ("// roofline entry: k\n", "no block, grid given"),
        ("// roofline entry: k\n// roofline block: 64\n// roofline grid: 1\n// roofline thread-tile: 8x8\n",
         "a thread tile needs the block tile too"),
        ("// roofline entry: k\n// roofline block: 64\n// roofline grid: 1\n// roofline tile: 32x32x8\n"
         "// roofline thread-tile: 3x3\n", "thread tile 3x3 does not divide the block tile 32x32"),
        ("// roofline entry: k(1)\n// roofline block: 64\n// roofline grid: 1\n", "is not a kernel name"),
        ("// roofline entry: k\n// roofline block: 64\n// roofline grid: 1\n// roofline name: naive\n",
         "'naive' is the name of a ladder kernel"),
        ("// roofline entry: k\n// roofline block: 64\n// roofline grid: 1\n// roofline dynamic-smem: 4MB\n",
         "dynamic-smem '4MB' must be a number of bytes (0 or more, or KiB as 48k)"),
    ]:
        f.write_text(header + body)
        with pytest.raises(UsageError) as exc:
            load(f)
        assert needle in str(exc.value)
    for path, needle in [(tmp_path / "none.cu", "no such file"), (tmp_path, "is a folder"),
                         (Path("/dev/null"), "is not a regular file")]:
        with pytest.raises(UsageError) as exc:
            load(path)
        assert needle in str(exc.value)
    gemm = ("extern \"C\" __global__ void k(int M, int N, int K, float alpha, const float* A, const float* B, "
            "float beta, float* C) {}\n")
    f.write_text("// roofline entry: k\n// roofline block: 64\n// roofline grid: 1\n// roofline dynamic-smem: 48k\n" + gemm)
    assert load(f).dynamic_smem_bytes == 49152  # KiB, as occupancy --smem takes them
    f.write_text("// roofline entry: k\n// roofline block: 64\n// roofline grid: N\n// roofline tile: 32,32,8\n"
                 "// roofline thread-tile: 4x4\n" + gemm)
    assert load(f).launch_notes(Problem(128, 128, 8)) == []  # 64 threads of 4x4 in 32x32; 128 blocks >= 16 tiles
    assert load(f, {"block": "256", "grid": "2"}).launch_notes(Problem(128, 128, 8)) == [
        "mine: a 32x32 block tile in 4x4 thread tiles is 64 threads, but the block has 256; the model's SMEM "
        "figures assume each thread reuses a TM x TN tile",
        "mine: the grid launches 2 blocks for 16 block tiles of C at 128x128x8; unless each block loops over "
        "several, part of C stays unwritten"]


def _listing(arch: str, *extra: str) -> dict:
    r = invoke("kernels", TILED_F4, "--arch", arch, "--json", *extra)
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.stdout)["kernels"]
    return row


# 256 threads (8 warps) with 64 KB of dynamic shared memory plus the 1 KB each block reserves:
# shared memory binds on every target (CUDA programming guide, compute capability tables).
#   sm_80  164 KB per SM:  167,936 // 66,560 = 2 blocks, 16 of 64 warps = 25 %
#   sm_90  228 KB per SM:  233,472 // 66,560 = 3 blocks, 24 of 64 warps = 37.5 %
#   sm_120 100 KB per SM:  102,400 // 66,560 = 1 block,   8 of 48 warps = 16.7 %
@pytest.mark.parametrize("arch, blocks, occupancy", [("sm_80", 2, 0.25), ("sm_90", 3, 0.375),
                                                     ("sm_120", 1, 8 / 48)])
@pytest.mark.nvrtc
def test_kernels_source_gives_resources_and_occupancy_for_any_target(arch, blocks, occupancy):
    row = _listing(arch, "--declare", "dynamic-smem=65536")
    occ = row["occupancy"]
    assert (occ["active_blocks_per_sm"], occ["limiters"]) == (blocks, ["shared_memory"])
    assert occ["occupancy"] == pytest.approx(occupancy, abs=1e-6)
    assert row["dynamic_smem_bytes"] == 65536 and row["local_bytes"] == 0 and 16 <= row["registers"] <= 128
    assert row["tile_source"] == "user" and row["source"]["entry"] == "tiled_f4<64,64,16,4,4>"
    assert row["model"]["arithmetic_intensity"] == pytest.approx(2 * 4096 / (4 * 2 * 4096 / 64))


# A file of several kernels: ptxas reports each, in an order of its own (the last defined first; a
# name expression's template, instantiated at the end, before them all). Figures read by hand from
# NVRTC 12.9's -Xptxas -v log for sm_90, (registers, static shared memory bytes):
#   three_kernels.cu  scale_c 8, 0 (reported first) · sgemm_8x8 106, 16,384 · sgemm_strip<64,64,8,8> 36, 4,096
#   block_sums.cu     merge_sums 12, 128 (reported first) · block_sums 40, 1,024
# Before the entry's section was read, sgemm_8x8 and block_sums read their first kernel's figures.
# Occupancy on sm_90 (65,536 registers in warps of 32 x registers rounded up to 8, 64 warps):
#   sgemm_8x8   256 threads at 106 (97 to 128) registers: 2 blocks of 8 warps = 25 %   (first kernel's: 100 %)
#   sgemm_strip 512 threads at 36 (33 to 40): 65,536 // (16 x 1,280) = 3 blocks of 16 warps = 75 %
#   scale_c     256 threads at 8: 8 blocks of 8 warps (the warp limit) = 100 %
#   block_sums  256 threads at 40 (33 to 40): 65,536 // (8 x 1,280) = 6 blocks of 8 warps = 75 %
SEVERAL = [
    ("three_kernels.cu", [], (106, 97, 128), 16384, 0.25, ["registers"]),
    ("three_kernels.cu", ["--declare", "entry=sgemm_strip<64,64,8,8>", "--declare", "block=512",
                          "--declare", "grid=cdiv(N,64), cdiv(M,64)", "--declare", "tile=64x64x8",
                          "--declare", "thread-tile=8x1"], (36, 33, 40), 4096, 0.75, ["registers"]),
    ("three_kernels.cu", ["--declare", "entry=scale_c", "--declare", "grid=cdiv(M*N, 256)"], (8, 1, 16), 0, 1.0, ["warps"]),
    ("block_sums.cu", [], (40, 33, 40), 1024, 0.75, ["registers"]),  # a workload: its launch from its file
]


@pytest.mark.parametrize("file, flags, registers, smem, occupancy, limiters", SEVERAL,
                         ids=["header entry", "templated entry", "extern C entry", "workload"])
@pytest.mark.nvrtc
def test_kernels_source_reads_the_entry_of_a_file_of_several_kernels(file, flags, registers, smem, occupancy,
                                                                      limiters):
    from roofline.measure.nvrtc_compile import nvrtc_version

    r = invoke("kernels", str(KERNELS / file), "--arch", "sm_90", "--json", *flags)
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.stdout)["kernels"]
    hand_checked, low, high = registers
    if nvrtc_version() == (12, 9):
        assert row["registers"] == hand_checked
    assert low <= row["registers"] <= high  # another NVRTC allocates its own count, within the same occupancy
    assert (row["static_smem_bytes"], row["local_bytes"]) == (smem, 0)
    assert (row["occupancy"]["occupancy"], row["occupancy"]["limiters"]) == (occupancy, limiters)


@pytest.mark.nvrtc
def test_a_kernel_that_cannot_launch_on_the_target_says_why():
    r = invoke("kernels", TILED_F4, "--arch", "sm_120", "--declare", "dynamic-smem=200000")
    assert r.exit_code == 1 and "cannot launch" in r.stdout
    assert "tiled_f4 cannot launch on sm_120: needs 200,000 bytes of shared memory per block" in r.stderr
    r = invoke("kernels", TILED_F4, "--arch", "sm_90", "--declare", "block=512")
    assert r.exit_code == 1
    assert ("tiled_f4 cannot launch on sm_90: its __launch_bounds__ allow at most 256 threads per block; the block "
            "has 512") in r.stderr
    r = invoke("kernels", TILED_F4, TILED_F4, "--arch", "sm_90")
    assert r.exit_code == 2 and "two of your kernels are called 'tiled_f4'" in r.stderr


@pytest.mark.nvrtc
def test_a_compile_error_shows_the_compilers_own_lines():
    r = invoke("kernels", str(KERNELS / "does_not_compile.cu"), "--arch", "sm_90")
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert 'does_not_compile.cu(7): error: identifier "undeclared_value" is undefined' in r.stderr
    r = invoke("kernels", TILED_F4, "--arch", "sm_90", "--declare", "entry=tiled_f5<64,64,16,4,4>")
    assert r.exit_code == 1 and "has no kernel 'tiled_f5<64,64,16,4,4>'" in r.stderr


@pytest.mark.parametrize("args, needle", [
    (["--declare", "entry=k"], "--declare entry= describes your kernel's launch; give the kernel file too"),
    ([TILED_F4, TILED_F4, "--declare", "block=64"], "--declare block= applies to one kernel file"),
    ([TILED_F4, "--declare", "grid=open('x')"], "the only function is cdiv"),
    ([TILED_F4, "--autotuned-tile", "128,128,8,8,8"], "it does not apply to your kernels"),
])
def test_bad_launch_flags_exit_2_in_one_line(args, needle):
    r = invoke("kernels", "--arch", "sm_90", *args)
    assert r.exit_code == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_run_refuses_bad_user_input_before_looking_for_a_gpu(tmp_path):
    for args, needle in [
        ([TILED_F4, "--declare", "grid=M ** 2"], "operator Pow"),
        ([TILED_F4, "--timeout", "0"], "--timeout must be more than 0"),
        ([TILED_F4, "--timeout", "nan"], "--timeout must be more than 0"),
        (["--no-ragged"], "--no-ragged applies to your own kernels"),
        ([TILED_F4, "--size", "40000", "--declare", "grid=cdiv(N,64), M * 2"], "CUDA allows 1 to 65,535"),
        ([str(tmp_path / "missing.cu")], "no such file"),
    ]:
        r = invoke("run", *args)
        assert r.exit_code == 2 and needle in r.stderr, (args, r.output)


@pytest.mark.nvrtc
def test_new_writes_a_starter_that_compiles_and_declares_itself(tmp_path):
    path = tmp_path / "mine.cu"
    r = invoke("new", str(path))
    assert r.exit_code == 0 and f"roofline run {path} --all" in r.stdout
    text = path.read_text()
    assert "roofline run mine.cu --all" in text
    assert invoke("new", str(path)).exit_code == 2  # never overwrites without --force
    assert invoke("new", str(path), "--force").exit_code == 0
    assert invoke("new", str(tmp_path / "mine.txt")).exit_code == 2
    assert invoke("new", str(tmp_path / "naive.cu")).exit_code == 2  # a ladder kernel's name
    row = json.loads(invoke("kernels", str(path), "--arch", "sm_90", "--json").stdout)["kernels"][0]
    # 1024 threads, 8 KB of static shared memory for two 32x32 tiles: warps bind, 2 blocks of 32 warps.
    assert (row["name"], row["static_smem_bytes"], row["occupancy"]["occupancy"]) == ("mine", 8192, 1.0)
    assert row["model"]["smem_accesses_per_result"] == 2 * 4096  # one result per thread: 2K reads


@pytest.mark.nvrtc
def test_new_writes_a_tensor_core_starter_in_each_precision(tmp_path):
    for dtype, element, mma in (("bf16", "__nv_bfloat16", "m16n8k16.row.col.f32.bf16.bf16.f32"),
                                ("fp16", "__half", "m16n8k16.row.col.f32.f16.f16.f32"),
                                ("tf32", "const float* A", "m16n8k8.row.col.f32.tf32.tf32.f32")):
        path = tmp_path / f"mine_{dtype}.cu"
        r = invoke("new", str(path), "--dtype", dtype)
        assert r.exit_code == 0 and "--ladder tensor --all" in r.stdout
        text = path.read_text()
        assert f"// roofline dtype: {dtype}\n" in text and element in text and mma in text
        assert load(path).dtype == dtype and load(path).entry == f"mine_{dtype}"
    # TF32's starter steps K by 8 elements (one m16n8k8), BF16's by 16: the declared tile says so.
    assert load(tmp_path / "mine_tf32.cu").tile == (32, 32, 8) and load(tmp_path / "mine_bf16.cu").tile == (32, 32, 16)
    assert invoke("new", str(tmp_path / "x.cu"), "--dtype", "int8").exit_code == 2
    row = json.loads(invoke("kernels", str(tmp_path / "mine_bf16.cu"), "--arch", "sm_90",
                            "--json").stdout)["kernels"][0]
    assert row["local_bytes"] == 0 and row["static_smem_bytes"] == 0  # compiled for sm_90a, mma.sync from registers
    # A 32 x 32 block tile at 4096^3: K (1/32 + 1/32) = 256 element reads per result, at 2 bytes.
    assert row["model"]["gmem_accesses_per_result"] == 256 and row["model"]["gmem_bytes"] == 256 * 4096 ** 2 * 2


@pytest.mark.nvrtc
def test_register_counts_agree_across_processes():
    # Compiled one after another in one process, async_copy read 219 instead of 226 registers in
    # about 1 process of 40; each kernel in a fresh process with a fixed address space agrees.
    from roofline.ladder.families import BY_NAME
    from roofline.measure.compile_pool import compile_in_fresh_process

    # Three processes per kernel: two forked, in the opposite order, the third started afresh
    # (warptiling); the kernel that does not compile between them.
    kernels = [BY_NAME["warptiling"].spec(), load(Path(TILED_F4))]
    bad_kernel = load(Path(KERNELS / "does_not_compile.cu"))
    run = compile_in_fresh_process(kernels + [bad_kernel] + kernels[::-1], "sm_90", cache=False)
    assert [r.registers for r in run[:2]] == [r.registers for r in run[4:2:-1]] and run[0].registers > 0
    request = json.dumps({"kernel": "warptiling<128,128,16,16,64,4,8>", "arch": "sm_90"})
    child = subprocess.run([sys.executable, "-m", "roofline.measure.compile_pool"], input=request, capture_output=True,
                           text=True, check=True)
    assert json.loads(child.stdout)["max_threads_per_block"] == 512 and json.loads(child.stdout)["registers"] > 0
    assert json.loads(child.stdout)["registers"] == run[0].registers  # forked or started afresh, alike
    bad = run[2]
    assert isinstance(bad, RunError) and "does_not_compile.cu(7): error" in str(bad)


def readme_kernel(folder: Path) -> Path:
    """The complete example kernel of docs/your-kernel.md, written to `folder`."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "your-kernel.md").read_text()
    after = text.split("A complete example", 1)[1]
    code = after.split("```c++\n", 1)[1].split("```", 1)[0]
    path = folder / "tiled.cu"
    path.write_text(code)
    return path


@pytest.mark.nvrtc
def test_the_readme_example_kernel_compiles_from_its_header_alone(tmp_path):
    r = invoke("kernels", str(readme_kernel(tmp_path)), "--arch", "sm_90", "--json")
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.stdout)["kernels"]
    assert (row["name"], row["dynamic_smem_bytes"], row["local_bytes"]) == ("tiled", 8192, 0)


def test_a_child_that_dies_without_a_report_is_a_failure_not_a_crash(monkeypatch):
    from roofline import child
    from roofline.measure import isolated

    kernel = load(Path(TILED_F4))
    for stdout, code in (("", -9), ("printf from the kernel\n{not json", 1), ('{"error": 5}\n', 0)):
        monkeypatch.setattr(child.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(
            a, code, stdout=stdout, stderr="Segmentation fault\n"))
        r = isolated.run_isolated(kernel, Problem(64, 64, 64), "0000:00:00.0")
        want = "its process ended (exit code 0) with a last line that is not the harness's report (a forged or stray " \
            "line: '{\"error\": 5}')" if code == 0 else f"its process died (exit code {code}) without a report: Segmentation fault"
        assert r.error == f"tiled_f4: {want}"
        assert not r.correct and r.figures.flops == 2 * 64**3

    def too_slow(*a, **k):
        raise subprocess.TimeoutExpired(a, k["timeout"])
    monkeypatch.setattr(child.subprocess, "run", too_slow)
    r = isolated.run_isolated(kernel, Problem(64, 64, 64), "0000:00:00.0", timeout_s=1)
    # 180 s to start, 49 launches at the 1 s timeout (warm-up and 20 rounds of the kernel and cuBLAS, the check), 1 s budget
    assert r.error == "tiled_f4: timeout: its process was stopped after 230 s without an answer"
    assert r.failure == "timeout"


def test_only_a_user_kernel_may_have_no_model(doc):
    from conftest import user_record

    from roofline.results import store

    doc["kernels"].append(user_record(doc, "bare", model=False))
    parsed = store.parse(doc)
    assert parsed.kernels[-1].model is None and parsed.floors(parsed.kernels[-1]).binding.level == "FP32"
    doc["kernels"][0]["model"] = None
    with pytest.raises(UsageError, match=r"kernels\[0\].model: missing; only a user's kernel"):
        store.parse(doc)


@pytest.mark.nvrtc
def test_second_trial_findings(tmp_path):
    """What a second new-user trial broke: compile errors hidden behind 'has no kernel', a file
    with a byte-order mark, CUDA headers, values from a file without the file's name, a trailing
    comment, reserved names in other case, notes lost with --json."""
    starter = tmp_path / "mine.cu"
    assert invoke("new", str(starter)).exit_code == 0
    brace = tmp_path / "brace.cu"
    brace.write_text(starter.read_text().rstrip().removesuffix("}"))
    r = invoke("kernels", str(brace), "--arch", "sm_90")
    assert r.exit_code == 1 and f"{brace}(" in r.stderr and "has no kernel" not in r.stderr
    bom = tmp_path / "bom.cu"
    bom.write_bytes(b"\xef\xbb\xbf" + starter.read_bytes())
    assert invoke("kernels", str(bom), "--arch", "sm_90").exit_code == 0
    fp16 = tmp_path / "fp16.cu"
    fp16.write_text("// roofline entry: k\n// roofline block: 256   // a trailing comment\n"
                    "// roofline grid: cdiv(M*N,256)\n#include <cuda_fp16.h>\n"
                    'extern "C" __global__ void k(int M, int N, int K, float alpha, const float* A, const float* B, '
                    "float beta, float* C) { int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "if (i < M * N) C[i] = __half2float(__float2half(0.0f)); }\n")
    r = invoke("kernels", str(fp16), "--arch", "sm_90", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["kernels"][0]["threads_per_block"] == 256
    r = invoke("kernels", str(starter), "--arch", "sm_90", "--declare", "block=abc")
    assert r.exit_code == 2 and r.stderr.startswith(f"roofline: error: {starter}: block 'abc'")
    r = invoke("kernels", str(starter), "--arch", "sm_90", "--declare", "name=CUBLAS")
    assert r.exit_code == 2 and "'CUBLAS' is the name of the reference" in r.stderr
    r = invoke("kernels", str(starter), "--arch", "sm_90", "--declare", "grid=1", "--json")
    assert r.exit_code == 0 and "the grid launches 1 block for 16,384 block tiles" in r.stderr
    assert json.loads(r.stdout)["notes"] == [r.stderr.strip().removeprefix("roofline: note: ")]
    assert invoke("new", str(tmp_path / ("a" * 300 + ".cu"))).exit_code == 2


def test_a_results_path_that_is_no_file_is_refused_at_once():
    r = invoke("show", "/dev/zero")
    assert r.exit_code == 2 and "not a regular file" in r.stderr


def test_a_kernel_is_not_listed_or_run_in_a_precision_its_signature_does_not_take(tmp_path):
    """A float SGEMM given --dtype bf16 was listed as a BF16 GEMM (half its bytes) without a word:
    its signature's A says float, so it is refused in one line; TF32 (float operands) is not."""
    from roofline.ladder.user import element_of_a

    assert element_of_a((KERNELS / "tiled_f4.cu").read_text(), "tiled_f4<128, 128, 8, 8, 4>") == "float"
    assert element_of_a((KERNELS / "bf16_dot.cu").read_text(), "bf16_dot") == "__nv_bfloat16"
    assert element_of_a("#define T float\n__global__ void k(int M, int N, int K, float a, const T* A) {}", "k") is None
    path = tmp_path / "mine.cu"
    assert CliRunner().invoke(app, ["new", str(path)]).exit_code == 0
    r = CliRunner().invoke(app, ["kernels", str(path), "--gpu", "h200", "--model-only", "--dtype", "bf16"])
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1, r.output
    assert ("mine.cu: mine takes float A and B (its signature), not bf16; give --dtype fp32 (or tf32 for a kernel "
            "that reads B stored N x K, as the tensor ladder's)") in r.stderr
    ok = CliRunner().invoke(app, ["kernels", str(path), "--gpu", "h200", "--model-only", "--dtype", "tf32"])
    assert ok.exit_code == 0, ok.output


@pytest.mark.parametrize("name, dtype", [("k", "fp32"), ("a_kernel_with_a_long_name", "fp32"), ("k", "bf16")])
def test_the_starters_signature_stays_aligned_under_its_new_name(tmp_path, name, dtype):
    """The starter's parameters continue under the first one whatever the kernel is called."""
    path = tmp_path / f"{name}.cu"
    assert CliRunner().invoke(app, ["new", str(path), "--dtype", dtype]).exit_code == 0
    lines = path.read_text().splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith(f"__global__ void {name}("))
    assert lines[i + 1].index(lines[i + 1].lstrip()) == lines[i].index("(") + 1, lines[i:i + 2]


def test_a_kernel_that_reads_c_declares_it_and_the_child_gets_it(tmp_path):
    """Public SGEMMs compute alpha * acc + beta * C and read C even where beta = 0: declared, the
    check zeroes C instead of filling it with NaN (measure.runner); the declaration travels to the
    child process that checks it."""
    from roofline.ladder.user import from_description

    f = tmp_path / "reads.cu"
    f.write_text("// roofline entry: k\n// roofline block: 256\n// roofline grid: cdiv(M, 16), cdiv(N, 16)\n"
                 "// roofline reads-c: yes\n__global__ void k(int M, int N, int K, float alpha, const float* A, "
                 "const float* B, float beta, float* C) { C[0] = alpha * A[0] * B[0] + beta * C[0]; }\n")
    kernel = load(f)
    assert kernel.reads_c and kernel.describe()["reads-c"] == "yes"
    assert from_description(kernel.describe()).reads_c
    assert not load(f, {"reads-c": "no"}).reads_c
    with pytest.raises(UsageError, match="reads-c 'maybe' must be yes"):
        load(f, {"reads-c": "maybe"})


def test_reads_c_is_declared_on_the_command_line_too(tmp_path):
    f = tmp_path / "plain.cu"
    f.write_text("// roofline entry: k\n// roofline block: 256\n// roofline grid: cdiv(M, 16), cdiv(N, 16)\n"
                 "__global__ void k(int M, int N, int K, float alpha, const float* A, const float* B, float beta, "
                 "float* C) { C[0] = alpha * A[0] * B[0] + beta * C[0]; }\n")
    from roofline.commands import gemm
    assert gemm.declared(["reads-c=yes"])["reads-c"] == "yes"
    assert load(f, gemm.declared(["reads-c=yes"])).reads_c


@pytest.mark.parametrize("item, flag", [("dtype=fp16", "--dtype"), ("compiler=nvcc", "--compiler"),
                                        ("options=-DTILE=16", "--compile-option")])
def test_a_file_key_with_a_flag_of_its_own_is_pointed_to_that_flag(item, flag):
    from roofline.commands import gemm
    with pytest.raises(UsageError, match=f"declare '{item.split('=')[0]}': give it as {flag} "):
        gemm.declared([item])


def test_declared_tiles_without_shared_memory_give_no_smem_level_and_no_ceiling_above_its_roof():
    # the public ladder's naive and coalescing kernels, declared 'tile: 1x1x1' and compiled with no
    # shared memory: recorded with an SMEM level from the declaration (549.8 GB of requests), read with
    # none; and no modelled rate past a level's theoretical roof raises its ceiling (public_coalesce's
    # 549.8 GB of GMEM requests in 22.06 ms would be 24,920 GB/s at the L2, whose roof is 15,354)
    from roofline import api

    doc = api.read(Path(__file__).resolve().parent.parent / "plots" / "public-ladder-h200-4096.json")
    by = {k.name: k for k in doc.kernels}
    for name in ("public_naive", "public_coalesce"):
        assert by[name].static_smem_bytes == 0 and by[name].model.smem_bytes is None
        assert by[name].model.smem_served_bytes is None
    assert any("has no shared-memory level for public_coalesce, public_naive" in n for n in doc._read_notes)
    assert by["public_smem"].model.smem_bytes is not None  # a kernel that stages its tiles keeps its level
    theory = doc.device.roofs
    for level in ("L2", "SMEM", "DRAM"):
        used = doc.roofs.roof(level, True)
        assert used.value <= theory.roof(level, False).value * (1 + 1e-9), level
    assert all(b.seen <= theory.roof(b.level, False).value or b.counted for b in doc.beaten)
    # its GMEM requests are its L1's (no shared memory), 549.8 GB whose L2 floor (35.8 ms at the theoretical
    # roof) it ran faster than: that floor is set aside, and with no thread-x to count its L1 sectors the
    # verdict says its FP32 floor is the only one known (an expert's review: a floor below the time is none)
    v = doc.verdict(by["public_coalesce"])
    assert v.floor("L2").aside == "L1" and v.binding.level == "FP32" and v.times_floor > 1
    from roofline.render.tables import verdict_lines

    line = next(x for x in verdict_lines(doc) if x.startswith("public_coalesce:"))
    assert line.startswith("public_coalesce: its GMEM requests are its L1's (it stages nothing in shared memory)")
    assert "so its FP32 floor (measured) is the only one known; 9.82x that floor" in line


def test_compiler_lines_put_the_error_before_ptxas_report_and_drop_its_nul():
    # NVRTC's log for a kernel over the static shared memory limit (sm_90, -Xptxas -v), as the H200 gave it
    from roofline.measure.nvrtc_compile import compiler_lines

    log = ("ptxas info    : 0 bytes gmem\nptxas info    : Compiling entry function '_Z9autotunedILi256E' for 'sm_90'\n"
           "ptxas info    : Function properties for _Z9autotunedILi256E\n"
           "    3248 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Used 64 registers, used 1 barriers, 132096 bytes smem\n"
           "\x00ptxas error   : Entry function '_Z9autotunedILi256E' uses too much shared data (0x20400 bytes, 0xc000 max)\n")
    assert compiler_lines(log) == ["ptxas error   : Entry function '_Z9autotunedILi256E' uses too much shared data "
                                   "(0x20400 bytes, 0xc000 max)"]
    ok = "ptxas info    : Used 64 registers, used 1 barriers, 16640 bytes smem\n"
    assert compiler_lines(ok) == [ok.strip()]  # no error: the report is all there is to show
    # one message on many PTX lines (a BF16 kernel for sm_70): said once, with how many more
    many = "".join(f"ptxas application ptx input, line {n}; error   : Feature '.bf16' requires .target sm_80 or higher\n"
                   for n in (262, 263, 270))
    assert compiler_lines(many + "ptxas fatal   : Ptx assembly aborted due to errors\n") == [
        "ptxas application ptx input; error   : Feature '.bf16' requires .target sm_80 or higher (and 2 more PTX lines)",
        "ptxas fatal   : Ptx assembly aborted due to errors"]
    # nvcc names its PTX file where NVRTC says 'ptx input': the same lines said once
    nvcc = "".join(f"ptxas /tmp/x/m.roofline.ptx, line {n}; error   : Feature '.m16n8k8' requires .target sm_80 or higher\n"
                   for n in (357, 382))
    assert compiler_lines(nvcc) == ["ptxas /tmp/x/m.roofline.ptx; error   : Feature '.m16n8k8' requires .target sm_80 "
                                    "or higher (and 1 more PTX lines)"]


def test_a_kernel_that_fails_only_for_want_of_newer_instructions_is_told_which_and_since_when():
    # ptxas's lines for the BF16 starter built for sm_75 (nvcc 13): one line names what it uses and the target it needs
    from roofline.measure.nvrtc_compile import newer_target

    log = ("ptxas /tmp/x/m_bf16.roofline.ptx, line 360; error   : Feature '.m16n8k16' requires .target sm_80 or higher\n"
           "ptxas /tmp/x/m_bf16.roofline.ptx, line 385; error   : Feature '.bf16' requires .target sm_80 or higher\n"
           "ptxas /tmp/x/m_bf16.roofline.ptx, line 390; error   : Feature '.m16n8k16' requires .target sm_80 or higher\n"
           "ptxas fatal   : Ptx assembly aborted due to errors\n")
    assert newer_target(log) == "uses .m16n8k16 and .bf16, which need sm_80 or later"
    assert newer_target("ptxas error   : Feature 'wgmma' requires .target sm_90a\n") == "uses wgmma, which needs sm_90a"
    # an instruction the target lacks, named as nvcc 13 names it for wgmma on sm_89 and sm_100
    hopper = ("ptxas /tmp/w.ptx, line 26; error   : Instruction 'wgmma.fence' not supported on .target 'sm_89'\n"
              "ptxas /tmp/w.ptx, line 25; error   : Instruction 'wgmma.fence' cannot be compiled for architecture 'sm_100'\n"
              "ptxas /tmp/w.ptx, line 30; error   : Instruction 'setmaxnreg.inc' not supported on .target 'sm_89'\n")
    assert newer_target(hopper) == "uses wgmma.fence and setmaxnreg.inc"
    # any other error is the file's own: its lines are shown as they are
    assert newer_target(log + "mine.cu(12): error: identifier \"x\" is undefined\n") is None
    assert newer_target("mine.cu(12): error: expected a \";\"\n") is None


def test_an_entry_the_file_lacks_is_told_the_kernels_it_has_and_a_template_its_missing_arguments():
    from roofline.ladder.user import kernels_in, missing_entry

    text = ("template <int TILE>\n__global__ void __launch_bounds__(256) tiled(int M, float* C) { }\n"
            "__global__ void plain(float* y) { }\nvoid host() { }\n")
    assert kernels_in(text) == ["tiled<...>", "plain"]
    assert missing_entry("k.cu", "nope", text) == "k.cu has no kernel 'nope'; it has tiled<...>, plain"
    assert missing_entry("k.cu", "tiled", text).startswith("k.cu: tiled is a template: give its arguments in the entry")
    assert missing_entry("k.cu", "x", "int main() { }\n") == "k.cu has no kernel 'x'; it defines no __global__ function"


def test_a_kernel_off_the_gemm_calling_convention_gets_a_note(tmp_path):
    f = tmp_path / "helper.cu"
    f.write_text("// roofline entry: helper\n// roofline block: 256\n// roofline grid: cdiv(M, 256)\n"
                 "__global__ void helper(float* x) { x[threadIdx.x] = 0; }\n")
    (note,) = load(f).launch_notes(Problem(1024, 1024, 1024))
    assert note.startswith("helper (helper) takes 1 parameter, not the eight of the GEMM calling convention")
    f.write_text(f.read_text().replace("float* x) {", "int M, int N, int K, double alpha, const double* A, "
                                       "const double* B, double beta, double* C) {"))
    (note,) = load(f).launch_notes(Problem(1024, 1024, 1024))
    assert note.startswith("helper (helper) takes double A and B, not the float, bf16 or half")


def test_an_impossible_grid_of_a_file_names_the_file(tmp_path):
    f = tmp_path / "mine.cu"
    f.write_text("// roofline entry: k\n// roofline block: 64\n// roofline grid: K - 1000\n"
                 "__global__ void k(int M, int N, int K, float alpha, const float* A, const float* B, float beta, "
                 "float* C) {}\n")
    with pytest.raises(UsageError, match=r"^mine.cu: grid 'K - 1000' gives x = 0 blocks"):
        load(f).grid(Problem(4096, 2048, 1000))


def test_a_graded_kernel_gets_no_gemm_convention_note():
    # copy.cu declares its own arguments: its signature is no GEMM's, and that is no news
    graded = load(Path(__file__).resolve().parent / "fixtures" / "grade" / "copy.cu")
    assert graded.workload and not any("calling convention" in n for n in graded.launch_notes(Problem(64, 64, 64)))


def test_a_kernel_declared_with_a_block_tile_and_no_thread_tile_keeps_its_l2_floor():
    # a tensor-core kernel of one's own (roofline/kernels/starter_tensor.cu: tile 32x32xSTEP_K, no thread tile)
    # has no SMEM level in the model, yet stages its tiles: its GMEM requests are the L2's, their floor binds
    # where it is the highest; only compiled code with no shared memory at all reads A and B directly
    from roofline.ladder.user import traffic_model_of
    from roofline.model.device import from_preset
    from roofline.model.problem import Problem
    from roofline.model.roofs import verdict

    p = Problem(4096, 4096, 4096, dtype="bf16")
    fig = traffic_model_of((128, 128), None, dtype="bf16").figures(p)
    assert fig.smem_bytes is None and not fig.direct
    v = verdict(fig, from_preset("h200").roofs, 1.0, measured=False, precision="bf16_tensor")
    # 2.15 GB of requests at 15,354 GB/s: 0.140 ms, above the BF16 tensor floor (137 GFLOP at 989,430 GFLOP/s: 0.139)
    assert v.floor("L2").aside is None and v.binding.level == "L2"
    bare = fig.without_smem()
    assert bare.direct and verdict(bare, from_preset("h200").roofs, 1.0, measured=False,
                                   precision="bf16_tensor").floor("L2").aside == "L1"
