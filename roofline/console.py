"""The terminal the command line talks through: Ctrl-C as one line and exit code 130 (during
the imports too), Click's usage errors reworded into one line naming what is valid, the value
parsers of integer, number and choice options, a rich console whose lines carry no padding, and
how a command's JSON, notes, warnings and errors are written (notes, warnings and errors on
standard error as 'roofline: note: ...').

Nothing here knows a command: `roofline.cli` declares them, `roofline.api` does their work.
Importing this module changes nothing in the process: the hook that quiets a Ctrl-C landing in
the import machinery is in place only while its own imports run (`roofline.cli` installs it for
good for the command's process). It imports Typer and little else (`roofline --help` loads no more
than this, `roofline.defaults` and Typer); what showing an outcome needs (`roofline.outcome`, rich,
the tables) is imported by the functions that show one.
"""

from __future__ import annotations

import re

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .outcome import Outcome


def interrupted() -> None:
    """Ctrl-C: one line and exit code 130 (128 + SIGINT), as a shell reports it; a second Ctrl-C
    while it ends changes nothing."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        sys.stderr.write("roofline: interrupted\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    raise SystemExit(130)


def quiet_interrupts(unraisable, default=sys.unraisablehook) -> None:
    """Ctrl-C landing where Python cannot raise it (a callback of the import machinery's module
    locks, during the imports below) is not reported as "Exception ignored": the next one ends
    the command as `interrupted` does."""
    if not issubclass(unraisable.exc_type, KeyboardInterrupt):
        default(unraisable)


def hold_interrupts() -> list | None:
    """Ctrl-C held while code runs that no `try` encloses (`roofline.cli`'s declarations: a few
    milliseconds at module level): the signal is noted, not raised where it lands, and
    `release_interrupts` ends the command as `interrupted` does. Only Python's own handler is
    replaced, in the main thread (an ignored Ctrl-C stays ignored); None where nothing was held."""
    import signal

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return None
    came: list = []
    try:
        signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    except ValueError:  # not the main thread: nothing held
        return None
    return came


def release_interrupts(held: list | None) -> None:
    """Python's handler back after `hold_interrupts`; a Ctrl-C that came meanwhile, or comes now,
    ends the command as `interrupted` does."""
    if held is None:
        return
    import signal

    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if held:
            interrupted()
    except KeyboardInterrupt:
        interrupted()


_HOOK, sys.unraisablehook = sys.unraisablehook, quiet_interrupts
try:  # Ctrl-C during the imports below ends as quietly as later
    import io
    import os
    import re

    import typer
    from typer.core import TyperCommand, TyperGroup

    from .errors import RunError, UsageError
    from .files import shown_path
except KeyboardInterrupt:
    interrupted()
finally:
    sys.unraisablehook = _HOOK
del _HOOK


def is_click_error(exc: BaseException) -> bool:
    """Click's exception family (ClickException and its UsageError, BadParameter, ...) found by
    its documented class names, wherever a Typer release keeps Click (its own copy since 0.26)."""
    return any(c.__name__ == "ClickException" for c in type(exc).__mro__)


def _kind(exc: BaseException) -> set[str]:
    return {c.__name__ for c in type(exc).__mro__}


def _param_name(param) -> str:
    """An option by its longest flag, an argument by its metavar (public fields of a parameter)."""
    opts = [o for o in (getattr(param, "opts", None) or []) if o.startswith("-")]
    if opts:
        return max(opts, key=len)
    return getattr(param, "metavar", None) or (getattr(param, "name", None) or "").upper()


def _param_text(param) -> str:
    """A parameter as a user types it, its help after it: "--gpu NAME, a preset GPU to ..."."""
    shown = _param_name(param)
    metavar = getattr(param, "metavar", None)
    if shown.startswith("-") and metavar and not getattr(param, "is_flag", False):
        shown += f" {metavar}"
    about = (getattr(param, "help", None) or "").strip().rstrip(".")
    return f"{shown}, {about[:1].lower()}{about[1:]}" if about else shown


def _usage_pieces(command) -> list[str]:
    """What follows a command's name on its usage line, from its parameters' public fields:
    ['[OPTIONS]', 'BEFORE.json', 'AFTER.json'] (an optional argument in brackets)."""
    pieces = ["[OPTIONS]"]
    for param in getattr(command, "params", []):
        if getattr(param, "param_type_name", None) == "argument":
            shown = _param_name(param)
            pieces.append(shown if getattr(param, "required", False) else f"[{shown}]")
    return pieces


def _usage(path: str, command) -> str:
    """A command's usage line: 'roofline compare [OPTIONS] BEFORE.json AFTER.json'."""
    return " ".join([path, *_usage_pieces(command)])


