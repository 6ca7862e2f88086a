"""Charts from recorded results (no GPU needed)."""

import copy
import json
from pathlib import Path

import pytest
from conftest import FIXTURES, make_doc, set_rate, user_record
from typer.testing import CliRunner

from roofline.cli import app

from roofline import documents
from roofline.errors import UsageError
from roofline.render import chart, roofline_chart, style, sweep_chart
from roofline.ladder import upgrade
from roofline.results import store


def results(**kw):
    return store.parse(make_doc(**kw))


def chart_words(fig) -> str:
    """Every text figure `fig` shows, tick labels included, as savefig draws it (without writing
    a file: the files themselves are checked by test_png_is_written and the ladder chart's tests)."""
    from matplotlib.text import Text

    fig.draw_without_rendering()
    return "\n".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())


def test_png_is_written(tmp_path):
    out = roofline_chart.draw(results(), tmp_path / "r.png")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    assert [p.name for p in tmp_path.iterdir()] == ["r.png"]


@pytest.mark.xdist_group("ladder_chart")  # one process draws the chart, once
def test_svg_carries_every_label_roof_and_note(ladder_chart):
    doc = results()
    _, out, r = ladder_chart  # this document drawn by `roofline plot --out chart.svg` (tests/conftest.py)
    assert r.exit_code == 0, r.output
    svg = out.read_text()
    for k in doc.kernels:
        assert k.name in svg
    for text in ("ridge 13.9 FLOP/B", "FP32 peak 66,908 GFLOP/s", "DRAM 4,800 GB/s", "SMEM 33,454 GB/s",
                 "cuBLAS (reference) 50,000 GFLOP/s", "25,000 GFLOP/s, 64 regs, occupancy 50 % (registers)",
                 "which the L2 serves", "H200: SGEMM 4096x4096x4096 FP32"):
        assert text in svg, text


def test_failed_kernel_is_listed_not_drawn():
    words = chart_words(roofline_chart.render(results(failed=("register_strip",)))[0])
    assert "Not drawn, failed verification or not timed: register_strip." in words
    assert "16,000 GFLOP/s" not in words  # no legend entry and no point for it


def test_a_file_where_every_kernel_failed_is_refused(tmp_path):
    doc = results(failed=tuple(k["name"] for k in make_doc()["kernels"]))
    with pytest.raises(UsageError, match="no kernel in these results was verified and timed, so there is nothing to "
                                         "draw \\(naive: naive: failed verification"):
        roofline_chart.draw(doc, tmp_path / "r.png")
    assert not (tmp_path / "r.png").exists()


def test_measured_points_and_roofs(tmp_path):
    doc = store.load(FIXTURES / "results-h200.json")
    words = chart_words(roofline_chart.render(doc, measured=True)[0])
    k = {k.name: k for k in doc.kernels}["register_tiling_2d"]
    for text in (f"DRAM measured {doc.device.measured_dram_gbps:,.0f} GB/s", "L2 (counted)", "DRAM (counted)",
                 f"FP32 measured {doc.device.measured_fp32_gflops:,.0f} GFLOP/s",
                 f"for example register_tiling_2d: model GMEM {k.model.gmem_bytes / 1e9:.2f} GB against L2 "
                 f"{k.counted.l2_bytes / 1e9:.2f} GB counted"):
        assert text in words, text
    with pytest.raises(UsageError, match="no kernel in these results was profiled"):
        roofline_chart.draw(results(), tmp_path / "n.png", measured=True)


def test_labels_do_not_overlap():
    # register_tiling_1d and register_strip share AI 16 and nearly the same rate: their labels
    # must still land apart.
    d = make_doc()
    set_rate(d["kernels"][4], d["kernels"][3]["gflops"] * 0.98)
    boxes = roofline_chart.label_boxes(store.parse(d))
    for i, a in enumerate(boxes):
        for b in boxes[:i]:
            assert not a.overlaps(b)


def test_crowded_labels_stay_apart():
    d = make_doc()
    for i in range(8):  # a cluster of variants around AI 32
        k = copy.deepcopy(d["kernels"][5])
        k["name"] = f"variant_{i}"
        set_rate(k, 25_000 + 700 * i)
        k["model"]["arithmetic_intensity"] = 32 * (1 + 0.08 * i)
        k["model"]["gmem_bytes"] = k["model"]["flops"] / k["model"]["arithmetic_intensity"]
        d["kernels"].append(k)
    boxes = roofline_chart.label_boxes(store.parse(d))
    for i, a in enumerate(boxes):
        for b in boxes[:i]:
            assert not a.overlaps(b)


