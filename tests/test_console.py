"""The terminal layer on its own: an Outcome (roofline.outcome) shown by console.present (notes,
warnings and errors on stderr, the document alone under --json, exit code 1 for failures), the
padding-trimming stream, and importing console leaving the process as it was."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from roofline import console
from roofline.outcome import Note, Outcome, Plain

ROOT = Path(__file__).resolve().parent.parent


def _shown(capsys, outcome, as_json=False):
    code = 0
    try:
        console.present(outcome, as_json)
    except typer.Exit as exc:
        code = exc.exit_code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_an_outcome_is_shown_in_one_order_on_two_streams(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    outcome = Outcome({"a": 1}, lambda width: ["a table", Note("about it"), Plain("x" * 100)],
                      notes=("n",), warnings=("w",), failures=("f",))
    code, out, err = _shown(capsys, outcome)
    assert code == 1
    assert out == "a table\n" + "x" * 100 + "\n"  # a Plain line is never wrapped
    assert err == "roofline: note: about it\nroofline: note: n\nroofline: warning: w\nroofline: error: f\n"
    code, out, err = _shown(capsys, outcome, as_json=True)
    assert (code, json.loads(out)) == (1, {"a": 1})
    assert err == "roofline: note: n\nroofline: warning: w\nroofline: error: f\n"


def test_notes_on_the_reading_come_first_and_asides_stand_beside_the_document(capsys):
    outcome = Outcome([1], lambda width: ["view"], notes=("first",), notes_first=True, asides=("wrote x.png",))
    assert _shown(capsys, outcome) == (0, "view\n", "roofline: note: first\n")
    assert _shown(capsys, outcome, True) == (0, "[\n 1\n]\n", "roofline: note: first\nwrote x.png\n")
    assert outcome.to_json() == "[\n 1\n]" and outcome.exit_code == 0
    assert Outcome(failed=True).exit_code == 1


def test_an_outcome_without_a_view_prints_its_document():
    assert Outcome({"k": "v"}).to_json() == '{\n "k": "v"\n}'


def test_the_trimmed_stream_drops_the_padding_and_keeps_partial_lines():
    raw = io.StringIO()
    stream = console.TrimmedLines(raw)
    stream.write("a   \nb  \x1b[0m\x1b[1m\npartial")
    assert raw.getvalue() == "a\nb\x1b[0m\x1b[1m\n"
    stream.flush()
    assert raw.getvalue().endswith("partial")


@pytest.mark.parametrize("parse, text, said", [(console.integer, "x", "'x' is not an integer"),
                                               (console.number, "1e", "'1e' is not a number"),
                                               (console.one_of("a", "b"), "c", "'c' is not one of 'a', 'b'")])
def test_the_value_parsers_refuse_in_the_users_words(parse, text, said):
    with pytest.raises(typer.BadParameter, match=said):
        parse(text)


def test_importing_console_and_outcome_changes_nothing_in_the_process():
    code = ("import sys; hook = sys.unraisablehook; import roofline.console, roofline.outcome; "
            "print(sys.unraisablehook is hook)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert (done.returncode, done.stdout) == (0, "True\n"), done.stderr