class Command(TyperCommand):
    """A command whose usage line shows each argument by its metavar, the same under every Typer
    (Click's documented `collect_usage_pieces`)."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        return _usage_pieces(self)

    def format_options(self, ctx, formatter) -> None:
        """The Arguments section by metavar and help (no type label after them), the Options
        section as each option's own help record: Click's documented formatter calls."""
        arguments, options = [], []
        for param in self.get_params(ctx):
            if getattr(param, "param_type_name", None) == "argument":
                required = "  [required]" if getattr(param, "required", False) else ""
                arguments.append((_param_name(param), (getattr(param, "help", None) or "") + required))
            else:
                record = param.get_help_record(ctx)
                if record is not None:
                    options.append(record)
        for title, records in (("Arguments", arguments), ("Options", options)):
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


def _command_in(group, args: list[str]):
    """The command `args` run, and its path ('roofline show'); the group itself when they name none
    (the group's own options are flags: the first argument not an option is the command)."""
    name = next((a for a in args if not a.startswith("-")), None)
    command = group.get_command(None, name) if name else None
    return (command, f"roofline {name}") if command is not None else (group, "roofline")


def _flags(group, args: list[str]) -> dict[str, str]:
    """The parameters that the library's usage errors name (`errors.UsageError`: `{max_drop}`) as
    the command line spells them: each parameter by its name and by its flags' names ('gpus' and
    'gpu' of `project --gpu`), an option as its longest flag, an argument as its metavar; the
    command run's own over the other commands' (an error from a layer several commands share)."""
    command, _ = _command_in(group, args)
    others = [group.get_command(None, name) for name in group.list_commands(None)]
    names: dict[str, str] = {}
    for cmd in [*others, command]:
        for param in getattr(cmd, "params", None) or []:
            spelt = [o[2:].replace("-", "_") for o in getattr(param, "opts", None) or [] if o.startswith("--")]
            names.update(dict.fromkeys([getattr(param, "name", None) or "", *spelt], _param_name(param)))
    return names


def _usage_error(exc, group, args: list[str]) -> str:
    """A usage error of Click's in one line, from the exception's public fields (`param`,
    `option_name`, `possibilities`, `message`, `ctx`) and the command's parameters: what is missing
    or wrong, and what is valid."""
    kind, ctx = _kind(exc), getattr(exc, "ctx", None)
    if ctx is not None:
        command, path = ctx.command, ctx.command_path
    else:  # raised while parsing, before a context (an option without its value): the command named in args
        command, path = _command_in(group, args)
    param = getattr(exc, "param", None)
    if "MissingParameter" in kind and param is not None:
        return f"missing {_param_text(param)}; usage: {_usage(path, command)}"
    if "NoSuchOption" in kind:
        option, close = exc.option_name, sorted(getattr(exc, "possibilities", None) or [])
        new = OneLineErrors.renamed.get((path.split()[-1], option))
        if new is not None:
            return f"{path} {option} is renamed: {new}"
        if close:
            return f"{path} has no option {option}; did you mean {' or '.join(close)}? ({path} -h lists them all)"
        valid = [_param_name(p) for p in getattr(command, "params", [])
                 if getattr(p, "param_type_name", None) == "option"] + ["-h"]
        return f"{path} has no option {option}; its options: {', '.join(valid)}"
    if "BadOptionUsage" in kind:
        option = getattr(exc, "option_name", None)
        found = [p for p in getattr(command, "params", []) if option in (getattr(p, "opts", None) or [])]
        said = exc.format_message().rstrip(".")
        return f"{said}: {_param_text(found[0])}" if found else said
    if "BadParameter" in kind and param is not None:
        return f"{_param_name(param)}: {str(exc.message).strip().rstrip('.')}"
    message = exc.format_message()
    if "UsageError" in kind and command is group:  # an unknown command
        name = next((a for a in args if not a.startswith("-")), None)
        if name in OneLineErrors.merged:
            return f"roofline {name} is now: {OneLineErrors.merged[name]}"
        return f"{message} Commands: {', '.join(group.list_commands(ctx))}."
    if "UsageError" in kind and command is not None:  # e.g. an argument too many
        return f"{message}; usage: {_usage(path, command)}"
    return message


class ReaderLeft(BaseException):
    """Standard output or error was closed by its reader (`| head`): raised past Click, which would
    otherwise end the process with exit code 1 and no word (`run` ends it quietly with 0)."""


class OneLineErrors(TyperGroup):
    """Reports every usage error, Typer's own and the library's, as one line on stderr, through
    Click's public interfaces only: `main` in non-standalone mode and the exceptions' fields. A
    flag renamed (`renamed`: (command, old flag) -> its new spelling) or a command merged into
    another (`merged`: old name -> the command line that does it now) is answered with that."""

    renamed: dict[tuple[str, str], str] = {}
    merged: dict[str, str] = {}

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise ReaderLeft() from None

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        args = list(sys.argv[1:] if args is None else args)
        try:
            rv = super().main(args=args, prog_name="roofline", complete_var=complete_var,
                              standalone_mode=False, **extra)
        except UsageError as exc:
            fail(exc.worded(_flags(self, args)), 2)
        except RunError as exc:
            fail(str(exc), 1)
        except KeyboardInterrupt:
            interrupted()
        except typer.Abort as exc:
            if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
                interrupted()
            fail("aborted", 1)
        except Exception as exc:
            if not is_click_error(exc):
                raise
            fail(_usage_error(exc, self, args), exc.exit_code)
        if rv == 130:  # Typer's answer to Ctrl-C while a command runs (no command returns 130)
            interrupted()
        sys.exit(rv if isinstance(rv, int) else 0)


def integer(text) -> int:
    """An integer option's value; anything else is refused in the user's words, by every Typer."""
    if isinstance(text, int):  # a default
        return text
    try:
        return int(text)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not an integer") from None


def byte_count(text) -> int:
    """A size in bytes: an integer, or a whole number of KiB written with K, KB or KiB ('48k' is
    49,152, as CUDA counts shared memory); anything else is refused in the user's words."""
    if isinstance(text, int):  # a default
        return text
    m = re.fullmatch(r"\s*([-+]?\d+)\s*(k|kb|kib)?\s*", str(text), re.IGNORECASE)  # the range: the library's
    if m is None:
        raise typer.BadParameter(f"{text!r} is not a size in bytes (an integer, or KiB as 48k)") from None
    return int(m.group(1)) * (1024 if m.group(2) else 1)


def number(text) -> float:
    """A number option's value; anything else is refused in the user's words. Its range (nan and
    inf included) is the library's to check, which names the valid one."""
    if isinstance(text, (int, float)):  # a default
        return float(text)
    try:
        return float(text)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a number") from None


def share(text) -> float:
    """A share's value: a fraction ('0.97') or a percentage ('97%'); anything else is refused in
    the user's words (its range is the library's to check)."""
    if isinstance(text, (int, float)):  # a default
        return float(text)
    value = str(text).strip()
    try:
        return float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a share (0.97 or 97%)") from None


def one_of(*choices: str):
    """A value among `choices`, refused otherwise with the choices named."""

    def parse(text) -> str:
        if text in choices:
            return text
        raise typer.BadParameter(f"{text!r} is not one of {', '.join(map(repr, choices))}")

    return parse


def echo(text: str, err: bool = False) -> None:
    """One message, a file name's bytes that are not UTF-8 shown as '\\xe9' (any output holds it); on
    an output that holds ASCII only (a C locale), each other character in its ASCII form ('µs' ->
    'us': `render.encoding.ascii_text`), as the tables are drawn there."""
    from .render.encoding import ascii_text

    stream = sys.stderr if err else sys.stdout
    if not (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "").startswith("utf"):
        text = ascii_text(text)
    typer.echo(shown_path(text), err=err)


def fail(message: str, code: int) -> None:
    echo(f"roofline: error: {message}", err=True)
    sys.exit(code)


class TrimmedLines(io.TextIOBase):
    """The stream under a rich console, less the spaces rich pads every table line with to the
    table's width (before any closing style codes): lines end at their last character. A file
    name's bytes that are not UTF-8 are written as '\\xe9' (`render.text.shown_path`)."""

    _PADDING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$")

    def __init__(self, stream):
        super().__init__()
        self.stream, self.pending = stream, ""

    def write(self, text: str) -> int:
        *lines, self.pending = (self.pending + shown_path(text)).split("\n")
        if lines:
            self.stream.write("".join(self._PADDING.sub(r"\1", line) + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.stream.write(self.pending)
            self.pending = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self.stream, "encoding", None) or "utf-8"


def rich_console(err: bool = False):
    """A rich console that reads nothing in the text as markup (names come from files) and leaves
    no trailing spaces. Its width is COLUMNS where that is a usable width (40 or more), else the
    terminal's, else (pipes, logs, CI) 200 columns. On a terminal that cannot show Unicode (an
    ASCII locale) rich draws the table rules in ASCII."""
    from rich.console import Console

    from roofline.render.tables import plain

    class _Console(Console):
        def print(self, *objects, **options):
            super().print(*(plain(o) if self.options.ascii_only else o for o in objects), **options)

        def on_broken_pipe(self) -> None:  # the reader left: as `main` ends it
            raise BrokenPipeError

    stream = sys.stderr if err else sys.stdout
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isascii() and columns.isdigit() and int(columns) >= 40 else None if stream.isatty() else 200
    return _Console(file=TrimmedLines(stream), highlight=False, markup=False, width=width, soft_wrap=False)


def note(line: str) -> None:
    echo(f"roofline: note: {line}", err=True)


def present(outcome: Outcome, as_json: bool = False) -> None:
    """A command's outcome (`roofline.outcome`), as every command shows one: notes on stderr
    (first, or after the output); under `as_json` (or with no view) the document alone on
    stdout and its asides on stderr, else the view, its `Note` lines on stderr and its `Plain`
    ones as they are; then warnings, and failures as error lines with exit code 1. A reader that
    leaves early (`| head`) ends the writing to its stream, not the outcome: a failure (a gate
    that failed) keeps its exit code, and the lines of the other stream are still written."""
    from .outcome import Note, Plain

    left = False

    def put(write, *args, **kwargs) -> None:
        nonlocal left
        try:
            write(*args, **kwargs)
        except BrokenPipeError:
            left = True

    if outcome.notes_first:
        for line in outcome.notes:
            put(note, line)
    if as_json or outcome.view is None:
        if outcome.document is not None:
            put(echo, outcome.to_json())
        for line in outcome.asides:
            put(echo, line, err=True)
    else:
        console = rich_console()
        for item in outcome.view(console.width):
            if isinstance(item, Note):
                put(note, item)
            elif isinstance(item, Plain):
                put(echo, item)
            else:
                put(console.print, item)
    if not outcome.notes_first:
        for line in outcome.notes:
            put(note, line)
    for line in outcome.warnings:
        put(echo, f"roofline: warning: {line}", err=True)
    for line in outcome.failures:
        put(echo, f"roofline: error: {line}", err=True)
    if outcome.exit_code:
        raise typer.Exit(outcome.exit_code)
    if left:
        raise ReaderLeft()


def _quiet() -> None:
    """Standard output and error sent to /dev/null: a reader that left (`2>&1 | head`) gets nothing
    more, and the interpreter's last flush does not fail."""
    quiet = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(quiet, stream.fileno())
        except (OSError, ValueError):
            pass


def run(app) -> None:
    """Run the Typer `app` as the process's command: standard output and error write what their
    encoding cannot hold in ASCII (`render.encoding.PLAIN_ERRORS`: never a UnicodeEncodeError), and
    Ctrl-C at any point ends with one line and exit code 130; a reader that leaves early (`| head`)
    ends it quietly with 0, an output that cannot be written (a full disk) with one line and 1."""
    try:
        from .render.encoding import PLAIN_ERRORS

        for stream in (sys.stdout, sys.stderr):
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors=PLAIN_ERRORS)
        try:
            app()
        except SystemExit:  # the command's own exit code stands, whether or not its reader stayed
            try:
                sys.stdout.flush()
            except BrokenPipeError:
                _quiet()
            raise
        sys.stdout.flush()  # a write that fails fails here, not in the interpreter's exit
    except KeyboardInterrupt:
        interrupted()
    except (BrokenPipeError, ReaderLeft):  # the reader left (`| head`): what it read is all it wanted
        _quiet()
        sys.exit(0)
    except OSError as exc:  # e.g. standard output on a full disk
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        where = f" ({exc.filename})" if exc.filename else " (standard output)"
        fail(f"cannot write{where}: {exc.strerror or exc}", 1)
