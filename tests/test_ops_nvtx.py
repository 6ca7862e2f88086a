"""Who launched each profiled kernel, from the NVTX ranges Nsight Compute recorded (`traces.nvtx`),
a PyTorch profiler trace lined up with a profile (`traces.join`), and the op and module views
(`analysis.owners`, `show --by`): on a Hugging Face Llama training step profiled on the H200
(tests/fixtures/ops, SOURCES.md), checked against PyTorch's own profiler on the same step."""

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.analysis.owners import by_owner
from roofline.cli import app
from roofline.model.device import from_preset
from roofline.nsight.launches import Launch
from roofline.results import convert, store
from roofline.traces.join import join
from roofline.traces.nvtx import owners, parse
from roofline.traces.ops import attribute

OPS = Path(__file__).resolve().parent / "fixtures" / "ops"
STACKS, TRACE = OPS / "llama-h200-nvtx.json.gz", OPS / "llama-h200-trace.json.gz"


def _launches() -> list[dict]:
    return json.loads(gzip.decompress(STACKS.read_bytes()))["launches"]


def _owners():
    launches = _launches()
    found, notes = owners([(x["id"], x["nvtx"]) for x in launches])
    return launches, found, notes


def test_pytorchs_range_texts_are_read():
    r = parse("aten::linear, seq = 634, op_id = 6158")
    assert (r.name, r.seq, r.op_id, r.module) == ("aten::linear", 634, 6158, False)
    assert parse("aten::gather, op_id = 5795").seq is None
    assert parse("aten::mm, seq = -1, sizes = [[4, 8], [8, 2]]").name == "aten::mm"
    node = parse("autograd::engine::evaluate_function: MulBackward0, op_id = 6278")
    assert (node.name, node.seq, node.op_id) == ("autograd::engine::evaluate_function: MulBackward0", None, 6278)
    assert parse("Optimizer.step#AdamW.step, op_id = 7316").name == "Optimizer.step#AdamW.step"
    m = parse("roofline.module LlamaForCausalLM.model.layers.1.mlp")
    assert m.module and m.name == "LlamaForCausalLM.model.layers.1.mlp"


def test_every_launch_of_the_llama_step_has_an_owner():
    launches, found, notes = _owners()
    assert len(launches) == 329 and all(o is not None for o in found)
    def phase(stack):  # read from the texts alone: the outermost range says it
        first = stack[0] if stack else ""
        return ("backward" if first.startswith("autograd::engine::evaluate_function: ") else
                "optimizer" if first.startswith("Optimizer.") else "forward")

    assert [o.phase for o in found] == [phase(x["nvtx"]) for x in launches]
    assert Counter(o.phase for o in found) == {"forward": 109, "backward": 180, "optimizer": 40}
    assert notes == []  # every backward node tied to a forward op, or named after its view op


def test_backward_kernels_are_owned_by_the_forward_op_and_its_module():
    launches, found, _ = _owners()
    gemms = [(x, o) for x, o in zip(launches, found) if x["kernel"].startswith("nvjet")]
    forward = {o.module for _, o in gemms if o.phase == "forward"}
    backward = [o for _, o in gemms if o.phase == "backward"]
    # every backward GEMM (the two of each projection's input and weight gradients) is aten::linear's, in a
    # module whose forward GEMM the profile holds
    assert backward and all(o.op == "aten::linear" for o in backward)
    assert {o.module for o in backward} <= forward and len({o.module for o in backward}) == len(forward)
    # a broadcast gradient summed after MulBackward0 returned: named by its node's other kernels' number
    after = [o for x, o in zip(launches, found)
             if x["nvtx"][:1] and x["nvtx"][0].startswith("autograd::engine::evaluate_function: MulBackward0")
             and x["nvtx"][1].startswith("aten::sum")]
    assert len(after) == 10 and all(o.op == "aten::mul" and o.sequence for o in after)


def test_nvtx_and_pytorchs_profiler_agree_on_the_owner_of_327_of_329_launches():
    # Two ways to the same answer, made in two processes: the profile's NVTX stacks, and PyTorch's
    # profiler trace lined up kernel for kernel. The two left: gradients added up after an input
    # view's node, whose number lies between its neighbours' where more than one op was open.
    launches, found, _ = _owners()
    joined, notes = join([x["kernel"] for x in launches], [x["id"] for x in launches], attribute(TRACE))
    assert notes == [] and all(o is not None for o in joined)
    differ = Counter((a.op, b.op) for a, b in zip(found, joined) if (a.op, a.phase) != (b.op, b.phase))
    assert differ == {("aten::view", "aten::linear"): 2}


