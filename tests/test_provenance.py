"""The `tool` a written file records names the code that wrote it: the version and a fingerprint
of the package's source, which changes with any byte of it."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

from roofline import provenance

PACKAGE = Path(provenance.__file__).resolve().parent


def test_the_tool_is_the_version_and_ten_hex_digits_of_the_source():
    assert re.fullmatch(r"roofline \d+\.\d+\.\d+\S* \(source [0-9a-f]{10}\)", provenance.tool())
    done = subprocess.run([sys.executable, "-m", "roofline.provenance"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == provenance.tool()


def test_the_fingerprint_follows_the_source_and_nothing_else(tmp_path):
    copy = tmp_path / "roofline"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))

    def fingerprint() -> str:
        code = "import roofline.provenance as p; print(p.source_id())"
        return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                              check=True, env={"PYTHONPATH": str(tmp_path)}).stdout.strip()

    assert fingerprint() == provenance.source_id()  # the same bytes, anywhere
    (copy / "notes.txt").write_text("not source")
    assert fingerprint() == provenance.source_id()
    kernel = next(copy.joinpath("kernels").glob("*.cu"))
    kernel.write_text(kernel.read_text() + "\n")
    assert fingerprint() != provenance.source_id()
