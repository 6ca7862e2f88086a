"""Each kernel of PM-sampled reports over its run (docs/timeline.md): intervals, what the samples add
up to against the launch's own counts, the phases, the waves model's tail beside the sampled one.

    python bench/timeline_table.py REPORT.ncu-rep [REPORT.ncu-rep ...]

The reports come from `bash bench/pm_visit.sh "bf16 8192" ...` (PM_REPORTS=1) or `roofline profile
--timeline --report FILE.ncu-rep -- COMMAND`; reading them needs ncu_report 2025.4 or newer.
"""

from __future__ import annotations

import sys
from pathlib import Path

from roofline import nsight
from roofline.model.timeline import ROOF_NAMES
from roofline.render.timeline_tables import predicted
from roofline.results import convert


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    head = ["report", "kernel", "intervals", "ns", "time", "DRAM", "blocks", "fill", "steady", "drain", "tail",
            "model's tail", "steady tensor", "tensor sampled/whole"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for path in paths:
        report = nsight.read(Path(path))
        doc = convert.from_profile(report.launches, report.device, report=Path(path).name)
        rows = nsight.read_rows(Path(path)).rows
        whole = rows[0].values.get("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed") if len(rows) == 1 else None
        for k in doc.timed_kernels():
            tl = k.timeline
            by = {p.name: p for p in tl.phases()}
            steady = by.get("steady")
            tensor = (sum(tl.shares["tensor"][i] * tl.dt_us[i] for i in range(steady.first, steady.last + 1))
                      / steady.time_us) if steady and "tensor" in tl.shares else None
            guess = predicted(k)
            # the tensor pipe's sampled share over the launch against Nsight Compute's whole-launch figure
            sampled = (sum(x * dt for x, dt in zip(tl.shares["tensor"], tl.dt_us)) / (k.time_ms * 1e3)
                       if "tensor" in tl.shares else None)
            agree = f"{sampled * 100 / whole:.3f}" if sampled is not None and whole and whole > 1 else "-"

            def cell(name):
                p = by.get(name)
                return f"{100 * p.share:.1f} % ({100 * p.busy:.0f} %)" if p else "-"

            step = sorted(tl.dt_us)[len(tl.dt_us) // 2] * 1e3
            print("| " + " | ".join([Path(path).name, k.name[:28], f"{len(tl.t_us):,}", f"{step:,.0f}",
                                     *(f"{tl.closure[c]:.3f}" if c in tl.closure else "-" for c in ("time", "dram", "blocks")),
                                     *(cell(p) for p in ("fill", "steady", "drain", "tail")),
                                     f"{100 * guess[0]:.1f} % ({100 * guess[1]:.0f} %)" if guess else "-",
                                     f"{100 * tensor:.0f} %" if tensor is not None else "-", agree]) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
