"""A JAX program's kernels owned by XLA's HLO instructions (`traces.hlo`): checked against XLA's own
thunk list of a real step profiled on an H100 (`fixtures/xla/jax-step-h100`), the name stack's
reading, the line-up's loops and library kernels, the environment a profile gives the program, and
the command line."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from roofline import nsight
from roofline.cli import app
from roofline.errors import UsageError
from roofline.nsight import run as ncu_run
from roofline.results import store
from roofline.traces import hlo

STEP = FIXTURES / "xla" / "jax-step-h100"
DUMP = STEP / "dump"
CSV = STEP / "jax-step-raw.csv"


def invoke(*args):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def _thunks() -> list[str]:
    """The HLO instruction of each of the step's kernel-launching thunks, in XLA's order."""
    text = (STEP / "module_9950.jit_step.thunk_metadata.txt").read_text()
    found = re.findall(r'profile_annotation: "([^"]*)"\s*thunk_id: \d+\s*\}\s*thunk_kind: "(\w+)"', text)
    return [name for name, kind in found if kind in ("kCustomKernel", "kKernel", "kCublasLtMatmul")]


def test_every_launch_of_the_step_is_the_instruction_xla_says_ran_it():
    launches = sorted(nsight.read(CSV).launches, key=lambda x: x.order)
    placed = hlo.line_up([x.demangled for x in launches], hlo.read_dump(DUMP))
    expected = _thunks()
    assert len(launches) == len(expected) == 30
    # the 16 modules of the dump share kernel names (loop_broadcast_fusion...); cuBLAS's nvjet kernels
    # carry no HLO name and are placed at the cuBLAS calls between named launches
    assert [p.name for p in placed] == expected
    assert {p.opcode for x, p in zip(launches, placed) if x.demangled.startswith("nvjet")} == {"custom-call"}


def test_owners_read_from_the_name_stack_of_a_real_step():
    launches = sorted(nsight.read(CSV).launches, key=lambda x: x.order)
    source, owners, notes = hlo.attribute(launches, DUMP)
    # the export holds XLA's own NVTX range around each launch, which names its instruction (and agrees with
    # the line-up by names, above)
    assert all(o is not None for o in owners)
    assert notes == ["30 launches placed by the NVTX range XLA opened around each (its thunk's instruction)"]
    bare = [dataclasses.replace(x, nvtx=None) for x in launches]
    assert hlo.attribute(bare, DUMP)[1] == owners  # the line-up alone: the same owners
    by_kernel = {}
    for x, o in zip(launches, owners):
        by_kernel.setdefault(x.demangled, o)  # a kernel's first launch
    # jit(step)/jvp(loss)/layer1/mul: forward, the loss scope and the layer inside it
    assert by_kernel["loop_convert_multiply_fusion"].module == "loss.layer0"
    softmax = by_kernel["triton_softmax_1"]  # jit(step)/jvp(loss)/jit(log_softmax)/sub
    assert (softmax.op, softmax.phase, softmax.module, softmax.launcher) == ("log_softmax", "forward", "loss", "sub")
    scatter = by_kernel["input_scatter_fusion"]  # jit(step)/transpose(jvp(loss))/jit(take_along_axis)/scatter-add
    assert (scatter.op, scatter.phase, scatter.module) == ("take_along_axis", "backward", "loss")
    # jit(step)/sgd/sub reads a weight and its gradient, outside jvp and transpose: the optimizer's, as XLA's
    # schedule interleaves it with the backward pass
    sgd = by_kernel["loop_subtract_fusion_3"]
    assert (sgd.op, sgd.phase, sgd.module) == ("sub", "optimizer", "sgd")
    phases = {}
    for o in owners:
        phases[o.phase] = phases.get(o.phase, 0) + 1
    # the six weight and bias updates; everything under jvp(loss) forward, under transpose(...) backward
    assert phases == {"forward": 10, "backward": 14, "optimizer": 6}
    assert all(o.phase == "optimizer" for o in owners if o.module == "sgd")


def test_an_imported_step_is_owned_whole_by_op_and_module(tmp_path):
    out = tmp_path / "jax.json"
    r = invoke("profile", "--import", str(CSV), "--trace", str(DUMP), "--out", str(out))
    assert r.exit_code == 0, r.output
    doc = store.load(out, profile=True)
    a = doc.attribution
    assert a.source == hlo.SOURCE and a.time_ms == pytest.approx(doc.total_time_ms)
    layer1 = sum(w.time_ms for w in a.owned if w.module == "loss.layer1")
    # layer1's forward GEMM, its two backward GEMMs and its elementwise work: 1.192 ms of 1.709 on the H100
    assert layer1 == pytest.approx(1.192, abs=0.002) and doc.total_time_ms == pytest.approx(1.709, abs=0.002)
    backward = {w.op for w in a.owned if w.phase == "backward" and w.module == "loss.layer1"}
    assert backward == {"dot_general", "transpose", "reduce_sum"}
    r = invoke("show", str(out), "--by", "module")
    assert r.exit_code == 0 and "layer1" in r.output and "100.0% of the profiled GPU time" in r.output


@pytest.mark.parametrize("op_name, expected", [
    ("jit(step)/jvp(loss)/layer0/dot_general", ("dot_general", "forward", "loss.layer0", "dot_general")),
    ("jit(step)/transpose(jvp(loss))/layer0/jit(gelu)/mul", ("gelu", "backward", "loss.layer0", "mul")),
    ("jit(train)/jit(main)/Model/Dense_0/dot_general[dimension_numbers=(([1], [0]), ([], []))]",
     ("dot_general", "forward", "Model.Dense_0", "dot_general")),
    ("jit(step)/while/body/transpose(jvp(Block))/attn/dot_general", ("dot_general", "backward", "Block.attn",
                                                                     "dot_general")),
    ("jit(f)/add", ("add", "forward", None, "add")),
    ("jit(f)/reduce_precision[exponent_bits=8 mantissa_bits=7 a/b]", ("reduce_precision", "forward", None,
                                                                     "reduce_precision")),
])
def test_the_name_stack_is_read_into_op_phase_and_module(op_name, expected):
    o = hlo.owner(op_name)
    assert (o.op, o.phase, o.module, o.launcher) == expected
    assert hlo.owner(None) is None and hlo.owner("") is None


LOOP = """HloModule jit_scan, entry_computation_layout={()->f32[]}

