"""Reports kept compressed (`report.csv.gz`, `report.txt.xz`, `profile.ncu-rep.bz2`): the bytes
of a gzip, xz or bzip2 file unpacked, whatever the file is called (the format is told by its
first bytes). Pure: bytes in, bytes out.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib

from ..errors import UsageError

# (first bytes, format's name, how to unpack it)
FORMATS = ((b"\x1f\x8b", "gzip", gzip.decompress), (b"\xfd7zXZ\x00", "xz", lzma.decompress),
           (b"BZh", "bzip2", bz2.decompress))
SUFFIXES = (".gz", ".xz", ".bz2")


def unpacked(data: bytes, source: str) -> tuple[bytes, str | None]:
    """`data` unpacked where it is a gzip, xz or bzip2 file, and the format's name ('gzip'); the
    bytes as they are and None otherwise. Raises UsageError (one line naming `source`) for a
    compressed file that does not unpack whole (cut short, or damaged)."""
    for magic, name, unpack in FORMATS:
        if data.startswith(magic) and (name != "bzip2" or data[3:4].isdigit()):
            try:
                return unpack(data), name
            except (EOFError, OSError, lzma.LZMAError, zlib.error, ValueError) as exc:
                raise UsageError(f"{source}: a {name} file that does not unpack whole (cut short or damaged: "
                                 f"{str(exc) or type(exc).__name__}); copy or download it again") from None
    return data, None


def inner_suffix(name: str) -> str:
    """The suffix a compressed file's content had: '.csv' for 'report.csv.gz' ('' for none)."""
    lower = name.lower()
    for suffix in SUFFIXES:
        if lower.endswith(suffix):
            lower = lower[: -len(suffix)]
            break
    dot = lower.rfind(".")
    return lower[dot:] if dot > lower.rfind("/") and dot >= 0 else ""
