"""Check that `roofline profile -- roofline run ...` and `roofline run --profile` agree on the
ladder kernels both see: the same counters (DRAM, L2, L1 and shared-memory bytes, FP32 FLOPs per
launch, within TOLERANCE) and the same binding roof.

    python bench/profile_agreement.py RUN_PROFILE.json PROFILE.json

RUN_PROFILE.json comes from `roofline run --all --size N --profile`, PROFILE.json from
`roofline profile --kernel-regex RE -- roofline run --all --size N`. Prints one row per kernel and
exits 1 when any kernel disagrees.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from roofline.nsight.names import short_name
from roofline.results import store

TOLERANCE = 0.05
FIELDS = (("dram_bytes", "dram"), ("l2_bytes", "l2"), ("l1_bytes", "l1"), ("smem_bytes", "smem"))


def template_of(demangled: str) -> tuple[str, tuple[int, ...]]:
    """The function name and integer template arguments of a kernel, however the demangler writes
    them: 'void register_tiling_2d<128, 128, 8, 8, 8>(int, ...)' and
    'void register_tiling_2d<(int)128, (int)128, (int)8, (int)8, (int)8>(int, ...)' both give
    ('register_tiling_2d', (128, 128, 8, 8, 8)); so does the name expression
    'register_tiling_2d<128,128,8,8,8>'."""
    name = short_name(demangled)
    start = demangled.find(name + "<")
    if start < 0:
        return name, ()
    depth, i = 0, start + len(name)
    for i in range(start + len(name), len(demangled)):
        depth += {"<": 1, ">": -1}.get(demangled[i], 0)
        if depth == 0:
            break
    args = re.sub(r"\((?:unsigned )?(?:int|long|short|char)\)", "", demangled[start + len(name) + 1:i])
    return name, tuple(int(x) for x in re.findall(r"-?\d+", args))


def main(run_path: str, profile_path: str) -> int:
    run, prof = store.load(Path(run_path)), store.load(Path(profile_path), profile=True)
    by_template = {}
    for k in prof.kernels:
        by_template.setdefault(template_of(k.demangled), []).append(k)
    bad = 0
    print(f"{'kernel':22} {'level':6} {'run --profile':>16} {'profile':>16} {'ratio':>7}   binding (run / profile)")
    for k in run.kernels:
        if k.counted is None or not k.template:
            continue
        groups = [g for g in by_template.get(template_of(k.template), []) if g.threads_per_block == k.threads_per_block]
        if not groups:
            near = [g.demangled[:100] for g in prof.kernels if g.name == template_of(k.template)[0]]
            print(f"{k.name:22} not in the profile (its template {k.template}; seen: {near[:2]})")
            bad += 1
            continue
        g = max(groups, key=lambda g: g.launches)
        rows = [(name, getattr(k.counted, field), g.bytes.get(key, 0.0) / g.launches) for field, key in FIELDS
                for name in [key]]
        rows.append(("fp32", k.counted.fp32_flops, g.flops.get("fp32", 0.0) / g.launches))
        b_run, b_prof = run.verdict(k).binding.level, prof.verdict(g).binding.level
        for i, (name, a, b) in enumerate(rows):
            ratio = b / a if a else (1.0 if not b else float("inf"))
            off = abs(ratio - 1) > TOLERANCE and max(a or 0, b) > 1e6
            bad += off
            tail = f"   {b_run} / {b_prof}" if i == 0 else ""
            print(f"{k.name if i == 0 else '':22} {name:6} {a or 0:16,.0f} {b:16,.0f} {ratio:7.3f}{' <- differs' if off else ''}{tail}")
        if b_run != b_prof:
            print(f"{'':22} binding roofs differ: {b_run} against {b_prof}")
            bad += 1
    print("agree" if not bad else f"{bad} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
