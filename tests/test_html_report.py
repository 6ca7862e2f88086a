"""The interactive HTML report (`roofline plot --out report.html`): every committed results file
gives one self-contained page holding each kernel (escaped) in its table and on its chart, with
no script fetched from the network; the page runs in a real headless Chromium without a console
error, rendering the chart's SVG, one table row per kernel and one SVG point per drawn point."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roofline.cli import app
from roofline import documents
from roofline.render import html_report
from roofline.results.profile import ProfileResults

pytest.importorskip("plotly", reason="the report needs the 'report' extra: pip install -e '.[report]'")

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PLOTS = Path(__file__).resolve().parent.parent / "plots"
# grade files are drawn as a roofline chart only (`render.grade_chart`), not as an HTML report
COMMITTED = sorted(p for p in PLOTS.glob("*.json") if not p.name.startswith("grades-"))
PROFILE = PLOTS / "profile-h200-transformer.json"
RUN = PLOTS / "results-h200.json"
TEMPLATE_NAME = "void f<float, 128>(T&, int)"


def _drawable(doc) -> set[int]:
    """The kernels the chart must place: every timed kernel of a run; every kernel of a profile
    whose work and bytes give an intensity."""
    if isinstance(doc, ProfileResults):
        return {i for i, k in enumerate(doc.kernels)
                if k.dominant and k.gflops and any(k.intensity(lv) for lv in ("dram", "l2", "l1"))}
    return {i for i, k in enumerate(doc.kernels) if k.timed}


def test_committed_plots_cover_the_kinds_of_results():
    names = {p.name for p in COMMITTED}
    assert {"results-h200.json", "sweep-h200.json", "shapes-h200.json", "tune-h200.json",
            "user-kernel-h200.json", "profile-h200-transformer.json"} <= names


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.stem)
def test_every_committed_file_gives_an_offline_report_with_every_kernel(path, tmp_path):
    out = tmp_path / "report.html"
    documents.chart([path], out)
    text = out.read_text(encoding="utf-8")
    doc = documents.load(path)
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script[^>]*\ssrc=", text, re.I)  # nothing fetched: no <script src="http...">
    assert '<script src="http' not in text
    assert len(re.findall(r"<script", text)) >= 2 and len(text) > 3_000_000  # plotly.js itself is in the file
    assert text.count('<tr class="kernel"') == len(doc.kernels)
    for k in doc.kernels:
        assert html.escape(k.name) in text, k.name
    report = html_report.build(doc, [path])
    assert html_report.kernel_indices(report.figures[html_report.CHART_ID]) == _drawable(doc)
    assert len(report.rows) == len(doc.kernels)
    if getattr(doc, "sweep", None):
        assert html_report.SWEEP_ID in report.figures and f'id="{html_report.SWEEP_ID}"' in text


def test_a_runs_points_hover_with_their_figures_and_verdict():
    doc = documents.load(RUN)
    fig = html_report.build(doc, [RUN]).figures[html_report.CHART_ID]
    gmem = next(t for t in fig.data if t.name == "GMEM (model)")
    k = doc.kernels[5]
    assert k.name == "register_tiling_2d"
    j = list(gmem.customdata).index(5)
    assert gmem.x[j] == pytest.approx(32.0) and gmem.y[j] == pytest.approx(k.gflops)
    hover = gmem.hovertext[j]
    assert f"{k.gflops:,.0f} GFLOP/s" in hover and f"{100 * doc.reference.time_ms / k.time_ms:.1f} % of cuBLAS" in hover
    assert "occupancy 25 % (registers)" in hover and "GMEM (model) 32" in hover
    assert "x its floor of" in hover  # the verdict sentence of the results' own verdict
    # the roofs are the file's: FP32 and DRAM theoretical and measured, L2 and L1/shared
    roofs = {t.name for t in fig.data if t.mode == "lines"}
    assert {"FP32 roof 66,908 GFLOP/s", "FP32 roof 62,066 GFLOP/s measured", "DRAM 4,814 GB/s",
            "DRAM 4,282 GB/s measured", "L2 15,354 GB/s", "L1/shared 33,454 GB/s"} <= roofs
    # counted levels are in the legend, shown with --measured
    l2 = next(t for t in fig.data if t.name == "L2 (counted)")
    assert l2.visible == "legendonly"
    shown = html_report.build(doc, [RUN], measured=True).figures[html_report.CHART_ID]
    assert next(t for t in shown.data if t.name == "L2 (counted)").visible is True


def test_a_profiles_points_are_read_against_the_roof_of_their_precision():
    doc = documents.load(PROFILE)
    fig = html_report.build(doc, [PROFILE]).figures[html_report.CHART_ID]
    top = doc.kernels[0]
    assert top.precision == "bf16" and top.tensor_core
    at_dram = next(t for t in fig.data if t.name == "BF16 tensor at DRAM")
    assert at_dram.legendgroup == "BF16 tensor"
    assert 0 in list(at_dram.customdata)
    hover = at_dram.hovertext[list(at_dram.customdata).index(0)]
    assert "11.3 % of GPU time" in hover and "bf16 TC" in hover and "verdict:" in hover
    roofs = {t.name for t in fig.data if t.mode == "lines"}
    assert {"BF16 tensor roof 989,430 GFLOP/s", "FP32 roof 66,908 GFLOP/s"} <= roofs
    assert not any("FP8" in name for name in roofs)  # no kernel of this profile runs FP8


def test_a_kernel_whose_shared_memory_traffic_went_uncounted_has_no_l1_point():
    # the transformer step's nvjet GEMMs (wgmma fed by the TMA): Nsight Compute counts fewer L1/shared bytes
    # than DRAM bytes for them, impossible for bytes that pass the L1TEX unit; the chart and the report leave
    # that point out and say why, and keep it for kernels whose loads it did count
    from roofline.render.scene import l1_undercounted, profile_scene

    doc = documents.load(PROFILE)
    top = doc.kernels[0]
    assert top.name.startswith("nvjet") and l1_undercounted(top.bytes)
    assert top.bytes["l1"] + top.bytes.get("smem", 0) < top.bytes["dram"]
    softmax = next(k for k in doc.kernels if k.name.startswith("cunn_SoftMax"))
    assert not l1_undercounted(softmax.bytes)
    levels = {(p.index, p.level) for p in profile_scene(doc).points}
    assert (0, "DRAM") in levels and (0, "L1/shared") not in levels
    assert (doc.kernels.index(softmax), "L1/shared") in levels
    report = html_report.build(doc, [PROFILE])
    assert any(n.startswith("No L1/shared point for #1, #5,") and "wgmma" in n for n in report.notes)


def test_names_from_files_are_escaped(tmp_path):
    data = json.loads(PROFILE.read_text())
    data["kernels"][0]["name"] = TEMPLATE_NAME
    data["kernels"][1]["name"] = "</script><script>alert(1)</script>"
    src = tmp_path / "profile.json"
    src.write_text(json.dumps(data))
    out = tmp_path / "report.html"
    documents.chart([src], out)
    text = out.read_text(encoding="utf-8")
    assert html.escape(TEMPLATE_NAME) in text  # 'void f&lt;float, 128&gt;(T&amp;, int)' in the table
    assert "void f<float" not in text and "<script>alert" not in text


def test_highlight_fades_the_other_kernels():
    doc = documents.load(RUN)
    fig = html_report.build(doc, [RUN], highlight=["warptiling"]).figures[html_report.CHART_ID]
    gmem = next(t for t in fig.data if t.name == "GMEM (model)")
    l1 = next(t for t in fig.data if t.name == "L1 (model)")  # naive's and gmem_coalescing's, their L1 sectors
    strengths = dict(zip(gmem.customdata, gmem.marker.opacity)) | dict(zip(l1.customdata, l1.marker.opacity))
    assert strengths[9] == pytest.approx(0.95) and strengths[0] == pytest.approx(0.2) and sorted(l1.customdata) == [0, 1]


def test_cli_writes_the_report(tmp_path):
    out = tmp_path / "r.html"
    r = CliRunner().invoke(app, ["plot", str(RUN), "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    assert f"wrote {out}" in r.stdout and out.stat().st_size > 3_000_000
    assert not [p for p in tmp_path.iterdir() if p.name != "r.html"]  # no temporary left behind


def test_without_plotly_one_line_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "plotly", None)
    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)
    out = tmp_path / "r.html"
    r = CliRunner().invoke(app, ["plot", str(RUN), "--out", str(out)])
    assert r.exit_code == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'plotly>=5.20' (roofline's report extra)" in lines[0] and lines[0].startswith("roofline: error:")
    assert not out.exists()


def test_the_report_never_overwrites_its_input(tmp_path):
    src = tmp_path / "results.html"
    src.write_bytes(RUN.read_bytes())
    r = CliRunner().invoke(app, ["plot", str(src), "--out", str(src)])
    assert r.exit_code == 2 and "is one of the files read" in r.stderr
    assert src.read_bytes() == RUN.read_bytes()


def test_kind_sweep_needs_a_sweep(tmp_path):
    r = CliRunner().invoke(app, ["plot", str(RUN), "--kind", "sweep", "--out", str(tmp_path / "r.html")])
    assert r.exit_code == 2 and "holds no size sweep" in r.stderr


CHROMIUM = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


# Run after the page's own scripts, as a person would: sort the table by GFLOP/s (two clicks:
# descending), click the first kernel's row; the outcome is left on <body> for the dumped DOM.
CLICKS = """<script>
var th = Array.prototype.find.call(document.querySelectorAll('#kernels th'), function (c) {
  return c.textContent === 'GFLOP/s'; });