@pytest.mark.xdist_group("ladder_chart")  # one process draws the chart, once
def test_whole_ladder_drawn_and_a_long_list_capped(ladder_chart):
    d = make_doc()
    svg = ladder_chart[1].read_text()  # make_doc's chart (tests/conftest.py)
    assert "fastest of" not in svg  # the whole ladder, no cap note
    for i in range(8):  # a tuning sweep's worth of extra, slower kernels
        k = copy.deepcopy(d["kernels"][0])
        k["name"] = f"slow_variant_{i}"
        set_rate(k, 100.0 + i)
        d["kernels"].append(k)
    words = chart_words(roofline_chart.render(store.parse(d))[0])
    assert "The 16 fastest of 22 kernels are drawn." in words
    assert "slow_variant_6" in words and "naive" in words  # the 16th fastest and the slowest of the ladder
    assert "slow_variant_5" not in words
    assert "slow_variant_3" not in words


def test_an_inherited_matplotlib_backend_is_ignored(tmp_path, monkeypatch):
    import subprocess
    import sys

    # every chart is drawn on a figure from chart.new_figure; the occupancy chart is the quickest
    code = ("from roofline.model.arch import parse_arch\nfrom roofline.model.occupancy import calculate\n"
            "from roofline.render import occupancy_chart\nsm = parse_arch('sm_90')\n"
            f"occupancy_chart.draw(sm, calculate(sm, 93, 256, 0, 0), {str(tmp_path / 'c.png')!r})\n"
            "import os; print(os.environ['MPLBACKEND'])\n")
    env = dict(__import__("os").environ, MPLBACKEND="module://matplotlib_inline.backend_inline")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "module://matplotlib_inline.backend_inline"  # left as it was
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("name", ["r.jpg", "r", "r.png.txt"])
def test_bad_extension(tmp_path, name):
    with pytest.raises(UsageError, match=r"\.png, \.svg or \.pdf"):
        chart.check_output(tmp_path / name)


def sweep_doc(square=True):
    d = make_doc(8192)
    d["sweep"] = [{"problem": {"m": n, "n": n if square or n != 512 else 256, "k": n},
                   "reference": {"gflops": 50_000.0 * n / 8192},
                   "kernels": [{"name": k["name"], "gflops": k["gflops"] * n / 8192,
                                "verified": k["name"] != "naive" or n > 128} for k in d["kernels"]]}
                  for n in (128, 256, 512, 1024, 2048, 4096, 8192)]
    return store.parse(d, upgrade=upgrade.fill)  # a schema 3 sweep: its models worked out from the families


@pytest.fixture(scope="module")
def sweep_svg(tmp_path_factory):
    """The text of sweep_doc()'s sweep chart, drawn once for the tests that read it."""
    return sweep_chart.draw(sweep_doc(), tmp_path_factory.mktemp("sweep") / "s.svg").read_text()


def test_sweep_chart(sweep_svg):
    svg = sweep_svg
    for name in ("cuBLAS (reference)", "async_copy", "naive", "8192", "FP32 peak 66,908 GFLOP/s"):
        assert name in svg


def test_sweep_chart_refuses_what_it_cannot_draw(tmp_path):
    with pytest.raises(UsageError, match="holds no size sweep"):
        sweep_chart.draw(results(), tmp_path / "s.png")
    assert not (tmp_path / "s.png").exists()


def test_a_sweep_of_shapes_is_drawn_shape_by_shape_in_order_of_flops(tmp_path):
    svg = sweep_chart.draw(sweep_doc(square=False), tmp_path / "s.svg").read_text()
    assert "M x N x K, in order of FLOPs" in svg and "against problem shape" in svg
    assert svg.index("256x256x256") < svg.index("512x256x512") < svg.index("1024x1024x1024")


def test_user_kernels_stand_out_with_or_without_a_model(tmp_path):
    raw = make_doc()
    raw["kernels"] += [user_record(raw, "mine"), user_record(raw, "bare", model=False, gflops=20_000.0)]
    doc = store.parse(raw)
    svg = roofline_chart.draw(doc, tmp_path / "r.svg").read_text()
    for text in ("mine (yours)", "bare (yours, no model)", "bare (no model: "):
        assert text in svg, text
    assert style.USER_COLORS[0] in svg and style.USER_COLORS[1] in svg
    boxes = roofline_chart.label_boxes(doc)
    assert len(boxes) == 15  # the ladder's labels and mine's; bare's sits on its own line
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert doc.floors(doc.kernels[-1]).binding.level == "FP32"  # no model: the FLOPs are all it has


def test_every_ladder_step_has_one_technique_and_its_own_style():
    from roofline.ladder.families import LADDER, TECHNIQUES, TENSOR_LADDER, technique

    grouped = [name for _, names in TECHNIQUES for name in names]
    # every FP32 step and every tensor-core rung (a results file of theirs is drawn in their hues)
    assert set(grouped) == set(f.name for f in LADDER + TENSOR_LADDER)
    assert len(set(grouped)) == len(grouped)
    assert technique("register_strip") == (2, 1, 3) and technique("register_tiling_2d<64,64,8,4,4>") is None
    assert technique("wgmma_ws") == (7, 1, 4)
    styles = {(str(chart.kernel_style(name, 0, 1)["color"]), chart.kernel_style(name, 0, 1)["marker"])
              for name in grouped}
    assert len(styles) == len(grouped)  # no two steps look alike