# (model, launches, phases, share of the time owned by a module or the optimizer, launches the trace
# gives another op): one training step each of three public models on the H200 (SOURCES.md)
STEPS = [("llama", 329, {"forward": 109, "backward": 180, "optimizer": 40}, 0.9973, 2),
         ("resnet", 456, {"forward": 211, "backward": 242, "optimizer": 3}, 0.9998, 0),  # 2026-12-07, the loss a module
         ("gcn", 80, {"forward": 54, "backward": 19, "optimizer": 7}, 0.9996, 0)]


@pytest.mark.parametrize("model, count, phases, by_module, differ", STEPS, ids=[s[0] for s in STEPS])
def test_three_public_models_are_owned_by_op_and_module(model, count, phases, by_module, differ):
    launches = json.loads(gzip.decompress((OPS / f"{model}-h200-nvtx.json.gz").read_bytes()))["launches"]
    found, notes = owners([(x["id"], x["nvtx"]) for x in launches])
    time = [x["time_ns"] for x in launches]
    assert len(launches) == count and all(o is not None and o.op for o in found) and notes == []
    assert Counter(o.phase for o in found) == phases
    moduled = sum(t for t, o in zip(time, found) if o.module or o.phase == "optimizer") / sum(time)
    assert moduled == pytest.approx(by_module, abs=5e-5)
    # what no module owns is the training script's own work: the loss outside the model, the seed of
    # backward (ones_like), and Llama's two view gradients above
    outside = {o.op for o in found if not (o.module or o.phase == "optimizer")}
    assert outside <= {"aten::cross_entropy_loss", "aten::ones_like", "aten::view"}
    joined, said = join([x["kernel"] for x in launches], [x["id"] for x in launches],
                        attribute(OPS / f"{model}-h200-trace.json.gz"))
    lined = [(a, b) for a, b in zip(found, joined) if b is not None]
    assert len(lined) >= count - 2 and sum((a.op, a.phase) != (b.op, b.phase) for a, b in lined) == differ


# The same two steps with the loss a module (nn.CrossEntropyLoss), on an H100 (SOURCES.md): every launch but
# the seed of backward (ones_like, outside every module) owned by a module or the optimizer
STEPS_LOSS_MODULE = [("gcn", 80, 0.99955, {"GCN": 67, "CrossEntropyLoss": 5}),
                     ("resnet", 456, 0.99969, {"ResNet": 445, "CrossEntropyLoss": 7})]


@pytest.mark.parametrize("model, count, by_module, tops", STEPS_LOSS_MODULE, ids=[s[0] for s in STEPS_LOSS_MODULE])
def test_with_the_loss_a_module_all_but_the_seed_of_backward_is_owned_by_a_module(model, count, by_module, tops):
    launches = json.loads(gzip.decompress((OPS / f"{model}-h100-nvtx.json.gz").read_bytes()))["launches"]
    found, notes = owners([(x["id"], x["nvtx"]) for x in launches])
    time = [x["time_ns"] for x in launches]
    assert len(launches) == count and all(o is not None and o.op for o in found) and notes == []
    moduled = sum(t for t, o in zip(time, found) if o.module or o.phase == "optimizer") / sum(time)
    assert moduled == pytest.approx(by_module, abs=5e-5) and moduled > 0.99
    assert {o.op for o in found if not (o.module or o.phase == "optimizer")} == {"aten::ones_like"}
    top = Counter(o.module.split(".")[0] for o in found if o.module)
    assert {k: top[k] for k in tops} == tops
    # the trace of the same step lines up launch for launch and gives each the same op and phase
    joined, _ = join([x["kernel"] for x in launches], [x["id"] for x in launches],
                     attribute(OPS / f"{model}-h100-trace.json.gz"))
    assert all(b is not None for b in joined)
    assert sum((a.op, a.phase) != (b.op, b.phase) for a, b in zip(found, joined)) == 0


def test_a_node_whose_kernels_ran_after_it_returned_is_numbered_from_its_neighbours():
    # GCNConv's bias add: AddBackward0 launches nothing inside its own range, only the bias gradient
    # summed down after it returned; the nodes evaluated before and after it bracket one aten::add
    launches = json.loads(gzip.decompress((OPS / "gcn-h200-nvtx.json.gz").read_bytes()))["launches"]
    found, _ = owners([(x["id"], x["nvtx"]) for x in launches])
    adds = [o for x, o in zip(launches, found) if x["nvtx"][0].startswith("autograd::engine::evaluate_function: AddBackward0,")]
    assert [(o.op, o.module) for o in adds] == [("aten::add", "GCN.conv2"), ("aten::add", "GCN.conv1")]