%fused_mul (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %m = f32[8]{0} multiply(%p, %p)
}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%body (t: (s32[], f32[8])) -> (s32[], f32[8]) {
  %t = (s32[], f32[8]{0}) parameter(0)
  %x = f32[8]{0} get-tuple-element(%t), index=1
  %loop_multiply_fusion = f32[8]{0} fusion(%x), kind=kLoop, calls=%fused_mul, metadata={op_name="jit(f)/while/body/layer/mul"}
  %cublas-gemm.1 = f32[8]{0} custom-call(%loop_multiply_fusion), custom_call_target="__cublas$gemm", metadata={op_name="jit(f)/while/body/layer/dot_general"}
  ROOT %r = (s32[], f32[8]{0}) tuple(%i, %cublas-gemm.1)
}

ENTRY %main (x: f32[8]) -> f32[] {
  %x = f32[8]{0} parameter(0)
  %loop_negate_fusion = f32[8]{0} fusion(%x), kind=kLoop, calls=%fused_mul, metadata={op_name="jit(f)/neg"}
  %w = (s32[], f32[8]{0}) while(%t), condition=%cond, body=%body
  %input_reduce_fusion = f32[] fusion(%w), kind=kInput, calls=%fused_mul, metadata={op_name="jit(f)/reduce_sum"}
  ROOT %all = f32[] all-reduce(%input_reduce_fusion), to_apply=%add, metadata={op_name="jit(f)/psum"}
}
"""


def test_a_loop_body_runs_again_and_the_entry_resumes_after_it():
    comps = hlo.parse(LOOP)
    assert [[op.name for op in c] for c in comps] == [["loop_multiply_fusion", "cublas-gemm.1"],
                                                     ["loop_negate_fusion", "input_reduce_fusion", "all"]]
    names = ["loop_negate_fusion", *["loop_multiply_fusion", "sm90_gemm", "splitKreduce"] * 3,
             "input_reduce_fusion", "ncclDevKernel_AllReduce"]
    placed = [p.name if p else None for p in hlo.line_up(names, comps)]
    assert placed == ["loop_negate_fusion", *["loop_multiply_fusion", "cublas-gemm.1", "cublas-gemm.1"] * 3,
                      "input_reduce_fusion", "all"]
    owners, notes = hlo.owners(names, comps)
    assert owners[2].module == "layer" and owners[2].op == "dot_general" and owners[-1].op == "psum"
    assert notes == []


def test_launches_of_no_dumped_module_are_unowned_and_said_so():
    comps = hlo.parse(LOOP)
    owners, notes = hlo.owners(["vectorized_elementwise_kernel"], comps)
    assert owners == [None] and "match no instruction" in notes[0]


def test_a_text_that_is_no_module_and_a_folder_without_hlo_are_refused(tmp_path):
    with pytest.raises(UsageError, match="not an HLO module"):
        hlo.parse("hello")
    with pytest.raises(UsageError, match="no optimized HLO"):
        hlo.read_dump(tmp_path)
    with pytest.raises(UsageError, match="no such folder"):
        hlo.read_dump(tmp_path / "missing")


def test_a_profile_asks_xla_for_its_hlo_in_a_folder_of_its_own_or_the_users(tmp_path):
    env = ncu_run.ops_env({"XLA_FLAGS": "--xla_gpu_autotune_level=0"}, tmp_path / "xla")
    assert env["XLA_FLAGS"].split() == ["--xla_gpu_autotune_level=0", f"--xla_dump_to={tmp_path / 'xla'}",
                                        "--xla_dump_hlo_as_text"]
    # the user's own dump folder is kept, and read from
    theirs = {"XLA_FLAGS": "--xla_dump_to=/tmp/mine --xla_dump_hlo_as_text"}
    assert ncu_run.ops_env(theirs, tmp_path / "xla")["XLA_FLAGS"] == theirs["XLA_FLAGS"]
    assert ncu_run.xla_dump_folder(theirs["XLA_FLAGS"]) == Path("/tmp/mine")
    assert ncu_run.xla_dump_folder("--xla_dump_to=-") is None and ncu_run.xla_dump_folder("") is None
    assert "XLA_FLAGS" not in ncu_run.ops_env({}, None)


FAKE_XLA = f"""
import os, re, shutil, signal, sys
from pathlib import Path
folder = Path(re.search(r"--xla_dump_to=(\\S+)", os.environ["XLA_FLAGS"])[1])
folder.mkdir(parents=True, exist_ok=True)
for f in Path({str(DUMP)!r}).iterdir():
    shutil.copy(f, folder / f.name)
