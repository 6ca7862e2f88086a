"""How far every form of every corpus report (tests/fixtures/ncu/corpus) lies from `roofline
profile` of the same program, per figure: the largest relative difference over the kernels each
form places (launch by launch order; the time of kernels under 20 us a launch as us per launch),
with how many kernels each form placed. The reference
is another run of the program, so what this prints is run-to-run variation plus the reader's
error; the forms of one report agree with each other to the digits they print.

    python bench/corpus_agreement.py        # one line per form, then the corpus's size
"""

from __future__ import annotations

import lzma
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "ncu" / "corpus"
SETS = ("full", "basic", "rooflineset")
LONG_MS = 0.02  # kernels of 20 us and more a launch are held relative, shorter ones by us per launch
FORMS = ("-raw.csv", "-raw-base.csv", "-details.csv", "-details-all.csv", ".txt", "-all.txt", ".ncu-rep")


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from roofline.commands import profile as profile_cmd
    from roofline.results import store

    worst: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    kernels: dict[str, int] = defaultdict(int)
    programs = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
    with tempfile.TemporaryDirectory() as tmp:
        for program in programs:
            ref = store.parse(__import__("json").loads(lzma.decompress((CORPUS / program / "roofline.json.xz")
                                                                       .read_bytes())), "ref", profile=True)
            theirs = {tuple(k.launch_order): k for k in ref.kernels}
            for s in SETS:
                for form in FORMS:
                    name = s + form
                    path = Path(tmp) / name
                    path.write_bytes(lzma.decompress((CORPUS / program / f"{name}.xz").read_bytes()))
                    printed = "-details" in name or name.endswith(".txt")
                    try:
                        profile_cmd.import_profile(path, Path(tmp) / "p.json", "h200" if printed else None)
                    except Exception as exc:  # noqa: BLE001 - a form the reader lacks: say so, go on
                        print(f"{program} {name}: {exc}")
                        continue
                    doc = store.load(Path(tmp) / "p.json", profile=True)
                    key = s + form
                    for k in doc.kernels:
                        r = theirs.get(tuple(k.launch_order))
                        if r is None:
                            continue
                        kernels[key] += 1
                        w = worst[key]
                        if r.time_ms / r.launches >= LONG_MS:  # a long kernel: relative; a short one: us per launch
                            w["time"] = max(w["time"], abs(k.time_ms - r.time_ms) / r.time_ms)
                        else:
                            w["short_us"] = max(w["short_us"], 1e3 * abs(k.time_ms - r.time_ms) / r.launches)
                        for fig, v in (r.flops or {}).items():
                            if v > 1e6 and fig in (k.flops or {}):
                                w["work"] = max(w["work"], abs(k.flops[fig] - v) / v)
                        for lvl, v in (r.bytes or {}).items():
                            if v > 1e6 and lvl in (k.bytes or {}):
                                w[lvl] = max(w[lvl], abs(k.bytes[lvl] - v) / v)
    print(f"{'form':<28}{'kernels':>8}{'time':>8}{'short':>9}{'work':>8}{'dram':>8}{'l2':>8}{'l1':>8}")
    for key in [s + f for s in SETS for f in FORMS]:
        w = worst[key]
        cells = f"{100 * w['time']:7.2f}%{w['short_us']:6.2f} us"
        cells += "".join(f"{100 * w[f]:7.2f}%" if f in w else f"{'-':>8}" for f in ("work", "dram", "l2", "l1"))
        print(f"{key:<28}{kernels[key]:>8}{cells}")
    size = sum(p.stat().st_size for p in CORPUS.rglob("*.xz"))
    print(f"{len(programs)} programs ({', '.join(programs)}), {size / 1e6:.1f} MB compressed")


if __name__ == "__main__":
    main()
