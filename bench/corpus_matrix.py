"""The cheat corpus's confusion matrix from grade files written by `roofline run problem.py
CANDIDATE.py ...` (each candidate's file names on its first line what it must raise: 'honest', a
flag code, 'wrong', 'fails', 'not_graded' or 'no_gain': graded no faster than the reference): per candidate what it must raise and what it got,
then the matrix (cheats and honest entries: flagged or refused, graded; and how many got what they
must: a cheat flagged as its file says, or graded at no gain where it says 'no_gain').

    python bench/corpus_matrix.py GRADES.json [GRADES.json ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def expected(source: Path) -> str:
    return source.read_text().splitlines()[0].lstrip("# ").split(":")[0].split(" ")[0]


def main(paths: list[str]) -> None:
    rows = []
    matrix = {(k, c): 0 for k in ("cheat", "honest") for c in ("caught", "graded", "as it must")}
    for path in paths:
        entries = json.loads(Path(path).read_text())["entries"]
        ref_ms = next((e["time_ms"] for e in entries if e["name"] == "reference"), None)
        for e in entries:
            if e["name"] == "reference":
                continue
            want = expected(Path(e["source"]))
            codes = [f["code"] for f in e["flags"]]
            graded = e.get("share") is not None and not codes and e.get("error") is None
            kind = "honest" if want == "honest" else "cheat"
            matrix[(kind, "graded" if graded else "caught")] += 1
            if kind == "honest":
                right = graded
            elif want == "no_gain":  # graded at no less than the reference's time, or caught
                right = not graded or (ref_ms is not None and e["time_ms"] >= 0.9 * ref_ms)
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
