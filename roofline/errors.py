"""The two kinds of failure the command line turns into exit codes.

`UsageError` (exit 2): the input is invalid; the message says what is wrong and what is valid.
`RunError` (exit 1): the input was fine but the work failed (no GPU, a compile error, a kernel that
fails verification).

A usage error names the parameters it is about by placeholder (`{max_drop}`), so that each caller
reads them in its own terms: a Python caller as the parameters it passed (`str(exc)`: "max_drop
'x': give a fraction ..."), the command line as its flags (`exc.worded({'max_drop': '--max-drop'})`,
which `roofline.console` does for every command).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


class UsageError(ValueError):
    """Invalid input. Exit code 2. The message is one line naming the valid range.

    `param`: the parameter whose value is refused (None: the message is about no one parameter);
    `mentions`: other parameters the message names (an option that would help). Each appears in
    `message` as `{name}`; `params` holds them all, `param` first."""

    def __init__(self, message: str, param: str | None = None, mentions: Iterable[str] = ()):
        super().__init__(message)
        self.message, self.param = message, param
        self.params = tuple(dict.fromkeys(p for p in (param, *mentions) if p))

    def worded(self, names: Mapping[str, str] | None = None) -> str:
        """The message with each parameter's placeholder as `names` spells it (a flag, e.g.
        {'max_drop': '--max-drop'}), the parameter's own name where `names` has none."""
        text = self.message
        for p in self.params:
            text = text.replace("{" + p + "}", (names or {}).get(p, p))
        return text

    def __str__(self) -> str:
        return self.worded()

    def __reduce__(self):  # pickled (a child process's error) with its parameters
        return type(self), (self.message, self.param, self.params)

    def prefixed(self, prefix: str) -> UsageError:
        """This error with `prefix` (a file name, say) before its message, its parameters kept for
        whoever words it: how a layer that adds where the error arose re-raises it."""
        return UsageError(prefix + self.message, self.param, self.params)


class RunError(RuntimeError):
    """A runtime failure. Exit code 1. The message is one line saying what failed."""
