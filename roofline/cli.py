"""The `roofline` command line: the Typer app, which mounts each command's room
(`roofline.commands.<name>`: its signature, its work, its view) and tells the console the old
spellings of renamed flags and merged commands, each answered with one line naming the new one.
`roofline.console` presents every outcome and turns known errors into exit codes.

Exit codes: 0 success; 2 invalid input (one line on stderr naming what is valid); 1 a runtime
failure (no GPU for `run`, a compile error, a kernel failing verification).

This module and the rooms import Typer, `roofline.console`, `roofline.defaults` (the values the
help shows) and `roofline.outcome`, and nothing of the library: `roofline --help` and a usage error
need no more. Each command imports what it uses when it runs, under the same Ctrl-C handling as
the rest of the command (`console.run`); `occupancy` imports the model alone, and neither it nor
`kernels` imports CuPy or matplotlib. The flags' vocabulary is written down in docs/cli.md.
"""

from __future__ import annotations

import sys

try:  # Ctrl-C during the imports ends as quietly as later (`console.interrupted`)
    from roofline import console  # first: it guards its own imports alike

    sys.unraisablehook = console.quiet_interrupts  # for the imports below, and those of the commands
    import importlib
    import os

    import typer

    from roofline import __version__
    from roofline.console import Command, OneLineErrors, echo

    _held = console.hold_interrupts()  # and during the declarations below, which no try encloses
except KeyboardInterrupt:
    from roofline.console import interrupted

    interrupted()


app = typer.Typer(cls=OneLineErrors, add_completion=False, rich_markup_mode=None,
                  pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]},
                  help="Roofline and occupancy for real CUDA kernels: an SGEMM ladder from naive to "
                       "cuBLAS class, verified against cuBLAS, timed, modelled and plotted.")


def _version(value: bool) -> None:
    if value:
        echo(f"roofline {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def _main(ctx: typer.Context,
          version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")):
    """Roofline and occupancy for real CUDA kernels."""
    if ctx.invoked_subcommand is None:
        echo(ctx.get_help())


ROOMS = ("run", "profile", "comms", "plot", "show", "occupancy", "device", "kernels", "new", "compare", "whatif",
         "project", "schema")  # in the order the help lists them
# Commands merged into others: their old spelling answers with the new one (`console.OneLineErrors`).
MERGED = {"grade": "roofline run TARGETS... (grading is run's: run FILE.cu, run MODULE:FUNCTION --spec FILE.toml)",
          "check": "roofline compare BASELINE.json NEW.json --max-drop 5% (the gate is compare's)",
          "tune": "roofline run --tune [--size N] (the tile search is run's)"}


def mount(into: typer.Typer, name: str, room) -> None:
    """Mount a command's room (a module with `MOUNT`, the command's Typer settings, and `command`, its
    signature; `RENAMED`, its old flags -> their new spellings, where it has any) as `name`."""
    into.command(name, cls=Command, **room.MOUNT)(room.command)
    OneLineErrors.renamed.update({(name, old): new for old, new in getattr(room, "RENAMED", {}).items()})


for _name in ROOMS:
    mount(app, _name, importlib.import_module(f"roofline.commands.{_name}"))
OneLineErrors.merged.update(MERGED)


console.release_interrupts(_held)  # a Ctrl-C during the declarations ends here, in one line


def main() -> None:
    """Console-script entry point: the app run as this process's command (`console.run`: never a
    UnicodeEncodeError, Ctrl-C at any point one line and exit code 130, a reader leaving early
    quiet)."""
    # The CUDA compute cache off in the tool's own process before anything loads NVRTC (a compile
    # answered from it has no ptxas report; `measure.nvrtc_compile.compiler_env`); a user's setting wins.
    # Set here, not on import: a program that imports the library keeps its cache.
    os.environ.setdefault("CUDA_CACHE_DISABLE", "1")
    console.run(app)


if __name__ == "__main__":
    main()