runs = Path("runs.txt")
runs.write_text(runs.read_text() + "run\\n" if runs.exists() else "run\\n")
if sys.argv[1:] == ["crash-once"] and runs.read_text().count("run") == 1 or sys.argv[1:] == ["crash"]:
    os.kill(os.getpid(), signal.SIGSEGV)
"""


@pytest.fixture
def fake_ncu(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "ncu"
    exe.write_text(f"#!{sys.executable}\n" + (FIXTURES / "ncu" / "fake_ncu.py").read_text())
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NCU_CSV", str(CSV))
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    monkeypatch.setenv("FAKE_NCU_ARGS", str(tmp_path / "args.txt"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.py").write_text(FAKE_XLA)
    return tmp_path


def test_a_new_profile_of_an_xla_program_is_owned_by_its_hlo(fake_ncu):
    # a stand-in ncu runs a stand-in program that dumps the step's HLO where XLA_FLAGS says, and reports
    # the launches of the real profile: the whole step is owned by op and module
    r = invoke("profile", "--out", "p.json", "--", sys.executable, "prog.py")
    assert r.exit_code == 0, r.output
    doc = store.load(fake_ncu / "p.json", profile=True)
    a = doc.attribution
    assert a is not None and a.source == hlo.SOURCE and sum(w.launches for w in a.owned) == 30
    assert (fake_ncu / "runs.txt").read_text().count("run") == 1 and "all" in (fake_ncu / "args.txt").read_text()
    assert not any("followed its child processes" in n for n in doc.notes)


def test_an_xla_program_that_crashes_under_ncu_is_profiled_again_without_its_children(fake_ncu):
    r = invoke("profile", "--out", "p.json", "--", sys.executable, "prog.py", "crash-once")
    assert r.exit_code == 0, r.output
    assert (fake_ncu / "runs.txt").read_text().count("run") == 2
    args = (fake_ncu / "args.txt").read_text().split("\n")
    assert args[args.index("--target-processes") + 1] == "application-only"
    doc = store.load(fake_ncu / "p.json", profile=True)
    assert any("it was profiled again following its own process alone" in n for n in doc.notes)
    assert doc.attribution is not None and doc.attribution.source == hlo.SOURCE


def test_a_crash_is_retried_where_the_users_own_xla_flags_dump_and_said_when_it_crashes_again(fake_ncu, monkeypatch):
    mine = fake_ncu / "my-dump"
    monkeypatch.setenv("XLA_FLAGS", f"--xla_dump_to={mine} --xla_dump_hlo_as_text")
    r = invoke("profile", "--out", "p.json", "--", sys.executable, "prog.py", "crash-once")
    assert r.exit_code == 0, r.output
    assert any(f.name.endswith("after_optimizations.txt") for f in mine.iterdir())  # the user's folder, kept
    assert store.load(fake_ncu / "p.json", profile=True).attribution.source == hlo.SOURCE
    r = invoke("profile", "--out", "q.json", "--", sys.executable, "prog.py", "crash")
    assert r.exit_code == 1 and ("crashed (signal 11, SIGSEGV) before any kernel was profiled, and again when "
                                 "profiled following its own process alone") in r.output


def test_a_python_program_that_crashes_without_ops_is_not_run_again_and_told_why(fake_ncu):
    crash = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    r = invoke("profile", "--no-ops", "--out", "p.json", "--", sys.executable, "-c", crash)
    assert r.exit_code == 1 and "crashed (signal 11, SIGSEGV) before any kernel was profiled" in r.output
    assert "a JAX program crashes so under ncu" in r.output and "--no-ops" not in r.output
    # with ops on, a program that is not XLA's (it dumped nothing) is run once, and not told about JAX
    r = invoke("profile", "--out", "p.json", "--", sys.executable, "-c", crash)
    assert r.exit_code == 1 and "JAX" not in r.output and "PyTorch's profiler" not in r.output


def test_a_dump_folder_without_hlo_or_of_another_program_is_refused(tmp_path):
    r = invoke("profile", "--import", str(CSV), "--trace", str(tmp_path), "--out", str(tmp_path / "p.json"))
    assert r.exit_code == 2 and "no optimized HLO" in r.output and not (tmp_path / "p.json").exists()
    other = tmp_path / "other"
    other.mkdir()
    (other / "m.sm_9.0a_gpu_after_optimizations.txt").write_text(
        LOOP.replace("loop_negate_fusion", "loop_abs_fusion").replace("input_reduce_fusion", "input_max_fusion"))
    r = invoke("profile", "--import", str(CSV), "--trace", str(other), "--out", str(tmp_path / "p.json"))
    assert r.exit_code == 2 and "is it the dump of the program the report profiled?" in r.output
    assert not (tmp_path / "p.json").exists()
    # a real dump of another program (the Flax step's), whose generic fusion names (loop_convert_multiply_fusion,
    # input_reduce_fusion) match some launches: refused by the 28 % of XLA's own kernel names it lacks
    flax = FIXTURES / "xla" / "flax-scan-h100" / "module_25820.jit_step.sm_9.0a_gpu_after_optimizations.txt.gz"
    r = invoke("profile", "--import", str(CSV), "--trace", str(flax), "--out", str(tmp_path / "p.json"))
    assert r.exit_code == 2 and "28% of the launches XLA named after its own instructions" in " ".join(r.output.split())
    assert not (tmp_path / "p.json").exists()


def test_one_module_file_gzipped_or_not_is_a_dump_too(tmp_path):
    import gzip

    step = DUMP / "module_9950.jit_step.sm_9.0a_gpu_after_optimizations.txt"
    packed = tmp_path / (step.name + ".gz")
    packed.write_bytes(gzip.compress(step.read_bytes()))
    for given in (step, packed):
        r = invoke("profile", "--import", str(CSV), "--trace", str(given), "--out", str(tmp_path / "p.json"))
        assert r.exit_code == 0, r.output
        a = store.load(tmp_path / "p.json", profile=True).attribution
        assert a.source == hlo.SOURCE and sum(w.launches for w in a.owned) == 30
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / step.name).write_bytes(step.read_bytes())
    (locked / step.name).chmod(0)
    if os.access(locked / step.name, os.R_OK):  # root reads anything
        return
    r = invoke("profile", "--import", str(CSV), "--trace", str(locked), "--out", str(tmp_path / "q.json"))
    assert r.exit_code == 2 and "cannot read it" in r.output


def test_xla_names_its_own_kernels_apart_from_libraries():
    assert all(map(hlo.xla_named, ["loop_add_fusion_2", "gemm_fusion_dot_3", "triton_softmax_1", "wrapped_subtract",
                                   "input_reduce_fusion", "fusion_12"]))
    assert not any(map(hlo.xla_named, ["nvjet_sm90_tst_256x128", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                       "vectorized_elementwise_kernel"]))


def test_a_flax_scan_step_is_read_into_flax_modules():
    # XLA's optimized HLO of a Flax LM whose blocks are one nn.scan (examples/ops/flax_step.py scan, on an
    # H100): two while loops (forward and backward), Flax module names as scopes, jnp.einsum's subscripts
    import gzip

    text = gzip.decompress((FIXTURES / "xla" / "flax-scan-h100" /
                            "module_25820.jit_step.sm_9.0a_gpu_after_optimizations.txt.gz").read_bytes()).decode()
    comps = hlo.parse(text)
    sizes = {c[0].computation: len(c) for c in comps}
    assert sizes["main.98"] == 72 and sizes["region_1.32"] == 67 and sizes["region_24.94"] == 78  # entry, 2 bodies
    owners = [hlo.owner(op.op_name, op.opcode) for c in comps for op in c]
    modules = {o.module for o in owners if o is not None}
    block = "LM.ScanScanned_0.Block_0"
    assert {f"{block}.Dense_0", f"{block}.Dense_1", f"{block}.LayerNorm_1",
            f"{block}.MultiHeadDotProductAttention_0.query"} <= modules
    assert not any("eval_jaxpr" in m or "->" in m or ".." in m for m in modules if m)  # plumbing and einsums are no module
    ops = {(o.op, o.phase) for o in owners if o is not None}
    assert {("einsum ...qhd,...khd->...hqk", "forward"), ("einsum ...hqk,...khd->...qhd", "backward"),
            ("log_softmax", "backward"), ("dot_general", "backward")} <= ops
    # SGD's 19 updates (jit(step)/sub, under no scope) read the gradients the backward loop made: the optimizer's
    updates = [op for c in comps for op in c if op.op_name and hlo.owner(op.op_name, op.opcode, op.update).phase ==
               "optimizer"]
    assert len(updates) == 19 and {op.op_name for op in updates} == {"jit(step)/sub"}
    # the instructions that carry no metadata at all, nor any of their fused instructions (broadcasts of
    # constants, copies): 15 of the 248 that may launch kernels
    assert sum(o is None for o in owners) == 15 and len(owners) == 248


def test_comparing_ops_across_programs_gpus_and_roofs_says_so(tmp_path):
    # the JAX step (H100, measured ceilings) against its own report imported here (datasheet roofs), and
    # against the Llama step (H200): notes say what moves a row besides the program
    imported = tmp_path / "imported.json"
    assert invoke("profile", "--import", str(CSV), "--trace", str(DUMP), "--out", str(imported)).exit_code == 0
    jax = Path(__file__).resolve().parents[1] / "plots" / "profile-h100-jax-ops.json"
    llama = jax.with_name("profile-h200-llama-ops.json")
    r = invoke("compare", str(jax), str(imported), "--by", "op", "--json")
    notes = " ".join(json.loads(r.stdout)["notes"])
    assert "'x floor' reads measured ceilings in the first file and datasheet roofs in the other" in notes
    r = invoke("compare", str(jax), str(llama), "--by", "module", "--json")
    notes = " ".join(json.loads(r.stdout)["notes"])
    assert "different GPUs: NVIDIA H100 80GB HBM3 before, NVIDIA H200 after" in notes
    assert "the profiles record different commands" in notes and "the profiles share no module" in notes


def test_xlas_own_nvtx_range_places_a_launch_where_the_line_up_cannot():
    # a report made with ncu --nvtx holds XLA's thunk ranges (as the H100 step's CSV export shows them):
    # the instruction they name owns the launch, even where the name says nothing (a library kernel)
    from dataclasses import replace

    launches = sorted(nsight.read(CSV).launches, key=lambda x: x.order)
    ranges = ("TSL:XlaModule:#hlo_module=jit_step,program_id=9950#:none:none:none:none:REGISTERED:XlaModule",
              "TSL:Thunk:#name=jit(step)/transpose(jvp(loss))/layer1/transpose,hlo_op=custom-call.0,"
              "unique_hlo_op_id=77309411380#:none:none")
    assert hlo.thunk_of(ranges) == ("jit_step", "custom-call.0") and hlo.thunk_of(None) is None
    alone = [replace(launches[0], name="mystery", demangled="mystery_kernel", nvtx=ranges)]
    source, owners, notes = hlo.attribute(alone, DUMP)
    assert (owners[0].op, owners[0].phase, owners[0].module) == ("transpose", "backward", "loss.layer1")
    assert "1 launch placed by the NVTX range XLA opened around each" in notes[-1]


ODD = """HloModule jit_odd, entry_computation_layout={()->f32[]}

