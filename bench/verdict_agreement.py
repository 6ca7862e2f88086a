"""Check that a run's verdicts name the same roof with and without Nsight Compute's counters, and
how close the modelled DRAM bytes come to the counted ones (docs/model.md).

    python bench/verdict_agreement.py RESULTS.json [RESULTS.json ...]

Each file comes from `roofline run ... --profile` (e.g. `--ladder tensor --size 8192 --profile`,
`--all --size 4096 --profile`, `--all --sweep ... --profile`). Prints per kernel the binding roof
and its distance read from the counted bytes and from the model's alone, the modelled and counted
DRAM bytes and their ratio, and exits 1 when a kernel's binding roof differs or a file has no
counted kernel.
"""

from __future__ import annotations

import sys
from pathlib import Path

from roofline import api
from roofline.model.roofs import verdict


def rows(path: Path) -> tuple[list[list[str]], int]:
    """One row per counted kernel of `path`, and how many disagree."""
    doc = api.read(path)
    out, bad = [], 0
    for k in doc.kernels:
        if not k.timed or k.counted is None or k.model is None:
            continue
        counted = doc.verdict(k)
        modelled = verdict(k.model, doc.roofs, k.time_ms, None, flops=doc.problem.problem.flops, waves=k.waves,
                           fits_in_l2=doc.fits_in_l2(doc.problem.problem), precision=doc.precision)
        same = counted.binding.level == modelled.binding.level
        bad += not same
        dram, found = k.model.dram_bytes, k.counted.dram_bytes
        out.append([k.name, f"{counted.binding.level} {counted.times_floor:.2f}",
                    f"{modelled.binding.level} {modelled.times_floor:.2f}", "yes" if same else "NO",
                    f"{dram / 1e6:,.1f}" if dram else "-", f"{found / 1e6:,.1f}" if found else "-",
                    f"{dram / found:.2f}" if dram and found else "-"])
    return out, bad


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    failed = 0
    for p in paths:
        table, bad = rows(Path(p))
        print(f"{p}: {len(table)} counted kernels, {bad} naming another roof without the counters")
        head = ["kernel", "counted", "model only", "same", "model DRAM MB", "counted DRAM MB", "ratio"]
        for r in [head] + table:
            print("  " + "  ".join(f"{c:>16}" if i else f"{c:<20}" for i, c in enumerate(r)))
        failed += bad or not table
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
