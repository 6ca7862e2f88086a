"""ncu's text output (`roofline.nsight.text`) in the shapes its versions print: the corpus holds
ncu 2025.3's (tests/test_ncu_corpus.py); these are the older and the broken ones."""

from __future__ import annotations

import pytest

from roofline.errors import UsageError
from roofline import nsight
from roofline.nsight import text

# ncu 2019.x/2020.x: no header row, a date in the launch line, no launch size, cycle/nsecond and usecond
OLD = """\
==PROF== Connected to process 8812 (/home/me/saxpy)
result: 2.000000
==PROF== Disconnected from process 8812
[8812] saxpy@node7
  saxpy(int, float, float *, float *), 2020-Jun-02 16:27:38, Context 1, Stream 7
    Section: GPU Speed Of Light
    ---------------------------------------------------------------------- --------------- ------------------------------
    DRAM Frequency                                                           cycle/nsecond                           6.79
    SM Frequency                                                             cycle/nsecond                           1.36
    Elapsed Cycles                                                                   cycle                         37,452
    Memory [%]                                                                           %                          88.66
    Duration                                                                       usecond                          27.52
    ---------------------------------------------------------------------- --------------- ------------------------------
    Section: Launch Statistics
    ---------------------------------------------------------------------- --------------- ------------------------------
    Block Size                                                                                                        256
    Grid Size                                                                                                       4,096
    Registers Per Thread                                                   register/thread                             16
    ---------------------------------------------------------------------- --------------- ------------------------------
"""

FAILED = """\
[40] app@host
  k1 (1, 1, 1)x(32, 1, 1), Context 1, Stream 7, Device 0, CC 8.0
    Section: GPU Speed Of Light Throughput
    ----------------------- ----------- ------------
    Metric Name             Metric Unit Metric Value
    ----------------------- ----------- ------------
    Duration                         us         3.10
    ----------------------- ----------- ------------
==ERROR== LaunchFailed
  k2 (1, 1, 1)x(32, 1, 1), Context 1, Stream 7, Device 0, CC 8.0
    Section: GPU Speed Of Light Throughput
    ----------------------- ----------- ------------
    Metric Name             Metric Unit Metric Value
    ----------------------- ----------- ------------
    Duration                         us      (!) nan
    SM Frequency                    Ghz      (!) nan
    ----------------------- ----------- ------------
[41] other@host
  k3 (2, 1, 1)x(64, 1, 1), Context 1, Stream 7, Device 0, CC 8.0
    Section: GPU Speed Of Light Throughput
    ----------------------- ----------- ------------
    Metric Name             Metric Unit Metric Value
    ----------------------- ----------- ------------
    SM Frequency                    Mhz     1,410.00
    Duration                         us        12.50
"""


def test_the_oldest_text_form_is_read():
    report = nsight.pages.parse_csv(OLD, "old.txt")
    assert "text output" in report.read_with and len(report.rows) == 1
    row = report.rows[0]
    assert row.kernel == "saxpy(int, float, float *, float *)" and row.process_id == 8812
    r = row.reading
    assert r.value("time") == pytest.approx(27_520) and r.value("clock") == pytest.approx(1.36e9)
    assert r.value("registers") == 16 and r.grid == (4096, 1, 1) and r.block == (256, 1, 1)


def test_failed_launches_several_processes_and_a_cut_end():
    report = nsight.pages.parse_csv(FAILED, "f.txt")
    assert any("1 failed launch (every value nan" in n and "launch 1 (k2)" in n for n in report.notes)
    assert [r.kernel for r in report.rows] == ["k1", "k3"]
    assert [r.process_id for r in report.rows] == [40, 41]
    # k3's table has no closing line (the file was cut) but its duration was printed: read, with a note
    assert not report.rows[1].incomplete
    assert any("inside its GPU Speed Of Light Throughput section before launch 2 (k3)" in n for n in report.notes)
    launches, notes = nsight.launches.from_rows(report.rows)
    assert [x.demangled for x in launches] == ["k1", "k3"] and launches[1].time_ns == pytest.approx(12_500)
    without = nsight.pages.parse_csv(FAILED.replace("    Duration                         us        12.50\n", ""), "f.txt")
    assert without.rows[1].incomplete  # cut before its duration: left out as cut short
    assert "cut short" in nsight.launches.from_rows(without.rows)[1][0]
    assert report.rows[0].reading.grid == (1, 1, 1) and report.rows[0].reading.block == (32, 1, 1)


def test_text_that_is_no_report_is_refused():
    assert not text.looks_like_text("hello\n  world, Context 1, Stream 7\n")
    with pytest.raises(UsageError, match="not an Nsight Compute"):
        nsight.pages.parse_csv("hello\nworld\n", "x.txt")


def test_a_report_without_device_attributes_is_read_against_the_one_gpu_of_its_shape():
    """The text and the details page print the compute capability (the launch line's 'CC') and
    the SM count (Launch Statistics' '# SMs'): where one preset alone has both, the report is
    read against it, saying why; where several do, the refusal names only those."""
    from roofline.errors import UsageError
    from roofline.nsight.device import device_from_rows
    from roofline.nsight.rows import Row

    l4 = device_from_rows([Row("k", values={"launch__sm_count": 58.0}, text={"CC": "8.9"})])
    assert l4.name == "L4" and "the one GPU known of compute capability 8.9 with 58 SMs" in l4.source
    with pytest.raises(UsageError, match=r"\(it gives compute capability 9\.0 and 132 SMs, not .*of that kind \(h100-sxm, h100-nvl, "
                                         r"h200, gh200-96gb, gh200-144gb\); if it is another, describe"):
        device_from_rows([Row("k", values={"launch__sm_count": 132.0}, text={"CC": "9.0"})])
    with pytest.raises(UsageError, match=r"\(it gives compute capability 9\.0, not .*of that kind \(h100-sxm, h100-pcie"):
        device_from_rows([Row("k", values={"launch__sm_count": 7.0}, text={"CC": "9.0"})])  # no GPU of 7 SMs
