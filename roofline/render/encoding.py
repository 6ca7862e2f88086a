"""Text in ASCII where an output cannot hold more: the ASCII form of each character roofline
writes ('…' -> '...'), and the encoding error handler (`PLAIN_ERRORS`) that writes it, which the
console sets on standard output and error before a command runs (`console.run`). Apart from
`render.text`, which re-exports them, so that the console loads them with nothing else.
"""

from __future__ import annotations

import codecs
import unicodedata

# What a character an ASCII-only output cannot hold is written as (a terminal in the C locale).
ASCII_FORMS = {"…": "...", "µ": "u", "×": "x", "–": "-", "—": "-", "─": "-", "│": "|", "→": "->", "←": "<-",
               "≥": ">=", "≤": "<=", "·": ".", "≈": "~", "±": "+/-", "‘": "'", "’": "'", "“": '"', "”": '"',
               "\u00a0": " "}
PLAIN_ERRORS = "roofline.plain"


def _plain(error: UnicodeError):
    """Encoding error handler, registered as PLAIN_ERRORS: a character the encoding cannot hold
    becomes its ASCII form ('…' -> '...', 'é' -> 'e'), a byte of a file name that is not valid
    UTF-8 (a surrogate escape) its '\\xe9' form, anything else '?'."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    out = []
    for ch in error.object[error.start:error.end]:
        if "\udc80" <= ch <= "\udcff":
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        elif ch in ASCII_FORMS:
            out.append(ASCII_FORMS[ch])
        else:
            out.append(unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode() or "?")
    return "".join(out), error.end


codecs.register_error(PLAIN_ERRORS, _plain)


def ascii_text(text: str) -> str:
    """`text` in ASCII, each other character in its ASCII form (`_plain`): 'launch latency 4.2
    µs' -> 'launch latency 4.2 us'."""
    return text.encode("ascii", PLAIN_ERRORS).decode("ascii")