th.click(); th.click();
document.getElementById('kernel-0').click();
var gd = document.getElementById('CHART_ID');
document.body.setAttribute('data-selected', JSON.stringify(gd.data.map(function (t) {
  return t.selectedpoints === undefined ? null : t.selectedpoints; })));
document.body.setAttribute('data-order', Array.prototype.map.call(document.querySelectorAll('#kernels tbody tr'),
  function (r) { return r.dataset.index; }).join(','));
</script></body>""".replace("CHART_ID", html_report.CHART_ID)


BROWSED = [RUN, PROFILE]

# This module's tests run in one process, in order (a group): the browser pages are started at its
# first test and read at its last ones, so Chromium's seconds of waiting overlap the other tests.
pytestmark = pytest.mark.xdist_group("html_report")


@pytest.fixture(scope="module", autouse=True)
def browsers(tmp_path_factory):
    """Each page of BROWSED (the page documents.chart writes, with the clicks) opened in headless
    Chromium at once, in the background: {path: (report, document, Chromium process, the folder
    its dumped DOM and stderr go to)}."""
    if CHROMIUM is None:
        yield {}
        return
    started = {}
    for path in BROWSED:
        doc = documents.load(path)
        report = html_report.build(doc, [path])  # the page documents.chart writes (tested above), with the clicks
        folder = tmp_path_factory.mktemp(f"browser-{path.stem}")
        out = folder / "report.html"
        out.write_text(html_report.page_html(report).replace("</body>", CLICKS), encoding="utf-8")
        # no network at all: the flags keep Chromium's own background connections off as well
        with (folder / "dom.html").open("w") as dom, (folder / "stderr.txt").open("w") as err:
            proc = subprocess.Popen(
                [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-quic",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={folder / 'chromium-profile'}", "--enable-logging=stderr", "--v=0",
                 "--virtual-time-budget=2000", "--dump-dom", out.as_uri()],
                stdout=dom, stderr=err)
        started[path] = (report, doc, proc, folder)
    yield started
    for _, _, proc, _ in started.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary (Debian: apt-get install chromium)")
@pytest.mark.parametrize("path", BROWSED, ids=lambda p: p.stem)
def test_the_report_runs_in_a_headless_browser(path, browsers):
    report, doc, proc, folder = browsers[path]
    fig = report.figures[html_report.CHART_ID]
    visible_points = sum(len(t.x) for t in fig.data if t.mode == "markers" and t.visible in (None, True))
    rates = [k.gflops for k in doc.kernels]
    by_rate = sorted(range(len(rates)), key=lambda i: (rates[i] is None, -(rates[i] or 0)))
    marked = [[j for j, c in enumerate(t.customdata) if c == 0] if t.mode == "markers" else None for t in fig.data]
    proc.wait(timeout=60)
    stderr, dom = (folder / "stderr.txt").read_text(), (folder / "dom.html").read_text()
    assert proc.returncode == 0, stderr[-2000:]
    console = [line for line in stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert console == []  # JavaScript errors (and any console output) show up here
    assert 'class="main-svg"' in dom  # Plotly ran and drew its SVG
    assert dom.count('<tr class="kernel') == len(doc.kernels)
    assert len(re.findall(r'<path class="point[ "]', dom)) == visible_points
    body = re.search(r"<body ([^>]*)>", dom).group(1)
    assert f'data-order="{",".join(map(str, by_rate))}"' in body  # sorted by GFLOP/s, fastest first
    assert json.loads(html.unescape(re.search(r'data-selected="([^"]*)"', body).group(1))) == marked
    assert re.findall(r'<tr class="kernel picked" id="kernel-(\d+)"', dom) == ["0"]


def _traces(fig) -> list[dict]:
    """What a figure draws, trace by trace, as plain data: name, mode, visibility, legend group,
    points (x, y to 6 significant figures), table rows, hover texts, marker (symbol, size, colour,
    opacity, edge) and line (colour, dash, width); then the title and the x range."""
    def num(v):
        return [f"{x:.6g}" if isinstance(x, float) else x for x in v] if isinstance(v, (list, tuple)) else \
            (f"{v:.6g}" if isinstance(v, float) else v)

    out = []
    for t in fig.data:
        m, line = t.marker, t.line
        out.append({"name": t.name, "mode": t.mode, "visible": t.visible, "group": t.legendgroup,
                    "x": num(list(t.x)), "y": num(list(t.y)),
                    "customdata": list(t.customdata) if t.customdata is not None else None,
                    "hover": list(t.hovertext) if t.hovertext is not None else t.hovertemplate,
                    "marker": [num(m.symbol), num(m.size), num(m.color), num(m.opacity),
                               m.line.color, num(m.line.width)] if t.mode == "markers" else None,
                    "line": [line.color, line.dash, num(line.width)] if t.mode != "markers" else None})
    return out + [{"title": fig.layout.title.text, "x range": num(list(fig.layout.xaxis.range))}]


# The report's chart data pinned (`_traces`, hashed): moving code must not change what it draws.
PINNED = {"run": "d547f67cf5e0b3ea", "run-measured-highlight": "415cd81fa69ac079", "profile": "485cb1c3ebaf72ac"}  # memory ceilings raised to the best rate seen, the title's peaks named by source; no L1/shared point for a kernel with fewer bytes counted there than in DRAM; a memory-bound verdict gives its FLOP per byte against the ridge; BF16 roof named "(FP16 cuBLAS)"; L2 and DRAM floors of the whole chip; ceilings at least the rates counted; titles broken into lines of 80; "near" a roof within 1.5x; the share of the GPU its waves keep busy said; naive and gmem_coalescing by their L1 sectors; a profile's measured roofs as its verdicts read them


def _pinned_reports():
    run = FIXTURES / "results-h200.json"
    doc = documents.load(run)
    profile = documents.load(PROFILE)
    return {"run": html_report.build(doc, [run]),
            "run-measured-highlight": html_report.build(doc, [run], measured=True, highlight=["warptiling"]),
            "profile": html_report.build(profile, [PROFILE])}


def test_the_reports_chart_data_is_pinned():
    import hashlib

    found = {name: hashlib.sha256(json.dumps(_traces(r.figures[html_report.CHART_ID])).encode()).hexdigest()[:16]
             for name, r in _pinned_reports().items()}
    assert found == PINNED


@pytest.mark.parametrize("path", [RUN, PLOTS / "user-kernel-h200.json", PLOTS / "tune-h200.json"], ids=lambda p: p.stem)
def test_a_kernel_has_the_charts_colour_in_the_report(path):
    """The same kernel looks the same everywhere: its points in the report are in the colour the
    PNG chart draws it in (the scene's, with the chart's `most`)."""
    from roofline.render import roofline_chart, scene, style

    doc = documents.load(path)
    search = doc.tune is not None
    chart = scene.run_scene([doc], most=roofline_chart.MAX_SEARCHED if search else roofline_chart.MAX_DRAWN)
    drawn = {p.index: style.css_color(p.color) for p in chart.points}
    fig = html_report.build(doc, [path]).figures[html_report.CHART_ID]
    found = {c: color for t in fig.data if t.mode == "markers" for c, color in zip(t.customdata, t.marker.color)}
    assert found == drawn


def test_a_sweeps_kernels_have_the_sweep_charts_colours():
    from roofline.render.chart import kernel_style
    from roofline.render.style import css_color

    path = PLOTS / "sweep-h200.json"
    doc = documents.load(path)
    sweep = html_report.build(doc, [path]).figures[html_report.SWEEP_ID]
    ladder = [t.name for t in sweep.data if t.name != "cuBLAS"]
    assert ladder and all(t.line.color == css_color(kernel_style(t.name, ladder.index(t.name), len(ladder))["color"])
                          for t in sweep.data if t.name != "cuBLAS")


def test_kernels_with_a_timeline_get_their_runs_over_time_one_at_a_time():
    path = PLOTS / "timeline-h200-bf16-8192.json"
    doc = documents.load(path)
    timed = doc.timed_kernels()
    fig = html_report.build(doc, [path]).figures[html_report.TIMELINE_ID]
    (menu,) = fig.layout.updatemenus
    labels = [b.label for b in menu.buttons]
    assert len(labels) == len(timed) == 4 and labels[:3] == ["wgmma_tma", "wgmma_ws", "wgmma_persistent"]
    assert labels[3].startswith("nvjet_sm90_tst_320x128") and labels[3].endswith("coopB_NNT")  # cut in the middle
    first = timed[0].timeline
    shown = [t for t in fig.data if t.visible]
    assert {t.name for t in shown} == {"SMs busy", "tensor pipe", "FMA pipe", "FP64 pipe", "DRAM", "L2 unit",
                                       "L1tex unit"}
    (tensor,) = [t for t in shown if t.name == "tensor pipe"]
    assert list(tensor.y) == pytest.approx([100 * v for v in first.shares["tensor"]])
    # its phases shaded, those of 2 % of the run or more named with their share of it, those at an end from that end
    phases = first.phases()
    assert len(fig.layout.shapes) == len(phases)
    assert [s.label.text for s in fig.layout.shapes] == [f"{p.name} {100 * p.share:.0f} %" if p.share >= 0.02 else ""
                                                         for p in phases]
    assert [s.label.text for s in fig.layout.shapes] == ["", "steady 97 %", "tail 3 %"]
    assert fig.layout.shapes[2].label.textposition == "top right"
    assert html_report.TIMELINE_ID not in html_report.build(documents.load(RUN), [RUN]).figures


def test_two_short_phases_side_by_side_are_named_one_above_the_other():
    # register_tiling_1d at 4096^3 on an H100 (run --timeline): drain 2.4 % of the run beside a tail of 3.1 %, both
    # named; at the top both names would cover the run's last 8 %, so the tail's goes halfway down
    path = Path(__file__).resolve().parent / "fixtures" / "timeline-h100" / "run-timeline-fp32-4096.json.gz"
    doc = documents.load(path)
    fig = html_report.build(doc, [path]).figures[html_report.TIMELINE_ID]
    n = [b.label for b in fig.layout.updatemenus[0].buttons].index("register_tiling_1d")
    shapes = fig.layout.updatemenus[0].buttons[n].args[1]["shapes"]
    named = [(s["label"]["text"], s["label"]["textposition"]) for s in shapes if s["label"]["text"]]
    assert named == [("steady 95 %", "top center"), ("drain 2 %", "top center"), ("tail 3 %", "middle right")]
    # a short phase beside a long one keeps its place at the top (the first kernel: steady 97 %, tail 3 %)
    first = [(s.label.text, s.label.textposition) for s in fig.layout.shapes if s.label.text]
    assert all(pos.startswith("top") for _, pos in first)


def test_a_long_chart_title_is_broken_into_lines_not_clipped():
    title = html_report._title("NVIDIA H200: BF16 GEMM 8192x8192x8192 (FP32 accumulate), hierarchical roofline "
                               "(peaks from NVML clocks and per-SM rates, L2 flushed before each launch) <x>")
    lines = title.split("<br>")
    import html

    assert len(lines) == 2 and all(len(html.unescape(x)) <= 80 for x in lines) and lines[-1].endswith("&lt;x&gt;")
    assert html_report._title("short") == "short"


def test_a_kernel_that_picked_its_tile_by_shape_is_named_with_it_in_the_verdict_column():
    # as show's verdicts name it: split_k at 1024^3 on an H100, its tile's four blocks adding the slices
    doc = documents.load(FIXTURES / "results-h100-split-1024.json")
    report = html_report.build(doc, [FIXTURES / "results-h100-split-1024.json"])
    verdict = next(row[-1][0] for row in report.rows if row[0][1] == "split_k")
    assert verdict.startswith("split_k (128x256, 8x16 per thread, K in 4 slices, each tile's 4 blocks adding them "
                              "together): FP32-bound")
