"""The headers kernel authors include compile in `kernels --source` (NVRTC, offline, no GPU): each
one used for real in a kernel of the ladder's calling convention, from the CUDA wheels the install
brings (crt/ for <mma.h>, CCCL for CUB and libcu++) or CUTLASS's wheel; a header no install has,
or one NVRTC cannot compile, is refused in one line that names what to install or include."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline.measure import nvrtc_compile

KERNELS = Path(__file__).parent / "fixtures" / "kernels"

# header(s) -> the body of a kernel that uses them; the kernel writes C so nothing is optimised away
USES = {
    "mma.h": ("#include <mma.h>\n#include <cuda_fp16.h>\nusing namespace nvcuda;",
              "wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;\n"
              "wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;\nwmma::fill_fragment(c, 1.0f);\n"
              "wmma::store_matrix_sync(C, c, 16, wmma::mem_row_major);"),
    "cuda_pipeline.h": ("#include <cuda_pipeline.h>",
                        "__shared__ float s[32];\n__pipeline_memcpy_async(&s[threadIdx.x % 32], A + threadIdx.x % 32, 4);\n"
                        "__pipeline_commit();\n__pipeline_wait_prior(0);\nC[threadIdx.x] = s[threadIdx.x % 32];"),
    "cuda/pipeline": ("#include <cuda/pipeline>",
                      "__shared__ float s[32];\nauto pipe = cuda::make_pipeline();\npipe.producer_acquire();\n"
                      "cuda::memcpy_async(&s[threadIdx.x % 32], A + threadIdx.x % 32, sizeof(float), pipe);\n"
                      "pipe.producer_commit();\npipe.consumer_wait();\nC[threadIdx.x] = s[threadIdx.x % 32];\n"
                      "pipe.consumer_release();"),
    "cuda/barrier": ("#include <cuda/barrier>",
                     "__shared__ cuda::barrier<cuda::thread_scope_block> bar;\n"
                     "if (threadIdx.x == 0) init(&bar, blockDim.x);\n__syncthreads();\n"
                     "bar.arrive_and_wait();\nC[threadIdx.x] = A[threadIdx.x];"),
    "cooperative_groups.h": ("#include <cooperative_groups.h>\n#include <cooperative_groups/memcpy_async.h>\n"
                             "#include <cooperative_groups/reduce.h>\nnamespace cg = cooperative_groups;",
                             "__shared__ float s[128];\nauto block = cg::this_thread_block();\n"
                             "cg::memcpy_async(block, s, A, sizeof(float) * 128);\ncg::wait(block);\n"
                             "auto warp = cg::tiled_partition<32>(block);\n"
                             "C[threadIdx.x] = cg::reduce(warp, s[threadIdx.x], cg::plus<float>());"),
    "cub/block/block_reduce.cuh": ("#include <cub/block/block_reduce.cuh>",
                                   "using R = cub::BlockReduce<float, 128>;\n__shared__ typename R::TempStorage t;\n"
                                   "float sum = R(t).Sum(A[threadIdx.x]);\nif (threadIdx.x == 0) C[blockIdx.x] = sum;"),
    "cub/block/block_scan.cuh": ("#include <cub/block/block_scan.cuh>",
                                 "using S = cub::BlockScan<float, 128>;\n__shared__ typename S::TempStorage t;\n"
                                 "float out;\nS(t).InclusiveSum(A[threadIdx.x], out);\nC[threadIdx.x] = out;"),
    "cub/warp/warp_reduce.cuh": ("#include <cub/warp/warp_reduce.cuh>",
                                 "using W = cub::WarpReduce<float>;\n__shared__ typename W::TempStorage t[4];\n"
                                 "C[threadIdx.x] = W(t[threadIdx.x / 32]).Sum(A[threadIdx.x]);"),
    "cuda_fp8.h": ("#include <cuda_fp8.h>",
                   "__nv_fp8_e4m3 q(A[threadIdx.x]);\n__nv_fp8_e5m2 r(A[threadIdx.x]);\n"
                   "C[threadIdx.x] = static_cast<float>(q) + static_cast<float>(r);"),
    "cuda_bf16.h": ("#include <cuda_bf16.h>",
                    "__nv_bfloat162 v = __floats2bfloat162_rn(A[threadIdx.x], B[threadIdx.x]);\n"
                    "C[threadIdx.x] = __low2float(__hmul2(v, v));"),
    "curand_kernel.h": ("#include <curand_kernel.h>",
                        "curandStatePhilox4_32_10_t st;\ncurand_init(1234, threadIdx.x, 0, &st);\n"
                        "C[threadIdx.x] = curand_uniform(&st);"),
    "cuda/std/cstdint": ("#include <cuda/std/cstdint>\n#include <cuda/std/limits>",
                         "cuda::std::uint32_t n = cuda::std::numeric_limits<cuda::std::uint16_t>::max();\n"
                         "C[threadIdx.x] = static_cast<float>(n);"),
}


def _kernel(tmp_path: Path, name: str, includes: str, body: str) -> Path:
    path = tmp_path / f"{name}.cu"
    path.write_text("// roofline entry: uses\n// roofline block: 128\n// roofline grid: 1, 1\n" + includes + "\n"
                    "__global__ void uses(int M, int N, int K, float alpha, const float* A, const float* B, float beta, "
                    "float* C) {\n" + textwrap.indent(body, "    ") + "\n}\n")
    return path


def _kernels(path: Path, arch: str = "sm_90", runner: CliRunner | None = None):
    return (runner or CliRunner()).invoke(app, ["kernels", str(path), "--arch", arch, "--json"])


@pytest.mark.parametrize("header", sorted(USES))
@pytest.mark.nvrtc
def test_each_header_people_include_compiles_offline(tmp_path, header):
    includes, body = USES[header]
    r = _kernels(_kernel(tmp_path, header.replace("/", "_").replace(".", "_"), includes, body))
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)["kernels"][0]
    assert row["registers"] > 0, row  # compiled through ptxas: a real register count


@pytest.mark.nvrtc
def test_a_wmma_bf16_gemm_in_the_tensor_ladders_convention_compiles_for_ampere_and_hopper():
    for arch in ("sm_80", "sm_90"):
        r = _kernels(KERNELS / "wmma_bf16.cu", arch)
        assert r.exit_code == 0, r.output
        row = json.loads(r.stdout)["kernels"][0]
        assert row["name"] == "wmma_bf16" and row["registers"] > 0 and row["local_bytes"] == 0


@pytest.mark.nvrtc
def test_cutlass_and_cute_compile_where_nvidia_cutlass_is_installed(tmp_path):
    pytest.importorskip("cutlass_library")
    path = _kernel(tmp_path, "cute_copy", "#include <cutlass/numeric_types.h>\n#include <cute/tensor.hpp>",
                   "using namespace cute;\nTensor c = make_tensor(make_gmem_ptr(C), make_shape(128));\n"
                   "c(threadIdx.x) = static_cast<float>(cutlass::half_t(A[threadIdx.x]));")
    r = _kernels(path)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["kernels"][0]["registers"] > 0


def test_a_header_this_install_lacks_is_one_line_naming_its_package(monkeypatch):
    """The WMMA GEMM compiled (as `kernels --source` does, `compile_cubin`) with the folders that
    carry crt/ taken away, as on an install without them."""
    import os

    from roofline.errors import RunError
    from roofline.ladder.user import load

    options = nvrtc_compile.cuda_include_options()
    kept = tuple(o for o in options if not os.path.isdir(os.path.join(o[2:], "crt")))
    if not any(os.path.isfile(os.path.join(o[2:], "mma.h")) for o in kept):
        pytest.skip("every folder with <mma.h> here also has crt/ (a toolkit's or CUDA 13's merged headers)")
    monkeypatch.setattr(nvrtc_compile, "cuda_include_options", lambda: kept)
    thirteen = nvrtc_compile._cuda_major() == 13
    with pytest.raises(RunError) as err:
        nvrtc_compile.compile_cubin(load(KERNELS / "wmma_bf16.cu"), "sm_90")
    assert str(err.value) == (
        "wmma_bf16 does not compile: <crt/mma.h> (which <mma.h> and other CUDA headers include) is not installed: it "
        f"comes with {'nvidia-cuda-crt' if thirteen else 'nvidia-cuda-nvcc-cu12'}; pip install "
        f"'{'cuda-toolkit[crt]==13.*' if thirteen else 'cuda-toolkit[nvcc]==12.*'}', or reinstall roofline with its "
        "CUDA extra")


@pytest.mark.nvrtc
def test_what_nvrtc_cannot_compile_says_what_to_include_instead(tmp_path):
    umbrella = _kernel(tmp_path, "umbrella", "#include <cub/cub.cuh>", "C[threadIdx.x] = A[threadIdx.x];")
    r = _kernels(umbrella)
    assert r.exit_code == 1 and ("<cub/cub.cuh> needs the host's C++ library, which NVRTC (the compiler here) "
                                 "does not have: include CUB's block or warp headers") in r.output
    std = _kernel(tmp_path, "std", "#include <cstdint>", "C[threadIdx.x] = static_cast<float>(sizeof(std::uint8_t));")
    r = _kernels(std)
    assert r.exit_code == 1 and ("<cstdint> (included by std.cu) is a host C++ header, which NVRTC (the compiler "
                                 "here) does not have: include <cuda/std/cstdint>") in r.output


@pytest.mark.parametrize("major, name, package", [
    (12, "crt/mma.h", "nvidia-cuda-nvcc-cu12; pip install 'cuda-toolkit[nvcc]==12.*'"),
    (13, "crt/mma.h", "nvidia-cuda-crt; pip install 'cuda-toolkit[crt]==13.*'"),
    (12, "cuda/barrier", "nvidia-cuda-cccl-cu12; pip install 'cuda-toolkit[cccl]==12.*'"),
    (13, "cub/block/block_reduce.cuh", "nvidia-cuda-cccl; pip install 'cuda-toolkit[cccl]==13.*'"),
    (12, "cute/tensor.hpp", "nvidia-cutlass wheel carries its headers; pip install 'nvidia-cutlass"),
])
def test_each_missing_header_names_the_package_of_its_cuda_version(monkeypatch, major, name, package):
    monkeypatch.setattr(nvrtc_compile, "_cuda_major", lambda: major)
    line = nvrtc_compile.missing_header(name)
    assert line.startswith(f"<{name}>") and package in line and "\n" not in line
    assert nvrtc_compile.missing_header("my_own_helpers.cuh", options=("-I/a", "-I/b")).startswith(
        "<my_own_helpers.cuh> is in none of the 2 folders searched")  # no package has it: where it was looked for


@pytest.mark.parametrize("header, says", [
    ("iostream", "<iostream> (included by probe.cu) is a host C++ header, which NVRTC (the compiler here) does not "
                 "have: libcu++ has no device form of it; leave it out of the kernel file"),
    ("vector", "<vector> (included by probe.cu) is a host C++ header"),
    ("cuda.h", "<cuda.h> is the host's CUDA API, which a kernel file does not need"),
    ("cuda/pipline", "<cuda/pipline> (included by probe.cu) is not a header of the installed cuda/ (in "),
    ("not_a_header.h", "<not_a_header.h> (included by probe.cu) is in none of the "),
])
@pytest.mark.nvrtc
def test_a_header_nvrtc_cannot_open_is_one_line_that_says_why(tmp_path, header, says):
    path = tmp_path / "probe.cu"
    path.write_text("// roofline entry: probe\n// roofline block: 128\n// roofline grid: 1, 1\n"
                    f"#include <{header}>\n__global__ void probe(int M, int N, int K, float alpha, const float* A, "
                    "const float* B, float beta, float* C) { C[0] = 1.0f; }\n")
    r = _kernels(path)
    errors = [ln for ln in r.output.splitlines() if ln.startswith("roofline: error:")]
    assert r.exit_code == 1 and len(errors) == 1 and says in errors[0], r.output
    assert "catastrophic" not in r.output  # the compiler's own lines give way to the one that says why


def test_a_toolkit_of_another_cuda_major_is_not_searched(tmp_path, monkeypatch):
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "cuda_runtime.h").write_text("")
    (tmp_path / "include" / "cuda.h").write_text("#define CUDA_VERSION 13000\n")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert nvrtc_compile.toolkit_major(str(tmp_path)) == 13
    monkeypatch.setattr(nvrtc_compile, "_cuda_major", lambda: 12)
    assert str(tmp_path) not in nvrtc_compile.toolkit_roots()
    monkeypatch.setattr(nvrtc_compile, "_cuda_major", lambda: 13)
    assert str(tmp_path) in nvrtc_compile.toolkit_roots()


@pytest.mark.nvrtc
def test_the_tensor_ladder_names_the_target_each_rung_was_built_for():
    # the wgmma rungs are built for sm_90a (Hopper's arch-specific target), the mma.sync ones for sm_90
    r = CliRunner().invoke(app, ["kernels", "--ladder", "tensor", "--arch", "sm_90", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    targets = {k["name"]: k["target"] for k in doc["kernels"]}
    assert doc["arch"] == "sm_90" and targets["mma_sync"] == "sm_90" and targets["wgmma_ws"] == "sm_90a"
    r = CliRunner().invoke(app, ["kernels", "--ladder", "tensor", "--arch", "sm_90"], env={"COLUMNS": "200"})
    assert "(sm_90, sm_90a where a kernel needs it, compiled through NVRTC)" in r.stdout
