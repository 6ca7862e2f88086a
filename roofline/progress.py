"""How long jobs report their steps: each stage announces its own steps (`expect`) and begins
each one (`step`), so no caller has to know how many steps the stages below it take. `Progress`
ignores them; `Bar`, the command line's, draws them. Beside the layers: `measure` and `collect` call
a job's Progress without calling back up into the command line."""

from __future__ import annotations


class Progress:
    """Receives a job's steps. This base ignores them; the command line draws a progress bar."""

    def expect(self, steps: int) -> None:
        """`steps` more steps will follow."""

    def step(self, text: str) -> None:
        """One step begins; `text` says what it does."""


class Bar(Progress):
    """A transient rich progress bar on `console` (the command line's stderr console,
    `console.rich_console(err=True)`); stages add their steps as they start. Drawn only on a terminal."""

    def __init__(self, console):
        from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        self.bar = RichProgress(TextColumn("{task.description:<46}"), BarColumn(), TimeElapsedColumn(),
                                console=console, transient=True, disable=not console.is_terminal)
        self.task = self.bar.add_task("starting", total=0)

    def expect(self, steps: int) -> None:
        self.bar.update(self.task, total=self.bar.tasks[0].total + steps)

    def step(self, text: str) -> None:
        self.bar.update(self.task, description=text, advance=1)
