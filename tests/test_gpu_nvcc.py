"""Kernel files compiled by nvcc and run on a real GPU: a whole program as a sample ships it (host
globals, <stdio.h>, <assert.h>, main()) graded unmodified, a GEMM kernel whose tile is a `-D` the
build gives run with `--compile-option`, nvcc's figures for a kernel agreeing with the driver's,
and the same file with NVRTC given the same option. Skipped without a GPU or without nvcc."""

import json

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from roofline.cli import app

pytestmark = [pytest.mark.gpu, pytest.mark.nvcc]

PROGRAMS = FIXTURES / "nvcc"


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_a_whole_program_with_host_code_is_graded_unmodified(tmp_path, nvcc_path):
    out = tmp_path / "grades.json"
    r = invoke("run", PROGRAMS / "saxpy_program.cu", "--compiler", "nvcc", "--budget", "0.3", "--out", out)
    assert r.exit_code == 0, r.output
    [e] = json.loads(out.read_text())["entries"]
    assert e["verified"] and e["error"] is None and len(e["checks"]) == 3, e
    assert e["compiler"].startswith("nvcc ") and e["registers"] > 0 and e["occupancy"]["occupancy"] > 0
    assert f"saxpy_program: compiled by {e['compiler']} for sm_" in r.stderr
    assert [f["code"] for f in e["flags"]] == [], e["flags"]


def test_a_gemm_kernel_that_needs_a_define_runs_with_compile_option(tmp_path, nvcc_path):
    out = tmp_path / "r.json"
    path = PROGRAMS / "tile_sgemm_macro.cu"
    r = invoke("run", path, "--compile-option=-DTILE=16", "--size", "1024", "--out", out)
    assert r.exit_code == 0, r.output
    [k] = json.loads(out.read_text())["kernels"]
    assert k["verified"] and k["ragged"]["passed"] and k["gflops"] > 0, k
    assert k["compiler"].startswith("nvcc ") and k["source"]["options"] == "-DTILE=16"
    assert k["static_smem_bytes"] == 2 * 16 * 16 * 4 and k["registers"] > 0
    assert k["occupancy"]["active_blocks_per_sm"] == k["driver_active_blocks_per_sm"]
    assert "tile_sgemm_macro: compiled by nvcc " in r.stderr and "with -DTILE=16" in r.stderr
    offline = invoke("kernels", path, "--arch", k["occupancy"]["arch"], "--compile-option=-DTILE=16", "--json")
    [listed] = json.loads(offline.stdout)["kernels"]
    assert (listed["registers"], listed["static_smem_bytes"]) == (k["registers"], k["static_smem_bytes"])
    r = invoke("run", path, "--size", "1024", "--out", tmp_path / "without.json")
    assert r.exit_code == 1 and "compile with -DTILE=N" in r.stderr and "Traceback" not in r.output


def test_nvrtc_takes_the_same_define(tmp_path):
    out = tmp_path / "r.json"
    r = invoke("run", PROGRAMS / "tile_sgemm_macro.cu", "--compiler", "nvrtc", "--compile-option=-DTILE=16",
               "--size", "1024", "--out", out)
    assert r.exit_code == 0, r.output
    [k] = json.loads(out.read_text())["kernels"]
    assert k["verified"] and k["compiler"].startswith("NVRTC ") and k["source"]["compiler"] == "nvrtc"