%host_side (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %copy.9 = f32[8]{0} copy(%p)
}, execution_thread="host"

%fused_mul (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %m = f32[8]{0} multiply(%p, %p)
} // fused_mul

%command_buffer (a: f32[8]) -> f32[8] {
  %a = f32[8]{0} parameter(0)
  ROOT %loop_multiply_fusion = f32[8]{0} fusion(%a), kind=kLoop, calls=%fused_mul, metadata={op_name="jit(f)/mul"}
}

ENTRY %main (x: f32[8]) -> f32[] {
  %x = f32[8]{0} parameter(0)
  %call = f32[8]{0} call(%x), to_apply=%command_buffer
  %cublas-gemm.1 = f32[8]{0} custom-call(%call), custom_call_target="__cublas$gemm", metadata={op_name="jit(f)/layer0/dot_general"}
  %rs-start = f32[8]{0} reduce-scatter-start(%cublas-gemm.1), metadata={op_name="jit(f)/layer0/reduce_scatter"}
  %rs-done = f32[8]{0} reduce-scatter-done(%rs-start), metadata={op_name="jit(f)/layer0/reduce_scatter"}
  %cublas-gemm.2 = f32[8]{0} custom-call(%rs-done), custom_call_target="__cublas$gemm", metadata={op_name="jit(f)/layer1/dot_general"}
  ROOT %loop_negate_fusion = f32[] fusion(%cublas-gemm.2), kind=kLoop, calls=%fused_mul, metadata={op_name="jit(f)/neg"}
}
"""


def test_closing_braces_with_more_after_them_calls_and_async_pairs():
    # XLA prints '}, execution_thread="host"' and '} // name' after some computations; a call's to_apply
    # computation runs (a command buffer's); an asynchronous pair's '-done' launches nothing
    comps = hlo.parse(ODD)
    assert [[op.name for op in c] for c in comps] == [  # the host's computation launches no kernel
        ["loop_multiply_fusion"], ["cublas-gemm.1", "rs-start", "cublas-gemm.2", "loop_negate_fusion"]]
    names = ["loop_multiply_fusion", "nvjet_a", "ncclDevKernel_ReduceScatter", "nvjet_b", "loop_negate_fusion"]
    placed = [p.name for p in hlo.line_up(names, comps)]
    assert placed == ["loop_multiply_fusion", "cublas-gemm.1", "rs-start", "cublas-gemm.2", "loop_negate_fusion"]


UPDATES = """HloModule jit_step, entry_computation_layout={()->f32[]}