def test_the_sweep_legend_is_grouped_and_a_chosen_kernel_stands_out(tmp_path):
    svg = sweep_chart.draw(sweep_doc(), tmp_path / "s.svg", highlight=["full_tiles"]).read_text()
    assert "REGISTER TILES" in svg and "WARP TILES, CP.ASYNC PIPELINES" in svg
    assert "stroke-opacity: 0.25" in svg  # the kernels not chosen are faded


def test_highlight_names_a_kernel_the_results_hold(tmp_path, monkeypatch):
    # the name is checked and handed to the chart here; a roofline drawn with a highlight is
    # checked by tests/test_chart_layout.py, so its drawing (seconds) is left out
    drawn = []
    monkeypatch.setattr(roofline_chart, "draw", lambda doc, out, measured, highlight: drawn.append(highlight))
    res = tmp_path / "r.json"
    res.write_text(json.dumps(make_doc()))
    r = CliRunner().invoke(app, ["plot", str(res), "--highlight", "nope", "--out", str(tmp_path / "c.png")])
    assert r.exit_code == 2 and "--highlight 'nope': no such kernel in these results" in r.stderr
    r = CliRunner().invoke(app, ["plot", str(res), "--highlight", "warptiling", "--out",
                                 str(tmp_path / "c.png")])
    assert r.exit_code == 0, r.output
    assert drawn == [["warptiling"]]


def test_a_sweep_says_where_the_tail_binds(sweep_svg):
    from rich.console import Console

    from roofline.render.tables import sweep_tables

    doc = sweep_doc()
    small = next(p for p in doc.sweep if p.problem.m == 128)
    v = doc.sweep_verdict(small, "full_tiles")
    assert v.waves.blocks == 1 and v.waves.tail_matters  # 128x256 tiles: one block for the whole GPU
    console = Console(width=250, record=True)
    for table in sweep_tables(doc, 250):
        console.print(table)
    shown = console.export_text()
    assert "what binds each size" in shown and "tail FP32" in shown
    assert "hollow: tail-bound size" in sweep_svg  # this document's chart


def test_a_profile_without_bytes_is_drawn_with_a_note(tmp_path):
    # operations counted, bytes not: no intensity to place a kernel at; drawn, and said so
    doc = json.loads((FIXTURES.parent.parent / "plots" / "profile-h200-transformer.json").read_text())
    for k in doc["kernels"]:
        k["bytes"] = {}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    r = CliRunner().invoke(app, ["plot", str(path), "--out", str(tmp_path / "p.svg")])
    assert r.exit_code == 0, r.output
    assert "no kernel can be placed on the roofline" in r.stderr
    drawn = (tmp_path / "p.svg").read_text()
    assert "no bytes in the report at any level: #1, #2, #3" in drawn
    # the empty roofline says why it is empty, with no legend of markers nothing uses
    assert "no kernel placed: the report holds no operations or no bytes" in drawn and "kernel at DRAM" not in drawn


def test_a_tensor_sweep_is_drawn_against_the_roof_of_its_precision():
    """A BF16 sweep (the committed H200 one): title and roof in BF16, every point below the top."""
    doc = documents.load(Path(__file__).resolve().parent.parent / "plots" / "results-h200-bf16.json")
    fig = sweep_chart.render(doc)
    ax = fig.axes[0]
    assert "GEMM BF16 (TN, FP32 accumulate) against problem size" in ax.get_title()
    assert "SGEMM" not in ax.get_title() and "FP32 peak" not in [t.get_text() for t in ax.texts]
    assert "BF16 tensor peak 989,430 GFLOP/s" in [t.get_text() for t in ax.texts]
    lo, hi = ax.get_ylim()
    highest = max(max(k.gflops for k in p.kernels) for p in doc.sweep)
    assert highest == pytest.approx(755_832, rel=1e-5)  # wgmma_persistent at 8192^3
    assert hi == pytest.approx(989_429.76 * 1.6) and lo < 75_992 < highest < hi


def test_a_long_gpu_names_title_is_broken_to_stay_on_the_figure():
    # 'NVIDIA H100 80GB HBM3: GEMM 8192x8192x8192 BF16, hierarchical roofline (roofs ...)' centred over
    # the axes ran off the figure's left edge; broken before its parenthesis, it stays on
    from roofline import api

    plots = Path(__file__).resolve().parent.parent / "plots"
    fig, _ = roofline_chart.render(api.read(plots / "counters-h100-bf16-8192.json"))
    ax = fig.axes[0]
    box = ax.title.get_window_extent(fig.canvas.get_renderer())
    assert ax.title.get_text().startswith("NVIDIA H100 80GB HBM3: GEMM 8192x8192x8192 BF16, hierarchical roofline\n(")
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width
    fig, _ = roofline_chart.render(api.read(plots / "counters-h200-bf16-8192.json"))  # broken alike, on the figure
    box = fig.axes[0].title.get_window_extent(fig.canvas.get_renderer())
    assert fig.axes[0].title.get_text().count("\n") == 1 and box.x0 >= 0 and box.x1 <= fig.bbox.width