def test_a_trace_of_part_of_the_step_leaves_the_rest_unowned():
    launches = _launches()
    trace = attribute(TRACE)
    half = type(trace)(trace.path, trace.gpu, sorted(trace.launches, key=lambda x: x.kernel.ts_us)[:150])
    joined, notes = join([x["kernel"] for x in launches], [x["id"] for x in launches], half)
    assert sum(o is not None for o in joined) == 150
    assert notes and notes[0].startswith("179 of the 329 profiled launches line up with no kernel of the trace")


def _profile(tmp_path: Path) -> Path:
    """A profile document of the step's launches (their durations and owners; one GEMM's worth of BF16
    work on the tensor GEMMs, DRAM bytes on the rest), written where the CLI reads it."""
    launches = []
    for i, x in enumerate(_launches()):
        gemm = x["kernel"].startswith("nvjet")
        launches.append(Launch(name=x["kernel"][:40], demangled=x["kernel"], grid=(132, 1, 1), block=(128, 1, 1),
                               registers=64, static_smem_bytes=0, dynamic_smem_bytes=0, time_ns=x["time_ns"],
                               flops={"bf16_tensor": 1e9} if gemm else {}, nbytes={"dram": 1e6}, order=x["id"],
                               nvtx=tuple(x["nvtx"])))
    doc = convert.from_profile(launches, from_preset("h200"), command=["python", "step.py", "llama"])
    path = tmp_path / "llama.json"
    store.save(doc, path)
    return path


def _without_owners(tmp_path: Path) -> Path:
    """The step's profile as one recorded without --ops: no attribution."""
    plain = tmp_path / "plain.json"
    store.save(store.load(_profile(tmp_path), profile=True).model_copy(update={"attribution": None}), plain)
    return plain


def test_op_and_module_views_add_up_to_the_profile(tmp_path):
    doc = store.load(_profile(tmp_path), profile=True)
    assert doc.attribution.time_ms == pytest.approx(doc.total_time_ms)
    ops = by_owner(doc, "op")
    assert sum(r.time_ms for r in ops) == pytest.approx(doc.total_time_ms)
    assert sum(r.launches for r in ops) == 329
    top = {(r.name, r.phase): r for r in ops}
    linear = top[("aten::linear", "backward")]
    assert linear.binding == "BF16 tensor" and linear.floor_ms > 0 and linear.times_floor > 1
    modules = by_owner(doc, "module")
    roots = [r for r in modules if r.depth == 0]
    assert sum(r.time_ms for r in roots) == pytest.approx(doc.total_time_ms)
    assert [r.name for r in roots][:2] == ["LlamaForCausalLM", "(optimizer)"]
    names = [r.name for r in modules]
    for r in modules:  # a module holds its children's time: tree order, children after their parent
        children = [c for c in modules if c.name.rsplit(".", 1)[0] == r.name and c.name != r.name]
        assert sum(c.time_ms for c in children) <= r.time_ms * (1 + 1e-9)
        assert all(names.index(c.name) > names.index(r.name) for c in children)
    assert sum(r.phase_ms.get("backward", 0) for r in roots) > sum(r.phase_ms.get("forward", 0) for r in roots)


def test_show_by_op_and_module(tmp_path):
    path = _profile(tmp_path)
    runner = CliRunner()
    got = runner.invoke(app, ["show", str(path), "--by", "op"], env={"COLUMNS": "220"})
    assert got.exit_code == 0, got.output
    assert "GPU time by op and phase" in got.output and "aten::linear" in got.output
    assert "100.0% of the profiled GPU time" in got.output
    got = runner.invoke(app, ["show", str(path), "--by", "module"], env={"COLUMNS": "220"})
    assert got.exit_code == 0 and "lm_head" in got.output and "(optimizer)" in got.output


