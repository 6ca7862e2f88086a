"""Decisions over results documents, read from the file alone (`results`): what a kernel's work
and reading are (work), what changed between two files (compare) and whether that fails a
gate (check), each kernel at a fraction of its roof (whatif), the same work on another GPU
(project)."""
