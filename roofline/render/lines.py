"""The kinds of line a view holds beside its tables, for the console to place: a `Note` goes to
standard error as 'roofline: note: ...', a `Plain` line is written as it is, never wrapped.
The views of the commands (`roofline.outcome` re-exports both) and of the document registry
(`roofline.documents`) use these two, so that the console shows them alike."""

from __future__ import annotations


class Note(str):
    """A view's line for standard error, as a note ('roofline: note: ...'), in its place among
    the view's lines (after the tables it is about)."""


class Plain(str):
    """A view's line written as it is, never wrapped to the terminal's width (a file name, a
    command to type, a list of names)."""