@pytest.mark.parametrize("args, says", [
    (["--by", "layer"], "--by takes kernel, op, module, got 'layer'"),
    (["--by", "op", "RUN"], "--by op reads who launched each kernel, which a profile or a PyTorch profiler trace"),
    (["--by", "op", "PLAIN"], "records no op or module per kernel; profile the program again"),
])
def test_show_by_refuses_in_one_line(tmp_path, args, says):
    plain = _without_owners(tmp_path)
    run = Path(__file__).resolve().parents[1] / "plots" / "results-h200.json"
    args = [str(run) if a == "RUN" else str(plain) if a == "PLAIN" else a for a in args]
    got = CliRunner().invoke(app, ["show", *args])
    assert got.exit_code == 2, got.output
    assert says in " ".join(got.output.split()) and "Traceback" not in got.output


@pytest.mark.parametrize("trace, says", [
    ("RUN", "no traceEvents: not a PyTorch profiler (Chrome) trace"),
    ("MISSING", "--trace MISSING: no such file"),
])
def test_import_with_a_trace_that_is_none_refuses_in_one_line(tmp_path, trace, says):
    report = Path(__file__).resolve().parent / "fixtures" / "ncu" / "transformer-h200-raw.csv"
    given = {"RUN": str(Path(__file__).resolve().parents[1] / "plots" / "results-h200.json"), "MISSING": "MISSING"}
    got = CliRunner().invoke(app, ["profile", "--import", str(report), "--trace", given[trace],
                                   "--out", str(tmp_path / "p.json")])
    assert got.exit_code == 2, got.output
    assert says in " ".join(got.output.split()) and not (tmp_path / "p.json").exists()


def test_a_trace_of_another_program_is_refused(tmp_path):
    # the transformer report (a CSV made on the H200) and the Llama step's trace share runs of common
    # elementwise kernels (49 of 165 launches, of 329 kernels), not a step: refused, nothing written
    report = Path(__file__).resolve().parent / "fixtures" / "ncu" / "transformer-h200-raw.csv"
    out = tmp_path / "p.json"
    got = CliRunner().invoke(app, ["profile", "--import", str(report), "--trace", str(TRACE), "--out", str(out)],
                             env={"COLUMNS": "200"})
    assert got.exit_code == 2, got.output
    assert "only 49 of the report's 165 launches and of the trace's 329 kernels line up" in " ".join(got.output.split())
    assert not out.exists()


def test_each_process_of_a_program_is_attributed_on_its_own():
    # two ranks running the same step number their ops and nodes alike (rank 1's model named apart
    # here): read together, a backward node of rank 0 would find rank 1's forward op and module
    one = _launches()
    launches = []
    for rank in (0, 1):
        for x in one:
            stack = tuple(r.replace("LlamaForCausalLM", f"Rank{rank}") for r in x["nvtx"])
            launches.append(Launch(name="k", demangled=x["kernel"], grid=(1, 1, 1), block=(32, 1, 1), registers=32,
                                   static_smem_bytes=0, dynamic_smem_bytes=0, time_ns=x["time_ns"], flops={},
                                   nbytes={}, order=rank * 1000 + x["id"], nvtx=stack, process_id=100 + rank))
    doc = convert.from_profile(launches, from_preset("h200"))
    _, alone, _ = _owners()
    want = Counter()
    for rank in (0, 1):
        for o in alone:
            want[(o.op, o.phase, o.module.replace("LlamaForCausalLM", f"Rank{rank}") if o.module else None)] += 1
    got = Counter()
    for w in doc.attribution.owned:
        got[(w.op, w.phase, w.module)] += w.launches
    assert got == want


def test_the_html_report_holds_the_module_tree(tmp_path):
    from roofline.render.html_report import module_tree

    doc = store.load(_profile(tmp_path), profile=True)
    html = module_tree(doc)
    rows = by_owner(doc, "module")
    assert html.count("<details") == html.count("</details>") == len(rows)
    assert "<b>lm_head</b>" in html and "<b>(optimizer)</b>" in html
    # nested as the tree is: lm_head inside LlamaForCausalLM, closed before the optimizer's row opens
    top, head, opt = html.index("<b>LlamaForCausalLM</b>"), html.index("<b>lm_head</b>"), html.index("<b>(optimizer)</b>")
    assert top < head < opt and html[:opt].count("<details") == html[:opt].count("</details>") + 1


def test_show_by_json_prints_the_rows_checked_against_their_schema(tmp_path):
    import jsonschema

    path = _profile(tmp_path)
    got = CliRunner().invoke(app, ["show", str(path), "--by", "module", "--json"])
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    schema = json.loads(CliRunner().invoke(app, ["schema", "owners"]).stdout)
    jsonschema.validate(doc, schema)
    assert doc["kind"] == "owners" and doc["by"] == "module"
    roots = [r for r in doc["rows"] if r["depth"] == 0]
    assert sum(r["time_ms"] for r in roots) == pytest.approx(doc["total_time_ms"])
    assert sum(r["share"] for r in roots) == pytest.approx(1.0)


