"""The cheat corpus's confusion matrix from grade files written by `roofline run problem.py
CANDIDATE.py ...` (each candidate's file names on its first line what it must raise: 'honest', a
flag code, 'wrong', 'fails' or 'not_graded'): per candidate what it must raise and what it got,
then the matrix (cheats and honest entries against flagged-or-refused and graded).

    python bench/corpus_matrix.py GRADES.json [GRADES.json ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def expected(source: Path) -> str:
    return source.read_text().splitlines()[0].lstrip("# ").split(":")[0].split(" ")[0]


def main(paths: list[str]) -> None:
    rows, matrix = [], {("cheat", "caught"): 0, ("cheat", "graded"): 0, ("honest", "caught"): 0,
                        ("honest", "graded"): 0}
    for path in paths:
        for e in json.loads(Path(path).read_text())["entries"]:
            if e["name"] == "reference":
                continue
            want = expected(Path(e["source"]))
            codes = [f["code"] for f in e["flags"]]
            graded = e.get("share") is not None and not codes and e.get("error") is None
            kind = "honest" if want == "honest" else "cheat"
            matrix[(kind, "graded" if graded else "caught")] += 1
            right = graded if kind == "honest" else (want in codes if want not in ("wrong", "fails", "not_graded")
                                                      else not graded)
            got = ", ".join(codes) or (e.get("error") or "graded")[:70]
            rows.append(f"{'ok ' if right else 'BAD'} {e['name']:<28} must: {want:<18} got: {got}")
    print("\n".join(rows))
    print(f"\n{'':>8} {'caught':>8} {'graded':>8}")
    for kind in ("cheat", "honest"):
        print(f"{kind:>8} {matrix[(kind, 'caught')]:>8} {matrix[(kind, 'graded')]:>8}")


if __name__ == "__main__":
    main(sys.argv[1:])
