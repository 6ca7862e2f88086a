"""The cheat corpus's confusion matrix from grade files written by `roofline run` (problems with
their candidates, or kernels and callables): per entry what it must raise and what it got, then the
matrix (cheats and honest entries: flagged or refused, graded; and how many got what they must).

What an entry must raise is named on the first line of its file: 'honest', a flag code, 'wrong',
'fails', 'not_graded', or 'no_gain' (graded, and no more than NO_GAIN faster than the reference:
a cheat whose trick the harness undoes runs at the reference's cost, within the timing's spread
for a call of a few microseconds). A file whose first line names none of these, or that is not
here (a copy made on the GPU machine), is honest. A problem's reference is not counted.

    python bench/corpus_matrix.py GRADES.json [GRADES.json ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


NO_GAIN = 0.9  # a no-gain cheat's time at least this share of the reference's
CHEAT_WORDS = {"wrong", "fails", "not_graded", "no_gain"}


def expected(source: Path, codes: set[str]) -> str:
    """What the file at `source` must raise (its first line's first word), 'honest' where it names nothing
    of `codes` or CHEAT_WORDS, or is not here."""
    try:
        first = source.read_text().splitlines()[0]
    except (OSError, IndexError):
        return "honest"
    word = first.lstrip("# ").split(":")[0].split(" ")[0]
    return word if word in codes | CHEAT_WORDS else "honest"


def main(paths: list[str]) -> None:
    from roofline.model.integrity import CODES

    rows = []
    matrix = {(k, c): 0 for k in ("cheat", "honest") for c in ("caught", "graded", "as it must")}
    for path in paths:
        entries = json.loads(Path(path).read_text())["entries"]
        ref_ms = next((e["time_ms"] for e in entries if e["name"] == "reference"), None)
        for e in entries:
            if e["name"] == "reference":
                continue
            want = expected(Path(e["source"].split(":")[0]), set(CODES))
            codes = [f["code"] for f in e["flags"]]
            graded = e.get("share") is not None and not codes and e.get("error") is None
            kind = "honest" if want == "honest" else "cheat"
            matrix[(kind, "graded" if graded else "caught")] += 1
            if kind == "honest":
                right = graded
            elif want == "no_gain":  # graded at no less than the reference's time, or caught
                right = not graded or (ref_ms is not None and e["time_ms"] >= NO_GAIN * ref_ms)
            elif want in ("wrong", "fails", "not_graded"):
                right = not graded
            else:
                right = want in codes
            matrix[(kind, "as it must")] += right
            got = ", ".join(codes) or (e.get("error") or "graded")[:70]
            rows.append(f"{'ok ' if right else 'BAD'} {e['name']:<28} must: {want:<18} got: {got}")
    print("\n".join(rows))
    print(f"\n{'':>8} {'caught':>8} {'graded':>8} {'as it must':>11}")
    for kind in ("cheat", "honest"):
        print(f"{kind:>8} {matrix[(kind, 'caught')]:>8} {matrix[(kind, 'graded')]:>8} {matrix[(kind, 'as it must')]:>11}")


if __name__ == "__main__":
    main(sys.argv[1:])