%fused (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %m = f32[8]{0} multiply(%p, %p), metadata={op_name="jit(step)/transpose(jvp(loss))/mul"}
}

%body (t: (s32[], f32[8])) -> (s32[], f32[8]) {
  %t = (s32[], f32[8]{0}) parameter(0)
  %g = f32[8]{0} get-tuple-element(%t), index=1
  %loop_multiply_fusion = f32[8]{0} fusion(%g), kind=kLoop, calls=%fused
  ROOT %r = (s32[], f32[8]{0}) tuple(%i, %loop_multiply_fusion)
}

ENTRY %main (x: f32[8], w: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %w = f32[8]{0} parameter(1)
  %loop_scale_fusion = f32[8]{0} fusion(%x), kind=kLoop, calls=%fused_scale, metadata={op_name="jit(step)/augment/mul"}
  %fwd_fusion = f32[8]{0} fusion(%loop_scale_fusion, %w), kind=kLoop, calls=%fused_fwd, metadata={op_name="jit(step)/jvp(loss)/dense/mul"}
  %loop = (s32[], f32[8]{0}) while(%t), condition=%cond, body=%body
  %grad = f32[8]{0} get-tuple-element(%loop), index=1
  %norm_fusion = f32[] fusion(%grad), kind=kInput, calls=%fused_norm, metadata={op_name="jit(step)/clip/reduce_sum"}
  %update_fusion = f32[8]{0} fusion(%w, %norm_fusion), kind=kLoop, calls=%fused_update, metadata={op_name="jit(step)/adam/sub"}
  %metric_fusion = f32[] fusion(%fwd_fusion), kind=kInput, calls=%fused_metric, metadata={op_name="jit(step)/metrics/reduce_sum"}
  ROOT %out = (f32[8]{0}, f32[]) tuple(%update_fusion, %metric_fusion)
}
"""


def test_what_reads_a_gradient_outside_differentiation_is_the_optimizers():
    # a loop holding the backward pass; what reads its result through any chain (clipping, then the update) is
    # the optimizer's; a data step before the forward and a metric of the forward's output stay forward
    comps = hlo.parse(UPDATES)
    phases = {op.name: hlo.owner(op.op_name, op.opcode, op.update).phase for c in comps for op in c
              if op.op_name or op.update}
    assert phases == {"loop_scale_fusion": "forward", "fwd_fusion": "forward", "norm_fusion": "optimizer",
                      "update_fusion": "optimizer", "metric_fusion": "forward", "loop_multiply_fusion": "backward"}
    owner = hlo.owner("jit(step)/adam/sub", "", update=True)
    assert (owner.op, owner.module) == ("sub", "adam")
    # a program that differentiates nothing has no optimizer
    assert not any(op.update for c in hlo.parse(LOOP) for op in c)


@pytest.mark.parametrize("op_name, expected", [
    ("jit(f)/foo/cond/branch_1_fun/true/add", ("add", "foo.true")),  # lax.cond's branch
    ("jit(f)/vmap(jvp(foo))/while/body_pred/bar_cond/lt", ("lt", "foo.bar_cond")),  # a while loop's predicate
    ("jit(step)/jvp(M)/closed_call/layers/fc/dot_general", ("dot_general", "M.layers.fc")),  # older JAX's scan body
    ("jit(step)/transpose(jvp(M))/jvp(M)/checkpoint/rdense/dot_general", ("dot_general", "M.rdense")),  # nn.remat
    ("jit(f)/ij, jk -> ik/dot_general", ("einsum ij,jk->ik", None)),  # einsum's subscripts as the user wrote them
    ("jit(f)/ij,jk/dot_general", ("einsum ij,jk", None)),  # an implicit output
    ('jit(f)/say \\"hi\\"/add', ("add", 'say "hi"')),  # the printer's escaped quotes
])
def test_control_flow_remat_einsum_and_escapes_are_no_modules(op_name, expected):
    o = hlo.owner(op_name)
    assert (o.op, o.module) == expected


def test_a_dump_folder_skips_what_is_no_gpu_module(tmp_path):
    step = (DUMP / "module_9950.jit_step.sm_9.0a_gpu_after_optimizations.txt").read_text()
    (tmp_path / "module_9950.jit_step.sm_9.0a_gpu_after_optimizations.txt").write_text("\ufeff" + step)  # a BOM
    (tmp_path / "module_9999.jit_cut.sm_9.0a_gpu_after_optimizations.txt").write_text("")  # cut short by a crash
    (tmp_path / "module_0001.jit_host.cpu_after_optimizations.txt").write_text(ODD)  # the host's CPU module
    (tmp_path / "module_0002.jit_dir.sm_9.0a_gpu_after_optimizations.txt").mkdir()
    os.mkfifo(tmp_path / "module_0003.jit_pipe.sm_9.0a_gpu_after_optimizations.txt")  # would block a read
    comps = hlo.read_dump(tmp_path)
    assert len(comps) == 1 and comps[0][0].module == "jit_step" and len(comps[0]) == 30


@pytest.mark.parametrize("args", [["show"], ["plot", "--out", "x.png"], ["whatif"]])
def test_commands_that_read_results_say_what_an_hlo_file_is(tmp_path, args):
    step = DUMP / "module_9950.jit_step.sm_9.0a_gpu_after_optimizations.txt"
    r = invoke(*args[:1], str(step), *args[1:])
    assert r.exit_code == 2 and "XLA's HLO text, not a results file" in r.output
    assert "--trace" in r.output and "Traceback" not in r.output
    r = invoke(*args[:1], str(STEP / "module_9950.jit_step.thunk_metadata.txt"), *args[1:])  # another file of a dump
    assert r.exit_code == 2 and "a file of an XLA dump folder, not a results file" in r.output