def test_compare_by_module_names_the_module_that_got_slower(tmp_path):
    # the same step with every launch under lm_head twice as long: lm_head moves most, by its own
    # time, and so does every module around it; the others stay
    before = store.load(_profile(tmp_path), profile=True)
    owned = [w.model_copy(update={"time_ms": 2 * w.time_ms}) if w.module == "LlamaForCausalLM.lm_head" else w
             for w in before.attribution.owned]
    extra = sum(w.time_ms for w in before.attribution.owned if w.module == "LlamaForCausalLM.lm_head")
    kernels = list(before.kernels)
    for w in before.attribution.owned:  # the kernels' own times, so that the document stays whole
        if w.module == "LlamaForCausalLM.lm_head":
            kernels[w.kernel] = kernels[w.kernel].model_copy(update={"time_ms": kernels[w.kernel].time_ms + w.time_ms})
    total = sum(k.time_ms for k in kernels)
    kernels = [k.model_copy(update={"time_share": k.time_ms / total, "gflops": None if k.gflops is None else
                                    k.gflops * (before.kernels[i].time_ms / k.time_ms)}) for i, k in enumerate(kernels)]
    after = before.model_copy(update={"kernels": kernels, "total_time_ms": total,
                                      "attribution": before.attribution.model_copy(update={"owned": owned})})
    store.save(after, tmp_path / "after.json")
    got = CliRunner().invoke(app, ["compare", str(tmp_path / "llama.json"), str(tmp_path / "after.json"),
                                   "--by", "module", "--json"])
    assert got.exit_code == 0, got.output
    rows = {r["name"]: r for r in json.loads(got.stdout)["rows"]}
    head = rows["LlamaForCausalLM.lm_head"]
    assert head["change"] == pytest.approx(1.0) and head["after_ms"] - head["before_ms"] == pytest.approx(extra)
    assert rows["LlamaForCausalLM"]["after_ms"] - rows["LlamaForCausalLM"]["before_ms"] == pytest.approx(extra)
    assert rows["(optimizer)"]["change"] == pytest.approx(0.0)
    assert json.loads(got.stdout)["rows"][0]["name"] in ("LlamaForCausalLM", "LlamaForCausalLM.lm_head")


def test_compare_by_refuses_what_it_cannot_read(tmp_path):
    path = _profile(tmp_path)
    run = Path(__file__).resolve().parents[1] / "plots" / "results-h200.json"
    for args, says in ((["--by", "op", "--max-drop", "5%"], "--max-drop, --chart and --across-sizes read them"),
                       (["--by", "nope"], "--by takes kernel, op, module")):
        got = CliRunner().invoke(app, ["compare", str(path), str(path), *args])
        assert got.exit_code == 2 and says in " ".join(got.output.split()), got.output
    got = CliRunner().invoke(app, ["compare", str(run), str(run), "--by", "module"])
    assert got.exit_code == 2 and "compares two profiles by who launched each kernel" in " ".join(got.output.split())


@pytest.mark.parametrize("key", ["op", "module"])
def test_show_trace_by_prints_that_table_alone_and_the_share_owned(key):
    got = CliRunner().invoke(app, ["show", str(TRACE), "--by", key], env={"COLUMNS": "200"})
    assert got.exit_code == 0, got.output
    titles = [ln for ln in got.output.splitlines() if ln.startswith("GPU time by")]
    assert len(titles) == 1 and titles[0].startswith(f"GPU time by {key} and phase")
    assert "of the GPU time (3.129 ms over 329 kernels) is owned by an op" in got.output


def test_show_trace_by_kernel_is_refused_in_one_line():
    got = CliRunner().invoke(app, ["show", str(TRACE), "--by", "kernel"])
    assert got.exit_code == 2 and "is a PyTorch profiler trace, read by op or by module" in " ".join(got.output.split())


