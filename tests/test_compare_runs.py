"""Two run files compared by the one engine (`analysis.compare.compare_work`): what a run adds to
each kernel's change (speedup, registers, the two-roof reading and the move toward it), the
reference, the kernels in both files not timed in both, and the tables and chart that show them."""

import pytest
from conftest import make_doc, set_rate

from roofline.analysis.compare import Delta, Untimed, compare_work
from roofline.errors import UsageError
from roofline.render.changes import change_tables
from roofline.results import store


def test_a_faster_run_kernel_moves_closer_to_its_floor_and_the_chart_shows_the_reference(tmp_path):
    from roofline.render import compare_chart

    before, after = make_doc(), make_doc()
    set_rate(after["kernels"][5], 30_000.0)
    cmp = compare_work(store.parse(before), store.parse(after))
    d = cmp.kernels[5]
    assert d.roof_move == "closer" and d.speedup == pytest.approx(1.2) and d.registers == (64, 64)
    assert d.floors[0].times_floor == pytest.approx(1.2 * d.floors[1].times_floor)
    assert {c.roof_move for c in cmp.kernels if c is not d} == {"same", "below its floor"}  # gmem_coalescing beats its floor
    assert cmp.in_both == cmp.kernels and cmp.reference_speedup == pytest.approx(1.0)
    assert cmp.to_dict()["reference_speedup"] == pytest.approx(1.0)
    svg = compare_chart.draw_moves(cmp, tmp_path / "c.svg").read_text()
    assert "cublas (reference)" in svg and "-17 %" in svg  # 1 / 1.2 - 1


def test_runs_of_different_problems_are_refused_unless_forced():
    before, small = store.parse(make_doc()), store.parse(make_doc(n=1024))
    with pytest.raises(UsageError, match="different problems"):
        compare_work(before, small)
    cmp = compare_work(before, small, force=True)
    assert cmp.notes[0].startswith("different problems") and cmp.problems == (before.problem.problem,
                                                                              small.problem.problem)


def test_a_kernel_failed_in_one_run_is_in_both_untimed_gone_and_in_the_run_table():
    failed = store.parse(make_doc(failed=("register_strip", "async_copy")))
    cmp = compare_work(store.parse(make_doc()), failed)
    untimed = [c for c in cmp.in_both if isinstance(c, Untimed)]
    assert [u.label for u in untimed] == ["register_strip", "async_copy"] and cmp.gone == ["register_strip", "async_copy"]
    assert all(isinstance(c, Delta) for c in cmp.in_both if c not in untimed) and len(cmp.in_both) == 14
    u = untimed[0]
    assert u.after_ms is None and u.floors[1] is None and u.speedup is None and u.roof_move == "-"
    assert u.before_ms is not None and u.floors[0] is not None
    from rich.console import Console

    console = Console(width=140, record=True)
    for table in change_tables(cmp, 140):  # the runs side by side, then what changed
        console.print(table)
    text = console.export_text()
    assert text.startswith("before -> after: SGEMM 4096x4096x4096 on H200") and "what changed, run" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("register_strip"))
    assert row.split()[2:4] == ["-", "-"] and "-> failed" in row
