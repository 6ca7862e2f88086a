"""How long `roofline profile --import` takes, and how much memory, on exports of the sizes people
bring: a details page with the sections' bodies of about 80 MB (what a Llama forward under
`--set full` gives) and a raw page of about 2 MB. Both are made from the corpus's real Llama
exports (tests/fixtures/ncu/corpus/llama), their launches repeated under new launch IDs until
the size is reached; each import runs in a process of its own, timed from the call (the
interpreter's start and imports apart) with the process's peak resident memory.

    python bench/import_speed.py            # prints one line per export
"""

from __future__ import annotations

import csv
import io
import lzma
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "ncu" / "corpus" / "llama"
CHILD = """
import resource, sys, time
from pathlib import Path
from roofline.commands import profile as profile_cmd
start = time.perf_counter()
profile_cmd.import_profile(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] or None)
print(f"{time.perf_counter() - start:.2f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")
"""


def _grown(name: str, target_bytes: int, raw: bool) -> str:
    """The export `name`, its launches repeated under new IDs until it holds `target_bytes`."""
    text = lzma.decompress((CORPUS / f"{name}.xz").read_bytes()).decode()
    rows = list(csv.reader(io.StringIO(text)))
    head = rows[:2] if raw else rows[:1]  # the raw page's unit row stays once
    body = rows[len(head):]
    ids = sorted({int(r[0]) for r in body if r and r[0].isdigit()})
    out, copy = io.StringIO(), 0
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerows(head)
    while out.tell() < target_bytes:
        for r in body:
            first = str(int(r[0]) + copy * (ids[-1] + 1)) if r and r[0].isdigit() else (r[0] if r else "")
            writer.writerow([first] + r[1:])
        copy += 1
    return out.getvalue()


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name, size, raw, gpu in (("full-details-all.csv", 80_000_000, False, "h200"),
                                     ("full-raw.csv", 2_000_000, True, "")):
            path = Path(folder) / name
            path.write_text(_grown(name, size, raw))
            done = subprocess.run([sys.executable, "-c", CHILD, str(path), str(Path(folder) / "p.json"), gpu],
                                  capture_output=True, text=True, cwd=ROOT, check=True)
            seconds, mib = done.stdout.split()
            print(f"{name}: {path.stat().st_size / 1e6:.1f} MB imported in {seconds} s, peak memory {mib} MiB")


if __name__ == "__main__":
    main()