def test_import_with_a_trace_of_which_no_launch_lines_up_is_refused(tmp_path):
    report = Path(__file__).resolve().parent / "fixtures" / "ncu" / "transformer-h200-raw.csv"
    amd = Path(__file__).resolve().parent / "fixtures" / "traces" / "ops" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"
    got = CliRunner().invoke(app, ["profile", "--import", str(report), "--trace", str(amd), "--out", str(tmp_path / "p.json")])
    assert got.exit_code == 2, got.output
    assert "none of the report's 165 launches lines up with the trace's" in " ".join(got.output.split())
    assert not (tmp_path / "p.json").exists()
    got = CliRunner().invoke(app, ["profile", "--import", str(report), "--trace", str(tmp_path), "--out", str(tmp_path / "p.json")])
    assert got.exit_code == 2 and "no optimized HLO in it" in got.output
    assert "a folder given to --trace is the one a JAX program dumped its HLO into" in " ".join(got.output.split())


def test_the_module_table_in_the_docs_is_the_committed_files():
    # docs/profiling.md's example, row by row, against show --by module of plots/profile-h200-llama-ops.json
    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "profiling.md").read_text()
    block = text[text.index("```\n module "):]
    block = block[4:block.index("```", 4)]
    doc = store.load(root / "plots" / "profile-h200-llama-ops.json", profile=True)
    rows = {r.name: r for r in by_owner(doc, "module")}
    checked, path = 0, []
    for line in block.splitlines()[1:]:
        cells = line.replace("(no module)", "(no-module)").split()
        if not cells or cells[0] == "...":
            continue
        depth = (len(line) - len(line.lstrip())) // 2  # the table indents each level by two
        path = path[:depth] + [cells[0].replace("(no-module)", "(no module)")]
        r = rows[".".join(path)]
        assert cells[1] == f"{r.time_ms:,.3f}" and cells[2] == f"{100 * r.time_ms / doc.total_time_ms:.1f}%"
        assert f"{r.times_floor:.2f}x" in cells  # the x floor column, before a binding of one or more words
        checked += 1
    assert checked == 11


def test_plot_by_module_draws_the_leaves_each_time_once(tmp_path):
    # the chart's rows: each module's own launches and the optimizer's row (so no kernel is drawn
    # twice), each a bar of its time with its floor inside, and the share of its roofs beside it
    from roofline.render import owner_chart

    path = _profile(tmp_path)
    doc = store.load(path, profile=True)
    rows = owner_chart.rows_drawn(doc, "module", top=1000)
    names = [r.name for r in rows]
    assert "(optimizer)" in names and "LlamaForCausalLM.lm_head" in names
    assert sum(r.time_ms for r in rows) == pytest.approx(doc.total_time_ms)  # the step, once
    inclusive = {r.name: r.time_ms for r in by_owner(doc, "module")}
    own = {r.name: r.time_ms for r in rows}
    assert own["LlamaForCausalLM"] < inclusive["LlamaForCausalLM"]  # the model's own loss, not its layers
    fig = owner_chart.render(doc, "module")
    times = fig.axes[1]
    bars = [p for p in times.patches if p.get_alpha() == 0.35]
    assert [round(b.get_width(), 9) for b in bars] == [round(r.time_ms, 9) for r in owner_chart.rows_drawn(doc, "module")]
    got = CliRunner().invoke(app, ["plot", str(path), "--kind", "op", "--out", str(tmp_path / "ops.png")])
    assert got.exit_code == 0 and (tmp_path / "ops.png").stat().st_size > 10_000


def test_plot_by_op_places_each_op_on_the_roof_of_its_precision(tmp_path):
    # left of the bars, each op with FLOPs a point per level: x its main precision's FLOPs over
    # the bytes its kernels moved there, y those FLOPs over its time (each summed over its launches)
    from roofline.render import owner_chart

    doc = store.load(_profile(tmp_path), profile=True)
    rows = owner_chart.rows_drawn(doc, "op")
    gemm = next(r for r in rows if r.name == "aten::linear" and r.phase == "forward")
    assert gemm.main_precision == "bf16_tensor"
    flops = sum(w.flops.get("bf16_tensor", 0.0) for w in doc.attribution.owned
                if w.op == "aten::linear" and w.phase == "forward")
    dram = sum(w.bytes.get("dram", 0.0) for w in doc.attribution.owned if w.op == "aten::linear" and w.phase == "forward")
    assert gemm.gflops() == pytest.approx(flops / gemm.time_ms / 1e6) and gemm.intensity("dram") == pytest.approx(flops / dram)
    fig = owner_chart.render(doc, "op")
    roof = fig.axes[0]
    points = {(round(float(x), 6), round(float(y), 3)) for c in roof.collections for x, y in c.get_offsets()}
    assert (round(gemm.intensity("dram"), 6), round(gemm.gflops(), 3)) in points
    moved = [r for r in rows if r.main_precision is None]  # data movement alone: no point, named in the footer
    footer = " ".join(t.get_text() for t in fig.texts)
    assert moved and all(f"#{rows.index(r) + 1}" in footer for r in moved) and len(points) == sum(
        len([lv for lv in ("dram", "l2", "l1") if r.intensity(lv)]) for r in rows if r.gflops())


