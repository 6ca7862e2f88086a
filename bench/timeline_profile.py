"""One profile document of several single-launch reports made with PM sampling, each kernel with
its timeline (docs/timeline.md): what `roofline plot OUT --kind timeline` draws for a ladder whose
kernels were profiled one report each (`bash bench/pm_visit.sh`, PM_REPORTS=1).

    python bench/timeline_profile.py --out OUT.json "what was profiled, where" REPORT.ncu-rep [...]

The reports must come from one GPU. Their launches are read as one profile's, in the order given;
the kernels' time shares are of the launches together, which ran in separate processes, not as
one program's step. Reading the samples needs ncu_report 2025.4 or newer.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from roofline import nsight
from roofline.results import convert, store


def main(out: str, what: str, paths: list[str]) -> int:
    launches, device, names = [], None, []
    for path in paths:
        report = nsight.read(Path(path))
        if device is not None and report.device.name != device.name:
            print(f"{path}: made on {report.device.name}, not {device.name}", file=sys.stderr)
            return 2
        device = device or report.device
        launches += [replace(x, order=len(launches) + i) for i, x in enumerate(report.launches)]
        names.append(Path(path).name)
    doc = convert.from_profile(launches, device, report=", ".join(names), notes=[
        f"{what}: {len(paths)} reports of one launch each, read together; the time shares are of their launches "
        "together, which ran in separate processes"]).model_copy(update={"programs": len(paths)})
    store.save(doc, Path(out))
    print(f"wrote {out}: {len(doc.kernels)} kernels, {len(doc.timed_kernels())} with a timeline")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 5 or sys.argv[1] != "--out":
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[2], sys.argv[3], sys.argv[4:]))
