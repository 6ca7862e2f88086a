"""The roofline chart from a recorded results document (no GPU needed)."""

import pytest

from roofline import plot
from roofline.errors import UsageError


def test_png_is_written(tmp_path, doc):
    out = plot.draw(doc, tmp_path / "r.png")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    assert [p.name for p in tmp_path.iterdir()] == ["r.png"]


def test_svg_carries_every_label_roof_and_note(tmp_path, doc):
    svg = plot.draw(doc, tmp_path / "r.svg").read_text()
    for k in doc["kernels"]:
        assert k["name"] in svg
    assert "ridge 13.9 FLOP/B" in svg
    assert "FP32 peak 66,908 GFLOP/s" in svg
    assert "DRAM 4,800 GB/s" in svg
    assert "cuBLAS (reference) 50,000 GFLOP/s" in svg
    assert "25,000 GFLOP/s, 64 regs, occupancy 50 % (registers)" in svg
    assert "mostly served by L2" in svg
    assert "H200: SGEMM 4096x4096x4096 FP32" in svg


def test_failed_kernel_is_listed_not_drawn(tmp_path):
    from conftest import make_doc

    d = make_doc(failed=("register_strip",))
    svg = plot.draw(d, tmp_path / "r.svg").read_text()
    assert "Not drawn, failed verification or not timed: register_strip." in svg
    assert "16,000 GFLOP/s" not in svg  # no legend entry and no point for it


def test_labels_do_not_overlap(tmp_path, doc):
    # register_tiling_1d and register_strip share AI 16 and nearly the same rate: their labels
    # must still land apart.
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401

    doc["kernels"][4]["gflops"] = doc["kernels"][3]["gflops"] * 0.98
    boxes = plot.label_boxes(doc)
    for i, a in enumerate(boxes):
        for b in boxes[:i]:
            assert not a.overlaps(b)


def test_crowded_labels_stay_inside_the_axes():
    import copy

    from conftest import make_doc

    d = make_doc()
    for i in range(8):  # a cluster of variants around AI 32
        k = copy.deepcopy(d["kernels"][5])
        k["name"] = f"variant_{i}"
        k["gflops"] = 25_000 + 700 * i
        k["model"]["arithmetic_intensity"] = 32 * (1 + 0.08 * i)
        d["kernels"].append(k)
    boxes = plot.label_boxes(d)
    for i, a in enumerate(boxes):
        for b in boxes[:i]:
            assert not a.overlaps(b)


def test_whole_ladder_drawn_and_a_long_list_capped(tmp_path, doc):
    import copy

    svg = plot.draw(doc, tmp_path / "r.svg").read_text()
    assert len(doc["kernels"]) == 12 and "fastest of" not in svg  # the whole ladder, no cap note
    for i in range(8):  # a tuning sweep's worth of extra, slower kernels
        k = copy.deepcopy(doc["kernels"][0])
        k["name"], k["gflops"] = f"slow_variant_{i}", 100.0 + i
        doc["kernels"].append(k)
    svg = plot.draw(doc, tmp_path / "capped.svg").read_text()
    assert "The 16 fastest of 20 kernels are drawn." in svg
    assert "slow_variant_4" in svg and "naive" in svg  # the 16th fastest and the slowest of the ladder
    assert "slow_variant_3" not in svg


@pytest.mark.parametrize("name", ["r.jpg", "r", "r.png.txt"])
def test_bad_extension(tmp_path, name):
    with pytest.raises(UsageError, match=r"\.png, \.svg or \.pdf"):
        plot.check_output(tmp_path / name)


def test_missing_folder(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        plot.check_output(tmp_path / "nope" / "r.png")


def sweep_doc():
    from conftest import make_doc

    doc = make_doc()
    doc["sweep"] = [{"problem": {"m": n, "n": n, "k": n},
                     "reference": {"gflops": 50_000.0 * n / 8192, "time_ms": 1.0},
                     "kernels": [{"name": k["name"], "gflops": k["gflops"] * n / 8192, "time_ms": 1.0,
                                  "verified": k["name"] != "naive" or n > 128, "pct_of_reference": 50.0}
                                 for k in doc["kernels"]]}
                    for n in (128, 256, 512, 1024, 2048, 4096, 8192)]
    return doc


def test_sweep_chart(tmp_path):
    from roofline import results, sweep_chart

    doc = results.validate(sweep_doc())
    svg = sweep_chart.draw(doc, tmp_path / "s.svg").read_text()
    for name in ("cuBLAS (reference)", "async_copy", "naive", "8192", "FP32 peak 66,908 GFLOP/s"):
        assert name in svg


def test_sweep_needs_a_sweep(tmp_path, doc):
    from roofline import sweep_chart

    with pytest.raises(UsageError, match="holds no size sweep"):
        sweep_chart.draw(doc, tmp_path / "s.png")
    assert not (tmp_path / "s.png").exists()


def test_malformed_sweep_is_refused():
    from roofline import results

    doc = sweep_doc()
    doc["sweep"][2]["kernels"][0]["gflops"] = "fast"
    with pytest.raises(UsageError, match=r"sweep\[2\].kernels\[0\].gflops must be a number"):
        results.validate(doc)