@pytest.mark.parametrize("args, says", [
    (["--kind", "op", "RUN"], "--kind op draws a profile of a PyTorch or JAX program by who launched its kernels"),
    (["--kind", "module", "PLAIN"], "records no op or module per kernel"),
    (["--kind", "module", "HTML"], "the HTML report (roofline plot"),
])
def test_plot_by_op_refuses_what_it_cannot_draw(tmp_path, args, says):
    plain = _without_owners(tmp_path)
    run = Path(__file__).resolve().parents[1] / "plots" / "results-h200.json"
    given = {"RUN": str(run), "PLAIN": str(plain), "HTML": str(tmp_path / "llama.json")}
    out = tmp_path / ("r.html" if "HTML" in args else "r.png")
    got = CliRunner().invoke(app, ["plot", *[given.get(a, a) for a in args], "--out", str(out)])
    assert got.exit_code == 2 and says in " ".join(got.output.split()) and not out.exists(), got.output


def _fixture_launches(model: str, renumber: int = 0) -> list[Launch]:
    """The step's launches as a report holds them: names, Nsight Compute's durations, NVTX stacks
    (their autograd numbers moved by `renumber`, as another run of the program might number them)."""
    raw = json.loads(gzip.decompress((OPS / f"{model}-h200-nvtx.json.gz").read_bytes()))["launches"]

    def moved(text: str) -> str:
        r = parse(text)
        return text.replace(f"seq = {r.seq}", f"seq = {r.seq + renumber}") if r.seq is not None else text

    return [Launch(name=x["kernel"][:40], demangled=x["kernel"], grid=(132, 1, 1), block=(128, 1, 1), registers=64,
                   static_smem_bytes=0, dynamic_smem_bytes=0, time_ns=x["time_ns"], flops={}, nbytes={"dram": 1e6},
                   order=x["id"], nvtx=tuple(moved(t) for t in x["nvtx"])) for x in raw]


@pytest.mark.parametrize("model", ["llama", "resnet", "gcn"])
def test_each_ops_time_in_the_program_is_the_one_pytorchs_profiler_gives_it(model):
    # The report's launches (NVTX ranges, Nsight Compute's durations) and a trace of the same step made
    # in another process: each op's time in the program is its kernels' durations in the trace, and so
    # the time the profiler gives the op, for every op of the three models; Nsight Compute's own
    # durations are 0.7-11 % longer in total (each launch replayed alone, caches flushed between)
    from roofline.traces.join import joined_to

    launches = _fixture_launches(model)
    trace = attribute(OPS / f"{model}-h200-trace.json.gz")
    doc = convert.from_profile(launches, from_preset("h200"), trace=joined_to(launches, trace, TRACE, owned_already=True))
    assert doc.attribution.source.startswith("NVTX ranges") and doc.attribution.program_source.startswith("the PyTorch")
    theirs = Counter()
    for r in trace.by("op"):
        theirs[(r.name, r.phase)] += r.time_us / 1e3
    rows = by_owner(doc, "op")
    assert {(r.name, r.phase) for r in rows} == set(theirs)
    for r in rows:
        assert r.program_ms == pytest.approx(theirs[(r.name, r.phase)], rel=1e-9), r.name
    assert doc.attribution.program_ms == pytest.approx(trace.time_us / 1e3)
    assert 1.005 < doc.attribution.time_ms / doc.attribution.program_ms < 1.14


def test_a_gradient_added_after_a_view_node_takes_the_number_the_trace_gives_it():
    # Llama's two input-gradient sums after ViewBackward0 returned: the ranges hold no number for them,
    # the trace does (the view inside k_proj's aten::linear), and it lies between their neighbours'
    from roofline.traces.join import joined_to

    def adds(launches):
        doc = convert.from_profile(launches, from_preset("h200"),
                                   trace=joined_to(launches, attribute(TRACE), TRACE, owned_already=True))
        return sorted((w.op, w.module) for w in doc.attribution.owned for _ in range(w.launches)
                      if w.phase == "backward" and w.launcher == "aten::add" and (w.op == "aten::view" or "k_proj" in w.module))

    assert adds(_fixture_launches("llama")) == [
        ("aten::linear", "LlamaForCausalLM.model.layers.0.self_attn.k_proj"),
        ("aten::linear", "LlamaForCausalLM.model.layers.1.self_attn.k_proj")]
    # numbered from elsewhere (the report's run numbered every op 1000 higher): the trace's numbers fall
    # outside the brackets here and are not taken; the two stay the view's, as without a trace
    assert adds(_fixture_launches("llama", renumber=1000)) == [("aten::view", None), ("aten::view", None)]


