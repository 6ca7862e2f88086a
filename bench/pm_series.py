"""Each launch's PM-sampling series from Nsight Compute reports, aligned to the launch's own start
(ncu_report's `ITimelines.aligned_metric`), with the launch's whole-kernel metrics beside them, as a
small gzipped JSON: what a study of kernels over time reads in place of reports of megabytes.
    python bench/pm_series.py OUT.json.gz "what was profiled, where" REPORT.ncu-rep ...
"""

import gzip
import json
import sys
from pathlib import Path

from roofline.nsight.binary import _ncu_report_module


def series(action, timelines, name):
    metric = timelines.aligned_metric(action.metric_by_name(name)) if timelines is not None else None
    if metric is None:
        return None
    ids = metric.correlation_ids()
    return {"t_ns": [ids.as_uint64(i) for i in range(ids.num_instances())],
            "value": [metric.as_double(i) for i in range(metric.num_instances())], "unit": metric.unit()}


def scalar(metric):
    try:
        return metric.as_double()
    except Exception:  # a string or an instanced metric
        return None


def main(out: str, source: str, reports: list[str]) -> None:
    ncu_report = _ncu_report_module()
    launches = []
    for path in reports:
        ctx = ncu_report.load_report(path)
        for r in range(ctx.num_ranges()):
            rng = ctx.range_by_idx(r)
            for a in range(rng.num_actions()):
                action = rng.action_by_idx(a)
                timelines = action.timelines()
                names = sorted(action.metric_names())
                sampled = [n for n in names if ".TriageCompute." in n or n.startswith("pmsampling:")]
                launches.append({
                    "report": Path(path).name, "kernel": action.name(ncu_report.IAction.NameBase_DEMANGLED),
                    "metrics": {n: v for n in names if n not in sampled
                                and (v := scalar(action.metric_by_name(n))) is not None},
                    "series": {n: s for n in sampled if (s := series(action, timelines, n)) is not None}})
    with gzip.open(out, "wt", encoding="utf-8") as f:
        json.dump({"source": source, "launches": launches}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
