"""The two kinds of failure the command line turns into exit codes.

`UsageError` (exit 2): the input is invalid; the message says what is wrong and what is valid.
`RunError` (exit 1): the input was fine but the work failed (no GPU, a compile error, a kernel that
fails verification).
"""


class UsageError(ValueError):
    """Invalid input. Exit code 2. The message is one line naming the valid range."""


class RunError(RuntimeError):
    """A runtime failure. Exit code 1. The message is one line saying what failed."""