def test_a_launch_under_another_name_between_two_matched_runs_is_placed_by_position():
    # ResNet's two cuDNN CUTLASS wgrad kernels: Nsight Compute demangles them, the trace keeps them
    # mangled (neither c++filt nor the C++ runtime reads the name); each sits alone between two runs
    from roofline.traces.join import line_up

    launches = _fixture_launches("resnet")
    found, notes = line_up([x.demangled for x in launches], [x.order for x in launches],
                           attribute(OPS / "resnet-h200-trace.json.gz"))
    assert all(x is not None for x in found)
    placed = [(a.demangled, b.kernel.name) for a, b in zip(launches, found) if a.demangled != b.kernel.name
              and b.kernel.name.startswith("_Z")]
    assert len(placed) == 2 and all("ImplicitGemmConvolution" in a and "ImplicitGemmConvolution" in b for a, b in placed)
    assert notes and notes[0].startswith("2 of the 456 profiled launches were placed by their position alone")


def test_show_by_op_gives_the_time_in_the_program_beside_nsight_computes(tmp_path):
    from roofline.traces.join import joined_to

    launches = _fixture_launches("llama")
    doc = convert.from_profile(launches, from_preset("h200"),
                               trace=joined_to(launches, attribute(TRACE), TRACE, owned_already=True))
    path = tmp_path / "llama.json"
    store.save(doc, path)
    got = CliRunner().invoke(app, ["show", str(path), "--by", "op"], env={"COLUMNS": "240"})
    assert got.exit_code == 0, got.output
    text = " ".join(got.output.split())
    assert "program ms" in text and "3.129 ms where Nsight Compute took 3.466 ms" in text
    got = CliRunner().invoke(app, ["show", str(path), "--by", "op", "--json"])
    rows = {(r["name"], r["phase"]): r for r in json.loads(got.stdout)["rows"]}
    assert rows[("aten::linear", "backward")]["program_ms"] == pytest.approx(0.4219, abs=5e-5)
    assert rows[("aten::linear", "backward")]["time_ms"] == pytest.approx(0.4630, abs=5e-3)


def test_the_module_view_says_how_much_a_module_owns():
    # the committed GCN step (H200, 2026-12-07): 100 % owned by an op or a module; all but the seed of backward
    # (ones_like, 0.04 %) by a module or the optimizer (the loss an nn.CrossEntropyLoss, as torchvision's script has it)
    from typer.testing import CliRunner

    from roofline.cli import app
    path = Path(__file__).parents[1] / "plots" / "profile-h200-gcn-ops.json"
    r = CliRunner().invoke(app, ["show", str(path), "--by", "module"], env={"COLUMNS": "300"})
    text = " ".join(r.output.split())
    assert r.exit_code == 0 and "by a module, 98.4% (4.530 ms), by the optimizer 1.6%; the rest, 0.0%, is '(no module)'" in text
    assert "Each row holds its submodules; plot --kind module draws each module's own launches alone" in text


def test_an_op_near_two_roofs_names_both_and_an_old_l2_ceiling_is_said_to_read_low():
    # the committed Llama step (H200): aten::linear forward's nvjet GEMMs sit within 5 % of both their L2 floor (at
    # an L2 ceiling measured by one __ldcg stream, 7,309 GB/s) and their BF16 tensor floor
    from typer.testing import CliRunner

    from roofline.cli import app
    path = Path(__file__).parents[1] / "plots" / "profile-h200-llama-ops.json"
    r = CliRunner().invoke(app, ["show", str(path), "--by", "op"], env={"COLUMNS": "300"})
    text = " ".join(r.output.split())
    assert "aten::linear forward 0.223 6.4% 15 508,728 bf16_tensor 0.1585 1.41x L2 (BF16 tensor as near)" in text
    assert "L2 ceiling: measured at 7,309 GB/s by an __ldcg stream alone, which reads low" in text
    assert "'L2 (BF16 tensor as near)': over most of that floor, the second roof's floor is within 5 % of it" in text
