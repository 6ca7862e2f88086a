"""How long jobs report their steps: each stage announces its own steps (`expect`) and begins
each one (`step`), so no caller has to know how many steps the stages below it take."""

from __future__ import annotations


class Progress:
    """Receives a job's steps. This base ignores them; the command line draws a progress bar."""

    def expect(self, steps: int) -> None:
        """`steps` more steps will follow."""

    def step(self, text: str) -> None:
        """One step begins; `text` says what it does."""
