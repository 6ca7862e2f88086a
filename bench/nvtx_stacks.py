"""The NVTX stack Nsight Compute recorded around each launch of a report (`ncu --nvtx`), with the
launch's ID, demangled kernel name and duration, as a small gzipped JSON: what tests/test_ops_nvtx.py
reads in place of a report of a hundred megabytes.
    python bench/nvtx_stacks.py REPORT.ncu-rep OUT.json.gz "what was profiled, where, with what"
"""

import gzip
import json
import sys

from roofline.nsight.binary import _ncu_report_module


def main(report: str, out: str, source: str) -> None:
    ncu_report = _ncu_report_module()
    ctx = ncu_report.load_report(report)
    launches = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            state = action.nvtx_state()
            stack = []
            if state is not None:
                for domain in sorted(state.domains()):
                    stack += [str(x) for x in state.domain_by_id(domain).push_pop_ranges()]
            launch_id = action.metric_by_name("ID")
            duration = action.metric_by_name("gpu__time_duration.sum")
            launches.append({"id": launch_id.as_uint64() if launch_id is not None else a,
                             "kernel": action.name(ncu_report.IAction.NameBase_DEMANGLED),
                             "time_ns": duration.as_double() if duration is not None else None, "nvtx": stack})
    with gzip.open(out, "wt") as f:
        json.dump({"source": source, "launches": launches}, f)
    print(f"{len(launches)} launches -> {out}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
