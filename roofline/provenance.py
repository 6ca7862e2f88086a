"""Which code wrote a file: the `tool` every results, profile and grade file records.

A version number alone does not say it: the package keeps one version across many changes. So the
tool is named with its version and a fingerprint of its own source, the SHA-1 of every Python and
CUDA file of the installed package (its path inside the package and its bytes, in path order), the
first ten hex digits: `roofline 0.1.0 (source 3f9c0a17be)`. A wheel and the checkout it was built
from give the same fingerprint; `python -m roofline.provenance` prints this installation's, to
match a file to the code that wrote it.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

SOURCES = ("*.py", "*.cu", "*.cuh")


@functools.lru_cache(maxsize=1)
def source_id() -> str:
    """The fingerprint of this package's source (module docstring): ten hex digits."""
    root = Path(__file__).resolve().parent
    files = sorted({p for pattern in SOURCES for p in root.rglob(pattern) if "__pycache__" not in p.parts})
    digest = hashlib.sha1()
    for p in files:
        digest.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return digest.hexdigest()[:10]


def tool() -> str:
    """The `tool` a written file records: 'roofline 0.1.0 (source 3f9c0a17be)'."""
    from . import __version__

    return f"roofline {__version__} (source {source_id()})"


if __name__ == "__main__":
    print(tool())
