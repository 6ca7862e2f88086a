"""Who launched each kernel of a PyTorch profiler trace (`traces.ops`), on public traces other
people recorded (tests/fixtures/traces/public/ and ops/, their SOURCES.md): a DDP ResNet training step on an A100,
a two-layer MLP's step on an MI250, AlexNet inference, a sampled recommendation model."""

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline.traces.ops import attribute, attribute_events

TRACES = Path(__file__).resolve().parent / "fixtures" / "traces"
DDP, SAMPLED = TRACES / "public" / "nccl_data.json.gz", TRACES / "public" / "sampled_rank-0.json.gz"
MLP, ALEXNET = TRACES / "ops" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz", TRACES / "ops" / "alexnet_trace.json.gz"


def _events(path: Path) -> list:
    return json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]


@pytest.mark.parametrize("path", [DDP, MLP, ALEXNET, SAMPLED], ids=lambda p: p.name.split(".")[0])
def test_every_kernel_is_counted_once(path):
    t = attribute(path)
    kernels = [e for e in _events(path) if e.get("cat") == "kernel"]
    assert len(t.launches) == len(kernels)
    assert t.time_us == pytest.approx(sum(e["dur"] for e in kernels))
    for key in ("op", "launcher", "module"):
        rows = t.by(key)
        assert sum(r.time_us for r in rows) == pytest.approx(t.time_us)
        assert sum(r.launches for r in rows) == len(kernels)


def test_the_mlp_step_by_hand():
    # The trace's own ops (aten::linear -> aten::addmm on the main thread; AddmmBackward0, sequence 5,
    # on the autograd thread; SGD's step): two linear layers' GEMMs, the backward GEMMs and
    # reductions owned by the forward linear, the optimizer's foreach add.
    t = attribute(MLP)
    assert t.owned_share == 1.0 and t.gpu == "AMD Radeon Graphics"
    rows = {(r.name, r.phase): r for r in t.by("op")}
    assert set(rows) == {("aten::linear", "forward"), ("aten::linear", "backward"), ("aten::relu", "forward"),
                         ("aten::relu", "backward"), ("aten::mse_loss", "forward"), ("aten::mse_loss", "backward"),
                         ("aten::ones_like", "forward"),
                         ("torch::autograd::AccumulateGrad", "backward"), ("aten::_foreach_add_", "optimizer")}
    gemm = next(x for x in t.launches if x.kernel.name.startswith("Cijk_"))  # rocBLAS's GEMM, forward
    assert (gemm.owner.op, gemm.owner.launcher, gemm.owner.phase) == ("aten::linear", "aten::addmm", "forward")
    backward = [x.owner for x in t.launches if x.owner.phase == "backward" and x.owner.op == "aten::linear"]
    assert {o.launcher for o in backward} == {"aten::mm", "aten::sum"} and {o.sequence for o in backward} == {5}


def test_backward_kernels_are_owned_by_the_op_pytorch_links_them_to():
    # PyTorch's own forward-backward links (fwdbwd flows from the op that made a node to the node)
    # and the sequence numbers agree on every node of the DDP step: attributing without the flows
    # gives every backward kernel the same owner.
    events = _events(DDP)
    with_flows = attribute_events(events)
    without = attribute_events([e for e in events if e.get("cat") != "fwdbwd"])
    pairs = [(a.owner, b.owner) for a, b in zip(with_flows.launches, without.launches) if a.owner.phase == "backward"]
    assert len(pairs) > 1000 and all(a == b for a, b in pairs)
    # the batch norm backward kernel of correlation 57541: under CudnnBatchNormBackward0, sequence 1403,
    # made by the forward aten::cudnn_batch_norm inside aten::batch_norm
    corr = {e["ts"]: e["args"]["correlation"] for e in events if e.get("cat") == "kernel"}
    bn = next(x.owner for x in with_flows.launches if corr[x.kernel.ts_us] == 57541)
    assert (bn.op, bn.phase, bn.launcher, bn.sequence) == ("aten::batch_norm", "backward",
                                                           "aten::cudnn_batch_norm_backward", 1403)


def test_inference_is_forward_work_only():
    t = attribute(ALEXNET)
    assert {x.owner.phase for x in t.launches} == {"forward"} and t.owned_share == 1.0
    top = t.by("op")[0]
    assert (top.name, top.launches) == ("aten::conv2d", 40)


def test_a_kernel_whose_launch_is_not_in_the_trace_has_no_owner():
    events = _events(MLP)
    gone = next(e["args"]["correlation"] for e in events if e.get("cat") == "kernel" and e["name"].startswith("Cijk_"))
    t = attribute_events([e for e in events if not (e.get("cat") == "cuda_runtime"
                                                   and e.get("args", {}).get("correlation") == gone)])
    lost = [x for x in t.launches if x.owner is None]
    assert len(lost) == 1 and t.owned_share == pytest.approx(1 - lost[0].kernel.dur_us / t.time_us)
    assert [(r.name, r.phase, r.launches) for r in t.by("op") if r.name == "(no owner)"] == [("(no owner)", "-", 1)]


def test_a_backward_node_whose_forward_op_the_trace_does_not_show_is_named_by_the_node():
    t = attribute(SAMPLED)  # a sampled step: some forward ops were not recorded
    named = {x.owner.op for x in t.launches if x.owner is not None and x.owner.phase == "backward"}
    assert "AddmmBackward0" in named
    assert t.notes == ["backward nodes whose forward op the trace does not show (outside it, or a custom autograd "
                       "function's) are named by the node"]
    # the embedding's custom autograd function: its forward op carries no sequence number, and ~50 other
    # forward ops carry its node's; none of those is named like the node, so the node names the kernels
    embedding = {x.owner.op for x in t.launches if "split_embedding_backward" in x.kernel.name}
    assert embedding == {"torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>"}


def test_show_prints_a_trace_by_op(tmp_path):
    r = CliRunner().invoke(app, ["show", str(MLP)], env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    assert "GPU time by op and phase on AMD Radeon Graphics" in r.stdout
    assert "100.0% of the GPU time" in r.stdout and "no module names in the trace" in r.stderr
    r = CliRunner().invoke(app, ["show", str(MLP), "--json"])
    doc = json.loads(r.stdout)
    assert doc["kind"] == "trace" and doc["modules"] is None
    assert sum(op["time_ms"] for op in doc["ops"]) == pytest.approx(doc["time_ms"])
    printed = Path(tmp_path) / "ops.json"  # what --json printed is a summary, not read back
    printed.write_text(r.stdout)
    again = CliRunner().invoke(app, ["show", str(printed)])
    assert again.exit_code == 2 and "a summary it does not read back; give the trace itself" in again.stderr
    r = CliRunner().invoke(app, ["whatif", str(MLP)])
    assert r.exit_code == 2 and "a PyTorch profiler trace, which show and comms read" in r.stderr
